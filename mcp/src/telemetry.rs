//! MCP requests as the OpenTelemetry semantic conventions for MCP name them, on both sides.
//!
//! Each request is a `tracing` span named `{mcp.method.name} {target}` (the target is the tool
//! or prompt, when there is one) with `mcp.method.name`, `jsonrpc.request.id` (a string) and
//! `mcp.protocol.version` (a known one), and for `tools/call` `gen_ai.operation.name` =
//! `execute_tool` and `gen_ai.tool.name`. On the server (kind server, a root unless the client
//! sent a trace) also `network.transport` (`pipe` or `tcp`) and `mcp.session.id` (a digest) when
//! the HTTP session has one; the client's `tools/call` (kind client) is a child of the imported
//! tool's `execute_tool`. A failure sets `error.type`: the JSON-RPC error code (also
//! `rpc.response.status_code`), `tool_error` for a tool result with `isError`, (client)
//! `transport_error` when no answer came, `cancelled` when the request was dropped first. What
//! a peer sends is bounded ([`peer_text`]).
//!
//! With the `otel` feature:
//!
//! - trace context crosses processes in the request's `_meta` (W3C `traceparent` and
//!   `tracestate`, as SEP-414 places them), injected by the client and read by the server as
//!   its span's parent (or a link: `ClientTrace`), through the global propagator the host
//!   installs (`opentelemetry::global::set_text_map_propagator`; `toolprism-otel` installs
//!   the W3C one);
//! - `mcp.server.operation.duration` and `mcp.client.operation.duration` (histograms, in
//!   seconds, with the conventions' buckets) are recorded on the meter installed with
//!   `toolprism::telemetry::install_meter`.

use rmcp::model::RequestId;
use tracing::field::Empty;

/// Which side of a request a span is.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Server,
    Client,
}

impl Side {
    const fn kind(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Client => "client",
        }
    }
}

/// The most characters of a peer's text (a request id, a tool's name) a span takes.
pub(crate) const MAX_PEER_TEXT_CHARS: usize = 128;

/// A peer's text for a span: at most [`MAX_PEER_TEXT_CHARS`] characters, control characters
/// replaced, the cut marked.
pub(crate) fn peer_text(text: &str) -> String {
    let printable = text
        .chars()
        .map(|ch| if ch.is_control() { '?' } else { ch });
    crate::wire::text::cut(printable, MAX_PEER_TEXT_CHARS)
}

/// The span of one request: `{method} {target}`, its fields declared for what is recorded
/// as it goes (the request id a client learns on sending, the error). `target`: bounded by
/// the caller ([`peer_text`]).
pub(crate) fn request_span(side: Side, method: &str, target: Option<&str>) -> tracing::Span {
    // A server's span is explicitly a root: rmcp serves a connection inside a span of its own,
    // and a request belongs to its caller's trace (from `_meta`), not to the connection's.
    let parent = match side {
        Side::Server => None,
        Side::Client => tracing::Span::current().id(),
    };
    let span = tracing::info_span!(
        target: "toolprism_mcp",
        parent: parent,
        "mcp_request",
        otel.name = Empty,
        otel.kind = side.kind(),
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.session.id = Empty,
        mcp.protocol.version = Empty,
        jsonrpc.request.id = Empty,
        network.transport = Empty,
        rpc.response.status_code = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        error.type = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    match target {
        Some(target) => span.record("otel.name", format!("{method} {target}")),
        None => span.record("otel.name", method),
    };
    match (method, target) {
        ("tools/call", Some(tool)) => {
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool);
        }
        ("prompts/get", Some(prompt)) => {
            span.record("gen_ai.prompt.name", prompt);
        }
        _ => {}
    }
    span
}

/// Records the request's id on its span, as a string (the conventions' type for it), bounded:
/// a client picks it.
pub(crate) fn record_request_id(span: &tracing::Span, id: &RequestId) {
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", peer_text(&id.to_string()));
    }
}

