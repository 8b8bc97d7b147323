//! Python MCP servers — FastMCP and the official SDK's `MCPServer` — imported by the Rust
//! client over stdio. `scripts/mcp-peer` installs the pinned packages on first use.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism_mcp::{ImportOptions, McpClient, REMOTE_TOOL_ERROR};

async fn python_server(script: &str) -> McpClient {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut command = tokio::process::Command::new(root.join("scripts/mcp-peer"));
    command.arg(script);
    // The first run installs the SDKs: minutes, not the default 30 s.
    let options = ImportOptions::default().connect_timeout(Duration::from_secs(600));
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
