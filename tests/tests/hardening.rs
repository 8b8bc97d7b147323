//! What a hostile model, peer or tool can throw at the pipeline, one class at a time: panics
//! before a future exists, values nested past any stack, schemas whose validation explodes, a
//! session log that loses events, lowering that would blow up, what strict lowering tells a
//! model and dispatch refuses, errors that do not say where, and sound types refused.

#![allow(clippy::unused_async)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Waker};

use serde_json::{Map, Value, json};
use toolprism::bound::{BoundLimits, RetainError, RetainedOutput, ToolOutputStore};
use toolprism::depth::{MAX_DEPTH, check_depth, dispose};
use toolprism::error::codes;
use toolprism::lower::{self, Provider, ToolOptions, lower_tools};
use toolprism::pipeline::{
    Approval, ApprovalRequest, ExecuteCall, Executed, Next, PostDecision, PreDecision,
};
use toolprism::prelude::*;
use toolprism::schema::SchemaError;
use toolprism::session::{CallEvent, LogOptions, LogProblem, SessionEvent, SessionLog};
use toolprism::tool::Presented;
use toolprism::{MAX_RAW_ARGS_BYTES, RegistrationError};
use toolprism_tests::{TempDir, code, text};

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("call_1", name, args)
}

/// `levels` arrays around a string, built without recursion (as a hostile host would).
fn deep_array(levels: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}

/// `levels` objects `{"k": …}` around a number.
fn deep_object(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        let mut map = Map::new();
        map.insert("k".into(), value);
        value = Value::Object(map);
    }
    value
}

/// `{key: value}`, without `json!`, which copies an interpolated value by recursion.
fn member(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.into(), value);
    Value::Object(map)
}

/// Why a tool with this input schema is refused at registration.
fn refusal(schema: Value) -> SchemaError {
    match Registry::builder()
        .tool(echo("refused", schema, json!(true)))
        .build()
    {
        Err(RegistrationError::Schema { source, .. }) => source,
        other => panic!("expected a schema refusal, got {other:?}"),
    }
}

fn echo(name: &str, input: Value, output: Value) -> ToolDef {
    ToolDef::builder(name)
        .description("Echoes its arguments.")
        .input_schema(input)
        .output_schema(output)
        .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
        .build()
}

fn anything_in() -> Value {
    json!({"type": "object"})
}

// ================================================================ 1. panics

#[tokio::test]
async fn a_closure_wrapper_that_panics_before_its_future_is_contained() {
    let wrapper = |call: ExecuteCall, next: Next| {
        assert!(
            call.args()["explode"] != true,
            "the wrapper checked too eagerly"
        );
        async move { Executed::from(next.run().await) }
    };
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .wrap(wrapper)
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("echo", json!({"explode": true})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::POLICY_FAILED));
    assert!(
        text(&outcome).contains("checked too eagerly"),
        "{}",
        text(&outcome)
    );
    let fine = registry
        .dispatch(call("echo", json!({"explode": false})), Surface::Direct)
        .await;
    assert!(!fine.is_error());
}

#[tokio::test]
async fn a_dynamic_handler_that_panics_before_its_future_is_contained() {
    let tool = ToolDef::builder("strict_n")
        .description("Needs `n` as a number, and says so too late.")
        .input_schema(anything_in())
        .output_schema(json!({"type": "integer"}))
        .handler(|args: Value, _cx: ToolContext| {
            let n = args["n"].as_u64().expect("`n` is a number");
            async move { Ok::<_, ToolError>(n) }
        })
        .build();
    let registry = Registry::builder().tool(tool).build().unwrap();
    let outcome = registry
        .dispatch(call("strict_n", json!({"n": "seven"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::TOOL_PANICKED));
    assert!(text(&outcome).contains("`n` is a number"));
}

#[tokio::test]
async fn an_approver_that_panics_before_its_future_is_contained() {
    let approver = |request: ApprovalRequest| -> std::future::Ready<Approval> {
        panic!("no UI to ask on ({})", request.question)
    };
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .pre_execute(|_: &ExecuteCall| PreDecision::ask("Run it?"))
        .approver(approver)
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("echo", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::REFUSED_BY_APPROVER));
}

/// A store that fails the way a careless one would: before its future exists.
#[derive(Debug)]
struct PanickingStore;

impl ToolOutputStore for PanickingStore {
    fn retain<'a>(
        &'a self,
        _call_id: &'a str,
        _tool: &'a str,
        _pieces: &'a [&'a str],
        _retention: &'a toolprism::bound::Retention,
    ) -> toolprism::BoxFuture<'a, Result<RetainedOutput, RetainError>> {
        panic!("the disk is not mounted")
    }
}

