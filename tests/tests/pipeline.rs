//! The dispatch pipeline, one test per invariant: invalid input never runs the body, invalid
//! output is never a success, projections come from the validated value, and nothing a tool
//! does crashes the host.

// Tools here are written as users write them: `async` bodies that happen not to await, and
// render functions that take the value by reference whatever its size.
#![allow(clippy::unused_async, clippy::trivially_copy_pass_by_ref)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolprism::error::codes;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;
use toolprism::present::{Card, ReadCard};
use toolprism::{RegistrationError, ToolOutcome, schema::SchemaError};
use toolprism_tests::{code, text};

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("call_1", name, args)
}

// ---------------------------------------------------------------- tools used below

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File to read.
    path: String,
    /// First line to show, 1-based.
    offset: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Line {
    number: u32,
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadValue {
    path: String,
    offset: u32,
    lines: Vec<Line>,
    total_lines: u32,
}

static READ_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Reads a (pretend) file with line numbers.
#[tool(render = render_read, presentation_meta = read_meta)]
async fn read(args: ReadArgs, cx: &ToolContext) -> Result<ReadValue, ToolError> {
    READ_CALLS.fetch_add(1, Ordering::SeqCst);
    if args.path == "missing.txt" {
        return Err(ToolError::new("no such file: missing.txt").with_code("NOT_FOUND"));
    }
    let offset = args.offset.unwrap_or(1);
    let lines = (offset..offset + 3)
        .map(|number| Line {
            number,
            text: format!("line {number} of {} ({})", args.path, cx.call_id()),
        })
        .collect();
    Ok(ReadValue {
        path: args.path,
        offset,
        lines,
        total_lines: 10,
    })
}

fn render_read(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
    let mut text = String::new();
    for line in &value.lines {
        let _ = writeln!(text, "{}: {}", line.number, line.text);
    }
    let _ = write!(
        text,
        "(Showing lines {}-{} of {}.)",
        value.offset,
        value.offset + 2,
        value.total_lines
    );
    vec![ContentBlock::text(text)]
}

fn read_meta(args: &ReadArgs, value: &ReadValue) -> Card {
    Card::Read(ReadCard {
        path: args.path.clone(),
        first_line: value.offset.into(),
        last_line: value.lines.last().map_or(0, |line| line.number.into()),
        total_lines: value.total_lines.into(),
    })
}

async fn registry_with(tools: Vec<ToolDef>) -> toolprism::Registry {
    Registry::builder()
        .tools(tools)
        .build()
        .expect("tools register")
}

// ---------------------------------------------------------------- input

#[tokio::test]
async fn invalid_input_never_runs_the_body() {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let before = READ_CALLS.load(Ordering::SeqCst);

    let wrong_type = registry
        .dispatch(
            call("read", json!({"path": "a.txt", "offset": "ten"})),
            Surface::Direct,
        )
        .await;
    let missing = registry
        .dispatch(call("read", json!({})), Surface::Direct)
        .await;
    let unknown_field = registry
        .dispatch(
            call("read", json!({"path": "a", "limit": 5})),
            Surface::Direct,
        )
        .await;
    let not_json = registry
        .dispatch(
            ToolCall::from_raw_args("c", "read", "{\"path\": "),
            Surface::Direct,
        )
        .await;
    let not_object = registry
        .dispatch(call("read", json!([1, 2])), Surface::Direct)
        .await;

    assert_eq!(
        READ_CALLS.load(Ordering::SeqCst),
        before,
        "the body ran on invalid input"
    );
    for outcome in [
        &wrong_type,
        &missing,
        &unknown_field,
        &not_json,
        &not_object,
    ] {
        assert_eq!(
            code(outcome),
            Some(codes::INVALID_TOOL_INPUT),
            "{outcome:?}"
        );
        assert!(outcome.value().is_none());
    }
    // The message says which field is wrong and why, in words a model can act on.
    let message = &wrong_type.error().unwrap().message;
    assert!(message.contains("`/offset`"), "{message}");
    assert!(
        message.contains("\"ten\" is not of types \"null\", \"integer\""),
        "{message}"
    );
    assert!(
        text(&missing).contains("\"path\" is a required property"),
        "{}",
        text(&missing)
    );
    assert!(
        text(&unknown_field).contains("limit"),
        "{}",
        text(&unknown_field)
    );
    assert!(
        text(&not_json).contains("not valid JSON"),
        "{}",
        text(&not_json)
    );
}

/// A tool looked up once (`Snapshot::resolve`) is dispatched through the whole pipeline, as a
/// call by name is: validation, the refusal of a final step, normalization.
#[tokio::test]
async fn a_resolved_tool_runs_the_same_pipeline_as_a_call_by_name() {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let snapshot = registry.snapshot();
    assert!(snapshot.resolve("write").is_none());
    let read = snapshot.resolve("read").expect("`read` is registered");
    assert_eq!(read.definition().name(), "read");

    let before = READ_CALLS.load(Ordering::SeqCst);
    let invalid = read
        .dispatch(
            "c1",
            json!({"path": 7}),
            Surface::Direct,
            DispatchOptions::default(),
        )
        .await;
    assert_eq!(
        code(&invalid),
        Some(codes::INVALID_TOOL_INPUT),
        "{invalid:?}"
    );
    assert_eq!(READ_CALLS.load(Ordering::SeqCst), before, "the body ran");

    let args = json!({"path": "a.txt"});
    let resolved = read
        .dispatch(
            "call_1",
            args.clone(),
            Surface::Direct,
            DispatchOptions::default(),
        )
        .await;
    let by_name = snapshot
        .dispatch(call("read", args.clone()), Surface::Direct)
        .await;
    assert!(resolved.value().is_some(), "{resolved:?}");
    assert_eq!(resolved.value(), by_name.value());
    assert_eq!(resolved.content(), by_name.content());
    assert_eq!(resolved.meta(), by_name.meta());

    let refusing = snapshot.refusing_calls("the last step");
    let refused = refusing
        .resolve("read")
        .unwrap()
        .dispatch("c3", args, Surface::Direct, DispatchOptions::default())
        .await;
    assert_eq!(code(&refused), Some(codes::TOOLS_DISABLED), "{refused:?}");
}

#[tokio::test]
async fn input_that_passes_a_loose_schema_but_not_the_type_is_refused() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let loose = ToolDef::builder("loose")
        .description("Takes a count.")
        .input_schema(json!({"type": "object"}))
        .handler(move |args: BTreeMap<String, u8>, _cx: ToolContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolError>(args.len()) }
        })
        .build();
    let registry = registry_with(vec![loose]).await;
    let outcome = registry
        .dispatch(call("loose", json!({"n": 300})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn huge_invalid_input_gives_a_bounded_message() {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let huge = "x".repeat(5_000_000);
    let outcome = registry
        .dispatch(
            call("read", json!({"path": 1, "offset": huge})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    assert!(
        text(&outcome).len() < 2_000,
        "{} bytes",
        text(&outcome).len()
    );
}

// ---------------------------------------------------------------- output

/// Returns a value that breaks its own output schema.
fn dynamic_liar(value: Value) -> ToolDef {
    ToolDef::builder("liar")
        .description("Claims to return a non-negative integer.")
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "integer", "minimum": 0}))
        .handler(move |_args: Value, _cx: ToolContext| {
            let value = value.clone();
            async move { Ok::<_, ToolError>(value) }
        })
        .build()
}

/// A count whose derived schema says integer, and whose hand-written `Serialize` writes it as
/// a string for values past three: the schema's plan meets the string while the value is
/// snapshotted, and leaves it to the validator.
#[derive(schemars::JsonSchema)]
struct Tally {
    count: u32,
}

impl serde::Serialize for Tally {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut fields = serializer.serialize_struct("Tally", 1)?;
        if self.count > 3 {
            fields.serialize_field("count", &self.count.to_string())?;
        } else {
            fields.serialize_field("count", &self.count)?;
        }
        fields.end()
    }
}

