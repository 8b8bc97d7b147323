//! A scripted session run live and logged, then replayed with no tool executed: the model's
//! content and the cards must come out byte for byte as they were live.

use std::fs;
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use toolprism::Snapshot;
use toolprism::bound::{BoundLimits, FsOutputStore};
use toolprism::pipeline::{ExecuteCall, PostDecision};
use toolprism::prelude::*;
use toolprism::present::{present_call, present_result};
use toolprism::session::{LogOptions, LogProblem, SessionEvent, SessionLog, replay};
use toolprism_examples::tools::{self, Workspace};
use toolprism_tests::TempDir;

/// A program that runs `grep` as a nested dispatch, through the session log, under its own call.
struct Script {
    log: Arc<SessionLog>,
    registry: OnceLock<Registry>,
    nested_content: Mutex<Vec<Vec<ContentBlock>>>,
}

#[toolset]
impl Script {
    /// Counts the lines matching a pattern, by running grep as a program would.
    #[tool]
    async fn count_matches(
        &self,
        #[arg] pattern: String,
        cx: &ToolContext,
    ) -> Result<usize, ToolError> {
        let registry = self
            .registry
            .get()
            .ok_or_else(|| ToolError::new("not wired"))?;
        let call = ToolCall::new(
            format!("{}-grep", cx.call_id()),
            "grep",
            json!({"pattern": pattern}),
        );
        let outcome = self
            .log
            .dispatch_nested(&registry.snapshot(), cx.call_id(), call)
            .await
            .map_err(|error| ToolError::new(error.to_string()))?;
        self.nested_content
            .lock()
            .unwrap()
            .push(outcome.content().to_vec());
        let matches = outcome
            .value()
            .and_then(|value| value["matches"].as_array().map(Vec::len));
        matches.ok_or_else(|| ToolError::new("grep failed"))
    }
}

/// Hides the text of files named `secret*`, but not their value: content replacement only.
fn hide_secrets(call: &ExecuteCall, _outcome: &ToolOutcome) -> PostDecision {
    let is_secret = call.args()["path"]
        .as_str()
        .is_some_and(|path| path.starts_with("secret"));
    if call.name() == "read" && is_secret {
        PostDecision::replace_content(vec![ContentBlock::text("[contents hidden]")])
    } else {
        PostDecision::keep()
    }
}

/// What the live session showed of one call: call card, result card, content, all serialized.
fn shown_live(name: &str, args: &Value, outcome: &ToolOutcome) -> [String; 3] {
    [
        serde_json::to_string(&present_call(name, args)).unwrap(),
        serde_json::to_string(&present_result(
            name,
            args,
            outcome.content(),
            outcome.is_error(),
            outcome.meta(),
        ))
        .unwrap(),
        serde_json::to_string(outcome.content()).unwrap(),
    ]
}

#[tokio::test]
async fn a_replayed_session_shows_exactly_what_the_live_one_did() {
    let work = TempDir::new("replay-work");
    let store = TempDir::new("replay-store");
    let logs = TempDir::new("replay-log");
    work.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    work.write("secret.txt", "SECRET-VALUE-MARKER\n");
    let log_path = logs.path().join("session.jsonl");
    let (log, report) = SessionLog::open(&log_path, LogOptions::fsync()).unwrap();
    assert_eq!(report.torn_tail, None);
    let log = Arc::new(log);

    let script = Arc::new(Script {
        log: log.clone(),
        registry: OnceLock::new(),
        nested_content: Mutex::default(),
    });
    let workspace = Workspace::new(work.path()).unwrap();
    let registry = tools::register_all(Registry::builder(), &workspace)
        .toolset_shared(script.clone())
        .post_execute(hide_secrets)
        .limits(BoundLimits::new(200, 8 * 1024))
        .output_store(FsOutputStore::new(store.path()))
        .build()
        .unwrap();
    let _ = script.registry.set(registry.clone());

    let session: Vec<(&str, Value)> = vec![
        ("read", json!({"path": "src/lib.rs"})),
        ("read", json!({"path": "secret.txt"})),
        (
            "edit",
            json!({"path": "src/lib.rs", "old_string": "    42", "new_string": "    43"}),
        ),
        (
            "edit",
            json!({"path": "src/lib.rs", "old_string": "nowhere", "new_string": "x"}),
        ),
        ("bash", json!({"command": "seq 1 5000"})),
        ("count_matches", json!({"pattern": "answer"})),
        (
            "todo_write",
            json!({"todos": [{"content": "replay", "status": "completed"}]}),
        ),
        ("read", json!({"path": 7})),
        ("no_such_tool", json!({})),
    ];
    let mut live = Vec::new();
    for (at, (name, args)) in session.iter().enumerate() {
        let snapshot: Snapshot = registry.snapshot();
        let call = ToolCall::new(format!("call_{at}"), *name, args.clone());
        let outcome = log
            .dispatch(&snapshot, call, Surface::Direct)
            .await
            .unwrap();
        live.push(shown_live(name, args, &outcome));
    }
    // What the session contained, live: a spill, a failure, a content replacement.
    assert!(live[4][2].contains("output truncated"), "{}", live[4][2]);
    assert!(live[3][1].contains("\"is_error\":true"));
    assert!(live[1][2].contains("[contents hidden]"));

    // Replay from the log alone: the workspace and the store are gone, so no tool could run.
    drop((work, store));
    let contents = SessionLog::read(&log_path).unwrap();
    assert!(contents.problems.is_empty(), "{:?}", contents.problems);
    let replayed = replay(&contents.events);
    assert_eq!(replayed.len(), session.len());
    for (at, (call, shown)) in replayed.iter().zip(&live).enumerate() {
        let result = call.result.as_ref().expect("every call has its result");
        let again = [
            serde_json::to_string(&call.call_card).unwrap(),
            serde_json::to_string(&result.card).unwrap(),
            serde_json::to_string(&result.content).unwrap(),
        ];
        assert_eq!(&again, shown, "call {at} ({})", call.call.name);
    }

    // The nested dispatch is recorded under its parent: rendered content and error flag only.
    let nested = &replayed[5].nested;
    assert_eq!(nested.len(), 1);
    assert_eq!(
        (nested[0].name.as_str(), nested[0].is_error),
        ("grep", false)
    );
    assert_eq!(nested[0].parent_id, "call_5");
    assert_eq!(nested[0].content, script.nested_content.lock().unwrap()[0]);

    // The canonical values are not in the log: not the secret the value held, not the
    // omitted middle of the spilled output.
    let text = fs::read_to_string(&log_path).unwrap();
    assert!(!text.contains("SECRET-VALUE-MARKER"));
    assert!(!text.contains("\n2500\n"));
    assert!(!text.contains("\"value\""));
    for line in text.lines() {
        assert_eq!(
            serde_json::from_str::<Value>(line).unwrap()["v"],
            1,
            "{line}"
        );
    }
}

