//! A decision on a call, over MCP (2026-07-28, a real rmcp client): the call waits in the
//! session log, the person behind the client is asked as an input request (elicitation), the
//! answer is logged before the call runs, and a task waits in `input_required` for it and then
//! finishes.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams,
    Implementation, ProtocolVersion, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use serde_json::{Value, json};
use toolprism::context::State;
use toolprism::pipeline::{ExecuteCall, PreDecision, PreExecutePolicy};
use toolprism::prelude::*;
use toolprism::session::{Decision, Decisions, LogOptions, SessionEvent, SessionLog};
use toolprism_mcp::McpServer;

/// Where the tools write down each time they run.
#[derive(Clone)]
struct Ledger(std::path::PathBuf);

impl Ledger {
    fn write(&self, line: &str) {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.0)
            .unwrap();
        writeln!(file, "{line}").unwrap();
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// Removes a file.
#[tool(destructive)]
fn remove(#[arg] path: String, State(ledger): State<Ledger>) -> String {
    ledger.write(&format!("remove {path}"));
    format!("removed {path}")
}

/// Removes a file, as a task.
#[tool(destructive, task = "optional")]
fn remove_later(#[arg] path: String, State(ledger): State<Ledger>) -> String {
    ledger.write(&format!("remove later {path}"));
    format!("removed {path} later")
}

/// Asks before every call.
struct AskFirst;

impl PreExecutePolicy for AskFirst {
    fn check(&self, call: &ExecuteCall) -> PreDecision {
        PreDecision::ask(format!("Remove {}?", call.args()["path"]))
    }

    fn name(&self) -> &'static str {
        "ask-first"
    }
}

struct FormClient;

impl ClientHandler for FormClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_tasks()
                .build(),
            Implementation::new("decisions-test", "0"),
        )
    }
}

type Client = RunningService<RoleClient, FormClient>;

/// A server whose approver is the decisions of the log in `dir`, and a 2026-07-28 client.
async fn serve(dir: &Path) -> (Client, SessionLog) {
    let (log, _) = SessionLog::open(dir.join("session.jsonl"), LogOptions::default()).unwrap();
    let decisions = Decisions::open(&log).unwrap();
    let registry = Registry::builder()
        .state(Ledger(dir.join("ledger.txt")))
        .tool(Remove)
        .tool(RemoveLater)
        .pre_execute(AskFirst)
        .approver(decisions)
        .build()
        .unwrap();
    let server = McpServer::new(registry);
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = FormClient
        .serve_with_lifecycle(
            client_io,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    (client, log)
}

fn call(name: &str, path: &str) -> CallToolRequestParams {
    let Value::Object(args) = json!({ "path": path }) else {
        unreachable!()
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(args)
}

/// The decision events the log holds.
fn decisions_logged(log: &SessionLog) -> Vec<SessionEvent> {
    SessionLog::read(log.path())
        .unwrap()
        .events
        .into_iter()
        .filter(|event| {
            matches!(
                event,
                SessionEvent::DecisionRequested(_) | SessionEvent::Decided(_)
            )
        })
        .collect()
}

#[tokio::test]
async fn the_client_is_asked_and_its_answer_is_logged_before_the_call_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let (client, log) = serve(dir.path()).await;

    let CallToolResponse::InputRequired(asked) = client
        .call_tool_once(call("remove", "a.txt"))
        .await
        .unwrap()
    else {
        panic!("the decision is asked first")
    };
    let requests = serde_json::to_value(asked.input_requests.unwrap()).unwrap();
    let form = &requests["decision-0"];
    assert_eq!(form["method"], "elicitation/create");
    assert_eq!(form["params"]["message"], "Remove \"a.txt\"? (`remove`)");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["decision"]["enum"],
        json!(["approve", "reject"])
    );
    assert!(ledger.lines().is_empty());
    let logged = decisions_logged(&log);
    assert!(
        matches!(&logged[..], [SessionEvent::DecisionRequested(request)] if request.policy == "ask-first")
    );

    let mut approved = call("remove", "a.txt");
    approved.request_state = asked.request_state;
    approved.input_responses = Some(
        [(
            "decision-0".to_owned(),
            json!({"action": "accept", "content": {"decision": "approve"}}),
        )]
        .into_iter()
        .collect(),
    );
    let CallToolResponse::Complete(done) = client.call_tool_once(approved).await.unwrap() else {
        panic!("approved, the call completes")
    };
    assert_eq!(done.structured_content, Some(json!("removed a.txt")));
    assert_eq!(ledger.lines(), ["remove a.txt"]);
    let logged = decisions_logged(&log);
    // Each round came with a request id of its own; the answer settles both.
    assert!(
        matches!(&logged[..], [_, _, SessionEvent::Decided(decided)] if decided.decision == Decision::Approve && decided.on_form),
        "{logged:?}"
    );
    let reopened = Decisions::open(&log).unwrap();
    assert!(reopened.pending().is_empty(), "{:?}", reopened.pending());

    // Rejected with a reason, the call does not run, and the model is told why.
    let CallToolResponse::InputRequired(asked) = client
        .call_tool_once(call("remove", "b.txt"))
        .await
        .unwrap()
    else {
        panic!("asked again for another call")
    };
    let mut rejected = call("remove", "b.txt");
    rejected.request_state = asked.request_state;
    rejected.input_responses = Some(
        [(
            "decision-0".to_owned(),
            json!({"action": "accept", "content": {"decision": "reject", "reason": "b.txt is needed"}}),
        )]
        .into_iter()
        .collect(),
    );
    let CallToolResponse::Complete(done) = client.call_tool_once(rejected).await.unwrap() else {
        panic!("rejected, the call completes as a failure")
    };
    assert_eq!(done.is_error, Some(true));
    let text = serde_json::to_value(&done.content).unwrap()[0]["text"].clone();
    assert!(text.as_str().unwrap().contains("b.txt is needed"), "{text}");
    assert_eq!(ledger.lines(), ["remove a.txt"]);
}

#[tokio::test]
async fn a_task_waits_for_the_decision_and_then_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let (client, log) = serve(dir.path()).await;

    let CallToolResponse::Task(created) = client
        .call_tool_once(call("remove_later", "c.txt"))
        .await
        .unwrap()
    else {
        panic!("a client that takes tasks gets one")
    };
    let id = created.task.task_id.clone();
    let waiting = status(&client, &id, TaskStatus::InputRequired).await;
    assert_eq!(
        waiting["inputRequests"]["decision-0"]["method"],
        "elicitation/create"
    );
    assert!(ledger.lines().is_empty());

    client
        .peer()
        .update_task(UpdateTaskParams::new(
            id.clone(),
            [(
                "decision-0".to_owned(),
                json!({"action": "accept", "content": {"decision": "approve"}}),
            )]
            .into_iter()
            .collect(),
        ))
        .await
        .unwrap();
    let done = status(&client, &id, TaskStatus::Completed).await;
    assert_eq!(done["result"]["content"][0]["text"], "removed c.txt later");
    assert_eq!(ledger.lines(), ["remove later c.txt"]);
    assert_eq!(decisions_logged(&log).len(), 2);
}

/// Polls (every 50 ms, at most 10 s) until the task's status is `want`.
async fn status(client: &Client, id: &str, want: TaskStatus) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let task = client
                .peer()
                .get_task(GetTaskParams::new(id.to_owned()))
                .await
                .unwrap();
            let task = serde_json::to_value(task).unwrap();
            if task["status"] == serde_json::to_value(want).unwrap() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the task reached the status within 10 s")
}
