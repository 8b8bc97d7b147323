//! Arguments and results on spans: never by default; bounded when a host opts in. Alone in
//! its test binary, as the choice is the process's.

use opentelemetry::trace::Status;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use toolprism::prelude::*;
use toolprism_otel::Telemetry;
use tracing_subscriber::layer::SubscriberExt as _;

/// Echoes a text, or fails with it.
#[tool]
fn echo(text: String, fail: bool) -> Result<String, ToolError> {
    if fail {
        Err(ToolError::new(format!("refused: {text}")))
    } else {
        Ok(text)
    }
}

fn spans_of(registry: &Registry, calls: &[serde_json::Value]) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let telemetry = Telemetry::traces_only(provider);
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (at, args) in calls.iter().enumerate() {
            let call = ToolCall::new(format!("call_{at}"), "echo", args.clone());
            runtime.block_on(registry.dispatch(call, Surface::Direct));
        }
    });
    let spans = exporter.get_finished_spans().unwrap();
    drop(telemetry);
    spans
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|attribute| attribute.key.as_str() == key)
        .map(|attribute| attribute.value.to_string())
}

#[test]
fn content_is_recorded_only_when_asked_and_then_bounded() {
    let registry = Registry::builder().tool(Echo).build().unwrap();
    let long = "x".repeat(500);
    let calls = [
        json!({"text": "a private note", "fail": false}),
        json!({"text": long, "fail": false}),
        json!({"text": "a private note", "fail": true}),
    ];

    // By default: the call's name, id and outcome, nothing it carried.
    for span in spans_of(&registry, &calls) {
        assert_eq!(attribute(&span, "gen_ai.tool.call.arguments"), None);
        assert_eq!(attribute(&span, "gen_ai.tool.call.result"), None);
        let everything = format!("{:?} {:?} {:?}", span.attributes, span.events, span.status);
        assert!(!everything.contains("private"), "{span:#?}");
    }

    toolprism::telemetry::record_content(Some(64));
    let spans = spans_of(&registry, &calls);
    toolprism::telemetry::record_content(None);
    let [short, long, failed] = &spans[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(
        attribute(short, "gen_ai.tool.call.arguments").unwrap(),
        r#"{"fail":false,"text":"a private note"}"#
    );
    assert_eq!(
        attribute(short, "gen_ai.tool.call.result").unwrap(),
        r#""a private note""#
    );
    for key in ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"] {
        let cut = attribute(long, key).unwrap();
        assert!(cut.len() <= 64, "{key}: {cut}");
        assert!(cut.ends_with('…'), "{key}: {cut}");
    }
    assert_eq!(attribute(failed, "gen_ai.tool.call.result"), None);
    let Status::Error { description } = &failed.status else {
        panic!("{failed:#?}")
    };
    assert!(
        description.contains("refused: a private note"),
        "{description}"
    );

    // Asking again for nothing stops it.
    for span in spans_of(&registry, &calls[..1]) {
        assert_eq!(attribute(&span, "gen_ai.tool.call.arguments"), None);
    }
}
