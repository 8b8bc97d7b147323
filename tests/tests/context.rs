//! What a body reaches through its `ToolContext`: host state (by parameter or by type),
//! progress to a sink the host gives each dispatch, and nested dispatch of the snapshot's other
//! tools — values without presentation, policies applied, recursion stopped at the limit.

#![allow(clippy::unused_async)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolprism::RegistrationError;
use toolprism::context::{MAX_NESTING, Progress, State};
use toolprism::error::codes;
use toolprism::pipeline::{DispatchOptions, ExecuteCall, PreDecision};
use toolprism::prelude::*;
use toolprism_tests::text;

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("call_1", name, args)
}

// ---------------------------------------------------------------- state

/// A workspace the host shares with every tool.
struct Workspace {
    root: String,
    reads: AtomicUsize,
}

/// Reads a file of the workspace (on paper).
#[tool]
fn open_file(#[arg] path: String, State(workspace): State<Workspace>) -> String {
    workspace.reads.fetch_add(1, Ordering::SeqCst);
    format!("{}/{path}", workspace.root)
}

/// Says where the workspace is, through the context.
#[tool]
fn where_am_i(cx: &ToolContext) -> Result<String, ToolError> {
    let workspace = cx
        .state::<Workspace>()
        .ok_or_else(|| ToolError::new("no workspace"))?;
    Ok(workspace.root.clone())
}

#[tokio::test]
async fn host_state_reaches_free_functions_by_parameter_and_by_type() {
    let workspace = Arc::new(Workspace {
        root: "/srv/project".into(),
        reads: AtomicUsize::new(0),
    });
    let registry = Registry::builder()
        .state_shared(workspace.clone())
        .tool(OpenFile)
        .tool(WhereAmI)
        .build()
        .unwrap();
    let opened = registry
        .dispatch(call("open_file", json!({"path": "a.rs"})), Surface::Direct)
        .await;
    assert_eq!(opened.value().unwrap(), &json!("/srv/project/a.rs"));
    assert_eq!(
        workspace.reads.load(Ordering::SeqCst),
        1,
        "the host's own handle"
    );
    let root = registry
        .dispatch(call("where_am_i", json!({})), Surface::Direct)
        .await;
    assert_eq!(root.value().unwrap(), &json!("/srv/project"));
}

#[test]
fn a_tool_whose_state_is_missing_is_refused_at_registration() {
    let error = Registry::builder().tool(OpenFile).build().unwrap_err();
    let RegistrationError::MissingState { name, state } = &error else {
        panic!("{error}")
    };
    assert_eq!(name, "open_file");
    assert!(state.ends_with("Workspace"), "{state}");
    assert!(error.to_string().contains(".state("), "{error}");
    // Registering later checks it too.
    let registry = Registry::builder().build().unwrap();
    assert!(matches!(
        registry.register(OpenFile),
        Err(RegistrationError::MissingState { .. })
    ));
    // The tool says what it needs.
    let def = toolprism::tool::IntoToolDef::into_tool_def(OpenFile);
    assert_eq!(def.required_state().count(), 1);
}

// ---------------------------------------------------------------- progress

/// Works in three steps, reporting each; one report is not finite and is dropped.
#[tool]
async fn work(cx: &ToolContext) -> u8 {
    for step in 1..=3_u8 {
        cx.progress(f64::from(step), Some(3.0), &format!("step {step}"));
    }
    cx.progress(f64::NAN, None, "not a number");
    3
}

#[tokio::test]
async fn progress_goes_to_the_sink_of_its_dispatch_and_nowhere_by_default() {
    let registry = Registry::builder().tool(Work).build().unwrap();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let options = DispatchOptions::default()
        .progress(move |progress: &Progress| sink.lock().unwrap().push(progress.clone()));
    let outcome = registry
        .snapshot()
        .dispatch_with(call("work", json!({})), Surface::Direct, options)
        .await;
    assert_eq!(outcome.value().unwrap(), &json!(3));
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports.len(), 3);
    assert_eq!(
        (
            reports[2].done,
            reports[2].total,
            reports[2].message.as_deref()
        ),
        (3.0, Some(3.0), Some("step 3"))
    );
    // Without a sink, reporting is a no-op.
    let quiet = registry
        .dispatch(call("work", json!({})), Surface::Direct)
        .await;
    assert!(!quiet.is_error());
}

