//! What a server makes of the trace context a client sends in `_meta`: the client's trace
//! continued, a trace of its own linked to the client's span, or nothing read
//! (`McpServer::with_client_trace`). Client and server in one process over an in-memory pipe,
//! their spans exported to memory; across two processes and a real OTLP receiver, see
//! `examples/tests/telemetry.rs`.

use opentelemetry::trace::{SpanId, SpanKind};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use rmcp::ServiceExt as _;
use serde_json::json;
use toolprism::prelude::*;
use toolprism_mcp::{ClientTrace, ImportOptions, McpClient, McpServer};
use toolprism_otel::Telemetry;
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// One call of `add` from a client's turn to a server that makes `client_trace` of its trace
/// context; every span both sides made.
fn spans_of(client_trace: ClientTrace) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let telemetry = Telemetry::traces_only(provider);
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let registry = Registry::builder().tool(Add).build().unwrap();
            let server = McpServer::new(registry).with_client_trace(client_trace);
            let (client_io, server_io) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                if let Ok(running) = server.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            let client = McpClient::connect(client_io, ImportOptions::default().prefix("remote_"))
                .await
                .unwrap();
            let importing = Registry::builder().build().unwrap();
            client.import_into(&importing).await.unwrap();
            let call = ToolCall::new("c1", "remote_add", json!({"a": 2, "b": 3}));
            let outcome = importing
                .dispatch(call, Surface::Direct)
                .instrument(tracing::info_span!("turn"))
                .await;
            assert_eq!(outcome.value().unwrap().as_value(), &json!(5));
            client.close().await;
        });
    });
    let spans = exporter.get_finished_spans().unwrap();
    drop(telemetry);
    spans
}

/// The `tools/call add` span of `kind`.
fn request(spans: &[SpanData], kind: &SpanKind) -> SpanData {
    let found: Vec<_> = spans
        .iter()
        .filter(|span| span.name == "tools/call add" && &span.span_kind == kind)
        .collect();
    assert_eq!(found.len(), 1, "{kind:?} in {spans:#?}");
    found[0].clone()
}

/// The server's request span is a root of a trace of the server's own.
fn assert_own_trace(server: &SpanData, client: &SpanData) {
    assert_eq!(server.parent_span_id, SpanId::INVALID);
    assert_ne!(
        server.span_context.trace_id(),
        client.span_context.trace_id()
    );
}

#[test]
fn by_default_the_server_continues_the_clients_trace() {
    let spans = spans_of(ClientTrace::default());
    let client = request(&spans, &SpanKind::Client);
    let server = request(&spans, &SpanKind::Server);
    assert_eq!(server.parent_span_id, client.span_context.span_id());
    assert_eq!(
        server.span_context.trace_id(),
        client.span_context.trace_id()
    );
    assert!(server.parent_span_is_remote);
    assert!(server.links.is_empty());
}

#[test]
fn linked_the_server_starts_its_own_trace_pointing_at_the_clients_span() {
    let spans = spans_of(ClientTrace::Link);
    let client = request(&spans, &SpanKind::Client);
    let server = request(&spans, &SpanKind::Server);
    assert_own_trace(&server, &client);
    let links: Vec<_> = server
        .links
        .iter()
        .map(|link| (link.span_context.trace_id(), link.span_context.span_id()))
        .collect();
    let client_span = (
        client.span_context.trace_id(),
        client.span_context.span_id(),
    );
    assert_eq!(links, [client_span]);
    // The tool's own span is inside the server's trace, not the client's.
    let inside = spans
        .iter()
        .find(|span| span.name == "execute_tool add")
        .unwrap();
    assert_eq!(inside.parent_span_id, server.span_context.span_id());
}

#[test]
fn ignored_the_clients_trace_context_is_not_read() {
    let spans = spans_of(ClientTrace::Ignore);
    let client = request(&spans, &SpanKind::Client);
    let server = request(&spans, &SpanKind::Server);
    assert_own_trace(&server, &client);
    assert!(server.links.is_empty());
}
