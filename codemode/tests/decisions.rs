//! A program that reaches a call waiting for a decision ends with that decision pending;
//! decided in a registry built again from the session log alone, the program runs again with
//! every call it made before answered from the log. A ledger on disk counts each side effect.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolprism::context::State;
use toolprism::error::codes;
use toolprism::lower::Provider;
use toolprism::pipeline::{ExecuteCall, PreDecision, PreExecutePolicy};
use toolprism::prelude::*;
use toolprism::session::{Decision, Decisions, LogOptions, SessionEvent, SessionLog};
use toolprism::turn::{AssistantTurn, RunOptions, read_response, run_calls};
use toolprism_codemode::CodeMode;

#[derive(Clone)]
struct Ledger(PathBuf);

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

/// Writes a note.
#[tool]
fn note(#[arg] text: String, State(ledger): State<Ledger>) -> String {
    ledger.write(&format!("note {text}"));
    format!("noted {text}")
}

/// Deletes a file.
#[tool(destructive)]
fn delete(#[arg] path: String, State(ledger): State<Ledger>) -> String {
    ledger.write(&format!("delete {path}"));
    format!("deleted {path}")
}

/// Asks a person before every deletion.
struct AskBeforeDeleting;

impl PreExecutePolicy for AskBeforeDeleting {
    fn check(&self, call: &ExecuteCall) -> PreDecision {
        if call.name() == "delete" {
            PreDecision::ask("Delete it?")
        } else {
            PreDecision::Allow
        }
    }

    fn name(&self) -> &'static str {
        "ask-before-deleting"
    }
}

/// One process's registry, log and decisions, built from the files in `dir` alone.
struct Process {
    log: SessionLog,
    decisions: Decisions,
    registry: Registry,
}

impl Process {
    fn start(dir: &Path) -> Self {
        let (log, _) =
            SessionLog::open(dir.join("session.jsonl"), LogOptions::default().values()).unwrap();
        let decisions = Decisions::open(&log).unwrap();
        let registry = Registry::builder()
            .state(Ledger(dir.join("ledger.txt")))
            .tool(Note)
            .tool(Delete)
            .pre_execute(AskBeforeDeleting)
            .approver(decisions.clone())
            .build()
            .unwrap();
        CodeMode::new().register(&registry).unwrap();
        Self {
            log,
            decisions,
            registry,
        }
    }

    async fn run(&self, turn: &AssistantTurn) -> ToolOutcome {
        let options = RunOptions::default().log(self.log.clone()).resume();
        let mut outcomes = run_calls(&self.registry.snapshot(), turn, &options)
            .await
            .unwrap();
        outcomes.remove(0)
    }
}

/// A turn whose one call runs `code`.
fn program(code: &str) -> AssistantTurn {
    let arguments = json!({ "code": code }).to_string();
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null,
        "tool_calls": [{"id": "run_1", "type": "function",
            "function": {"name": "run_code", "arguments": arguments}}]}}]});
    read_response(Provider::OpenAiChat, body.to_string().as_bytes()).unwrap()
}

const PROGRAM: &str = r#"
    const first = await tools.note({ text: "one" });
    let deleted;
    try {
        deleted = await tools.delete({ path: "a.txt" });
    } catch (error) {
        deleted = "caught: " + error.code;
    }
    const second = await tools.note({ text: "two" });
    return [first, deleted, second];
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_waits_for_a_decision_and_runs_again_without_repeating_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let turn = program(PROGRAM);

    // The program ends at the call that waits, even though it would catch the error: no call
    // after it runs on an answer nobody gave.
    let first = Process::start(dir.path());
    let waiting = first.run(&turn).await;
    let error = waiting.error().expect("the run waits");
    assert_eq!(error.code(), Some(codes::DECISION_PENDING), "{error:?}");
    assert_eq!(ledger.lines(), ["note one"]);
    let pending = first.decisions.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].name, "delete");
    assert!(pending[0].id.starts_with("run_1."), "{}", pending[0].id);
    drop(first);

    let second = Process::start(dir.path());
    second
        .decisions
        .decide(
            &second.registry.snapshot(),
            &pending[0].id,
            Decision::Approve,
        )
        .unwrap();
    drop(second);

    // Run again: `note one` is answered from the log, the approved call runs, then the rest.
    let third = Process::start(dir.path());
    let done = third.run(&turn).await;
    let value: &Value = done.value().expect("the run ends").as_value();
    assert_eq!(
        value["result"],
        json!(["noted one", "deleted a.txt", "noted two"])
    );
    assert_eq!(ledger.lines(), ["note one", "delete a.txt", "note two"]);

    // Resumed once more, the whole run is answered from the log.
    let again = third.run(&turn).await;
    assert_eq!(again.value(), done.value());
    assert_eq!(ledger.lines(), ["note one", "delete a.txt", "note two"]);
    let nested = SessionLog::read(third.log.path())
        .unwrap()
        .events
        .iter()
        .filter(|event| matches!(event, SessionEvent::NestedResult(_)))
        .count();
    assert_eq!(nested, 3, "each nested call is logged once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_throws_in_the_program_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let process = Process::start(dir.path());
    let turn = program(
        r#"
        await tools.note({ text: "start" });
        await tools.delete({ path: "a.txt" });
        return "done";
    "#,
    );
    process.run(&turn).await;
    let id = process.decisions.pending()[0].id.clone();
    process
        .decisions
        .decide(
            &process.registry.snapshot(),
            &id,
            Decision::Reject {
                reason: "keep it".into(),
            },
        )
        .unwrap();
    let done = process.run(&turn).await;
    let error = done.error().expect("the program throws");
    assert!(error.message.contains("keep it"), "{}", error.message);
    assert_eq!(ledger.lines(), ["note start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_takes_another_path_runs_its_new_calls() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let process = Process::start(dir.path());
    let first = r#"await tools.note({ text: "start" }); await tools.delete({ path: "a.txt" });"#;
    process.run(&program(first)).await;
    // The same call, another program: its first call is the same one and is answered from the
    // log; its second is another call, and runs.
    let other =
        r#"await tools.note({ text: "start" }); return await tools.note({ text: "instead" });"#;
    let done = process.run(&program(other)).await;
    assert_eq!(
        done.value().unwrap().as_value()["result"],
        json!("noted instead")
    );
    assert_eq!(ledger.lines(), ["note start", "note instead"]);
}