#[tokio::test]
async fn a_store_that_panics_fails_the_call_without_publishing_a_preview() {
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .limits(BoundLimits::new(3, 2_048))
        .output_store(PanickingStore)
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(
            call("echo", json!({"text": "x".repeat(10_000)})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&outcome), Some(codes::OUTPUT_NOT_RETAINED));
    assert!(
        text(&outcome).contains("the disk is not mounted"),
        "{}",
        text(&outcome)
    );
}

/// A panic payload whose own `Drop` panics.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("the payload exploded when dropped");
    }
}

/// Panics with a payload that panics again when dropped.
#[tool]
async fn double_fault() -> u8 {
    std::panic::panic_any(Bomb)
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct TouchyArgs {
    n: u8,
}

impl<'de> Deserialize<'de> for TouchyArgs {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("Touchy's Deserialize exploded")
    }
}

/// Takes arguments whose `Deserialize` panics.
#[tool]
fn touchy(args: TouchyArgs) -> u8 {
    args.n
}

fn deserialized() -> bool {
    true
}

/// A value whose copy deserialized for `render` panics when dropped.
#[derive(Serialize, Deserialize, JsonSchema)]
struct FragileValue {
    n: u8,
    #[serde(skip_serializing, default = "deserialized")]
    read_back: bool,
}

impl Drop for FragileValue {
    fn drop(&mut self) {
        assert!(
            !self.read_back,
            "the value read back for render exploded when dropped"
        );
    }
}

/// Returns a value whose read-back copy panics when dropped.
#[tool(render = render_fragile)]
fn fragile() -> FragileValue {
    FragileValue {
        n: 7,
        read_back: false,
    }
}

fn render_fragile(_args: &FragileArgs, value: &FragileValue) -> String {
    value.n.to_string()
}

/// A screenshot, said to be one: the image as the encoding says.
#[tool(render = render_screenshot)]
fn screenshot(#[arg] encoding: String) -> Value {
    json!({"encoding": encoding})
}

fn render_screenshot(args: &ScreenshotArgs, _value: &Value) -> ContentBlock {
    match args.encoding.as_str() {
        "standard" => ContentBlock::image_from_bytes(b"\x89PNG\r\n", "image/png"),
        "url-safe" => ContentBlock::image("iVBORw0K-_8=", "image/png"),
        "data-url" => ContentBlock::image("data:image/png;base64,iVBORw==", "image/png"),
        _ => ContentBlock::image("iVBORw==", "PNG"),
    }
}

#[tokio::test]
async fn inline_bytes_a_provider_would_refuse_are_an_invalid_output() {
    let remote = ToolDef::builder("remote")
        .description("Content as a peer sent it.")
        .presented_handler(|_: Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>(Presented::new(
                json!({"ok": true}),
                vec![
                    ContentBlock::text("attached:"),
                    ContentBlock::Audio {
                        data: "not base64".into(),
                        mime_type: "audio/wav".into(),
                    },
                ],
            ))
        })
        .build();
    let registry = Registry::builder()
        .tool(Screenshot)
        .tool(remote)
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(
            call("screenshot", json!({"encoding": "standard"})),
            Surface::Direct,
        )
        .await;
    assert!(!outcome.is_error(), "{outcome:?}");
    for (encoding, problem) in [
        (
            "url-safe",
            "its content block 0 is an image whose data is not standard base64 with padding (at byte 8 of 12)",
        ),
        (
            "data-url",
            "its content block 0 is an image whose data is not standard base64 with padding (at byte 4 of 30)",
        ),
        (
            "other",
            "its content block 0 is an image whose media type `PNG` is not `type/subtype`",
        ),
    ] {
        let outcome = registry
            .dispatch(
                call("screenshot", json!({"encoding": encoding})),
                Surface::Direct,
            )
            .await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code(), Some(codes::INVALID_TOOL_OUTPUT));
        assert!(error.message.contains(problem), "{}", error.message);
    }
    let outcome = registry
        .dispatch(call("remote", json!({})), Surface::Direct)
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code(), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        error.message.contains("its content block 1 is an audio clip whose data is not standard base64 with padding (at byte 3 of 10)"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn user_code_that_panics_anywhere_is_contained() {
    let registry = Registry::builder()
        .tool(DoubleFault)
        .tool(Touchy)
        .tool(Fragile)
        .build()
        .unwrap();
    let double = registry
        .dispatch(call("double_fault", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&double), Some(codes::TOOL_PANICKED));
    assert!(text(&double).contains("non-string payload"));

    let touchy = registry
        .dispatch(call("touchy", json!({"n": 1})), Surface::Direct)
        .await;
    assert_eq!(code(&touchy), Some(codes::TOOL_PANICKED));
    assert!(text(&touchy).contains("Deserialize exploded"));

    let fragile = registry
        .dispatch(call("fragile", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&fragile), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        text(&fragile).contains("exploded when dropped"),
        "{}",
        text(&fragile)
    );
}

static GUARD_DROPPED: AtomicBool = AtomicBool::new(false);

/// Held across an await; panics when the call is cancelled.
struct LoudGuard;

impl Drop for LoudGuard {
    fn drop(&mut self) {
        GUARD_DROPPED.store(true, Ordering::SeqCst);
        panic!("cancelled mid-call");
    }
}

/// Waits forever, holding a guard.
#[tool]
async fn hang() -> u8 {
    let _guard = LoudGuard;
    std::future::pending::<()>().await;
    0
}

#[test]
fn cancelling_a_call_whose_drop_panics_does_not_unwind_into_the_host() {
    let registry = Registry::builder().tool(Hang).build().unwrap();
    {
        let mut dispatch = pin!(registry.dispatch(call("hang", json!({})), Surface::Direct));
        let polled = dispatch
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled.is_pending());
    }
    assert!(GUARD_DROPPED.load(Ordering::SeqCst));
}

