//! The `mcp_client` example (`McpClient`, importing tools) against the official MCP
//! conformance suite's client scenarios, each at the versions it applies to. The suite fails a
//! client run on a warning too. `scripts/mcp-conformance`
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

#[test]
fn the_client_sends_what_each_request_needs_and_retries_a_version_it_was_refused() {
    let client = env!("CARGO_BIN_EXE_mcp_client").to_owned();
    let (passed, report) = run("request-metadata", "2026-07-28", &client);
    assert!(passed, "request-metadata:\n{report}");
    assert!(
        report.contains("sep-2575-client-retry-supported-version"),
        "{report}"
    );
}

#[test]
fn the_client_resumes_a_stream_the_server_closed() {
    let client = format!(
        "{} --call test_reconnection",
        env!("CARGO_BIN_EXE_mcp_client")
    );
    let (passed, report) = run("sse-retry", "2025-11-25", &client);
    assert!(passed, "sse-retry:\n{report}");
}

#[test]
fn the_client_answers_a_servers_form_through_the_local_calls_answerer() {
    // The example's answerer accepts a form with its defaults.
    let client = format!(
        "{} --call test_client_elicitation_defaults",
        env!("CARGO_BIN_EXE_mcp_client")
    );
    let (passed, report) = run("elicitation-sep1034-client-defaults", "2025-11-25", &client);
    assert!(passed, "elicitation-sep1034-client-defaults:\n{report}");
    assert!(
        report.contains("client-elicitation-sep1034-enum-default"),
        "{report}"
    );
}

/// The suite's authorization scenarios scored at both versions: discovery (protected-resource
/// metadata by path, root or challenge; the authorization server's by both well-known
/// documents), registration (pre-registered, metadata document, dynamic), scope selection,
/// step-up and its retry limit, the token endpoint's client authentication.
const AUTH_SCENARIOS: [&str; 14] = [
    "metadata-default",
    "metadata-var1",
    "metadata-var2",
    "metadata-var3",
    "basic-cimd",
    "scope-from-www-authenticate",
    "scope-from-scopes-supported",
    "scope-omitted-when-undefined",
    "scope-step-up",
    "scope-retry-limit",
    "token-endpoint-auth-basic",
    "token-endpoint-auth-post",
    "token-endpoint-auth-none",
    "pre-registration",
];

/// Scored at 2026-07-28 only: a resource that is not this server's, `offline_access`, an
/// authorization server that moved, and the issuer checks of the authorization response
/// (several of which the client must refuse: the suite fails a client that goes on).
const AUTH_SCENARIOS_2026: [&str; 11] = [
    "resource-mismatch",
    "offline-access-scope",
    "offline-access-not-supported",
    "authorization-server-migration",
    "iss-supported",
    "iss-not-advertised",
    "iss-supported-missing",
    "iss-wrong-issuer",
    "iss-unexpected",
    "iss-normalized",
    "metadata-issuer-mismatch",
];

#[test]
fn the_client_authorizes_at_a_protected_server_as_every_auth_scenario_asks() {
    let client = format!(
        "{} --oauth --client-metadata-url https://conformance-test.local/client-metadata.json --call test-tool",
        env!("CARGO_BIN_EXE_mcp_client")
    );
    let runs = AUTH_SCENARIOS
        .iter()
        .flat_map(|scenario| [(*scenario, "2025-11-25"), (*scenario, "2026-07-28")])
        .chain(
            AUTH_SCENARIOS_2026
                .iter()
                .map(|scenario| (*scenario, "2026-07-28")),
        );
    let mut failed = Vec::new();
    for (scenario, version) in runs {
        let (passed, report) = run(&format!("auth/{scenario}"), version, &client);
        if !passed || !report.contains("OVERALL: PASSED") {
            failed.push(format!("auth/{scenario} at {version}:\n{report}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
