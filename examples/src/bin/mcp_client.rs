//! Imports an MCP server's tools into a registry, lists them, and calls one through the
//! pipeline: the remote arguments validated here, the value checked against its schema.
//!
//! ```text
//! cargo run -p toolprism-examples --bin mcp_client -- [--call TOOL [ARGS_JSON]] URL
//! ```
//!
//! Prints one JSON line per imported tool, then, with `--call`, one line with the outcome.
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`, when set (the MCP conformance suite sets it), pins the
//! protocol version; otherwise 2026-07-28 is tried first, then 2025-11-25.

use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism_mcp::rmcp::model::ProtocolVersion;
use toolprism_mcp::{ImportOptions, McpClient};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let url = args
        .pop()
        .ok_or("usage: mcp_client [--call TOOL [ARGS_JSON]] URL")?;
    let call = match args.first().map(String::as_str) {
        Some("--call") => {
            let tool = args.get(1).ok_or("--call needs a tool name")?.clone();
            let arguments: Value = match args.get(2) {
                Some(text) => serde_json::from_str(text)?,
                None => json!({}),
            };
            Some((tool, arguments))
        }
        Some(other) => return Err(format!("unknown argument `{other}`").into()),
        None => None,
    };

    let mut options = ImportOptions::default();
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        options =
            options.protocol_version(serde_json::from_value::<ProtocolVersion>(json!(version))?);
    }
    let client = McpClient::connect_http(&url, options).await?;
    let registry = Registry::builder().build()?;
    for tool in client.import_into(&registry).await? {
        println!(
            "{}",
            json!({"tool": tool.local_name, "remote": tool.remote_name, "input_validated": tool.input_validated, "output_validated": tool.output_validated})
        );
    }
    if let Some((tool, arguments)) = call {
        let outcome = registry
            .dispatch(ToolCall::new("call-1", tool, arguments), Surface::Direct)
            .await;
        println!("{}", json!({"outcome": outcome}));
    }
    client.close().await;
    Ok(())
}