// ================================================================ 2. depth

/// Runs `future` on a worker thread of a multi-threaded runtime, whose stack is 2 MiB.
async fn on_worker<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
    tokio::spawn(future).await.expect("the task completed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_of_any_depth_are_refused_without_recursion() {
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .build()
        .unwrap();
    for levels in [MAX_DEPTH, 5_000, 200_000] {
        let registry = registry.clone();
        let outcome = on_worker(async move {
            let args = member("deep", deep_array(levels));
            registry.dispatch(call("echo", args), Surface::Direct).await
        })
        .await;
        assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT), "{levels}");
        assert!(
            text(&outcome).contains(&format!("deeper than {MAX_DEPTH} levels")),
            "{}",
            text(&outcome)
        );
    }
    // At the limit, the call goes through.
    let registry_at_limit = registry.clone();
    let at_limit = on_worker(async move {
        let args = member("deep", deep_array(MAX_DEPTH - 1));
        registry_at_limit
            .dispatch(call("echo", args), Surface::Direct)
            .await
    })
    .await;
    assert!(!at_limit.is_error(), "{}", text(&at_limit));
    // Unknown tools and refused snapshots dispose of deep arguments too.
    let unknown = registry
        .dispatch(call("nope", deep_object(200_000)), Surface::Direct)
        .await;
    assert_eq!(code(&unknown), Some(codes::UNKNOWN_TOOL));
    let refused = registry
        .snapshot()
        .refusing_calls("final step")
        .dispatch(call("echo", deep_object(200_000)), Surface::Direct)
        .await;
    assert_eq!(code(&refused), Some(codes::TOOLS_DISABLED));
}