/// Records a failure on the span: its `error.type`, its JSON-RPC code, and the error status.
fn record_failure(span: &tracing::Span, failure: Failure) {
    if !span.is_disabled() {
        span.record("error.type", failure.error_type());
        if let Failure::Rpc(code) = failure {
            span.record("rpc.response.status_code", code.to_string());
        }
        span.record("otel.status_code", "error");
    }
}

#[cfg(feature = "otel")]
pub(crate) use otel::{OperationTimer, follow_remote, inject, remote_context};

#[cfg(feature = "otel")]
mod otel {
    use std::collections::HashMap;
    use std::sync::OnceLock;
    use std::time::Instant;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::Histogram;
    use opentelemetry::propagation::{Extractor, Injector};
    use opentelemetry::trace::TraceContextExt as _;
    use rmcp::model::MetaObject;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use super::{Failure, Side};

    /// The longest `traceparent` or `tracestate` value read from a request (W3C: a
    /// `tracestate` has at most 32 members of at most 256 bytes each).
    const MAX_TRACE_HEADER_BYTES: usize = 8 * 1024;

    struct MetaExtractor<'a>(&'a MetaObject);

    impl Extractor for MetaExtractor<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            let value = match key {
                "traceparent" => self.0.get_traceparent(),
                "tracestate" => self.0.get_tracestate(),
                _ => None,
            }?;
            (value.len() <= MAX_TRACE_HEADER_BYTES).then_some(value)
        }
        fn keys(&self) -> Vec<&str> {
            vec!["traceparent", "tracestate"]
        }
    }

    /// The trace context a client sent in `meta`, if any.
    pub(crate) fn remote_context(meta: &MetaObject) -> Option<opentelemetry::Context> {
        meta.get_traceparent()?;
        Some(opentelemetry::global::get_text_map_propagator(
            |propagator| propagator.extract(&MetaExtractor(meta)),
        ))
    }

    /// Makes the client's span `remote` the parent of `span` (a root just made), or with
    /// `link`, a span it links to.
    pub(crate) fn follow_remote(span: &tracing::Span, remote: opentelemetry::Context, link: bool) {
        if span.is_disabled() {
            return;
        }
        if link {
            let linked = remote.span().span_context().clone();
            if linked.is_valid() {
                span.add_link(linked);
            }
        } else {
            // Only a span already started cannot take a parent; this one was just made.
            let _ = span.set_parent(remote);
        }
    }

    struct MapInjector(HashMap<String, String>);

    impl Injector for MapInjector {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), value);
        }
    }

    /// Writes `span`'s trace context into `meta`, for the server to continue the trace; the
    /// current one's when `span` is filtered out (the trace, and whether it is sampled, goes
    /// on all the same).
    pub(crate) fn inject(span: &tracing::Span, meta: &mut MetaObject) {
        let context = if span.is_disabled() {
            tracing::Span::current().context()
        } else {
            span.context()
        };
        let mut injected = MapInjector(HashMap::new());
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut injected);
        });
        if let Some(traceparent) = injected.0.remove("traceparent") {
            meta.set_traceparent(traceparent);
        }
        if let Some(tracestate) = injected.0.remove("tracestate").filter(|s| !s.is_empty()) {
            meta.set_tracestate(tracestate);
        }
    }

    struct Histograms {
        server: Histogram<f64>,
        client: Histogram<f64>,
    }

    /// The histograms, once a meter is installed (a request before that records nothing, and
    /// does not keep the next ones from recording).
    fn histograms() -> Option<&'static Histograms> {
        static HISTOGRAMS: OnceLock<Histograms> = OnceLock::new();
        if let Some(histograms) = HISTOGRAMS.get() {
            return Some(histograms);
        }
        let meter = toolprism::telemetry::meter()?;
        Some(HISTOGRAMS.get_or_init(|| {
            let histogram = |name: &'static str, description: &'static str| {
                meter
                    .f64_histogram(name)
                    .with_unit("s")
                    .with_description(description)
                    .with_boundaries(toolprism::telemetry::metrics::MCP_DURATION_BUCKETS.to_vec())
                    .build()
            };
            Histograms {
                server: histogram(
                    "mcp.server.operation.duration",
                    "How long an MCP request took to answer.",
                ),
                client: histogram(
                    "mcp.client.operation.duration",
                    "How long an MCP request took, sent to answered.",
                ),
            }
        }))
    }

    /// Times one request, once a meter is installed.
    pub(crate) struct OperationTimer {
        started: Option<Instant>,
        side: Side,
        attributes: Vec<KeyValue>,
        tool: Option<String>,
    }

    impl OperationTimer {
        pub(crate) fn start(
            side: Side,
            method: &'static str,
            tool: Option<&str>,
            transport: Option<&'static str>,
        ) -> Self {
            if histograms().is_none() {
                return Self {
                    started: None,
                    side,
                    attributes: Vec::new(),
                    tool: None,
                };
            }
            let mut attributes = vec![KeyValue::new("mcp.method.name", method)];
            if let Some(transport) = transport {
                attributes.push(KeyValue::new("network.transport", transport));
            }
            Self {
                started: Some(Instant::now()),
                side,
                attributes,
                tool: tool.map(str::to_owned),
            }
        }

        /// The request ended; `failure`, how, if it failed. A tool's name is kept only for a
        /// request that reached a tool: a JSON-RPC error may answer a name nobody serves, and
        /// what a peer writes must not grow the number of series.
        pub(crate) fn ended(mut self, failure: Option<Failure>) {
            let (Some(started), Some(histograms)) = (self.started, histograms()) else {
                return;
            };
            let reached_tool = !matches!(failure, Some(Failure::Rpc(_)));
            if let Some(tool) = self.tool.take().filter(|_| reached_tool) {
                self.attributes
                    .push(KeyValue::new("gen_ai.tool.name", tool));
            }
            if let Some(failure) = failure {
                self.attributes
                    .push(KeyValue::new("error.type", failure.error_type()));
            }
            let histogram = match self.side {
                Side::Server => &histograms.server,
                Side::Client => &histograms.client,
            };
            histogram.record(started.elapsed().as_secs_f64(), &self.attributes);
        }
    }
}

