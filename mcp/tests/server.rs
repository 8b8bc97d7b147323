//! `McpServer` driven by rmcp's own client, at 2025-11-25 and 2026-07-28.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{Generation, Heard, connect, hear, registry, temp_dir};
use rmcp::model::{
    CallToolRequestParams, ReadResourceRequestParams, RequestMetaObject, ResourceContents,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism_mcp::{CARD_META_KEY, ERROR_META_KEY, McpServer};

const BOTH: [Generation; 2] = [Generation::Legacy, Generation::Current];

fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments are an object"),
    }
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(args(arguments))
}

#[tokio::test]
async fn tools_are_listed_in_registration_order_with_their_schemas() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    let snapshot = registry.snapshot();
    for generation in BOTH {
        let (client, _) = connect(McpServer::new(registry.clone()), generation).await;
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<_> = tools.iter().map(|tool| tool.name.to_string()).collect();
        let registered: Vec<_> = snapshot
            .definitions()
            .map(|d| d.name().to_owned())
            .collect();
        assert_eq!(names, registered, "{generation:?}");
        for tool in &tools {
            let definition = snapshot.definition(&tool.name).unwrap();
            assert_eq!(
                &Value::Object((*tool.input_schema).clone()),
                definition.input_schema()
            );
            let output = Value::Object((*tool.output_schema.clone().unwrap()).clone());
            let object_rooted = definition.output_schema()["type"] == "object";
            if generation == Generation::Current || object_rooted {
                assert_eq!(&output, definition.output_schema(), "{}", tool.name);
            } else {
                // Wrapped for 2025-11-25, the way FastMCP does it, definitions at the root.
                assert_eq!(output["type"], "object");
                assert_eq!(output["x-fastmcp-wrap-result"], true);
                assert_eq!(output["required"], json!(["result"]));
                let mut inner = output["properties"]["result"].clone();
                for key in ["$defs", "$schema"] {
                    if let Some(moved) = output.get(key) {
                        inner[key] = moved.clone();
                    }
                }
                assert_eq!(&inner, definition.output_schema(), "{}", tool.name);
            }
        }
    }
}

#[tokio::test]
async fn a_success_carries_the_rendered_content_the_value_and_the_card() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    for generation in BOTH {
        let (client, _) = connect(McpServer::new(registry.clone()), generation).await;
        let result = client
            .call_tool(call("lookup", json!({"city": "Paris"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.content.len(), 1);
        assert_eq!(result.content[0].as_text().unwrap().text, "Paris: 5 °C");
        assert_eq!(
            result.structured_content,
            Some(json!({"city": "Paris", "celsius": 5}))
        );
        let meta = result.meta.expect("the card is in _meta");
        assert_eq!(meta.0[CARD_META_KEY]["card"], "generic");
        assert_eq!(meta.0[CARD_META_KEY]["title"], "Weather in Paris");

        // A list: as it is for 2026-07-28, wrapped for 2025-11-25.
        let result = client
            .call_tool(call("search", json!({"needle": "x", "count": 2})))
            .await
            .unwrap();
        let hits = json!([{"line": 1, "text": "x at 1"}, {"line": 2, "text": "x at 2"}]);
        let expected = match generation {
            Generation::Current => hits.clone(),
            Generation::Legacy => json!({ "result": hits }),
        };
        assert_eq!(result.structured_content, Some(expected), "{generation:?}");
        // The text is the rendering, never the raw JSON pushed ahead of it.
        assert_eq!(result.content.len(), 1);
        assert_eq!(
            serde_json::from_str::<Value>(&result.content[0].as_text().unwrap().text).unwrap(),
            hits
        );
    }
}

#[tokio::test]
async fn invalid_arguments_are_a_tool_error_and_an_unknown_tool_is_invalid_params() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    for generation in BOTH {
        let (client, _) = connect(McpServer::new(registry.clone()), generation).await;
        let result = client
            .call_tool(call("lookup", json!({"city": 3})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None);
        let meta = result.meta.unwrap();
        assert_eq!(meta.0[ERROR_META_KEY]["code"], codes::INVALID_TOOL_INPUT);
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.contains("/city"), "{text}");

        let result = client.call_tool(call("broken", json!({}))).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.meta.unwrap().0[ERROR_META_KEY]["code"], "ON_FIRE");
        assert_eq!(
            result.content[0].as_text().unwrap().text,
            "the disk is on fire"
        );

        let error = client
            .call_tool(call("no_such_tool", json!({})))
            .await
            .unwrap_err();
        match error {
            ServiceError::McpError(error) => {
                assert_eq!(error.code.0, -32602);
                assert!(error.message.contains("no_such_tool"), "{}", error.message);
            }
            other => panic!("expected a JSON-RPC error, got {other}"),
        }
    }
}

