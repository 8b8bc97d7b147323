//! Input-required rounds (2026-07-28) across replicas: a state sealed by one replica is opened
//! by another with the same key, and refused by one with another key, once expired, or for
//! other arguments.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use serde_json::{Value, json};
use toolprism::ask::Elicited;
use toolprism::prelude::*;
use toolprism_mcp::McpServer;

/// A name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Greets whoever the user says they are.
#[tool]
async fn greet(#[arg] greeting: String, cx: &ToolContext) -> Result<String, ToolError> {
    match cx.elicit::<Name>("who", "Who are you?").await? {
        Elicited::Accepted(Name { name }) => Ok(format!("{greeting}, {name}!")),
        _ => Ok(format!("{greeting}!")),
    }
}

struct FormClient;

impl ClientHandler for FormClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("rounds-test", "0"),
        )
    }
}

/// A replica sealing with `key` for `ttl`, and a 2026-07-28 client of it.
async fn replica(key: &[u8], ttl: Duration) -> RunningService<RoleClient, FormClient> {
    let registry = Registry::builder().tool(Greet).build().unwrap();
    let server = McpServer::new(registry)
        .with_request_state_key(key, ttl)
        .unwrap();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    FormClient
        .serve_with_lifecycle(
            client_io,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

fn call(greeting: &str) -> CallToolRequestParams {
    let Value::Object(args) = json!({ "greeting": greeting }) else {
        unreachable!()
    };
    CallToolRequestParams::new("greet").with_arguments(args)
}

/// Round one on `first`: the state it sealed.
async fn first_round(first: &RunningService<RoleClient, FormClient>) -> String {
    let CallToolResponse::InputRequired(asked) = first.call_tool_once(call("Hello")).await.unwrap()
    else {
        panic!("the form is asked first")
    };
    let requests = serde_json::to_value(asked.input_requests.unwrap()).unwrap();
    assert_eq!(requests["who"]["method"], "elicitation/create");
    asked.request_state.expect("a sealed state")
}

/// Round two: the answer and `state`, with these arguments.
fn retry(greeting: &str, state: String) -> CallToolRequestParams {
    let mut params = call(greeting);
    params.input_responses = Some(
        [(
            "who".to_owned(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )]
        .into_iter()
        .collect(),
    );
    params.request_state = Some(state);
    params
}

fn refused(result: Result<CallToolResponse, rmcp::ServiceError>) -> String {
    match result {
        Err(rmcp::ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602);
            error.message.into_owned()
        }
        other => panic!("refused, not {other:?}"),
    }
}

#[tokio::test]
async fn a_replica_with_the_same_key_resumes_what_another_asked() {
    let key = [7u8; 32];
    let first = replica(&key, Duration::from_secs(60)).await;
    let second = replica(&key, Duration::from_secs(60)).await;
    let state = first_round(&first).await;
    let CallToolResponse::Complete(done) =
        second.call_tool_once(retry("Hello", state)).await.unwrap()
    else {
        panic!("the second round completes")
    };
    assert_eq!(done.structured_content, Some(json!("Hello, Ada!")));
}

#[tokio::test]
async fn a_state_is_refused_by_another_key_for_other_arguments_and_once_expired() {
    let first = replica(&[7u8; 32], Duration::from_secs(60)).await;
    let stranger = replica(&[8u8; 32], Duration::from_secs(60)).await;
    let state = first_round(&first).await;
    let message = refused(stranger.call_tool_once(retry("Hello", state.clone())).await);
    assert!(message.contains("requestState"), "{message}");
    // Bound to the call's arguments: a state cannot carry answers to another call.
    refused(first.call_tool_once(retry("Goodbye", state)).await);

    let brief = replica(&[9u8; 32], Duration::from_millis(1)).await;
    let state = first_round(&brief).await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    refused(brief.call_tool_once(retry("Hello", state)).await);
}

#[test]
fn a_key_shorter_than_32_bytes_is_refused() {
    let registry = Registry::builder().build().unwrap();
    let error = McpServer::new(registry)
        .with_request_state_key(&[1u8; 31], Duration::from_secs(60))
        .unwrap_err();
    assert!(error.to_string().contains("32"), "{error}");
}