/// Counts.
#[tool]
fn count_to(#[arg] to: u32) -> Tally {
    Tally { count: to }
}

#[tokio::test]
async fn a_typed_value_its_schema_refuses_is_never_a_success() {
    let registry = Registry::builder().tool(CountTo).build().unwrap();
    // The same field of the same struct twice: the second time it is found by address.
    for _ in 0..2 {
        let fine = registry
            .dispatch(call("count_to", json!({"to": 3})), Surface::Direct)
            .await;
        assert_eq!(fine.value().unwrap(), &json!({"count": 3}));
    }
    let outcome = registry
        .dispatch(call("count_to", json!({"to": 4})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(outcome.value().is_none());
    assert!(
        text(&outcome).contains(r#""4" is not of type "integer""#),
        "{}",
        text(&outcome)
    );
}

#[tokio::test]
async fn invalid_output_is_never_a_success() {
    let registry = registry_with(vec![dynamic_liar(json!(-3))]).await;
    let outcome = registry
        .dispatch(call("liar", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(outcome.value().is_none());
    assert!(
        text(&outcome).contains("-3 is less than the minimum of 0"),
        "{}",
        text(&outcome)
    );

    let registry = registry_with(vec![dynamic_liar(json!(7))]).await;
    let outcome = registry
        .dispatch(call("liar", json!({})), Surface::Direct)
        .await;
    assert_eq!(outcome.value().unwrap(), &json!(7));
}

#[derive(Serialize, JsonSchema)]
struct Measurement {
    label: String,
    samples: Vec<f64>,
}

/// Measures something, sometimes badly.
#[tool]
fn measure(#[arg] broken: bool) -> Measurement {
    Measurement {
        label: "m".into(),
        samples: vec![1.0, if broken { f64::NAN } else { 2.0 }],
    }
}

/// Returns infinity.
#[tool]
fn infinite() -> f32 {
    f32::INFINITY
}

/// Returns an integer wider than JSON carries.
#[tool]
fn wide() -> u128 {
    u128::MAX
}

#[tokio::test]
async fn nan_infinity_and_wide_integers_are_not_silently_altered() {
    let registry = Registry::builder()
        .tool(Measure)
        .tool(Infinite)
        .tool(Wide)
        .build()
        .unwrap();

    let nan = registry
        .dispatch(call("measure", json!({"broken": true})), Surface::Direct)
        .await;
    assert_eq!(code(&nan), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        text(&nan).contains("NaN cannot be represented in JSON (at /samples/1)"),
        "{}",
        text(&nan)
    );

    let fine = registry
        .dispatch(call("measure", json!({"broken": false})), Surface::Direct)
        .await;
    assert_eq!(
        fine.value().unwrap(),
        &json!({"label": "m", "samples": [1.0, 2.0]})
    );

    let inf = registry
        .dispatch(call("infinite", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&inf), Some(codes::INVALID_TOOL_OUTPUT));

    let wide = registry
        .dispatch(call("wide", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&wide), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        text(&wide).contains(&u128::MAX.to_string()),
        "{}",
        text(&wide)
    );
}

// ---------------------------------------------------------------- projections

#[tokio::test]
async fn render_and_meta_are_projections_of_the_validated_value() {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let outcome = registry
        .dispatch(
            call("read", json!({"path": "a.txt", "offset": 4})),
            Surface::Direct,
        )
        .await;
    let ToolOutcome::Success(success) = &outcome else {
        panic!("{outcome:?}")
    };
    let value: ReadValue = success.value().deserialize().unwrap();
    let args = ReadArgs {
        path: "a.txt".into(),
        offset: Some(4),
    };
    assert_eq!(success.content(), render_read(&args, &value));
    let card = serde_json::to_value(read_meta(&args, &value)).unwrap();
    assert_eq!(success.meta(), Some(&card));
    assert!(text(&outcome).ends_with("(Showing lines 4-6 of 10.)"));

    // Pure: the same call renders the same bytes.
    let again = registry
        .dispatch(
            call("read", json!({"path": "a.txt", "offset": 4})),
            Surface::Direct,
        )
        .await;
    assert_eq!(again.content(), outcome.content());
}

#[tokio::test]
async fn meta_is_computed_for_direct_calls_only() {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let direct = registry
        .dispatch(call("read", json!({"path": "a.txt"})), Surface::Direct)
        .await;
    let nested = registry
        .dispatch(call("read", json!({"path": "a.txt"})), Surface::Nested)
        .await;
    assert_eq!(direct.meta().unwrap()["card"], "read");
    assert_eq!(nested.meta(), None);
    assert_eq!(direct.value(), nested.value());
    assert_eq!(direct.content(), nested.content());
}

/// Renders by panicking.
#[tool(render = render_panics)]
fn panicky_render() -> u8 {
    1
}

fn render_panics(_args: &PanickyRenderArgs, _value: &u8) -> Vec<ContentBlock> {
    panic!("render exploded")
}

/// Renders by failing.
#[tool(render = render_fails)]
fn failing_render() -> u8 {
    1
}

fn render_fails(_args: &FailingRenderArgs, value: &u8) -> Result<Vec<ContentBlock>, String> {
    Err(format!("cannot render {value}"))
}

/// Its meta projection panics.
#[tool(presentation_meta = meta_panics)]
fn panicky_meta() -> u8 {
    1
}

fn meta_panics(_args: &PanickyMetaArgs, _value: &u8) -> Value {
    panic!("meta exploded")
}

/// The body panics.
#[tool]
async fn panicky_body() -> u8 {
    panic!("body exploded")
}

#[tokio::test]
async fn panics_and_projection_errors_are_contained() {
    let registry = Registry::builder()
        .tool(PanickyRender)
        .tool(FailingRender)
        .tool(PanickyMeta)
        .tool(PanickyBody)
        .tool(Read)
        .build()
        .unwrap();

    let render = registry
        .dispatch(call("panicky_render", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&render), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        text(&render).contains("render panicked: render exploded"),
        "{}",
        text(&render)
    );

    let failing = registry
        .dispatch(call("failing_render", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&failing), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(text(&failing).contains("cannot render 1"));

    let meta = registry
        .dispatch(call("panicky_meta", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&meta), Some(codes::INVALID_TOOL_OUTPUT));
    // Nested calls never run the meta projection, so the same tool succeeds there.
    let nested = registry
        .dispatch(call("panicky_meta", json!({})), Surface::Nested)
        .await;
    assert_eq!(nested.value().unwrap(), &json!(1));

    let body = registry
        .dispatch(call("panicky_body", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&body), Some(codes::TOOL_PANICKED));
    assert!(text(&body).contains("body exploded"));

    // The host goes on.
    let after = registry
        .dispatch(call("read", json!({"path": "b"})), Surface::Direct)
        .await;
    assert!(!after.is_error());
}

#[tokio::test]
async fn without_render_strings_are_text_and_values_are_serialized_once() {
    /// Returns a string.
    #[tool]
    fn say() -> String {
        "plain words".into()
    }
    /// Returns a map.
    #[tool]
    fn table() -> BTreeMap<String, Vec<i32>> {
        [("a".to_owned(), vec![1, 2])].into()
    }
    let registry = Registry::builder().tool(Say).tool(Table).build().unwrap();
    let say = registry
        .dispatch(call("say", json!({})), Surface::Direct)
        .await;
    assert_eq!(say.content(), [ContentBlock::text("plain words")]);
    let table = registry
        .dispatch(call("table", json!({})), Surface::Direct)
        .await;
    assert_eq!(table.content(), [ContentBlock::text(r#"{"a":[1,2]}"#)]);
}

// ---------------------------------------------------------------- output shapes

#[derive(Serialize, Deserialize, JsonSchema, PartialEq, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Verdict {
    Pass,
    Fail { reason: String },
}

/// Counts to three.
#[tool]
fn count() -> Vec<u8> {
    vec![1, 2, 3]
}

/// Does nothing.
#[tool]
fn nothing() {}

/// Maybe finds something.
#[tool]
fn maybe(#[arg] found: bool) -> Option<String> {
    found.then(|| "it".to_owned())
}

/// Judges.
#[tool]
fn judge(#[arg(description = "Whether to pass.")] pass: bool) -> Verdict {
    if pass {
        Verdict::Pass
    } else {
        Verdict::Fail {
            reason: "no".into(),
        }
    }
}

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::test]
async fn scalar_array_null_option_and_enum_values() {
    let registry = Registry::builder()
        .tool(Add)
        .tool(Count)
        .tool(Nothing)
        .tool(Maybe)
        .tool(Judge)
        .build()
        .unwrap();
    let dispatch = |name: &'static str, args: Value| {
        let registry = registry.clone();
        async move { registry.dispatch(call(name, args), Surface::Direct).await }
    };
    assert_eq!(
        dispatch("add", json!({"a": 2, "b": 40}))
            .await
            .value()
            .unwrap(),
        &json!(42)
    );
    assert_eq!(
        dispatch("count", json!({})).await.value().unwrap(),
        &json!([1, 2, 3])
    );
    assert_eq!(
        dispatch("nothing", json!({})).await.value().unwrap(),
        &json!(null)
    );
    assert_eq!(
        dispatch("maybe", json!({"found": false}))
            .await
            .value()
            .unwrap(),
        &json!(null)
    );
    assert_eq!(
        dispatch("maybe", json!({"found": true}))
            .await
            .value()
            .unwrap(),
        &json!("it")
    );
    let fail = dispatch("judge", json!({"pass": false})).await;
    assert_eq!(
        fail.value().unwrap(),
        &json!({"kind": "fail", "reason": "no"})
    );
    assert_eq!(
        fail.value().unwrap().deserialize::<Verdict>().unwrap(),
        Verdict::Fail {
            reason: "no".into()
        }
    );

    // The schemas are not object-rooted: they describe the values as they are.
    let snapshot = registry.snapshot();
    let schema = |name| snapshot.definition(name).unwrap().output_schema().clone();
    assert_eq!(schema("add")["type"], "integer");
    assert_eq!(schema("count")["type"], "array");
    assert_eq!(schema("nothing")["type"], "null");
    assert_eq!(schema("maybe")["type"], json!(["string", "null"]));
    assert!(schema("judge")["oneOf"].is_array());
    let judge_input = snapshot.definition("judge").unwrap().input_schema().clone();
    assert_eq!(
        judge_input["properties"]["pass"]["description"],
        "Whether to pass."
    );
    assert_eq!(judge_input["additionalProperties"], false);
}

// ---------------------------------------------------------------- failures from the body

#[tokio::test]
async fn body_errors_keep_their_code_and_carry_no_value() {
    /// Reads a real file.
    #[tool]
    fn read_real(#[arg] path: String) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
    let registry = Registry::builder()
        .tool(Read)
        .tool(ReadReal)
        .build()
        .unwrap();
    let coded = registry
        .dispatch(
            call("read", json!({"path": "missing.txt"})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&coded), Some("NOT_FOUND"));
    assert_eq!(text(&coded), "no such file: missing.txt");
    assert!(coded.value().is_none());
    let serialized = serde_json::to_value(&coded).unwrap();
    assert_eq!(serialized["is_error"], true);
    assert!(serialized.get("value").is_none(), "{serialized}");

    let io = registry
        .dispatch(
            call("read_real", json!({"path": "/definitely/not/here"})),
            Surface::Direct,
        )
        .await;
    assert_eq!(code(&io), Some(codes::TOOL_FAILED));
    assert!(text(&io).contains("No such file"), "{}", text(&io));
}

#[tokio::test]
async fn unknown_tools_fail_alone() {
    let registry = Registry::builder().tool(Add).build().unwrap();
    let unknown = registry
        .dispatch(call("nope", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&unknown), Some(codes::UNKNOWN_TOOL));
    assert!(
        text(&unknown).contains("Available tools: `add`"),
        "{}",
        text(&unknown)
    );
    let hostile_name = "../".repeat(10_000);
    let hostile = registry
        .dispatch(call(&hostile_name, json!({})), Surface::Direct)
        .await;
    assert!(text(&hostile).len() < 500);
    let fine = registry
        .dispatch(call("add", json!({"a": 1, "b": 1})), Surface::Direct)
        .await;
    assert!(!fine.is_error());
}

#[tokio::test]
async fn the_body_sees_its_context() {
    /// Reports its context.
    #[tool]
    fn whoami(cx: &ToolContext) -> String {
        format!("{} {} {:?}", cx.tool_name(), cx.call_id(), cx.surface())
    }
    let registry = Registry::builder().tool(Whoami).build().unwrap();
    let outcome = registry
        .dispatch(
            ToolCall::new("call_42", "whoami", json!({})),
            Surface::Nested,
        )
        .await;
    assert_eq!(outcome.value().unwrap(), &json!("whoami call_42 Nested"));
}

// ---------------------------------------------------------------- state

struct Counter {
    hits: AtomicUsize,
    prefix: String,
}

#[toolset]
impl Counter {
    /// Counts a hit and returns the total so far.
    #[tool]
    fn hit(&self) -> usize {
        self.hits.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Labels a text with the counter's prefix.
    #[tool(name = "label")]
    async fn make_label(&self, #[arg(description = "What to label.")] text: String) -> String {
        format!("{}{text}", self.prefix)
    }
}

#[tokio::test]
async fn toolsets_capture_their_state_once() {
    let registry = Registry::builder()
        .toolset(Counter {
            hits: AtomicUsize::new(0),
            prefix: "#".into(),
        })
        .build()
        .unwrap();
    let names: Vec<_> = registry
        .snapshot()
        .definitions()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names, ["hit", "label"]);
    for expected in 1..=3 {
        let outcome = registry
            .dispatch(call("hit", json!({})), Surface::Direct)
            .await;
        assert_eq!(outcome.value().unwrap(), &json!(expected));
    }
    let label = registry
        .dispatch(call("label", json!({"text": "x"})), Surface::Direct)
        .await;
    assert_eq!(label.value().unwrap(), &json!("#x"));
    let schema = registry
        .snapshot()
        .definition("label")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(
        schema["properties"]["text"]["description"],
        "What to label."
    );
}

// ---------------------------------------------------------------- dynamic tools

#[tokio::test]
async fn dynamic_tools_validate_like_typed_ones() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let upper = ToolDef::builder("upper")
        .description("Upper-cases a word.")
        .input_schema(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"word": {"$ref": "#/definitions/word"}},
            "required": ["word"],
            "additionalProperties": false,
            "definitions": {"word": {"type": "string", "pattern": "^[a-z]+$"}}
        }))
        .output_schema(json!({"type": "object", "properties": {"upper": {"type": "string"}}, "required": ["upper"]}))
        .handler(move |args: Value, _cx: ToolContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                let word = args["word"].as_str().unwrap_or_default().to_uppercase();
                Ok::<_, ToolError>(json!({"upper": word}))
            }
        })
        .render(|_args: &Value, value: &Value| format!("→ {}", value["upper"].as_str().unwrap_or("")))
        .build();
    let registry = registry_with(vec![upper]).await;

    let good = registry
        .dispatch(call("upper", json!({"word": "abc"})), Surface::Direct)
        .await;
    assert_eq!(good.value().unwrap(), &json!({"upper": "ABC"}));
    assert_eq!(good.content(), [ContentBlock::text("→ ABC")]);

    let bad = registry
        .dispatch(call("upper", json!({"word": "ABC"})), Surface::Direct)
        .await;
    assert_eq!(code(&bad), Some(codes::INVALID_TOOL_INPUT));
    assert!(
        text(&bad).contains("does not match \"^[a-z]+$\""),
        "{}",
        text(&bad)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------- registration

fn dynamic(name: &str, input: Value, output: Value) -> ToolDef {
    ToolDef::builder(name)
        .description("A dynamic tool.")
        .input_schema(input)
        .output_schema(output)
        .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
        .build()
}

#[test]
fn registration_rejects_bad_names_and_schemas_naming_the_tool() {
    let object = json!({"type": "object"});
    let error = Registry::builder().tool(Add).tool(Add).build().unwrap_err();
    assert_eq!(error, RegistrationError::Duplicate { name: "add".into() });
    assert_eq!(
        error.to_string(),
        "tool `add`: a tool of this name is already registered"
    );

    for name in ["", "has space", "dot.name", "ünïcode", &"x".repeat(65)] {
        let error = Registry::builder()
            .tool(dynamic(name, object.clone(), json!(true)))
            .build()
            .unwrap_err();
        assert!(
            matches!(error, RegistrationError::InvalidName { .. }),
            "{name}: {error}"
        );
    }
    assert!(
        Registry::builder()
            .tool(dynamic(&"x".repeat(64), object.clone(), json!(true)))
            .build()
            .is_ok()
    );

    let cases = [
        (
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}),
            json!(true),
            "input",
        ),
        (json!({"type": "string"}), json!(true), "input"),
        (
            object.clone(),
            json!({"type": "string", "pattern": "(unclosed"}),
            "output",
        ),
        (
            object.clone(),
            json!({"$schema": "http://json-schema.org/draft-04/schema#"}),
            "output",
        ),
        (object.clone(), json!("not a schema"), "output"),
    ];
    for (input, output, role) in cases {
        let error = Registry::builder()
            .tool(dynamic("dyn", input.clone(), output.clone()))
            .build()
            .unwrap_err();
        let RegistrationError::Schema {
            name, role: got, ..
        } = &error
        else {
            panic!("{error}")
        };
        assert_eq!((name.as_str(), *got), ("dyn", role), "{input} {output}");
        assert!(error.to_string().starts_with("tool `dyn`: its "), "{error}");
    }
    let error = Registry::builder()
        .tool(dynamic("dyn", json!({"type": "string"}), json!(true)))
        .build()
        .unwrap_err();
    assert!(matches!(
        error,
        RegistrationError::Schema {
            source: SchemaError::InputNotObject,
            ..
        }
    ));
}