#[tokio::test]
async fn spilled_output_is_read_back_through_resources() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    let full: String = (1..=500)
        .map(|n| format!("line {n}"))
        .collect::<Vec<_>>()
        .join("\n");
    for generation in BOTH {
        let (client, _) = connect(McpServer::new(registry.clone()), generation).await;
        let result = client
            .call_tool(call("print_lines", json!({"lines": 500})))
            .await
            .unwrap();
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.len() < full.len());
        let uri = common::marker_uri(text);
        // The value itself is never bounded.
        let value = match generation {
            Generation::Current => json!(full),
            Generation::Legacy => json!({ "result": full }),
        };
        assert_eq!(result.structured_content, Some(value));
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        match &read.contents[..] {
            [ResourceContents::TextResourceContents { text, uri: at, .. }] => {
                assert_eq!(text, &full);
                assert_eq!(at, &uri);
            }
            other => panic!("expected one text resource, got {other:?}"),
        }
        for hostile in [
            "toolprism://output/../../etc/passwd",
            "toolprism://output/tool_nothing-here",
            "file:///etc/passwd",
        ] {
            let error = client
                .read_resource(ReadResourceRequestParams::new(hostile))
                .await
                .unwrap_err();
            assert!(
                matches!(error, ServiceError::McpError(_)),
                "{hostile}: {error}"
            );
        }
    }
}

#[tokio::test]
async fn progress_reaches_a_client_that_sent_a_token() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    for generation in BOTH {
        let (client, mut heard) = connect(McpServer::new(registry.clone()), generation).await;
        let mut params = call("count_to", json!({"to": 5}));
        let token = rmcp::model::ProgressToken(rmcp::model::NumberOrString::String("t-1".into()));
        params.meta = Some(RequestMetaObject::with_progress_token(token));
        let result = client.call_tool(params).await.unwrap();
        assert_eq!(result.is_error, Some(false));
        // rmcp's client may put its own token in place of ours: one token, whichever it is.
        let mut tokens = std::collections::HashSet::new();
        let mut steps = Vec::new();
        while steps.len() < 5 {
            let progress = hear(&mut heard, |heard| match heard {
                Heard::Progress(progress) => Some(progress),
                Heard::ToolListChanged => None,
            })
            .await;
            tokens.insert(format!("{:?}", progress.progress_token));
            assert_eq!(progress.total, Some(5.0));
            steps.push(progress.progress);
        }
        assert_eq!(steps, [1.0, 2.0, 3.0, 4.0, 5.0], "{generation:?}");
        assert_eq!(tokens.len(), 1, "{tokens:?}");
    }
}

/// Registers a tool named `late`.
fn late() -> ToolDef {
    ToolDef::builder("late")
        .description("Registered after the server started.")
        .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(json!({})) })
        .build()
}

#[tokio::test]
async fn a_legacy_session_is_told_when_the_registry_changes() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    let (client, mut heard) = connect(McpServer::new(registry.clone()), Generation::Legacy).await;
    let before = client.list_all_tools().await.unwrap().len();
    registry.register(late()).unwrap();
    hear(&mut heard, |heard| {
        matches!(heard, Heard::ToolListChanged).then_some(())
    })
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), before + 1);
    assert_eq!(tools.last().unwrap().name, "late");
}

#[tokio::test]
async fn a_current_client_hears_of_changes_on_its_subscription() {
    let dir = temp_dir();
    let registry = registry(dir.path());
    let (client, _) = connect(McpServer::new(registry.clone()), Generation::Current).await;
    let mut subscription = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    registry.register(late()).unwrap();
    let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("the change is announced within 10 s")
        .unwrap();
    assert!(
        matches!(
            notification,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{notification:?}"
    );
    assert!(
        client
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .any(|tool| tool.name == "late")
    );
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_cancelled_call_drops_the_dispatch() {
    let started = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicBool::new(false));
    let (on_start, on_drop) = (started.clone(), dropped.clone());
    let forever = ToolDef::builder("forever")
        .description("Never finishes.")
        .handler(move |_: Value, _cx: ToolContext| {
            let flag = DropFlag(on_drop.clone());
            on_start.store(true, Ordering::SeqCst);
            async move {
                let _flag = flag;
                std::future::pending::<()>().await;
                Ok::<_, ToolError>(json!({}))
            }
        })
        .build();
    let registry = Registry::builder().tool(forever).build().unwrap();
    for generation in BOTH {
        started.store(false, Ordering::SeqCst);
        dropped.store(false, Ordering::SeqCst);
        let (client, _) = connect(McpServer::new(registry.clone()), generation).await;
        let call = client.call_tool_once(call("forever", json!({})));
        // Dropping the request cancels it on the server.
        let _ = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(started.load(Ordering::SeqCst), "the body started");
        tokio::time::timeout(Duration::from_secs(10), async {
            while !dropped.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the body is dropped within 10 s of the cancellation");
    }
}
