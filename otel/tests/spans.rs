//! What toolprism's spans become in OpenTelemetry: names, attributes and events as the
//! conventions say, a Code Mode run holding its nested calls, and nothing built where nothing
//! is sampled. Through the SDK's in-memory exporter; the export over OTLP to a real receiver,
//! across two processes, is `examples/tests/telemetry.rs`.

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{InMemorySpanExporter, Sampler, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use toolprism::bound::{BoundLimits, FsOutputStore};
use toolprism::pipeline::{ExecuteCall, Executed, Next, PostDecision, PreDecision};
use toolprism::prelude::*;
use toolprism_codemode::CodeMode;
use toolprism_otel::Telemetry;
use tracing_subscriber::layer::SubscriberExt as _;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Says whether it runs inside a span someone listens to.
#[tool]
fn traced() -> bool {
    !tracing::Span::current().is_disabled()
}

/// A text as long as asked.
#[tool]
fn long(#[arg] lines: u32) -> String {
    "a line of output\n".repeat(usize::try_from(lines).unwrap_or(0))
}

/// Claims to return a count, and returns a word.
fn liar() -> ToolDef {
    ToolDef::builder("liar")
        .output_schema(json!({"type": "integer"}))
        .handler(|_: Value, _: ToolContext| async { Ok::<_, ToolError>(json!("many")) })
        .build()
}

fn registry(store: &std::path::Path) -> Registry {
    let registry = Registry::builder()
        .tool(Add)
        .tool(Traced)
        .tool(Long)
        .tool(liar())
        .limits(BoundLimits::new(10, 2_048))
        .output_store(FsOutputStore::new(store))
        .pre_execute(|call: &ExecuteCall| {
            if call.args()["a"] == 13 {
                PreDecision::deny("13 is unlucky")
            } else {
                PreDecision::Allow
            }
        })
        .post_execute(|call: &ExecuteCall, _: &ToolOutcome| {
            if call.name() == "add" && call.args()["a"] == 7 {
                PostDecision::block("not today")
            } else {
                PostDecision::keep()
            }
        })
        .wrap(|_: ExecuteCall, next: Next| async move { Executed::from(next.run().await) })
        .build()
        .unwrap();
    CodeMode::new().register(&registry).unwrap();
    registry
}

/// Runs `work` with a subscriber exporting to memory; the spans it exported.
fn spans_of<T>(sampler: Sampler, roots: bool, work: impl FnOnce() -> T) -> (T, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .with_sampler(sampler)
        .build();
    let telemetry = Telemetry::from_providers(provider, SdkMeterProvider::builder().build())
        .sample_roots(roots);
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let result = tracing::subscriber::with_default(subscriber, work);
    // Exported as each ended (a simple processor); read before the shutdown clears them.
    let spans = exporter.get_finished_spans().unwrap();
    drop(telemetry);
    (result, spans)
}

fn block_on<T>(work: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

fn call(registry: &Registry, id: &str, name: &str, args: Value) -> ToolOutcome {
    block_on(registry.dispatch(ToolCall::new(id, name, args), Surface::Direct))
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes
        .iter()
        .find(|KeyValue { key: name, .. }| name.as_str() == key)
        .map(|attribute| &attribute.value)
}

fn text(span: &SpanData, key: &str) -> String {
    attribute(span, key)
        .map(ToString::to_string)
        .unwrap_or_default()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

fn events(span: &SpanData) -> Vec<String> {
    span.events
        .iter()
        .map(|event| event.name.to_string())
        .collect()
}

#[test]
fn a_call_is_an_execute_tool_span_with_the_conventions_attributes() {
    let store = tempfile::tempdir().unwrap();
    let registry = registry(store.path());
    let (outcome, spans) = spans_of(Sampler::AlwaysOn, true, || {
        call(&registry, "call_9", "add", json!({"a": 2, "b": 3}))
    });
    assert!(!outcome.is_error());
    let [span] = &named(&spans, "execute_tool add")[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(span.span_kind, SpanKind::Internal);
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert_eq!(text(span, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(span, "gen_ai.tool.name"), "add");
    assert_eq!(text(span, "gen_ai.tool.call.id"), "call_9");
    assert_eq!(text(span, "gen_ai.tool.type"), "function");
    assert_eq!(text(span, "toolprism.surface"), "direct");
    assert_eq!(attribute(span, "error.type"), None);
    assert_eq!(span.status, Status::Unset);
    assert_eq!(events(span), ["toolprism.wrapper"]);
}

#[test]
fn refusals_spills_and_broken_outputs_are_events_and_failures_carry_their_code() {
    let store = tempfile::tempdir().unwrap();
    let registry = registry(store.path());
    let ((), spans) = spans_of(Sampler::AlwaysOn, true, || {
        call(&registry, "denied", "add", json!({"a": 13, "b": 1}));
        call(&registry, "blocked", "add", json!({"a": 7, "b": 1}));
        call(&registry, "spilled", "long", json!({"lines": 50}));
        call(&registry, "lied", "liar", json!({}));
    });
    let by_id = |id: &str| {
        spans
            .iter()
            .find(|span| text(span, "gen_ai.tool.call.id") == id)
            .unwrap_or_else(|| panic!("{id} in {spans:#?}"))
    };

    let denied = by_id("denied");
    assert_eq!(text(denied, "error.type"), "DENIED_BY_POLICY");
    assert!(matches!(denied.status, Status::Error { .. }));
    assert_eq!(events(denied), ["toolprism.policy"]);
    let decision = &denied.events.iter().next().unwrap().attributes;
    assert!(
        decision.contains(&KeyValue::new("decision", "deny")),
        "{decision:?}"
    );

    let blocked = by_id("blocked");
    assert_eq!(text(blocked, "error.type"), "BLOCKED_BY_POLICY");
    assert_eq!(events(blocked), ["toolprism.wrapper", "toolprism.policy"]);

    let spilled = by_id("spilled");
    assert_eq!(attribute(spilled, "error.type"), None);
    assert_eq!(events(spilled), ["toolprism.wrapper", "toolprism.spill"]);

    let lied = by_id("lied");
    assert_eq!(text(lied, "error.type"), "INVALID_TOOL_OUTPUT");
    assert_eq!(
        events(lied),
        ["toolprism.wrapper", "toolprism.invalid_output"]
    );
}

#[test]
fn a_code_mode_run_holds_its_nested_calls() {
    let store = tempfile::tempdir().unwrap();
    let registry = registry(store.path());
    let code = "const x = await tools.add({a: 1, b: 2}); \
                return await tools.add({a: x, b: 3});";
    let (outcome, spans) = spans_of(Sampler::AlwaysOn, true, || {
        call(&registry, "run", "run_code", json!({ "code": code }))
    });
    assert_eq!(outcome.value().unwrap().as_value()["result"], 6);
    let [run_code] = &named(&spans, "execute_tool run_code")[..] else {
        panic!("{spans:#?}")
    };
    let [program] = &named(&spans, "run_program")[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(program.parent_span_id, run_code.span_context.span_id());
    let nested = named(&spans, "execute_tool add");
    assert_eq!(nested.len(), 2, "{spans:#?}");
    for call in nested {
        assert_eq!(call.parent_span_id, program.span_context.span_id());
        assert_eq!(
            call.span_context.trace_id(),
            run_code.span_context.trace_id()
        );
        assert_eq!(text(call, "toolprism.surface"), "nested");
    }
    let ids: Vec<String> = named(&spans, "execute_tool add")
        .iter()
        .map(|call| text(call, "gen_ai.tool.call.id"))
        .collect();
    assert_eq!(ids, ["run.1", "run.2"]);

    // A run that fails says how it stopped.
    let (_, spans) = spans_of(Sampler::AlwaysOn, true, || {
        call(
            &registry,
            "bad",
            "run_code",
            json!({ "code": "throw new Error('no')" }),
        )
    });
    let [program] = &named(&spans, "run_program")[..] else {
        panic!("{spans:#?}")
    };
    assert!(matches!(program.status, Status::Error { .. }));
    assert!(!text(program, "error.type").is_empty());
}

#[test]
fn where_nothing_is_sampled_no_span_is_built_unless_a_sampled_trace_holds_it() {
    let store = tempfile::tempdir().unwrap();
    let registry = registry(store.path());
    let never = || Sampler::ParentBased(Box::new(Sampler::AlwaysOff));

    // A call of its own: no span built (the body runs in none), none exported.
    let (outcome, spans) = spans_of(never(), false, || {
        call(&registry, "alone", "traced", json!({}))
    });
    assert_eq!(outcome.value().unwrap().as_value(), &json!(false));
    assert!(spans.is_empty(), "{spans:#?}");

    // Inside a trace a client sampled (as a server continues one from `_meta`): built,
    // exported, the remote span its parent.
    let remote = SpanContext::new(
        TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap(),
        SpanId::from_hex("b7ad6b7169203331").unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    let (outcome, spans) = spans_of(never(), false, || {
        let _client = opentelemetry::Context::new()
            .with_remote_span_context(remote.clone())
            .attach();
        call(&registry, "inside", "traced", json!({}))
    });
    assert_eq!(outcome.value().unwrap().as_value(), &json!(true));
    let [span] = &spans[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(span.span_context.trace_id(), remote.trace_id());
    assert_eq!(span.parent_span_id, remote.span_id());

    // The same sampler told nothing of roots builds the span, and samples it out.
    let (outcome, spans) = spans_of(never(), true, || {
        call(&registry, "built", "traced", json!({}))
    });
    assert_eq!(outcome.value().unwrap().as_value(), &json!(true));
    assert!(spans.is_empty(), "{spans:#?}");
}