/// A request's span (and timer) until the request ends, its ending recorded once: as answered,
/// or, dropped before (the request cancelled, or past its time), as `cancelled`.
pub(crate) struct Ending {
    span: tracing::Span,
    #[cfg(feature = "otel")]
    timer: Option<OperationTimer>,
    recorded: bool,
}

impl Ending {
    pub(crate) fn new(span: tracing::Span, #[cfg(feature = "otel")] timer: OperationTimer) -> Self {
        Self {
            span,
            #[cfg(feature = "otel")]
            timer: Some(timer),
            recorded: false,
        }
    }

    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// The request was answered; `failure`, how it failed, if it did.
    pub(crate) fn ended(mut self, failure: Option<Failure>) {
        self.record(failure);
    }

    fn record(&mut self, failure: Option<Failure>) {
        if std::mem::replace(&mut self.recorded, true) {
            return;
        }
        if let Some(failure) = failure {
            record_failure(&self.span, failure);
        }
        #[cfg(feature = "otel")]
        if let Some(timer) = self.timer.take() {
            timer.ended(failure);
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.record(Some(Failure::Cancelled));
    }
}

/// How a request failed.
#[derive(Clone, Copy)]
pub(crate) enum Failure {
    /// A JSON-RPC error with this code.
    Rpc(i32),
    /// A tool result with `isError`.
    Tool,
    /// No answer came: the transport failed.
    Transport,
    /// The request was dropped before its answer: cancelled, or past its time.
    Cancelled,
}

impl Failure {
    /// Its `error.type`: the JSON-RPC code, `tool_error`, `transport_error` or `cancelled`.
    /// A code is one of JSON-RPC's own or of the server range, else `_OTHER`: a remote server
    /// picks it, and a metric's series must not follow.
    pub(crate) fn error_type(self) -> String {
        match self {
            Self::Rpc(code @ (-32700 | -32603..=-32600 | -32099..=-32000)) => code.to_string(),
            Self::Rpc(_) => "_OTHER".to_owned(),
            Self::Tool => "tool_error".to_owned(),
            Self::Transport => "transport_error".to_owned(),
            Self::Cancelled => "cancelled".to_owned(),
        }
    }
}