#[tokio::test]
async fn raw_arguments_nested_past_the_parser_say_so() {
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .build()
        .unwrap();
    let raw = format!("{{\"a\":{}1{}}}", "[".repeat(300), "]".repeat(300));
    let outcome = registry
        .dispatch(ToolCall::from_raw_args("c", "echo", raw), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    assert!(text(&outcome).contains(&format!("deeper than {MAX_DEPTH} levels")));
}

/// Raw arguments are bounded in bytes before they are parsed: text at the limit is parsed and
/// runs, one byte more is refused, says the limit, and is logged as the text it is.
#[tokio::test]
async fn raw_arguments_longer_than_the_limit_are_refused_before_they_are_parsed() {
    let dir = TempDir::new("log-raw-args");
    let path = dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!({"type": "object"})))
        .build()
        .unwrap();
    let snapshot = registry.snapshot();
    // `{"a":"xx…x"}`, exactly `length` bytes.
    let args_of = |length: usize| format!("{{\"a\":\"{}\"}}", "x".repeat(length - 8));

    let at_limit = args_of(MAX_RAW_ARGS_BYTES);
    assert_eq!(at_limit.len(), MAX_RAW_ARGS_BYTES);
    let outcome = snapshot
        .dispatch(
            ToolCall::from_raw_args("c1", "echo", at_limit),
            Surface::Nested,
        )
        .await;
    assert_eq!(
        outcome
            .value()
            .and_then(|value| value["a"].as_str())
            .map(str::len),
        Some(MAX_RAW_ARGS_BYTES - 8),
        "{}",
        text(&outcome)
    );

    let over = args_of(MAX_RAW_ARGS_BYTES + 1);
    let outcome = log
        .dispatch(
            &snapshot,
            ToolCall::from_raw_args("c2", "echo", over.clone()),
            Surface::Direct,
        )
        .await
        .unwrap();
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    let message = text(&outcome);
    assert!(
        message.contains(&format!(
            "{} bytes of JSON text, more than the {MAX_RAW_ARGS_BYTES}",
            MAX_RAW_ARGS_BYTES + 1
        )),
        "{message}"
    );
    let contents = SessionLog::read(&path).unwrap();
    let SessionEvent::ToolCall(logged) = &contents.events[0] else {
        panic!("{:?}", contents.events)
    };
    assert!(logged.args.is_none());
    assert!(
        logged.raw_args.as_deref() == Some(over.as_str()),
        "logged as sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_wrappers_policies_and_meta_of_any_depth_are_refused() {
    let deep_value = ToolDef::builder("deep_value")
        .description("Returns a value nested 200,000 levels deep.")
        .input_schema(anything_in())
        .output_schema(json!(true))
        .handler(
            |_: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(deep_array(200_000)) },
        )
        .build();
    let deep_meta = ToolDef::builder("deep_meta")
        .description("Returns 1 with metadata nested 200,000 levels deep.")
        .input_schema(anything_in())
        .output_schema(json!({"type": "integer"}))
        .handler(|_: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(1) })
        .presentation_meta(|_: &Value, _: &i32| deep_object(200_000))
        .build();
    let registry = Registry::builder()
        .tool(deep_value)
        .tool(deep_meta)
        .tool(echo("wrapped", anything_in(), json!(true)))
        .tool(echo("replaced", anything_in(), json!(true)))
        .wrap(|call: ExecuteCall, next: Next| async move {
            if call.name() == "wrapped" {
                Executed::Value(deep_array(200_000))
            } else {
                Executed::from(next.run().await)
            }
        })
        .post_execute(|call: &ExecuteCall, _: &ToolOutcome| {
            if call.name() == "replaced" {
                PostDecision::replace_value(deep_object(200_000))
            } else {
                PostDecision::keep()
            }
        })
        .build()
        .unwrap();
    for name in ["deep_value", "wrapped", "replaced"] {
        let registry = registry.clone();
        let outcome = on_worker(async move {
            registry
                .dispatch(call(name, json!({})), Surface::Direct)
                .await
        })
        .await;
        assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT), "{name}");
        assert!(
            text(&outcome).contains(&format!("deeper than {MAX_DEPTH} levels")),
            "{name}: {}",
            text(&outcome)
        );
    }
    let meta = on_worker(async move {
        registry
            .dispatch(call("deep_meta", json!({})), Surface::Direct)
            .await
    })
    .await;
    assert_eq!(meta.value().unwrap(), &json!(1));
    assert_eq!(meta.meta(), None, "over-deep metadata is dropped, not sent");
}

/// A recursive type, as a model-built tree might be.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Tree {
    inner: Option<Box<Tree>>,
}

/// Returns a tree `depth` levels deep.
#[tool]
fn nest(#[arg] depth: u32) -> Tree {
    let mut tree = Tree { inner: None };
    for _ in 0..depth {
        tree = Tree {
            inner: Some(Box::new(tree)),
        };
    }
    tree
}

#[tokio::test]
async fn a_typed_value_past_the_limit_is_refused_naming_where() {
    let registry = Registry::builder().tool(Nest).build().unwrap();
    let fits = registry
        .dispatch(
            call("nest", json!({"depth": MAX_DEPTH - 1})),
            Surface::Direct,
        )
        .await;
    assert!(!fits.is_error(), "{}", text(&fits));
    let deep = registry
        .dispatch(call("nest", json!({"depth": 1_000})), Surface::Direct)
        .await;
    assert_eq!(code(&deep), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        text(&deep).contains("/inner/inner/inner"),
        "{}",
        text(&deep)
    );
}

#[test]
fn schemas_nested_through_data_keywords_or_references_are_refused() {
    for keyword in ["default", "const", "enum", "examples"] {
        let data = match keyword {
            "enum" | "examples" => Value::Array(vec![deep_array(100_000)]),
            _ => deep_array(100_000),
        };
        let mut schema = json!({"type": "object"});
        schema["properties"] = member("a", member(keyword, data));
        let error = refusal(schema);
        assert!(
            matches!(error, SchemaError::TooDeep { .. }),
            "{keyword}: {error}"
        );
    }
    let mut into_data = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/D/const"}}});
    into_data["$defs"] = member("D", member("const", deep_object(100_000)));
    assert!(matches!(refusal(into_data), SchemaError::TooDeep { .. }));
}