fn write_session(path: &std::path::Path) -> SessionLog {
    let (log, _) = SessionLog::open(path, LogOptions::default()).unwrap();
    for event in [
        json!({"kind": "tool_call", "id": "c1", "name": "add", "args": {"a": 1}}),
        json!({"kind": "tool_result", "id": "c1", "content": [{"type": "text", "text": "1"}], "is_error": false}),
    ] {
        let event: SessionEvent = serde_json::from_value(event).unwrap();
        log.append(&event).unwrap();
    }
    log
}

#[test]
fn a_torn_last_line_is_reported_and_nothing_before_it_is_lost() {
    let dir = TempDir::new("replay-torn");
    let path = dir.path().join("session.jsonl");
    drop(write_session(&path));
    let intact = fs::read(&path).unwrap();

    // A crash in the middle of writing the third event.
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"v":1,"kind":"tool_ca"#)
        .unwrap();
    let contents = SessionLog::read(&path).unwrap();
    assert_eq!(contents.events.len(), 2);
    assert_eq!(contents.problems, [LogProblem::TornLastLine { line: 3 }]);

    // Opening reports it, and appending goes on on a line of its own.
    let (log, report) = SessionLog::open(&path, LogOptions::default()).unwrap();
    assert_eq!(report.torn_tail, Some(22));
    let event: SessionEvent =
        serde_json::from_value(json!({"kind": "tool_call", "id": "c2", "name": "add", "args": {}}))
            .unwrap();
    log.append(&event).unwrap();
    let contents = SessionLog::read(&path).unwrap();
    assert_eq!(contents.events.len(), 3);
    assert!(matches!(
        contents.problems.as_slice(),
        [LogProblem::Corrupt { line: 3, .. }]
    ));
    assert!(
        fs::read(&path).unwrap().starts_with(&intact),
        "nothing earlier was rewritten"
    );
    assert_eq!(replay(&contents.events).len(), 2);
}

#[test]
fn an_unknown_future_event_kind_is_skipped_with_a_warning() {
    let dir = TempDir::new("replay-future");
    let path = dir.path().join("session.jsonl");
    drop(write_session(&path));
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"v\":2,\"kind\":\"thinking\",\"id\":\"c1\",\"text\":\"hm\"}\n")
        .unwrap();
    // A later version may also add fields to known kinds.
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"v\":2,\"kind\":\"tool_call\",\"id\":\"c2\",\"name\":\"add\",\"args\":{},\"model\":\"x\"}\n")
        .unwrap();
    let contents = SessionLog::read(&path).unwrap();
    assert_eq!(contents.events.len(), 3);
    assert_eq!(
        contents.problems,
        [LogProblem::UnknownKind {
            line: 3,
            kind: "thinking".into(),
            version: 2
        }]
    );
    let replayed = replay(&contents.events);
    assert_eq!(replayed.len(), 2);
    assert_eq!(
        replayed[0].result.as_ref().unwrap().content,
        [ContentBlock::text("1")]
    );
}

#[tokio::test]
async fn raw_arguments_that_are_not_json_are_logged_as_sent() {
    let dir = TempDir::new("replay-raw");
    let path = dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    let registry = Registry::builder().build().unwrap();
    let call = ToolCall::from_raw_args("c1", "read", "{\"path\": ");
    let outcome = log
        .dispatch(&registry.snapshot(), call, Surface::Direct)
        .await
        .unwrap();
    assert!(outcome.is_error());
    let replayed = replay(&SessionLog::read(&path).unwrap().events);
    assert_eq!(replayed[0].call.raw_args.as_deref(), Some("{\"path\": "));
    assert_eq!(
        replayed[0].call_card,
        present_call("read", &json!("{\"path\": "))
    );
}
