//! Who may reach what, in the runtime: the caller a dispatch carries is checked against a
//! tool's scopes however the call is made (directly, nested, from a Code Mode program, read
//! back from a model's turn), a program is offered only what its caller may call, and what a
//! call retains is read back only by its owner.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Value, json};
use toolprism::access::{Caller, Owner, ScopeRules};
use toolprism::bound::{BoundLimits, FsOutputStore};
use toolprism::error::codes;
use toolprism::lower::Provider;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;
use toolprism::turn::{RunOptions, read_response, run_calls};
use toolprism_codemode::CodeMode;
use toolprism_tests::{TempDir, code};

/// Runs a command (here: says it ran).
#[tool(scopes = ["shell:run"])]
fn shell(#[arg] command: String) -> String {
    format!("ran {command}")
}

/// Reads a note.
#[tool]
fn note() -> String {
    "a note".to_owned()
}

/// Calls `shell` itself, as a tool that dispatches nested calls would.
#[tool]
async fn relay(cx: &ToolContext) -> Result<Value, ToolError> {
    let outcome = cx
        .dispatch(ToolCall::new("inner", "shell", json!({"command": "id"})))
        .await;
    match outcome.value() {
        Some(value) => Ok(Value::clone(value)),
        None => Err(ToolError::new(outcome.error().unwrap().message.clone())
            .with_code(outcome.error().unwrap().code().unwrap_or("?").to_owned())),
    }
}

/// Prints many lines, to be bounded and retained.
#[tool(scopes = ["logs:read"])]
fn long() -> String {
    (1..=100).fold(String::new(), |mut text, line| {
        let _ = writeln!(text, "line {line}");
        text
    })
}

fn caller(subject: &str, scopes: &str) -> Arc<Caller> {
    let claims = json!({"sub": subject, "client_id": subject, "scope": scopes});
    Arc::new(Caller::from_claims(claims.as_object().unwrap().clone()))
}

fn registry(store: &std::path::Path) -> Registry {
    let registry = Registry::builder()
        .tool(toolprism::search::ToolSearch::new().tool())
        .tool(Shell)
        .tool(Note)
        .tool(Relay)
        .tool(Long)
        .limits(BoundLimits::new(BoundLimits::MIN_LINES, 64 * 1024))
        .output_store(FsOutputStore::new(store))
        .build()
        .unwrap();
    CodeMode::new().register(&registry).unwrap();
    registry
}

async fn call(
    registry: &Registry,
    name: &str,
    args: Value,
    options: DispatchOptions,
) -> ToolOutcome {
    registry
        .snapshot()
        .dispatch_with(ToolCall::new("c1", name, args), Surface::Direct, options)
        .await
}

#[tokio::test]
async fn a_scope_is_checked_however_the_call_is_made() {
    let store = TempDir::new("access-scopes");
    let registry = registry(store.path());
    let mallory = DispatchOptions::default().caller(caller("mallory", "files:read"));
    let alice = || DispatchOptions::default().caller(caller("alice", "shell:run"));

    // Directly.
    let direct = call(
        &registry,
        "shell",
        json!({"command": "id"}),
        mallory.clone(),
    )
    .await;
    assert_eq!(code(&direct), Some(codes::INSUFFICIENT_SCOPE));
    assert!(direct.error().unwrap().message.contains("`shell:run`"));
    let allowed = call(&registry, "shell", json!({"command": "id"}), alice()).await;
    assert_eq!(allowed.value().unwrap(), &json!("ran id"));
    // The host's own call carries no caller, and is not checked.
    let own = call(
        &registry,
        "shell",
        json!({"command": "id"}),
        DispatchOptions::default(),
    )
    .await;
    assert_eq!(own.value().unwrap(), &json!("ran id"));

    // Nested, through a tool that needs no scope.
    let nested = call(&registry, "relay", json!({}), mallory.clone()).await;
    assert_eq!(code(&nested), Some(codes::INSUFFICIENT_SCOPE));
    assert_eq!(
        call(&registry, "relay", json!({}), alice())
            .await
            .value()
            .unwrap(),
        &json!("ran id")
    );

    // From a Code Mode program: the program is not offered the tool, and a call made anyway
    // is refused where it runs.
    let program = json!({"code": "return typeof tools.shell;"});
    let offered = call(&registry, "run_code", program.clone(), mallory.clone()).await;
    assert_eq!(offered.value().unwrap()["result"], json!("undefined"));
    let offered = call(&registry, "run_code", program, alice()).await;
    assert_eq!(offered.value().unwrap()["result"], json!("function"));
    let sneaked = json!({"code": "return await tools.relay({});"});
    let refused = call(&registry, "run_code", sneaked, mallory.clone()).await;
    let message = &refused.error().unwrap().message;
    assert!(
        message.contains("INSUFFICIENT_SCOPE") || message.contains("shell:run"),
        "{message}"
    );

    // Read back from a model's turn.
    let body = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
      "tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":\"id\"}"}}]}}]}"#;
    let turn = read_response(Provider::OpenAiChat, body).unwrap();
    let options = RunOptions::default().dispatch_options(mallory.clone());
    let outcomes = run_calls(&registry.snapshot(), &turn, &options)
        .await
        .unwrap();
    assert_eq!(code(&outcomes[0]), Some(codes::INSUFFICIENT_SCOPE));

    // A scope the host requires beyond the tool's own.
    let rules = Arc::new(ScopeRules::new().require("note", "notes:read"));
    let mallory_ruled = mallory.clone().scope_rules(rules.clone());
    let refused = call(&registry, "note", json!({}), mallory_ruled).await;
    assert_eq!(code(&refused), Some(codes::INSUFFICIENT_SCOPE));
    let granted = DispatchOptions::default()
        .caller(caller("alice", "notes:read"))
        .scope_rules(rules);
    assert_eq!(
        call(&registry, "note", json!({}), granted)
            .await
            .value()
            .unwrap(),
        &json!("a note")
    );
}