// ================================================================ 3. validation cost

/// `levels` definitions, each referring to the next twice under `applicator`.
fn fan_out(levels: usize, applicator: &str) -> Value {
    let mut defs = Map::new();
    for level in 0..levels {
        let next = format!("#/$defs/L{}", level + 1);
        defs.insert(
            format!("L{level}"),
            json!({applicator: [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert(format!("L{levels}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/L0"}}, "$defs": defs})
}

#[tokio::test]
async fn schemas_whose_validation_cost_fans_out_are_refused_at_registration() {
    for applicator in ["allOf", "anyOf", "oneOf"] {
        for levels in [20, 40] {
            let schema = fan_out(levels, applicator);
            assert!(schema.to_string().len() < 4_096, "a small schema");
            let error = refusal(schema);
            assert!(
                matches!(error, SchemaError::TooCostly { .. }),
                "{applicator} {levels}: {error}"
            );
            assert!(error.to_string().contains("fan out"), "{error}");
        }
    }
    // Ten levels of doubling is within the bound, and validates.
    let registry = Registry::builder()
        .tool(echo("fan", fan_out(10, "anyOf"), json!(true)))
        .build()
        .unwrap();
    let valid = registry
        .dispatch(call("fan", json!({"x": "leaf"})), Surface::Direct)
        .await;
    assert!(!valid.is_error(), "{}", text(&valid));
    let invalid = registry
        .dispatch(call("fan", json!({"x": 1})), Surface::Direct)
        .await;
    assert_eq!(code(&invalid), Some(codes::INVALID_TOOL_INPUT));
}

#[tokio::test]
async fn recursive_schemas_of_ordinary_shape_register_and_validate() {
    let json_value = json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/V"}},
    "$defs": {"V": {"anyOf": [
        {"type": ["null", "boolean", "number", "string"]},
        {"type": "array", "items": {"$ref": "#/$defs/V"}},
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/V"}}
    ]}}});
    let registry = Registry::builder()
        .tool(echo("json", json_value, json!(true)))
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(
            call("json", json!({"v": {"a": [1, {"b": [true, null]}]}})),
            Surface::Direct,
        )
        .await;
    assert!(!outcome.is_error(), "{}", text(&outcome));
}

// ================================================================ 4. session log

fn call_event(id: &str, args: Value) -> SessionEvent {
    SessionEvent::ToolCall(CallEvent {
        id: id.into(),
        name: "echo".into(),
        args: Some(args),
        raw_args: None,
        title: None,
        repair: None,
    })
}

#[test]
fn the_writer_refuses_at_write_time_what_the_reader_would_drop() {
    let dir = TempDir::new("log-depth");
    let path = dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    log.append(&call_event("ok", deep_array(MAX_DEPTH)))
        .unwrap();
    // `null` arguments are arguments, and read back as such (not as "no arguments").
    log.append(&call_event("null", Value::Null)).unwrap();
    let too_deep = call_event("deep", deep_array(MAX_DEPTH + 1));
    let error = log.append(&too_deep).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("cannot be logged faithfully"));
    let contents = SessionLog::read(&path).unwrap();
    assert_eq!(
        contents.events,
        [
            call_event("ok", deep_array(MAX_DEPTH)),
            call_event("null", Value::Null)
        ]
    );
    assert!(contents.problems.is_empty());
}

#[tokio::test]
async fn a_call_too_deep_to_log_is_an_error_before_it_runs_and_raw_text_is_logged_as_sent() {
    let dir = TempDir::new("log-dispatch-depth");
    let path = dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .build()
        .unwrap();
    let snapshot = registry.snapshot();
    let error = log
        .dispatch(
            &snapshot,
            call("echo", deep_object(10_000)),
            Surface::Direct,
        )
        .await
        .unwrap_err();
    assert!(error.outcome.is_none(), "nothing ran, nothing to lose");

    // Raw text that parses too deep is logged as the text: faithful at any depth.
    let raw = format!("{{\"a\":{}1{}}}", "[".repeat(100), "]".repeat(100));
    let outcome = log
        .dispatch(
            &snapshot,
            ToolCall::from_raw_args("c2", "echo", raw.clone()),
            Surface::Direct,
        )
        .await
        .unwrap();
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    let contents = SessionLog::read(&path).unwrap();
    let SessionEvent::ToolCall(logged) = &contents.events[0] else {
        panic!("{:?}", contents.events)
    };
    assert_eq!(logged.raw_args.as_deref(), Some(raw.as_str()));
    assert_eq!(contents.events.len(), 2, "the call and its result");
}

