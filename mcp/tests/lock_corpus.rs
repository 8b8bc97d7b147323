//! The lock rules on real schema changes: the official filesystem MCP server
//! (`@modelcontextprotocol/server-filesystem` on npm, installed at pinned versions by
//! `scripts/mcp-npm`), each release's tools imported and locked, and each release compared
//! with the one before it. The figures are in `docs/integrity.md`.

use std::path::Path;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use toolprism::Registry;
use toolprism::integrity::{Lock, Rule, Severity, compare};
use toolprism_mcp::{ImportOptions, McpClient};

/// Releases compared, each with the one before it.
const RELEASES: [&str; 6] = [
    "2025.3.28",
    "2025.7.1",
    "2025.8.21",
    "2025.11.25",
    "2026.1.14",
    "2026.8.31",
];

async fn lock_of(version: &str, root: &Path) -> Lock {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/mcp-npm");
    let mut command = tokio::process::Command::new(scripts);
    command
        .arg(format!("@modelcontextprotocol/server-filesystem@{version}"))
        .arg("mcp-server-filesystem")
        .arg(root);
    // The first run installs Node.js and the package: minutes, not the default 30 s.
    // These releases speak 2025 protocol versions: initialize at once. (The automatic choice
    // probes 2026-07-28 first; on a first run, whose install makes the server slow to start,
    // the probe times out, and rmcp's fallback then takes the probe's late error for the
    // answer to its `initialize`, and fails.)
    let options = ImportOptions::default()
        .connect_timeout(Duration::from_secs(600))
        .protocol_version(ProtocolVersion::V_2025_11_25);
    let client = McpClient::connect_stdio(command, options).await.unwrap();
    let registry = Registry::builder().build().unwrap();
    client.import_into(&registry).await.unwrap();
    let lock = Lock::of(&registry.snapshot());
    client.close().await;
    lock
}

/// `(from, tool, path, rule)` of every change between consecutive releases.
type Found = Vec<(&'static str, String, String, Rule)>;

#[tokio::test]
async fn real_releases_of_an_mcp_server_are_classified() {
    let root = tempfile::tempdir().unwrap();
    let mut locks = Vec::new();
    for version in RELEASES {
        locks.push((version, lock_of(version, root.path()).await));
    }
    let mut found: Found = Vec::new();
    for pair in locks.windows(2) {
        let ((from, old), (to, new)) = (&pair[0], &pair[1]);
        let changes = compare(old, new);
        let breaking = changes
            .iter()
            .filter(|change| change.severity() == Severity::Breaking)
            .count();
        println!(
            "{from} → {to}: {} changes, {breaking} breaking",
            changes.len()
        );
        found.extend(
            changes
                .into_iter()
                .map(|change| (*from, change.tool, change.path, change.rule)),
        );
    }
    let has = |from: &str, tool: &str, path: &str, rule: Rule| {
        found.iter().any(|(at, name, at_path, found)| {
            (*at, name.as_str(), at_path.as_str(), *found) == (from, tool, path, rule)
        })
    };
    // 2025.7.1 → 2025.8.21: `read_text_file` and `read_media_file` added, `read_file`
    // deprecated in its description; nothing breaks.
    assert!(has("2025.7.1", "read_text_file", "", Rule::ToolAdded));
    assert!(has("2025.7.1", "read_media_file", "", Rule::ToolAdded));
    assert!(has(
        "2025.7.1",
        "read_file",
        "/description",
        Rule::Described
    ));
    assert!(
        !found
            .iter()
            .any(|(from, _, _, rule)| *from == "2025.7.1" && rule.severity() == Severity::Breaking)
    );
    // 2025.8.21 listed its input schemas empty (`{"$schema": …}`, accepting anything);
    // 2025.11.25 lists them whole, with output schemas: each required field is a new
    // requirement, each optional one new, each output typed where it was not.
    assert!(has(
        "2025.8.21",
        "write_file",
        "/input_schema/properties/content",
        Rule::InputRequiredAdded
    ));
    assert!(has(
        "2025.8.21",
        "read_text_file",
        "/input_schema/properties/head",
        Rule::InputAdded
    ));
    assert!(has(
        "2025.8.21",
        "read_file",
        "/output_schema/type",
        Rule::OutputAdded
    ));
    assert!(has(
        "2025.8.21",
        "read_file",
        "/hints/read_only",
        Rule::HintSafer
    ));
    // 2026.1.14 → 2026.8.31: `move_file` now says it is destructive, and `read_media_file`
    // returns its content in another shape.
    assert!(has(
        "2026.1.14",
        "move_file",
        "/hints/destructive",
        Rule::HintLessSafe
    ));
    assert!(has(
        "2026.1.14",
        "read_media_file",
        "/output_schema/properties/content/items/properties/data",
        Rule::OutputRemoved
    ));
    assert!(
        !found.iter().any(|(from, ..)| *from == "2025.11.25"),
        "2026.1.14 changed no tool"
    );
}
