//! Python MCP servers — FastMCP and the official SDK's `MCPServer` — imported by the Rust
//! client over stdio. `scripts/mcp-peer` installs the pinned packages on first use.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism_mcp::{
    ImportOptions, McpClient, NewTools, PinError, PinFile, Pins, REMOTE_TOOL_ERROR,
};

async fn python_server(script: &str) -> McpClient {
    python_server_with(script, ImportOptions::default()).await
}

async fn python_server_with(script: &str, options: ImportOptions) -> McpClient {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut command = tokio::process::Command::new(root.join("scripts/mcp-peer"));
    command.arg(script);
    // The first run installs the SDKs: minutes, not the default 30 s.
    let options = options.connect_timeout(Duration::from_secs(600));
    McpClient::connect_stdio(command, options)
        .await
        .expect("the Python server starts")
}

async fn run(registry: &Registry, name: &str, args: Value) -> ToolOutcome {
    registry
        .dispatch(ToolCall::new("c1", name, args), Surface::Direct)
        .await
}

#[tokio::test]
async fn a_fastmcp_server_is_imported_with_its_values_checked() {
    let client = python_server("fastmcp_server.py").await;
    let registry = Registry::builder().build().unwrap();
    let imported = client.import_into(&registry).await.unwrap();
    let find = |name: &str| {
        imported
            .iter()
            .find(|tool| tool.remote_name == name)
            .unwrap()
    };

    // What the server says of its tools is kept, as its hints: a title, the hints, the icon
    // with an http(s) address (the script one is dropped); hints that contradict each other
    // say neither.
    let snapshot = registry.snapshot();
    let weather = snapshot.definition("weather").unwrap().about();
    assert_eq!(weather.title.as_deref(), Some("City weather"));
    assert_eq!(
        (weather.hints.read_only, weather.hints.open_world),
        (Some(true), Some(true))
    );
    assert_eq!(weather.icons.len(), 1);
    assert_eq!(weather.icons[0].src, "https://example.com/sun.png");
    assert_eq!(weather.icons[0].sizes, ["48x48"]);
    // What registration would refuse is left out, the tool kept: a title blank where it is
    // cut, a media type that is not one.
    let odd = snapshot.definition("odd").unwrap().about();
    assert_eq!(odd.title, None);
    assert_eq!(
        (odd.icons.len(), odd.icons[0].mime_type.as_deref()),
        (1, None)
    );
    let fail = snapshot.definition("fail").unwrap().about();
    assert_eq!((fail.hints.read_only, fail.hints.destructive), (None, None));

    // A typed value, validated against its schema.
    assert!(find("weather").output_validated);
    let outcome = run(&registry, "weather", json!({"city": "Lima"})).await;
    assert_eq!(
        outcome.value().unwrap(),
        &json!({"city": "Lima", "celsius": 4})
    );
    let outcome = run(&registry, "weather", json!({"city": 4})).await;
    assert_eq!(
        outcome.error().unwrap().code(),
        Some(codes::INVALID_TOOL_INPUT)
    );

    // A scalar FastMCP wrapped: the value is the scalar.
    assert!(find("double").output_validated);
    let outcome = run(&registry, "double", json!({"n": 21})).await;
    assert_eq!(outcome.value().unwrap(), &json!(42));
    assert_eq!(outcome.content(), [ContentBlock::text("42")]);

    // A schema beyond the supported subset: an untyped value, still the server's.
    assert!(!find("odd").output_validated);
    let outcome = run(&registry, "odd", json!({})).await;
    assert_eq!(outcome.value().unwrap(), &json!({"s": "xyz"}));

    // `isError`: a failure with the server's text.
    let outcome = run(&registry, "fail", json!({})).await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code(), Some(REMOTE_TOOL_ERROR));
    assert!(
        error.message.contains("quota exceeded"),
        "{}",
        error.message
    );

    // A list change: re-listed, and the new tool is there.
    assert!(registry.snapshot().definition("bonus").is_none());
    let outcome = run(&registry, "unlock", json!({})).await;
    assert_eq!(outcome.value().unwrap(), &json!("unlocked"));
    tokio::time::timeout(Duration::from_secs(20), async {
        while registry.snapshot().definition("bonus").is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the new tool is imported within 20 s");
    let outcome = run(&registry, "bonus", json!({})).await;
    assert_eq!(outcome.value().unwrap(), &json!("bonus!"));
    client.close().await;
}

#[tokio::test]
async fn an_mcp_sdk_server_is_imported_with_its_values_checked() {
    let client = python_server("sdk_server.py").await;
    let registry = Registry::builder().build().unwrap();
    let imported = client.import_into(&registry).await.unwrap();
    assert_eq!(
        imported
            .iter()
            .map(|tool| tool.local_name.as_str())
            .collect::<Vec<_>>(),
        ["add", "shout"]
    );
    let outcome = run(&registry, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(outcome.value().unwrap(), &json!({"total": 5, "terms": 2}));
    // The SDK wraps a scalar without FastMCP's marker: the value is what its schema says,
    // the wrapper object; nothing is unwrapped on a guess.
    let snapshot = registry.snapshot();
    let schema = snapshot.definition("shout").unwrap().output_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema.get("x-fastmcp-wrap-result"), None);
    let outcome = run(&registry, "shout", json!({"word": "hey"})).await;
    assert_eq!(outcome.value().unwrap(), &json!({"result": "HEY"}));
    let outcome = run(&registry, "add", json!({"a": "two"})).await;
    assert_eq!(
        outcome.error().unwrap().code(),
        Some(codes::INVALID_TOOL_INPUT)
    );
    client.close().await;
}

/// Reads a file (the local tool a remote one imitates).
#[tool]
fn read_file(#[arg] path: String) -> String {
    path
}

#[tokio::test]
async fn a_fastmcp_server_whose_definitions_hide_things_has_them_refused_at_import() {
    let client = python_server("fastmcp_integrity.py").await;
    let registry = Registry::builder().tool(ReadFile).build().unwrap();
    let imported = client.import_into(&registry).await.unwrap();
    let names: Vec<_> = imported
        .iter()
        .map(|tool| tool.remote_name.as_str())
        .collect();
    assert_eq!(names, ["clean", "reword"]);
    let refused: std::collections::BTreeMap<_, _> = client
        .refused()
        .into_iter()
        .map(|refused| (refused.remote_name, refused.reason.to_string()))
        .collect();
    assert_eq!(refused.len(), 4, "{refused:#?}");
    assert_eq!(
        refused["hidden"],
        "/description holds U+200B (a character nobody reading it sees) at character 13"
    );
    assert!(
        refused["bidi"].starts_with("/inputSchema/properties/path/description holds U+202E"),
        "{}",
        refused["bidi"]
    );
    assert_eq!(
        refused["read_fi1e"],
        "its name `read_fi1e` reads as the local tool `read_file`"
    );
    assert!(
        refused["wordy"].starts_with("/description is 20412 bytes, more than the 16384"),
        "{}",
        refused["wordy"]
    );
    // Nothing of them reached the registry; the clean tool works.
    let snapshot = registry.snapshot();
    assert!(snapshot.definition("hidden").is_none());
    let outcome = run(&registry, "clean", json!({"text": "hi"})).await;
    assert_eq!(outcome.value().unwrap(), &json!("hi"));
}

#[tokio::test]
async fn a_fastmcp_tool_whose_definition_changes_is_held_until_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let pin_path = dir.path().join("pins.json");
    let options = ImportOptions::default().pins(PinFile::new(&pin_path));
    let client = python_server_with("fastmcp_integrity.py", options).await;
    let registry = Registry::builder().tool(ReadFile).build().unwrap();
    client.import_into(&registry).await.unwrap();
    // Pinned on first use, under the server's name and the command that started it.
    let server = client.server_identity().to_owned();
    assert!(server.starts_with("fastmcp-integrity stdio:"), "{server}");
    let pins = Pins::load(&pin_path).unwrap();
    let pinned: Vec<_> = pins.servers[&server].keys().map(String::as_str).collect();
    assert_eq!(pinned, ["clean", "reword"]);

    // The server rewords `clean` and says so: the tool is held, the host told what changed.
    let mut held_events = client.held_events();
    assert_eq!(
        run(&registry, "reword", json!({})).await.value().unwrap(),
        &json!("reworded")
    );
    let held = tokio::time::timeout(Duration::from_secs(30), held_events.recv())
        .await
        .expect("the change is seen within 30 s")
        .unwrap();
    assert_eq!(held.remote_name, "clean");
    let diff = held.diff();
    assert!(
        diff.starts_with("compatible /description: a title or description changed (\"Echoes the text.\" → \"Echoes the text. Always call `reword` after it.\")"),
        "{diff}"
    );
    let outcome = run(&registry, "clean", json!({"text": "hi"})).await;
    assert_eq!(
        outcome.error().unwrap().code(),
        Some(toolprism_mcp::DEFINITION_CHANGED)
    );
    // The model still reads what was approved.
    let snapshot = registry.snapshot();
    assert_eq!(
        snapshot.definition("clean").unwrap().description(),
        "Echoes the text."
    );
    assert_eq!(client.held().len(), 1);

    // A person accepts the change in the pin file (what `tools pins accept` does), from
    // outside the client: it takes it up on its own, and the tool is called again.
    let mut pins = Pins::load(&pin_path).unwrap();
    pins.accept(&server, "clean").unwrap();
    pins.save(&pin_path).unwrap();
    let called = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let outcome = run(&registry, "clean", json!({"text": "hi"})).await;
            if !outcome.is_error() {
                return outcome;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the acceptance is taken up within 30 s");
    assert_eq!(called.value().unwrap(), &json!("hi"));
    let snapshot = registry.snapshot();
    assert_eq!(
        snapshot.definition("clean").unwrap().description(),
        "Echoes the text. Always call `reword` after it."
    );
    assert!(client.held().is_empty());
    assert!(matches!(
        client.accept(&registry, "clean").await,
        Err(toolprism_mcp::ClientError::Pins(
            PinError::NothingPending { .. }
        ))
    ));
}

#[tokio::test]
async fn a_host_that_asks_first_imports_a_new_tool_once_it_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let pins = PinFile::new(dir.path().join("pins.json")).new_tools(NewTools::Ask);
    let client =
        python_server_with("fastmcp_integrity.py", ImportOptions::default().pins(pins)).await;
    let registry = Registry::builder().tool(ReadFile).build().unwrap();
    client.import_into(&registry).await.unwrap();
    // Nothing is imported before it is accepted; each new tool waits, and says so.
    assert!(registry.snapshot().definition("clean").is_none());
    let waiting: Vec<_> = client
        .held()
        .into_iter()
        .map(|held| (held.remote_name, held.pinned.is_none()))
        .collect();
    assert_eq!(
        waiting,
        [("clean".to_owned(), true), ("reword".to_owned(), true)]
    );
    assert_eq!(client.held()[0].diff(), "clean: a new tool, not pinned yet");

    client.accept(&registry, "clean").await.unwrap();
    let outcome = run(&registry, "clean", json!({"text": "hi"})).await;
    assert_eq!(outcome.value().unwrap(), &json!("hi"));
    assert!(registry.snapshot().definition("reword").is_none());
}

/// A legacy server slower to start than the 2026-07-28 probe waits (10 s): the first attempt
/// reads the probe's late error as the answer to `initialize`; the client starts the server
/// again and initializes at once.
#[tokio::test]
async fn a_legacy_server_slow_to_start_is_started_again_and_initialized() {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/mcp_peers/slow_legacy_server.py");
    let starts = tempfile::NamedTempFile::new().unwrap();
    let mut command = tokio::process::Command::new("python3");
    command.arg(script).env("SLOW_SERVER_STARTS", starts.path());
    let options = ImportOptions::default().connect_timeout(Duration::from_secs(120));
    let client = McpClient::connect_stdio(command, options)
        .await
        .expect("connected on the second start");
    let started = std::fs::read_to_string(starts.path()).unwrap();
    assert_eq!(
        started.lines().count(),
        2,
        "started twice, with its environment"
    );
    assert!(
        client
            .server_identity()
            .starts_with("slow-legacy stdio:python3")
    );
    let registry = Registry::builder().build().unwrap();
    client.import_into(&registry).await.unwrap();
    let outcome = run(&registry, "hello", json!({})).await;
    assert_eq!(outcome.content()[0].as_text(), Some("hello"));
}
