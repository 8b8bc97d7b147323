//! The coding tools as a command line, over the current directory as the workspace:
//! `list`, `schema`, `call`, `serve`, `replay`, `view` (see `toolprism_cli`).
//!
//! ```text
//! cargo run -p toolprism-examples --bin tools -- list
//! cargo run -p toolprism-examples --bin tools -- call read '{"path": "README.md", "limit": 3}'
//! cargo run -p toolprism-examples --bin tools -- view /tmp/toolprism-demo-*/session.jsonl
//! ```
//!
//! `tools openapi SPEC [--base-url URL] [--secret SCHEME=VAR]… COMMAND` does the same over an
//! HTTP API's OpenAPI document instead of the coding tools:
//!
//! ```text
//! cargo run -p toolprism-examples --bin tools -- openapi https://petstore3.swagger.io/api/v3/openapi.json list
//! ```
//!
//! `web_fetch` reaches no loopback, private or link-local address; `TOOLPRISM_FETCH_ALLOW`
//! (hosts, `host` or `host:port`, separated by commas) lets the ones named through.

use std::process::ExitCode;

use toolprism::Registry;
use toolprism_codemode::CodeMode;
use toolprism_examples::tools::web::FetchPolicy;
use toolprism_examples::tools::{self, Workspace};

/// The hosts `TOOLPRISM_FETCH_ALLOW` lets `web_fetch` reach whatever their addresses.
fn fetch_policy() -> FetchPolicy {
    let allowed = std::env::var("TOOLPRISM_FETCH_ALLOW").unwrap_or_default();
    allowed
        .split(',')
        .map(str::trim)
        .filter(|host| !host.is_empty())
        .fold(FetchPolicy::default(), FetchPolicy::allow)
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|first| first == "openapi") {
        return openapi(&args[2..]);
    }
    let registry = std::env::current_dir()
        .and_then(Workspace::new)
        .map_err(|error| format!("the current directory cannot be the workspace: {error}"))
        .and_then(|workspace| {
            tools::register_all(Registry::builder(), &workspace)
                .state(fetch_policy())
                .build()
                .map_err(|error| error.to_string())
        });
    let registry = match registry {
        Ok(registry) => registry,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(toolprism_cli::exit::USAGE);
        }
    };
    if let Err(error) = CodeMode::new().register(&registry) {
        eprintln!("error: {error}");
        return ExitCode::from(toolprism_cli::exit::USAGE);
    }
    toolprism_cli::run(registry)
}

/// `tools openapi …`: the document's tools, with Code Mode over them.
fn openapi(args: &[std::ffi::OsString]) -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("tools openapi")).chain(args.iter().cloned());
    let (registry, command) = match toolprism_cli::openapi::registry(args) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(toolprism_cli::exit::USAGE);
        }
    };
    if let Err(error) = CodeMode::new().register(&registry) {
        eprintln!("error: {error}");
        return ExitCode::from(toolprism_cli::exit::USAGE);
    }
    toolprism_cli::run_with(registry, command)
}
