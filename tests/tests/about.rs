//! What a tool says about itself — title, hints, icons, examples, timeout, deferral, callers —
//! checked at registration, enforced by dispatch where it is a rule (timeout, callers), and
//! lowered everywhere a provider has a field for it (folded into the description where none
//! does); and the tool choice in each provider's words.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::RegistrationError;
use toolprism::lower::{Provider, ToolChoice, ToolOptions, lower_tool_choice, lower_tools};
use toolprism::prelude::*;
use toolprism::tool::{Callers, Icon, IconTheme, IntoToolDef};
use toolprism::turn::{Conversation, RunOptions, read_response, run_calls};
use toolprism_tests::{check_wire, code, text};

/// Reads a file.
#[tool(
    title = "Read file",
    read_only,
    open_world = false,
    icon(src = "https://example.com/read.svg", mime_type = "image/svg+xml", size = "any", theme = "dark"),
    examples = [r#"{"path": "src/lib.rs"}"#],
    timeout = "2s"
)]
fn read(#[arg(description = "The file.")] path: String) -> String {
    path
}

/// Deletes a file.
#[tool(destructive, idempotent, callers = "programs", defer_loading)]
fn delete(#[arg] path: String) -> String {
    path
}

/// Asks the user something.
#[tool(callers = "direct")]
fn ask(#[arg] question: String) -> String {
    question
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

fn registry() -> Registry {
    Registry::builder()
        .tool(Read)
        .tool(Delete)
        .tool(Ask)
        .build()
        .unwrap()
}

#[test]
fn what_the_attribute_says_is_what_the_snapshot_advertises() {
    let snapshot = registry().snapshot();
    let read = snapshot.definition("read").unwrap().about();
    assert_eq!(read.title.as_deref(), Some("Read file"));
    assert_eq!(
        (
            read.hints.read_only,
            read.hints.destructive,
            read.hints.open_world
        ),
        (Some(true), None, Some(false))
    );
    assert_eq!(
        read.icons,
        [Icon::new("https://example.com/read.svg")
            .with_mime_type("image/svg+xml")
            .with_size("any")
            .with_theme(IconTheme::Dark)]
    );
    assert_eq!(read.examples, [json!({"path": "src/lib.rs"})]);
    assert_eq!(read.timeout, Some(Duration::from_secs(2)));
    let delete = snapshot.definition("delete").unwrap().about();
    assert_eq!(
        (delete.hints.destructive, delete.hints.idempotent),
        (Some(true), Some(true))
    );
    assert!(delete.defer_loading);
    assert_eq!(delete.callers, Callers::Programs);
    assert_eq!(
        snapshot.definition("ask").unwrap().about().callers,
        Callers::Direct
    );
}

#[test]
fn registration_refuses_what_contradicts_itself_or_its_schema() {
    let refused = |def: ToolDef| Registry::builder().tool(def).build().unwrap_err();
    let both = refused(Read.into_tool_def().destructive(true));
    assert!(
        matches!(&both, RegistrationError::About { problem, .. } if problem.contains("both read-only and destructive")),
        "{both}"
    );
    let example = refused(
        Read.into_tool_def()
            .with_example(json!({"path": "a"}))
            .with_example(json!({"file": "b"})),
    );
    match &example {
        RegistrationError::Example {
            index, violation, ..
        } => {
            assert_eq!(
                *index, 2,
                "the attribute's example is 0, then `a` 1, then this one"
            );
            assert!(
                violation.contains("path") || violation.contains("file"),
                "{violation}"
            );
        }
        other => panic!("{other}"),
    }
    assert!(example.to_string().contains("example 2"), "{example}");
    let icon = refused(
        Read.into_tool_def()
            .with_icon(Icon::new("javascript:alert(1)")),
    );
    assert!(
        icon.to_string()
            .contains("not an http(s) URL or a data: URI"),
        "{icon}"
    );
    let size = refused(
        Read.into_tool_def()
            .with_icon(Icon::new("https://x/i.png").with_size("big")),
    );
    assert!(size.to_string().contains("WIDTHxHEIGHT"), "{size}");
    let zero = refused(Read.into_tool_def().with_timeout(Duration::ZERO));
    assert!(zero.to_string().contains("timeout is zero"), "{zero}");
}

/// Never finishes, and says when its future is dropped.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn hanging(name: &str, dropped: Arc<AtomicBool>) -> ToolDef {
    ToolDef::builder(name)
        .description("Never answers.")
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "string"}))
        .handler(move |_: Value, _cx: ToolContext| {
            let guard = Dropped(dropped.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Ok::<_, ToolError>(Value::Null)
            }
        })
        .build()
}

