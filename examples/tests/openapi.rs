//! `tools openapi`: a real API's document (the `FastAPI` application `scripts/openapi-api`
//! starts on loopback) listed, called, run from a Code Mode program, and served over MCP to a
//! real MCP client.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;
use toolprism::prelude::*;
use toolprism_mcp::{ImportOptions, McpClient};

struct Shop {
    base: String,
    _process: tokio::process::Child,
}

async fn shop() -> Shop {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut process = tokio::process::Command::new(root.join("scripts/openapi-api"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("scripts/openapi-api starts");
    let stdout = process.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    // The first run installs FastAPI: minutes, not seconds.
    let base = tokio::time::timeout(Duration::from_secs(600), lines.next_line())
        .await
        .expect("the shop starts")
        .unwrap()
        .expect("it prints its base URL");
    Shop {
        base,
        _process: process,
    }
}

fn tools(shop: &Shop, command: &[&str]) -> (String, String, bool) {
    let output = Command::new(env!("CARGO_BIN_EXE_tools"))
        .arg("openapi")
        .arg(format!("{}/openapi.json", shop.base))
        .args(command)
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.success(),
    )
}

#[tokio::test]
async fn an_apis_document_is_listed_called_and_programmed_from_the_command_line() {
    let shop = shop().await;
    let (listed, errors, ok) = tools(&shop, &["list"]);
    assert!(ok, "{errors}");
    let line = |name: &str| {
        listed
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {listed}"))
            .to_owned()
    };
    assert!(line("get_item").contains("{item_id} → object"), "{listed}");
    assert!(line("delete_item").contains("destructive"), "{listed}");
    assert!(line("run_code").contains("{code}"), "{listed}");

    let (called, errors, ok) = tools(&shop, &["call", "get_item", r#"{"item_id": 1}"#, "--json"]);
    assert!(ok, "{errors}");
    let called: Value = serde_json::from_str(&called).unwrap();
    assert_eq!(called["value"]["name"], "lamp");

    let (missing, _, ok) = tools(
        &shop,
        &["call", "get_item", r#"{"item_id": 404}"#, "--json"],
    );
    assert!(!ok);
    let missing: Value = serde_json::from_str(&missing).unwrap();
    assert_eq!(missing["error"]["info"]["code"], "HTTP_404", "{missing}");

    // Code Mode declares each operation's tool with its types.
    let (declared, errors, ok) = tools(&shop, &["schema", "run_code"]);
    assert!(ok, "{errors}");
    assert!(
        declared.contains("get_item(args: GetItemArgs)"),
        "{declared}"
    );
    assert!(
        declared.contains(r"type GetItemArgs = {\n  item_id: number;\n}"),
        "{declared}"
    );

    let program =
        json!({"code": "const item = await tools.get_item({item_id: 1}); return item.price * 2;"});
    let (ran, errors, ok) = tools(&shop, &["call", "run_code", &program.to_string(), "--json"]);
    assert!(ok, "{errors}");
    let ran: Value = serde_json::from_str(&ran).unwrap();
    assert_eq!(ran["value"]["result"], json!(25), "{ran}");
}

#[tokio::test]
async fn an_apis_document_is_served_over_mcp() {
    let shop = shop().await;
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_tools"));
    server
        .arg("openapi")
        .arg(format!("{}/openapi.json", shop.base))
        .arg("serve");
    let client = McpClient::connect_stdio(server, ImportOptions::default())
        .await
        .expect("the server starts");
    let registry = Registry::builder().build().unwrap();
    client.import_into(&registry).await.unwrap();
    let snapshot = registry.snapshot();
    let delete = snapshot
        .definition("delete_item")
        .expect("delete_item is served");
    assert_eq!(delete.about().hints.destructive, Some(true));
    let outcome = registry
        .dispatch(
            ToolCall::new("c1", "get_item", json!({"item_id": 1})),
            Surface::Direct,
        )
        .await;
    let value = serde_json::to_value(outcome.value().expect("a value")).unwrap();
    assert_eq!(value["name"], "lamp");
    let refused = registry
        .dispatch(
            ToolCall::new("c2", "get_item", json!({"item_id": "one"})),
            Surface::Direct,
        )
        .await;
    assert!(refused.is_error());
}
