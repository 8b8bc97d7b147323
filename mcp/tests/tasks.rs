//! Calls that become tasks (MCP's tasks extension): started on one replica, polled, answered
//! and cancelled on another that shares the task store; refused or run at once for a client
//! that does not take tasks.

#![cfg(feature = "object-store")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use object_store::local::LocalFileSystem;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, GetTaskResult, Implementation, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ClientHandler, ClientServiceExt as _, ServiceExt as _};
use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism_mcp::{McpServer, ObjectTaskStore};

/// Whether `wait_long`'s body was dropped before it ended.
static DROPPED: AtomicBool = AtomicBool::new(false);

/// Sets [`DROPPED`] when dropped.
struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
    }
}

/// A yes or no.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

/// Deletes a file once confirmed, as a task.
#[tool(task = "optional")]
async fn delete(#[arg] file: String, cx: &ToolContext) -> Result<String, ToolError> {
    match cx
        .elicit::<Confirm>("confirm", &format!("Delete {file}?"))
        .await?
    {
        toolprism::ask::Elicited::Accepted(Confirm { confirm: true }) => {
            Ok(format!("deleted {file}"))
        }
        _ => Ok(format!("kept {file}")),
    }
}

/// Waits a minute, as a task it must be.
#[tool(task = "required")]
async fn wait_long() -> String {
    let _flag = DropFlag;
    tokio::time::sleep(Duration::from_secs(60)).await;
    "waited".to_owned()
}

/// Answers at once.
#[tool]
fn quick() -> String {
    "quick".to_owned()
}

/// A client declaring the tasks extension (and forms), or nothing.
struct TestClient {
    tasks: bool,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.tasks {
            ClientCapabilities::builder()
                .enable_tasks()
                .enable_elicitation()
                .build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"))
    }
}

type Client = RunningService<RoleClient, TestClient>;

/// A replica over `store`, and a 2026-07-28 client of it.
async fn replica(store: &Arc<LocalFileSystem>, tasks: bool) -> Client {
    let registry = Registry::builder()
        .tool(Delete)
        .tool(WaitLong)
        .tool(Quick)
        .build()
        .unwrap();
    let server = McpServer::new(registry).with_task_store(
        ObjectTaskStore::new(store.clone(), "tasks"),
        Duration::from_secs(120),
    );
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    TestClient { tasks }
        .serve_with_lifecycle(
            client_io,
            rmcp::ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        unreachable!()
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(args)
}

async fn get(client: &Client, id: &str) -> GetTaskResult {
    client
        .peer()
        .get_task(GetTaskParams::new(id.to_owned()))
        .await
        .unwrap()
}

/// Polls (every 50 ms, at most 10 s) until the task's status is `want`.
async fn wait_for(client: &Client, id: &str, want: TaskStatus) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = serde_json::to_value(get(client, id).await).unwrap();
            if task["status"] == serde_json::to_value(want).unwrap() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the task reached the status within 10 s")
}

#[tokio::test]
async fn a_task_started_on_one_replica_is_answered_and_finished_through_another() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let (first, second) = (replica(&store, true).await, replica(&store, true).await);

    let CallToolResponse::Task(created) = first
        .call_tool_once(call("delete", json!({"file": "a.txt"})))
        .await
        .unwrap()
    else {
        panic!("a client that takes tasks gets one")
    };
    let id = created.task.task_id.clone();
    assert_eq!(id.len(), 32);

    // The other replica sees the question the task waits on.
    let waiting = wait_for(&second, &id, TaskStatus::InputRequired).await;
    let asked = &waiting["inputRequests"]["confirm"];
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "Delete a.txt?");

    // Answered there (with a key nobody asked, which is ignored), it finishes on the first.
    let answers = [
        (
            "confirm".to_owned(),
            json!({"action": "accept", "content": {"confirm": true}}),
        ),
        ("unasked".to_owned(), json!({"action": "decline"})),
    ];
    second
        .peer()
        .update_task(UpdateTaskParams::new(
            id.clone(),
            answers.into_iter().collect(),
        ))
        .await
        .unwrap();
    let done = wait_for(&first, &id, TaskStatus::Completed).await;
    assert_eq!(done["result"]["content"][0]["text"], "deleted a.txt");
    assert_eq!(done["result"]["isError"], false);
}

#[tokio::test]
async fn a_cancelled_task_drops_its_body_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let (first, second) = (replica(&store, true).await, replica(&store, true).await);
    let CallToolResponse::Task(created) = first
        .call_tool_once(call("wait_long", json!({})))
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    let id = created.task.task_id;
    assert_eq!(
        wait_for(&first, &id, TaskStatus::Working).await["taskId"],
        id
    );
    assert!(!DROPPED.load(Ordering::SeqCst));

    let cancel = || CancelTaskParams::new(id.clone());
    second.peer().cancel_task(cancel()).await.unwrap();
    wait_for(&second, &id, TaskStatus::Cancelled).await;
    assert!(DROPPED.load(Ordering::SeqCst), "the body was dropped");
    // Cancelling what has ended is acknowledged the same.
    second.peer().cancel_task(cancel()).await.unwrap();
}

#[tokio::test]
async fn a_client_that_takes_no_tasks_gets_results_or_is_told_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let client = replica(&store, false).await;
    let quick = client
        .call_tool_once(call("quick", json!({})))
        .await
        .unwrap();
    assert!(matches!(quick, CallToolResponse::Complete(_)));

    let refused = client
        .call_tool_once(call("wait_long", json!({})))
        .await
        .unwrap_err();
    let rmcp::ServiceError::McpError(error) = refused else {
        panic!("a protocol error: {refused:?}")
    };
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
}

#[tokio::test]
async fn a_task_id_nobody_made_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let client = replica(&store, true).await;
    for id in ["0123456789abcdef0123456789abcdef", "../../etc/passwd", ""] {
        let error = client
            .peer()
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap_err();
        let rmcp::ServiceError::McpError(error) = error else {
            panic!("a protocol error")
        };
        assert_eq!(error.code.0, -32602, "{id}");
    }
}
