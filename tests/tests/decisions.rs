//! Durable decisions: a call a policy asks about waits in the session log; a registry built
//! again from nothing but the log (a new process, as far as the call can tell) decides it,
//! and the turn resumes with every call that ran answered from the log. Side effects go to a
//! ledger file, so what ran, and how many times, is read back from disk.

use std::path::PathBuf;

use serde_json::{Value, json};
use toolprism::Snapshot;
use toolprism::context::State;
use toolprism::error::codes;
use toolprism::lower::Provider;
use toolprism::pipeline::ExecuteCall;
use toolprism::pipeline::{Approval, ApprovalRequest, PreDecision, PreExecutePolicy};
use toolprism::prelude::*;
use toolprism::session::{
    Decision, DecisionError, Decisions, LogOptions, SessionEvent, SessionLog, replay,
};
use toolprism::tool::IntoToolDef;
use toolprism::turn::{AssistantTurn, RunOptions, TurnError, read_response, run_calls};
use toolprism_tests::{TempDir, code, text};

/// Where the tools write down each time they run.
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
            PreDecision::ask(format!("Delete {}?", call.args()["path"]))
        } else {
            PreDecision::Allow
        }
    }

    fn name(&self) -> &'static str {
        "ask-before-deleting"
    }
}

/// One process's view of the session: its own registry, log handle and decisions, built from
/// the files alone. `title` changes the `delete` tool's definition.
struct Process {
    log: SessionLog,
    decisions: Decisions,
    snapshot: Snapshot,
}

impl Process {
    fn start(dir: &TempDir, title: Option<&str>) -> Self {
        let (log, _) = SessionLog::open(
            dir.path().join("session.jsonl"),
            LogOptions::default().values(),
        )
        .unwrap();
        let decisions = Decisions::open(&log).unwrap();
        let mut delete = Delete.into_tool_def();
        if let Some(title) = title {
            delete = delete.with_title(title);
        }
        let registry = Registry::builder()
            .state(Ledger(dir.path().join("ledger.txt")))
            .tool(Note)
            .tool(delete)
            .pre_execute(AskBeforeDeleting)
            .approver(decisions.clone())
            .build()
            .unwrap();
        Self {
            log,
            decisions,
            snapshot: registry.snapshot(),
        }
    }

    async fn run(&self, turn: &AssistantTurn) -> Vec<ToolOutcome> {
        let options = RunOptions::default().log(self.log.clone()).resume();
        run_calls(&self.snapshot, turn, &options).await.unwrap()
    }
}

/// An OpenAI Chat turn making these calls, `(id, tool, arguments)`.
fn turn(calls: &[(&str, &str, Value)]) -> AssistantTurn {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}]});
    read_response(Provider::OpenAiChat, body.to_string().as_bytes()).unwrap()
}

fn three_calls() -> AssistantTurn {
    turn(&[
        ("c1", "note", json!({"text": "start"})),
        ("c2", "delete", json!({"path": "a.txt"})),
        ("c3", "delete", json!({"path": "b.txt"})),
    ])
}

