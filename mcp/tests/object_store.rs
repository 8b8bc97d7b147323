//! Spilled output in object storage: written by one replica, read back through MCP
//! `resources/read` from another, with the in-memory and the local-file backends.

#![cfg(feature = "object-store")]

mod common;

use std::sync::Arc;

use common::PrintLines;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::json;
use toolprism::bound::{BoundLimits, Retention, ToolOutputStore};
use toolprism::prelude::*;
use toolprism_mcp::{
    HttpMode, ImportOptions, McpClient, McpServer, ObjectOutputStore, OutputResources,
};

/// A replica: its own registry and server, over the shared store.
async fn replica(store: Arc<dyn ObjectStore>) -> toolprism_mcp::RunningHttp {
    let registry = Registry::builder()
        .tool(PrintLines)
        .limits(BoundLimits::new(20, 4096))
        .output_store(OutputResources::new(ObjectOutputStore::new(
            store, "spilled",
        )))
        .build()
        .unwrap();
    McpServer::new(registry)
        .serve_http("127.0.0.1:0".parse().unwrap(), HttpMode::Stateless)
        .await
        .unwrap()
}

async fn spill_on_one_read_on_the_other(store: Arc<dyn ObjectStore>) {
    let (first, second) = (replica(store.clone()).await, replica(store).await);
    let full: String = (1..=300)
        .map(|n| format!("line {n}"))
        .collect::<Vec<_>>()
        .join("\n");

    let writer = McpClient::connect_http(&first.url(), ImportOptions::default())
        .await
        .unwrap();
    let result = writer
        .peer()
        .call_tool(
            CallToolRequestParams::new("print_lines")
                .with_arguments(json!({"lines": 300}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = &result.content[0].as_text().unwrap().text;
    let uri = common::marker_uri(text);

    let reader = McpClient::connect_http(&second.url(), ImportOptions::default())
        .await
        .unwrap();
    let read = reader
        .peer()
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    match &read.contents[..] {
        [ResourceContents::TextResourceContents { text, .. }] => assert_eq!(text, &full),
        other => panic!("expected the full text, got {other:?}"),
    }
    writer.close().await;
    reader.close().await;
    first.shutdown().await.unwrap();
    second.shutdown().await.unwrap();
}

#[tokio::test]
async fn replicas_share_spilled_output_in_memory() {
    spill_on_one_read_on_the_other(Arc::new(InMemory::new())).await;
}

#[tokio::test]
async fn replicas_share_spilled_output_in_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let local = LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    spill_on_one_read_on_the_other(Arc::new(local)).await;
}

#[tokio::test]
async fn handles_from_a_peer_name_nothing_outside_the_prefix() {
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let store = ObjectOutputStore::new(memory.clone(), "spilled");
    let retention = Retention::default();
    let kept = store
        .retain("../../x", "t", &["secret"], &retention)
        .await
        .unwrap();
    assert!(kept.handle.starts_with("tool_x-"), "{}", kept.handle);
    for hostile in ["../spilled/x", "tool_a/../../b", "", "tool_", "%2e%2e"] {
        assert_eq!(store.read(hostile).await.unwrap(), None, "{hostile}");
    }
    // Written once, never overwritten: two outputs of one call get two names.
    let again = store
        .retain("../../x", "t", &["other"], &retention)
        .await
        .unwrap();
    assert_ne!(again.handle, kept.handle);
    let read = store.read(&kept.handle).await.unwrap().unwrap();
    assert_eq!(read.text, "secret");
}
