//! Imports an MCP server's tools into a registry, lists them, and calls one through the
//! pipeline: the remote arguments validated here, the value checked against its schema.
//!
//! ```text
//! cargo run -p toolprism-examples --bin mcp_client -- [--oauth] [--client-metadata-url URL]
//!     [--call TOOL [ARGS_JSON]] URL
//! ```
//!
//! Prints one JSON line per imported tool, then, with `--call`, one line with the outcome.
//! A form the server asks for during the call is accepted with each field's default (an
//! answerer a host without a person would give; a terminal host asks instead); a completion
//! or the roots are refused, so the call fails with `INPUT_UNAVAILABLE` if the tool needs
//! them.
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`, when set (the MCP conformance suite sets it), pins the
//! protocol version; otherwise 2026-07-28 is tried first, then 2025-11-25.
//!
//! With `--oauth`, a server that answers 401 is authorized (OAuth 2.1, PKCE) by an
//! authorization server that grants without asking a person (`FollowRedirect`): the client
//! registers with its metadata document (`--client-metadata-url`) where the server takes one,
//! else dynamically, or as the client of `MCP_CONFORMANCE_CONTEXT`'s `client_id` and
//! `client_secret` when set.

use serde_json::{Map, Value, json};
use toolprism::BoxFuture;
use toolprism::ask::{Answerer, AskError, InputKind, InputRequest};
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;
use toolprism_mcp::rmcp::model::ProtocolVersion;
use toolprism_mcp::{FollowRedirect, ImportOptions, McpClient, OAuth};

/// Accepts every form with the defaults its schema gives.
struct AcceptDefaults;

impl Answerer for AcceptDefaults {
    fn can_answer(&self, kind: InputKind) -> bool {
        kind == InputKind::Elicitation
    }

    fn answer<'a>(
        &'a self,
        _key: &'a str,
        request: &'a InputRequest,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        let answer = match request.kind() {
            InputKind::Elicitation => {
                let properties = request.params()["requestedSchema"]["properties"].as_object();
                let content: Map<String, Value> = properties
                    .into_iter()
                    .flatten()
                    .filter_map(|(name, property)| {
                        Some((name.clone(), property.get("default")?.clone()))
                    })
                    .collect();
                Ok(json!({"action": "accept", "content": content}))
            }
            _ => Err(AskError::Unavailable(
                "this client has no model and no roots".into(),
            )),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: mcp_client [--oauth] [--client-metadata-url URL] [--call TOOL [ARGS_JSON]] URL

Imports the tools of the MCP server at URL, prints one JSON line per tool, and with --call
calls one through the pipeline and prints its outcome.

Options:
  --oauth                      authorize when the server answers 401 (OAuth 2.1, PKCE)
  --client-metadata-url URL    the client's metadata document, where the server takes one
  --call TOOL [ARGS_JSON]      call TOOL with these arguments (default {})
  -h, --help                   print this
";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let url = args.pop().ok_or(
        "usage: mcp_client [--oauth] [--client-metadata-url URL] [--call TOOL [ARGS_JSON]] URL",
    )?;
    let mut call = None;
    let mut oauth = false;
    let mut client_metadata_url = None;
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--call" => {
                let tool = args.next().ok_or("--call needs a tool name")?;
                let arguments: Value = match args.next_if(|next| !next.starts_with("--")) {
                    Some(text) => serde_json::from_str(&text)?,
                    None => json!({}),
                };
                call = Some((tool, arguments));
            }
            "--oauth" => oauth = true,
            "--client-metadata-url" => {
                client_metadata_url = Some(args.next().ok_or("--client-metadata-url needs a URL")?);
            }
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }

    let mut options = ImportOptions::default();
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        options =
            options.protocol_version(serde_json::from_value::<ProtocolVersion>(json!(version))?);
    }
    if oauth {
        // Never visited: the authorization server's redirect is read, not followed.
        let mut authorization =
            OAuth::new("http://localhost:3000/callback", FollowRedirect::new()?)
                .client_name("toolprism mcp_client");
        if let Some(url) = client_metadata_url {
            authorization = authorization.client_metadata_url(url);
        }
        if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT") {
            let context: Value = serde_json::from_str(&context)?;
            if let Some(client_id) = context["client_id"].as_str() {
                let secret = context["client_secret"].as_str().map(str::to_owned);
                authorization = authorization.client_id(client_id, secret);
            }
        }
        options = options.oauth(authorization);
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
        let options = DispatchOptions::default().answerer(AcceptDefaults);
        let outcome = registry
            .snapshot()
            .dispatch_with(
                ToolCall::new("call-1", tool, arguments),
                Surface::Direct,
                options,
            )
            .await;
        println!("{}", json!({"outcome": outcome}));
    }
    client.close().await;
    Ok(())
}