#[test]
fn a_body_past_its_timeout_is_dropped_and_the_call_fails_with_its_own_code() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::builder()
        .tool(hanging("hang", dropped.clone()).with_timeout(Duration::from_millis(30)))
        .build()
        .unwrap();
    let outcome = runtime()
        .block_on(registry.dispatch(ToolCall::new("c1", "hang", json!({})), Surface::Direct));
    assert_eq!(code(&outcome), Some("TOOL_TIMEOUT"));
    assert!(
        text(&outcome).contains("within its time limit of 30 ms"),
        "{}",
        text(&outcome)
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body's future was dropped"
    );
}

/// Calls `hang` and returns what happened.
#[tool]
async fn caller(cx: &ToolContext) -> Result<String, ToolError> {
    let outcome = cx.dispatch(ToolCall::new("inner", "hang", json!({}))).await;
    Ok(outcome
        .error()
        .and_then(|error| error.code())
        .unwrap_or("none")
        .to_owned())
}

#[test]
fn the_registry_default_applies_to_nested_calls_and_a_tool_s_own_wins() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::builder()
        .tool(hanging("hang", dropped.clone()))
        // The caller's own time is long: with the default it would race the call it makes,
        // both 30 ms, and lose it under load.
        .tool(Caller.into_tool_def().with_timeout(Duration::from_secs(60)))
        .default_timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    let outcome = runtime()
        .block_on(registry.dispatch(ToolCall::new("c1", "caller", json!({})), Surface::Direct));
    assert_eq!(
        outcome.value().unwrap(),
        &json!("TOOL_TIMEOUT"),
        "{}",
        text(&outcome)
    );
    assert!(dropped.load(Ordering::SeqCst));
    // A tool's own timeout is longer than the default: it is the one that counts.
    let fast = Registry::builder()
        .tool(Read.into_tool_def())
        .default_timeout(Duration::from_millis(1))
        .build()
        .unwrap();
    let outcome = runtime().block_on(fast.dispatch(
        ToolCall::new("c1", "read", json!({"path": "a"})),
        Surface::Direct,
    ));
    assert_eq!(outcome.value().unwrap(), &json!("a"));
}