#[tokio::test]
async fn decisions_outlive_the_process_that_asked_and_no_call_runs_twice() {
    let dir = TempDir::new("decisions-resume");
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let turn = three_calls();

    // The first process runs what needs no one, and asks about the rest.
    let first = Process::start(&dir, None);
    let outcomes = first.run(&turn).await;
    assert_eq!(text(&outcomes[0]), "noted start");
    for waiting in &outcomes[1..] {
        assert_eq!(code(waiting), Some(codes::DECISION_PENDING));
    }
    assert!(matches!(
        turn.next_messages(&outcomes),
        Err(TurnError::DecisionPending { id }) if id == "c2"
    ));
    assert_eq!(ledger.lines(), ["note start"]);
    let definition = first.snapshot.definition("delete").unwrap().fingerprint();
    drop(first);

    // A new process knows what waits from the log alone.
    let second = Process::start(&dir, None);
    let pending = second.decisions.pending();
    let asked: Vec<_> = pending
        .iter()
        .map(|request| (request.id.as_str(), request.args["path"].as_str().unwrap()))
        .collect();
    assert_eq!(asked, [("c2", "a.txt"), ("c3", "b.txt")]);
    assert!(
        pending
            .iter()
            .all(|request| request.definition == definition
                && request.policy == "ask-before-deleting"
                && request.question.starts_with("Delete")
                && request.at > 0)
    );
    second
        .decisions
        .decide(&second.snapshot, "c2", Decision::Approve)
        .unwrap();
    second
        .decisions
        .decide(
            &second.snapshot,
            "c3",
            Decision::Reject {
                reason: "keep b.txt".into(),
            },
        )
        .unwrap();
    drop(second);

    // A third process resumes the turn: c1 is answered from the log, c2 runs, c3 is refused.
    let third = Process::start(&dir, None);
    assert!(third.decisions.pending().is_empty());
    let outcomes = third.run(&turn).await;
    assert_eq!(outcomes[0].value().unwrap(), &json!("noted start"));
    assert_eq!(outcomes[1].value().unwrap(), &json!("deleted a.txt"));
    assert_eq!(code(&outcomes[2]), Some(codes::REFUSED_BY_APPROVER));
    assert!(text(&outcomes[2]).contains("keep b.txt"));
    assert_eq!(turn.next_messages(&outcomes).unwrap().len(), 4);
    assert_eq!(ledger.lines(), ["note start", "delete a.txt"]);

    // Resumed once more, nothing runs again.
    let again = third.run(&turn).await;
    assert_eq!(again, outcomes);
    assert_eq!(ledger.lines(), ["note start", "delete a.txt"]);

    // The log holds each request and decision; replayed, each call is one call with its result.
    let events = SessionLog::read(third.log.path()).unwrap().events;
    let requested = events
        .iter()
        .filter(|event| matches!(event, SessionEvent::DecisionRequested(_)))
        .count();
    let decided = events
        .iter()
        .filter(|event| matches!(event, SessionEvent::Decided(_)))
        .count();
    assert_eq!((requested, decided), (2, 2));
    let replayed = replay(&events);
    let ids: Vec<_> = replayed.iter().map(|call| call.call.id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    assert!(replayed.iter().all(|call| call.result.is_some()));
}

#[tokio::test]
async fn edited_arguments_and_substituted_results_are_held_to_the_schemas() {
    let dir = TempDir::new("decisions-edit");
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let turn = three_calls();
    let process = Process::start(&dir, None);
    process.run(&turn).await;

    // An edit that breaks the input schema is refused, and the call still waits.
    let refused = process
        .decisions
        .decide(
            &process.snapshot,
            "c2",
            Decision::Edit {
                arguments: json!({"path": 7}),
            },
        )
        .unwrap_err();
    let DecisionError::InvalidArguments { problems, .. } = &refused else {
        panic!("{refused}");
    };
    assert!(problems.contains("/path"), "{problems}");
    assert!(problems.contains('7'), "{problems}");
    // A result that breaks the output schema is refused too.
    let refused = process
        .decisions
        .decide(
            &process.snapshot,
            "c3",
            Decision::Substitute {
                result: json!({"not": "a string"}),
            },
        )
        .unwrap_err();
    assert!(
        matches!(refused, DecisionError::InvalidResult { .. }),
        "{refused}"
    );
    assert_eq!(process.decisions.pending().len(), 2);

    // Valid ones hold: c2 runs on the edited path; c3 is answered without running.
    process
        .decisions
        .decide(
            &process.snapshot,
            "c2",
            Decision::Edit {
                arguments: json!({"path": "safe.txt"}),
            },
        )
        .unwrap();
    process
        .decisions
        .decide(
            &process.snapshot,
            "c3",
            Decision::Substitute {
                result: json!("kept b.txt"),
            },
        )
        .unwrap();
    let outcomes = process.run(&turn).await;
    assert_eq!(outcomes[1].value().unwrap(), &json!("deleted safe.txt"));
    assert_eq!(outcomes[2].value().unwrap(), &json!("kept b.txt"));
    assert_eq!(text(&outcomes[2]), "kept b.txt");
    assert_eq!(ledger.lines(), ["note start", "delete safe.txt"]);
    assert!(matches!(
        process
            .decisions
            .decide(&process.snapshot, "c2", Decision::Approve),
        Err(DecisionError::NotPending { .. })
    ));
}

#[tokio::test]
async fn an_approval_given_for_another_definition_is_asked_again() {
    let dir = TempDir::new("decisions-stale");
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let turn = three_calls();
    let first = Process::start(&dir, None);
    first.run(&turn).await;
    first
        .decisions
        .decide(&first.snapshot, "c2", Decision::Approve)
        .unwrap();
    let asked_for = first.snapshot.definition("delete").unwrap().fingerprint();
    drop(first);

    // The tool changed before the approved call ran: it waits again, under the new definition.
    let changed = Process::start(&dir, Some("Delete a file and its backups"));
    let now = changed.snapshot.definition("delete").unwrap().fingerprint();
    assert_ne!(now, asked_for);
    let outcomes = changed.run(&turn).await;
    assert_eq!(code(&outcomes[1]), Some(codes::DECISION_PENDING));
    assert_eq!(ledger.lines(), ["note start"]);
    let pending = changed.decisions.pending();
    let again = pending.iter().find(|request| request.id == "c2").unwrap();
    assert_eq!(again.definition, now);
    drop(changed);

    // A process still holding the old definition cannot decide on the new request.
    let old = Process::start(&dir, None);
    let refused = old
        .decisions
        .decide(&old.snapshot, "c2", Decision::Approve)
        .unwrap_err();
    assert!(matches!(refused, DecisionError::Stale { .. }), "{refused}");
    assert!(refused.to_string().contains(now.as_str()));
}

#[tokio::test]
async fn allowing_a_tool_from_now_on_holds_for_its_arguments_and_definition() {
    let dir = TempDir::new("decisions-allow");
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let process = Process::start(&dir, None);
    process.run(&three_calls()).await;
    process
        .decisions
        .decide(
            &process.snapshot,
            "c2",
            Decision::AllowAlways {
                arguments: Some(json!({"path": "a.txt"})),
            },
        )
        .unwrap();
    process
        .decisions
        .decide(
            &process.snapshot,
            "c3",
            Decision::AllowAlways { arguments: None },
        )
        .unwrap();
    drop(process);

    // Recorded, so a new process allows the same calls without asking.
    let later = Process::start(&dir, None);
    let outcomes = later
        .run(&turn(&[
            ("c4", "delete", json!({"path": "c.txt"})),
            ("c5", "delete", json!({"path": "d.txt"})),
        ]))
        .await;
    assert!(outcomes.iter().all(|outcome| !outcome.is_error()));
    assert_eq!(
        ledger.lines(),
        ["note start", "delete c.txt", "delete d.txt"]
    );
    // The allowance is for the definition it was given for.
    let changed = Process::start(&dir, Some("Delete for good"));
    let outcomes = changed
        .run(&turn(&[("c6", "delete", json!({"path": "e.txt"}))]))
        .await;
    assert_eq!(code(&outcomes[0]), Some(codes::DECISION_PENDING));
}

/// An approver that edits the arguments into ones the schema refuses.
#[tokio::test]
async fn an_approvers_edit_that_breaks_the_schema_fails_the_call_unrun() {
    let dir = TempDir::new("decisions-approver-edit");
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let registry = Registry::builder()
        .state(ledger.clone())
        .tool(Delete)
        .pre_execute(AskBeforeDeleting)
        .approver(|request: ApprovalRequest| async move {
            assert_eq!(request.policy, "ask-before-deleting");
            Approval::Edited {
                arguments: json!({"path": ["a", "b"]}),
            }
        })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(
            ToolCall::new("c1", "delete", json!({"path": "a.txt"})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    assert!(text(&outcome).contains("in place of the model's"));
    assert!(ledger.lines().is_empty());
}

/// Accepts every form with "approve".
struct ApprovesEveryForm;

impl toolprism::ask::Answerer for ApprovesEveryForm {
    fn can_answer(&self, kind: toolprism::ask::InputKind) -> bool {
        kind == toolprism::ask::InputKind::Elicitation
    }

    fn answer<'a>(
        &'a self,
        _key: &'a str,
        _request: &'a toolprism::ask::InputRequest,
    ) -> toolprism::BoxFuture<'a, Result<Value, toolprism::ask::AskError>> {
        Box::pin(async { Ok(json!({"action": "accept", "content": {"decision": "approve"}})) })
    }
}

/// A decision a person took on a form is for the call it was asked in: a later call with the
/// same id and arguments (another MCP caller's, whose request ids start at 1 too) is asked
/// again, never run on it.
#[tokio::test]
async fn a_decision_taken_on_a_form_holds_for_its_own_call_only() {
    let dir = TempDir::new("decisions-form");
    let ledger = Ledger(dir.path().join("ledger.txt"));
    let process = Process::start(&dir, None);
    let call = || ToolCall::new("1", "delete", json!({"path": "a.txt"}));
    let asked = toolprism::pipeline::DispatchOptions::default().answerer(ApprovesEveryForm);
    let approved = process
        .snapshot
        .dispatch_with(call(), Surface::Direct, asked)
        .await;
    assert_eq!(approved.value().unwrap(), &json!("deleted a.txt"));
    let other = process.snapshot.dispatch(call(), Surface::Direct).await;
    assert_eq!(code(&other), Some(codes::DECISION_PENDING));
    assert_eq!(ledger.lines(), ["delete a.txt"]);
    // Nor after the log is read again.
    let reopened = Process::start(&dir, None);
    let other = reopened.snapshot.dispatch(call(), Surface::Direct).await;
    assert_eq!(code(&other), Some(codes::DECISION_PENDING));
    assert_eq!(ledger.lines(), ["delete a.txt"]);
}
