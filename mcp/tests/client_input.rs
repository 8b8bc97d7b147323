//! What an imported tool's server asks during a call reaches the local call's answerer: an
//! input-required result (2026-07-28) retried with the answers, a live request (2025-11-25),
//! and a task polled to its end and cancelled when the local call is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use toolprism::BoxFuture;
use toolprism::ask::{Answerer, AskError, Elicited, InputKind, InputRequest};
use toolprism::error::codes;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;
use toolprism_mcp::{ImportOptions, McpClient, McpServer};

/// Set when `wait_long`'s body is dropped before it ends.
static DROPPED: AtomicBool = AtomicBool::new(false);

struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
    }
}

/// A name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Greets whoever the user says they are.
#[tool]
async fn greet(cx: &ToolContext) -> Result<String, ToolError> {
    match cx.elicit::<Name>("who", "Who are you?").await? {
        Elicited::Accepted(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello, stranger!".to_owned()),
    }
}

/// Greets, as a task.
#[tool(task = "optional")]
async fn greet_later(cx: &ToolContext) -> Result<String, ToolError> {
    let Elicited::Accepted(Name { name }) = cx.elicit::<Name>("who", "Who are you?").await? else {
        return Ok("Hello, stranger!".to_owned());
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(format!("Hello later, {name}!"))
}

/// Waits a minute, as a task.
#[tool(task = "required")]
async fn wait_long() -> String {
    let _flag = DropFlag;
    tokio::time::sleep(Duration::from_secs(60)).await;
    "waited".to_owned()
}

/// Lets `work` finish.
static FINISH: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Works as a task, saying where it is, until the test lets it finish.
#[tool(task = "required")]
async fn work(cx: &ToolContext) -> String {
    cx.progress(1.0, Some(2.0), "halfway");
    FINISH.notified().await;
    "worked".to_owned()
}

/// Keeps the messages of the progress it hears.
#[derive(Default)]
struct Heard(std::sync::Mutex<Vec<String>>);

impl toolprism::context::ProgressSink for Heard {
    fn report(&self, progress: &toolprism::context::Progress) {
        if let Some(message) = &progress.message {
            self.0.lock().unwrap().push(message.clone());
        }
    }
}

/// Answers every form with one name, and counts what it was asked.
struct Ada(AtomicUsize);

impl Answerer for Ada {
    fn can_answer(&self, kind: InputKind) -> bool {
        kind == InputKind::Elicitation
    }

    fn answer<'a>(
        &'a self,
        _key: &'a str,
        request: &'a InputRequest,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.params()["message"], "Who are you?");
        Box::pin(async { Ok(json!({"action": "accept", "content": {"name": "Ada"}})) })
    }
}

/// A server of the three tools, and a client importing them at `version`.
async fn imported(version: ProtocolVersion) -> (McpClient, Registry) {
    let served = Registry::builder()
        .tool(Greet)
        .tool(GreetLater)
        .tool(WaitLong)
        .tool(Work)
        .build()
        .unwrap();
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = McpServer::new(served).serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let options = ImportOptions::default()
        .protocol_version(version)
        .call_timeout(Duration::from_secs(2));
    let client = McpClient::connect(client_io, options).await.unwrap();
    let registry = Registry::builder().build().unwrap();
    client.import_into(&registry).await.unwrap();
    (client, registry)
}

async fn call(registry: &Registry, tool: &str, answerer: Option<Arc<Ada>>) -> ToolOutcome {
    let mut options = DispatchOptions::default();
    if let Some(answerer) = answerer {
        options = options.shared_answerer(answerer);
    }
    registry
        .snapshot()
        .dispatch_with(
            ToolCall::new("c1", tool, json!({})),
            Surface::Direct,
            options,
        )
        .await
}

#[tokio::test]
async fn a_servers_question_is_answered_by_the_local_calls_answerer_at_both_versions() {
    for version in [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25] {
        let (_client, registry) = imported(version.clone()).await;
        let ada = Arc::new(Ada(AtomicUsize::new(0)));
        let outcome = call(&registry, "greet", Some(ada.clone())).await;
        assert_eq!(
            outcome.value().unwrap(),
            &json!("Hello, Ada!"),
            "{version:?}"
        );
        assert_eq!(ada.0.load(Ordering::SeqCst), 1, "{version:?}");
    }
}

#[tokio::test]
async fn without_an_answerer_the_local_call_fails_with_its_own_code() {
    let (_client, registry) = imported(ProtocolVersion::V_2026_07_28).await;
    let outcome = call(&registry, "greet", None).await;
    assert_eq!(
        outcome.error().and_then(|error| error.code()),
        Some(codes::INPUT_UNAVAILABLE)
    );
}

#[tokio::test]
async fn a_task_is_followed_to_its_end_its_question_answered() {
    let (_client, registry) = imported(ProtocolVersion::V_2026_07_28).await;
    let ada = Arc::new(Ada(AtomicUsize::new(0)));
    let outcome = call(&registry, "greet_later", Some(ada.clone())).await;
    assert_eq!(outcome.value().unwrap(), &json!("Hello later, Ada!"));
    assert_eq!(ada.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_local_call_that_times_out_cancels_the_remote_task() {
    let (_client, registry) = imported(ProtocolVersion::V_2026_07_28).await;
    let outcome = call(&registry, "wait_long", None).await;
    assert_eq!(
        outcome.error().and_then(|error| error.code()),
        Some(toolprism_mcp::SERVER_TIMEOUT)
    );
    // The task's runner reads the cancellation within its poll.
    tokio::time::timeout(Duration::from_secs(5), async {
        while !DROPPED.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the remote task's body was dropped within 5 s");
}

#[tokio::test]
async fn a_tasks_status_message_reaches_the_local_call_as_progress() {
    let (_client, registry) = imported(ProtocolVersion::V_2026_07_28).await;
    let heard = Arc::new(Heard::default());
    let options = DispatchOptions::default().shared_progress(heard.clone());
    let snapshot = registry.snapshot();
    let call = tokio::spawn(async move {
        snapshot
            .dispatch_with(
                ToolCall::new("c1", "work", json!({})),
                Surface::Direct,
                options,
            )
            .await
    });
    // The remote task's status message arrives while it works.
    tokio::time::timeout(Duration::from_secs(10), async {
        while heard.0.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the status message was heard within 10 s");
    FINISH.notify_one();
    let outcome = call.await.unwrap();
    assert_eq!(outcome.value().unwrap(), &json!("worked"));
    assert_eq!(*heard.0.lock().unwrap(), ["halfway"]);
}