#[test]
fn a_line_torn_by_another_writer_does_not_swallow_the_next_event() {
    let dir = TempDir::new("log-torn");
    let path = dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    log.append(&call_event("first", json!({}))).unwrap();
    // Another process crashes mid-write into the same file.
    {
        use std::io::Write as _;
        let mut other = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        other
            .write_all(br#"{"v":1,"kind":"tool_call","id":"tor"#)
            .unwrap();
    }
    log.append(&call_event("second", json!({}))).unwrap();
    let contents = SessionLog::read(&path).unwrap();
    assert_eq!(
        contents.events,
        [
            call_event("first", json!({})),
            call_event("second", json!({}))
        ]
    );
    assert!(matches!(
        contents.problems[..],
        [LogProblem::Corrupt { line: 2, .. }]
    ));
}

#[test]
fn a_line_longer_than_the_limit_is_skipped_without_holding_it() {
    let long = format!(
        "{{\"v\":1,\"kind\":\"tool_call\",\"id\":\"{}\",\"name\":\"x\"}}",
        "x".repeat(toolprism::session::MAX_EVENT_BYTES)
    );
    let text = format!(
        "{}\n{long}\n{}\n",
        serde_json::to_string(&json!({"v": 1, "kind": "tool_call", "id": "a", "name": "x"}))
            .unwrap(),
        serde_json::to_string(&json!({"v": 1, "kind": "tool_call", "id": "b", "name": "x"}))
            .unwrap(),
    );
    let contents = SessionLog::read_from(text.as_bytes()).unwrap();
    assert_eq!(contents.events.len(), 2);
    assert!(matches!(
        &contents.problems[..],
        [LogProblem::Corrupt { line: 2, error }] if error.contains("longer than")
    ));
}

// ================================================================ 5. lowering

fn nested_items(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        let mut map = Map::new();
        map.insert("type".into(), json!("array"));
        map.insert("items".into(), schema);
        schema = Value::Object(map);
    }
    schema
}

#[test]
fn lowering_any_schema_is_bounded_by_the_depth_limit() {
    for levels in [4_000, 10_000, 100_000] {
        let mut schema = json!({"type": "object"});
        schema["properties"] = member("a", nested_items(levels));
        for result in [
            lower::gemini(&schema),
            lower::openai_strict(&schema),
            lower::plain(&schema),
        ] {
            let error = result.unwrap_err();
            assert!(error.reason.contains("deeper than"), "{error}");
        }
        dispose(schema);
    }
    // At the limit, all three lower.
    let schema = json!({"type": "object", "properties": {"a": nested_items((MAX_DEPTH - 3) / 2)}});
    assert!(check_depth(&schema).is_ok());
    assert!(lower::gemini(&schema).is_ok() && lower::openai_strict(&schema).is_ok());
}