#[tokio::test]
async fn a_sink_that_panics_does_not_fail_the_call() {
    let registry = Registry::builder().tool(Work).build().unwrap();
    let options = DispatchOptions::default().progress(|_: &Progress| panic!("the UI is gone"));
    let outcome = registry
        .snapshot()
        .dispatch_with(call("work", json!({})), Surface::Direct, options)
        .await;
    assert_eq!(outcome.value().unwrap(), &json!(3));
}

// ---------------------------------------------------------------- nested dispatch

#[derive(Serialize, Deserialize, JsonSchema)]
struct Entry {
    word: String,
    length: usize,
}

/// Looks a word up.
#[tool(presentation_meta = lookup_card)]
fn lookup(#[arg] word: String) -> Entry {
    Entry {
        length: word.len(),
        word,
    }
}

fn lookup_card(_args: &LookupArgs, value: &Entry) -> Card {
    Card::Terminal(toolprism::present::TerminalCard::new(
        &value.word,
        Some(0),
        false,
        0,
        "",
    ))
}

/// Looks up several words through `lookup`, as a program would.
#[tool]
async fn lookup_all(#[arg] words: Vec<String>, cx: &ToolContext) -> Result<Vec<Value>, ToolError> {
    let mut found = Vec::new();
    for word in words {
        let outcome = cx
            .dispatch(ToolCall::new(
                format!("n-{word}"),
                "lookup",
                json!({"word": word}),
            ))
            .await;
        // A nested call gets the value, and no presentation metadata.
        if outcome.meta().is_some() {
            return Err(ToolError::new("a nested call got presentation metadata"));
        }
        match outcome.value() {
            Some(value) => found.push(value.as_value().clone()),
            None => found.push(json!({"error": outcome.error().and_then(|e| e.code())})),
        }
    }
    Ok(found)
}

#[tokio::test]
async fn nested_calls_get_values_without_presentation_and_policies_apply() {
    let nested_seen = Arc::new(AtomicUsize::new(0));
    let seen = nested_seen.clone();
    let registry = Registry::builder()
        .tool(Lookup)
        .tool(LookupAll)
        .pre_execute(move |call: &ExecuteCall| {
            if call.surface() == Surface::Nested {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            if call.args()["word"] == "secret" {
                PreDecision::deny("not this word")
            } else {
                PreDecision::Allow
            }
        })
        .build()
        .unwrap();
    let direct = registry
        .dispatch(call("lookup", json!({"word": "hi"})), Surface::Direct)
        .await;
    assert!(direct.meta().is_some(), "a direct call gets its card");
    let outcome = registry
        .dispatch(
            call("lookup_all", json!({"words": ["alpha", "secret", "be"]})),
            Surface::Direct,
        )
        .await;
    assert_eq!(
        outcome.value().unwrap(),
        &json!([
            {"word": "alpha", "length": 5},
            {"error": "DENIED_BY_POLICY"},
            {"word": "be", "length": 2}
        ]),
        "{}",
        text(&outcome)
    );
    assert_eq!(nested_seen.load(Ordering::SeqCst), 3);
}

/// Calls itself, one level deeper each time, and says how deep it got.
#[tool]
async fn recurse(#[arg] depth: u32, cx: &ToolContext) -> Result<Value, ToolError> {
    // Through a handle that outlives the borrow of the context, as a program would hold one.
    let dispatcher = cx.dispatcher();
    let outcome = dispatcher
        .dispatch(ToolCall::new("r", "recurse", json!({"depth": depth + 1})))
        .await;
    Ok(match outcome.value() {
        Some(value) => value.as_value().clone(),
        None => json!({"stopped_at": depth, "code": outcome.error().and_then(|e| e.code())}),
    })
}

#[tokio::test]
async fn recursion_stops_at_the_nesting_limit_with_its_own_code() {
    let registry = Registry::builder().tool(Recurse).build().unwrap();
    let outcome = registry
        .dispatch(call("recurse", json!({"depth": 0})), Surface::Direct)
        .await;
    assert_eq!(
        outcome.value().unwrap(),
        &json!({"stopped_at": MAX_NESTING, "code": codes::NESTING_TOO_DEEP}),
        "{}",
        text(&outcome)
    );
    // A host's own call on the nested surface starts the count at zero all the same.
    let from_a_program = registry
        .dispatch(call("recurse", json!({"depth": 0})), Surface::Nested)
        .await;
    assert_eq!(
        from_a_program.value().unwrap()["stopped_at"],
        json!(MAX_NESTING),
        "{}",
        text(&from_a_program)
    );
}
