//! The `mcp_client` example (`McpClient`, importing tools) against the official MCP
//! conformance suite's client scenarios, at both protocol versions. `scripts/mcp-conformance`
//! installs the pinned suite and Node.js on first use.

use std::path::Path;
use std::process::Command;

fn run(scenario: &str, version: &str, client: &str) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(root.join("scripts/mcp-conformance"))
        .args(["client", "--command", client, "--scenario", scenario])
        .args(["--spec-version", version])
        .current_dir(results.path())
        .output()
        .expect("scripts/mcp-conformance runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success() && !text.contains("FAILURE"), text)
}

#[test]
fn the_client_calls_a_tool_at_both_protocol_versions() {
    // The suite runs the command through a shell.
    let client = format!(
        "{} --call add_numbers '{{\"a\":2,\"b\":3}}'",
        env!("CARGO_BIN_EXE_mcp_client")
    );
    for version in ["2025-11-25", "2026-07-28"] {
        let (passed, report) = run("tools_call", version, &client);
        assert!(passed, "tools_call at {version}:\n{report}");
        assert!(report.contains("SUCCESS"), "{report}");
    }
}

#[test]
fn the_client_initializes_as_the_spec_says() {
    let client = env!("CARGO_BIN_EXE_mcp_client").to_owned();
    let (passed, report) = run("initialize", "2025-11-25", &client);
    assert!(passed, "initialize:\n{report}");
}