#[test]
fn a_registered_schema_that_inlines_too_deep_for_gemini_names_the_tool() {
    // Each definition holds the next as its `items`: 80 references inline 80 levels deep.
    let mut defs = Map::new();
    for level in 0..80 {
        defs.insert(
            format!("D{level}"),
            json!({"type": "array", "items": {"$ref": format!("#/$defs/D{}", level + 1)}}),
        );
    }
    defs.insert("D80".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    let registry = Registry::builder()
        .tool(echo("chain", schema, json!(true)))
        .build()
        .unwrap();
    let snapshot = registry.snapshot();
    let error = lower_tools(
        Provider::Gemini,
        snapshot.definitions(),
        ToolOptions::default(),
    )
    .unwrap_err();
    assert_eq!(error.tool, "chain");
    assert!(error.to_string().contains("deeper than"), "{error}");
    // Providers that keep references lower it as it is.
    assert!(
        lower_tools(
            Provider::Anthropic,
            snapshot.definitions(),
            ToolOptions::default()
        )
        .is_ok()
    );
}

// ================================================================ 6. strict lowering vs dispatch

static TAGS_SEEN: AtomicUsize = AtomicUsize::new(0);

#[derive(Deserialize, JsonSchema)]
struct Labels {
    /// The file.
    path: String,
    /// Labels to set; none by default.
    #[serde(default)]
    tags: Vec<String>,
    /// How many, if capped.
    limit: Option<u8>,
    /// A nested choice.
    #[serde(default)]
    mode: Mode,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
enum Mode {
    #[default]
    Fast,
    Careful,
}

/// Labels a file.
#[tool]
fn label(args: Labels) -> String {
    TAGS_SEEN.fetch_add(args.tags.len(), Ordering::SeqCst);
    format!(
        "{} {} {:?} {}",
        args.path,
        args.tags.len(),
        args.limit,
        matches!(args.mode, Mode::Careful)
    )
}

#[tokio::test]
async fn what_strict_lowering_tells_a_model_dispatch_accepts() {
    let registry = Registry::builder().tool(Label).build().unwrap();
    let snapshot = registry.snapshot();
    let strict = lower_tools(
        Provider::OpenAiChat,
        snapshot.definitions(),
        ToolOptions::default().strict(),
    )
    .unwrap();
    let parameters = &strict[0]["function"]["parameters"];
    assert_eq!(
        parameters["required"],
        json!(["limit", "mode", "path", "tags"])
    );
    // What an obedient model sends: every property, `null` for the ones it leaves out.
    let outcome = registry
        .dispatch(
            call(
                "label",
                json!({"path": "a.rs", "tags": null, "limit": null, "mode": null}),
            ),
            Surface::Direct,
        )
        .await;
    assert_eq!(
        outcome.value().unwrap(),
        &json!("a.rs 0 None false"),
        "{}",
        text(&outcome)
    );
    // A `null` the schema accepts is kept, and a required one is still refused.
    let missing_path = registry
        .dispatch(
            call("label", json!({"path": null, "tags": null})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&missing_path), Some(codes::INVALID_TOOL_INPUT));
    assert!(
        text(&missing_path).contains("`/path`"),
        "{}",
        text(&missing_path)
    );
}

// ================================================================ 7. errors a model can act on

/// Takes small integers.
#[tool]
fn small(count: u8, offset: i32) -> i64 {
    i64::from(count) + i64::from(offset)
}

/// Takes wide integers, whose range the schema leaves to serde.
#[tool]
fn wide(total: i64, size: u64) -> i64 {
    total.saturating_add_unsigned(size)
}

#[tokio::test]
async fn wide_integers_out_of_range_name_the_field_too() {
    let registry = Registry::builder().tool(Wide).build().unwrap();
    for (args, field) in [
        (json!({"total": u64::MAX, "size": 0}), "/total"),
        (json!({"total": 1e19, "size": 0}), "/total"),
        (json!({"total": 0, "size": -1}), "/size"),
        (json!({"total": 0, "size": 1e20}), "/size"),
    ] {
        let outcome = registry
            .dispatch(call("wide", args.clone()), Surface::Direct)
            .await;
        assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT), "{args}");
        assert!(
            text(&outcome).contains(&format!("`{field}`")),
            "{args}: {}",
            text(&outcome)
        );
    }
    let fits = registry
        .dispatch(
            call("wide", json!({"total": i64::MIN, "size": u64::MAX})),
            Surface::Direct,
        )
        .await;
    assert_eq!(fits.value().unwrap(), &json!(i64::MAX), "{}", text(&fits));
}

#[tokio::test]
async fn integral_floats_are_integers_and_out_of_range_values_name_the_field() {
    let registry = Registry::builder().tool(Small).build().unwrap();
    let floats = registry
        .dispatch(
            call("small", json!({"count": 1.0, "offset": -2.0})),
            Surface::Direct,
        )
        .await;
    assert_eq!(floats.value().unwrap(), &json!(-1), "{}", text(&floats));
    let huge = registry
        .dispatch(
            call("small", json!({"count": 1, "offset": u64::MAX})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&huge), Some(codes::INVALID_TOOL_INPUT));
    assert!(
        text(&huge).contains("at `/offset` (`maximum`)"),
        "{}",
        text(&huge)
    );
    let fraction = registry
        .dispatch(
            call("small", json!({"count": 1.5, "offset": 0})),
            Surface::Direct,
        )
        .await;
    assert!(
        text(&fraction).contains("at `/count`"),
        "{}",
        text(&fraction)
    );
}

#[derive(Deserialize, JsonSchema)]
struct PickyArgs {
    inner: Vec<Even>,
}

/// An even number; its `Deserialize` refuses odd ones, which the schema cannot say.
#[derive(JsonSchema)]
struct Even(#[allow(dead_code)] u32);

impl<'de> Deserialize<'de> for Even {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(deserializer)?;
        if n % 2 == 0 {
            Ok(Self(n))
        } else {
            Err(serde::de::Error::custom(format!("{n} is odd")))
        }
    }
}

/// Takes even numbers.
#[tool]
fn picky(args: PickyArgs) -> usize {
    args.inner.len()
}

