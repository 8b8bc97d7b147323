//! `pins`: a pin file an MCP client keeps ([`toolprism_mcp::PinFile`]) — the tools it holds
//! and what changed in each, and a person accepting a change, which the running client takes
//! up within seconds.

use std::path::Path;

use toolprism_mcp::Pins;

use crate::exit;
use crate::out::outln;
use crate::visible::visible;

/// Lists what is held.
pub(crate) fn list(file: &Path) -> u8 {
    let pins = match Pins::load(file) {
        Ok(pins) => pins,
        Err(problem) => return crate::error(exit::USAGE, &problem.to_string()),
    };
    let held = pins.held();
    if held.is_empty() {
        outln!("nothing held in {}", file.display());
    }
    for tool in held {
        outln!("{} — {}", visible(&tool.server), visible(&tool.remote_name));
        for line in tool.diff().lines() {
            outln!("  {}", visible(line));
        }
    }
    exit::OK
}

/// Accepts the change `tool` of `server` waits with.
pub(crate) fn accept(file: &Path, server: &str, tool: &str) -> u8 {
    let accepted = Pins::load(file).and_then(|mut pins| {
        pins.accept(server, tool)?;
        pins.save(file)
    });
    match accepted {
        Ok(()) => {
            outln!("accepted {} from {}", visible(tool), visible(server));
            exit::OK
        }
        Err(problem) => crate::error(exit::USAGE, &problem.to_string()),
    }
}