#[test]
fn each_tool_is_called_only_by_whom_it_says() {
    let registry = registry();
    let runtime = runtime();
    let direct = runtime.block_on(registry.dispatch(
        ToolCall::new("c1", "delete", json!({"path": "a"})),
        Surface::Direct,
    ));
    assert_eq!(code(&direct), Some("TOOL_NOT_CALLABLE"));
    assert!(
        text(&direct).contains("only by programs"),
        "{}",
        text(&direct)
    );
    let nested = runtime.block_on(registry.dispatch(
        ToolCall::new("c2", "delete", json!({"path": "a"})),
        Surface::Nested,
    ));
    assert_eq!(nested.value().unwrap(), &json!("a"));
    let asked = runtime.block_on(registry.dispatch(
        ToolCall::new("c3", "ask", json!({"question": "?"})),
        Surface::Nested,
    ));
    assert_eq!(code(&asked), Some("TOOL_NOT_CALLABLE"));

    // A provider's program (Anthropic's programmatic tool calling) calls the tool only
    // programs may call, and cannot call the one only the model may.
    let body = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "..."}},
        {"type": "tool_use", "id": "toolu_1", "name": "delete", "input": {"path": "b"},
         "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}},
        {"type": "tool_use", "id": "toolu_2", "name": "ask", "input": {"question": "?"},
         "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}}]});
    let turn = read_response(Provider::Anthropic, body.to_string().as_bytes()).unwrap();
    let outcomes = runtime
        .block_on(run_calls(
            &registry.snapshot(),
            &turn,
            &RunOptions::default(),
        ))
        .unwrap();
    assert_eq!(outcomes[0].value().unwrap(), &json!("b"));
    assert_eq!(code(&outcomes[1]), Some("TOOL_NOT_CALLABLE"));
}

#[test]
fn lowering_says_it_where_a_field_exists_and_in_the_description_where_none_does() {
    let snapshot = registry().snapshot();
    let lowered = |provider| {
        lower_tools(
            provider,
            snapshot.definitions(),
            ToolOptions::default().strict(),
        )
        .unwrap()
    };
    let anthropic = lowered(Provider::Anthropic);
    let by_name = |tools: &[Value], name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .cloned()
            .unwrap()
    };
    let read = by_name(&anthropic, "read");
    assert_eq!(read["input_examples"], json!([{"path": "src/lib.rs"}]));
    assert_eq!(read["strict"], true);
    assert_eq!(read["description"], "Reads a file.");
    let delete = by_name(&anthropic, "delete");
    assert_eq!(delete["defer_loading"], true);
    assert_eq!(
        delete["allowed_callers"],
        json!(["code_execution_20250825"])
    );

    let chat = lowered(Provider::OpenAiChat);
    let names: Vec<&Value> = chat.iter().map(|tool| &tool["function"]["name"]).collect();
    assert_eq!(
        names,
        [&json!("read"), &json!("ask")],
        "a tool only programs may call is not offered"
    );
    assert!(
        chat[0]["function"]["description"]
            .as_str()
            .unwrap()
            .ends_with("Examples of arguments:\n- {\"path\":\"src/lib.rs\"}")
    );
    let gemini = lowered(Provider::Gemini);
    let declarations = gemini[0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(declarations.len(), 2);
    assert!(
        declarations[0]["description"]
            .as_str()
            .unwrap()
            .contains("Examples of arguments")
    );

    let responses = lowered(Provider::OpenAiResponses);
    let delete = by_name(&responses, "delete");
    assert_eq!(
        (
            delete["defer_loading"].clone(),
            delete["allowed_callers"].clone()
        ),
        (json!(true), json!(["programmatic"]))
    );
}

#[test]
fn a_tool_choice_is_said_in_each_provider_s_words_or_refused() {
    let one = ToolChoice::Tool("read".into());
    let subset = ToolChoice::Allowed {
        tools: vec!["read".into(), "ask".into()],
        required: true,
    };
    assert_eq!(
        lower_tool_choice(Provider::OpenAiChat, &one).unwrap(),
        json!({"type": "function", "function": {"name": "read"}})
    );
    assert_eq!(
        lower_tool_choice(Provider::OpenAiResponses, &subset).unwrap()["mode"],
        "required"
    );
    assert_eq!(
        lower_tool_choice(Provider::Anthropic, &ToolChoice::Required).unwrap(),
        json!({"type": "any"})
    );
    assert_eq!(
        lower_tool_choice(Provider::Gemini, &ToolChoice::Validated).unwrap(),
        json!({"functionCallingConfig": {"mode": "VALIDATED"}})
    );
    let refused = lower_tool_choice(Provider::Anthropic, &subset).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("Anthropic Messages cannot say"),
        "{refused}"
    );
    assert!(lower_tool_choice(Provider::OpenAiChat, &ToolChoice::Validated).is_err());

    // A whole request with each choice a provider can say validates against its SDK's types.
    let snapshot = registry().snapshot();
    let choices = [
        ToolChoice::Auto,
        ToolChoice::Required,
        ToolChoice::None,
        one,
        subset,
        ToolChoice::Validated,
    ];
    let mut cases = Vec::new();
    for (provider, kind) in [
        (Provider::OpenAiChat, "openai.chat.request"),
        (Provider::OpenAiResponses, "openai.responses.request"),
        (Provider::Anthropic, "anthropic.request"),
        (Provider::Gemini, "gemini.request"),
    ] {
        for choice in &choices {
            let Ok(conversation) = Conversation::new(provider, "a-model")
                .with_tools(&snapshot, ToolOptions::default())
                .unwrap()
                .with_tool_choice(choice)
            else {
                continue;
            };
            let mut conversation = conversation;
            conversation.user("go");
            let body = conversation
                .request("http://127.0.0.1:1", "key", false)
                .body;
            cases.push(
                json!({"name": format!("{provider} {choice:?}"), "type": kind, "value": body}),
            );
        }
    }
    assert_eq!(
        cases.len(),
        4 * 6 - 4,
        "Chat, Responses and Anthropic cannot say Validated; Anthropic, a subset"
    );
    let report = check_wire("choice-cases.json", &cases);
    assert_eq!(report["failures"], json!([]), "{report:#}");
}