#[tokio::test]
async fn what_serde_refuses_after_the_schema_names_the_field_path() {
    let registry = Registry::builder().tool(Picky).build().unwrap();
    let outcome = registry
        .dispatch(call("picky", json!({"inner": [2, 4, 5]})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    assert!(
        text(&outcome).contains("at `/inner/2`: 5 is odd"),
        "{}",
        text(&outcome)
    );
}

#[test]
fn a_bad_pattern_says_where_and_why() {
    let schema = json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^(?!test)\\w+$"}}});
    let error = Registry::builder()
        .tool(echo("pat", schema, json!(true)))
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.contains("`/properties/code/pattern`"), "{error}");
    assert!(error.contains("look-around"), "{error}");
}

#[tokio::test]
async fn an_unknown_name_is_echoed_with_its_control_characters_escaped() {
    let registry = Registry::builder()
        .tool(echo("echo", anything_in(), json!(true)))
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("re\u{1b}[2Jad\nme\0", json!({})), Surface::Direct)
        .await;
    let message = text(&outcome);
    assert!(
        !message.chars().any(|ch| ch.is_control() && ch != '\n'),
        "{message:?}"
    );
    assert!(
        message.contains("`re\\u{1b}[2Jad\\u{a}me\\u{0}`"),
        "{message}"
    );
}

// ================================================================ 8. sound types

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
enum FileAction {
    /// Reads a file.
    Read { path: String },
    /// Writes a file.
    Write { path: String, text: String },
    /// Lists the directory.
    List,
}

/// Does one thing to a file.
#[tool]
fn file(action: FileAction) -> String {
    match action {
        FileAction::Read { path } => format!("read {path}"),
        FileAction::Write { path, text } => format!("wrote {} bytes to {path}", text.len()),
        FileAction::List => "listed".into(),
    }
}

#[tokio::test]
async fn an_internally_tagged_enum_is_an_args_type_every_provider_gets_as_an_object() {
    let registry = Registry::builder().tool(File).build().unwrap();
    let write = registry
        .dispatch(
            call(
                "file",
                json!({"action": "write", "path": "a", "text": "hi"}),
            ),
            Surface::Direct,
        )
        .await;
    assert_eq!(write.value().unwrap(), &json!("wrote 2 bytes to a"));
    let mixed = registry
        .dispatch(call("file", json!({"action": "read"})), Surface::Direct)
        .await;
    assert_eq!(code(&mixed), Some(codes::INVALID_TOOL_INPUT));
    assert!(text(&mixed).contains("(`oneOf`)"), "{}", text(&mixed));

    let snapshot = registry.snapshot();
    for provider in [
        Provider::OpenAiChat,
        Provider::Anthropic,
        Provider::OpenAiResponses,
    ] {
        for options in [ToolOptions::default(), ToolOptions::default().strict()] {
            let lowered = lower_tools(provider, snapshot.definitions(), options).unwrap();
            let tool = &lowered[0];
            let parameters = tool
                .get("parameters")
                .or_else(|| tool.get("input_schema"))
                .or_else(|| tool["function"].get("parameters"))
                .unwrap();
            assert_eq!(parameters["type"], "object", "{provider:?}");
            for key in ["oneOf", "anyOf", "allOf"] {
                assert!(parameters.get(key).is_none(), "{provider:?} {key}");
            }
            assert!(
                parameters["description"]
                    .as_str()
                    .unwrap()
                    .contains("oneOf")
            );
        }
    }
    let gemini = lower_tools(
        Provider::Gemini,
        snapshot.definitions(),
        ToolOptions::default(),
    )
    .unwrap();
    assert_eq!(
        gemini[0]["functionDeclarations"][0]["parameters"]["type"],
        "OBJECT"
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct SecretValue {
    shown: String,
    #[serde(skip_serializing)]
    #[allow(dead_code)]
    token: String,
}

/// Returns a value that cannot be read back.
#[tool(render = render_secret)]
fn secret() -> SecretValue {
    SecretValue {
        shown: "a".into(),
        token: "sk-1".into(),
    }
}

fn render_secret(_args: &SecretArgs, value: &SecretValue) -> String {
    value.shown.clone()
}

#[test]
fn a_value_type_that_cannot_be_read_back_is_refused_at_registration() {
    let error = Registry::builder().tool(Secret).build().unwrap_err();
    let RegistrationError::ValueRoundTrip { name, problem } = &error else {
        panic!("{error}")
    };
    assert_eq!(name, "secret");
    assert!(problem.contains("field `token`"), "{problem}");
    assert!(problem.contains("#[serde(default)]"), "{problem}");
}