#[tokio::test]
async fn a_program_is_declared_only_what_its_caller_may_call() {
    let store = TempDir::new("access-declared");
    let registry = registry(store.path());
    let snapshot = registry.snapshot();
    let run_code = snapshot.definition("run_code").unwrap();
    assert!(run_code.described_for_callers());
    let everyone = run_code.description_for(&|_| true);
    let without_shell = run_code.description_for(&|name| name != "shell");
    assert!(everyone.contains("shell("), "{everyone}");
    assert!(!without_shell.contains("shell("), "{without_shell}");
    assert!(without_shell.contains("note("), "{without_shell}");
    // The registered description, what the host's own listings show, declares every tool.
    assert!(run_code.description().contains("shell("));
}

#[tokio::test]
async fn tool_search_finds_for_a_caller_only_what_it_may_call() {
    let store = TempDir::new("access-search");
    let registry = registry(store.path());
    let search = |options: DispatchOptions| {
        let registry = registry.clone();
        async move {
            let outcome = call(
                &registry,
                "tool_search",
                json!({"query": "run a command"}),
                options,
            )
            .await;
            let names: Vec<String> = outcome.value().unwrap()["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_owned())
                .collect();
            names
        }
    };
    let mallory = search(DispatchOptions::default().caller(caller("mallory", ""))).await;
    assert!(!mallory.contains(&"shell".to_owned()), "{mallory:?}");
    let alice = search(DispatchOptions::default().caller(caller("alice", "shell:run"))).await;
    assert_eq!(
        alice.first().map(String::as_str),
        Some("shell"),
        "{alice:?}"
    );
}

/// The handle a bounded result's marker names.
fn handle_of(outcome: &ToolOutcome) -> String {
    let text = outcome.content()[0].as_text().unwrap();
    let start = text.find("tool_").expect("the output was retained");
    text[start..]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_retained_output_is_read_back_only_by_its_owner_with_its_tools_scopes() {
    let store = TempDir::new("access-retained");
    let registry = registry(store.path());
    let alice = caller("alice", "logs:read");
    let mallory = caller("mallory", "logs:read");
    let as_alice = DispatchOptions::default()
        .caller(alice.clone())
        .owner(alice.owner());
    let spilled = call(&registry, "long", json!({}), as_alice).await;
    let handle = handle_of(&spilled);
    let snapshot = registry.snapshot();
    let read = |owner: Option<Owner>, caller: Option<Arc<Caller>>| {
        let (snapshot, handle) = (snapshot.clone(), handle.clone());
        async move {
            snapshot
                .read_retained(&handle, owner.as_ref(), caller.as_deref())
                .await
                .unwrap()
        }
    };
    let text = read(Some(alice.owner()), Some(alice.clone()))
        .await
        .unwrap();
    assert!(text.contains("line 1\n") && text.contains("line 100"));
    // Anyone else — another caller, a session, nobody — reads nothing, as for no such handle.
    assert_eq!(
        read(Some(mallory.owner()), Some(mallory.clone())).await,
        None
    );
    assert_eq!(read(Some(Owner::new("session/x")), None).await, None);
    assert_eq!(read(None, None).await, None);
    // The owner, with a token lacking the scope of the tool that made it, reads nothing either.
    let narrowed = caller("alice", "");
    assert_eq!(narrowed.owner(), alice.owner());
    assert_eq!(read(Some(alice.owner()), Some(narrowed)).await, None);
    let unknown = snapshot
        .read_retained(
            "tool_c1-00000000000000000000000000000000",
            Some(&alice.owner()),
            Some(&alice),
        )
        .await
        .unwrap();
    assert_eq!(unknown, None);
}
