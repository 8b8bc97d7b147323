//! Each request the server answers, as a span of kind server (see
//! [`telemetry`](crate::telemetry)): continuing the client's trace when its `_meta` carries one
//! (with the `otel` feature), and timed.

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, ProtocolVersion};
use rmcp::service::{RequestContext, RoleServer};
use tracing::Instrument as _;

#[cfg(feature = "otel")]
use super::setup::ClientTrace;
use super::setup::McpServer;
use crate::telemetry::{Ending, Failure, Side, peer_text, record_request_id, request_span};

/// One request's span (and timer), from when it is read to when it is answered (or dropped,
/// cancelled by the client).
pub(super) struct RequestTrace(Ending);

impl RequestTrace {
    /// The trace of a `method` request naming `target` (a tool or a prompt; bounded here),
    /// made of the client's trace context as `server` says.
    pub(super) fn start(
        server: &McpServer,
        method: &'static str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let target = target.map(peer_text);
        #[cfg(feature = "otel")]
        let client_trace = server.shared.settings.client_trace;
        #[cfg(feature = "otel")]
        let remote = match client_trace {
            ClientTrace::Ignore => None,
            ClientTrace::Continue | ClientTrace::Link => {
                crate::telemetry::remote_context(&context.meta)
            }
        };
        let span = {
            // A continued trace is current while the span is made, so that a subscriber that
            // builds spans only inside sampled traces sees it.
            #[cfg(feature = "otel")]
            let _client_trace = remote
                .clone()
                .filter(|_| client_trace == ClientTrace::Continue)
                .map(opentelemetry::Context::attach);
            request_span(Side::Server, method, target.as_deref())
        };
        let transport = transport_of(context);
        if !span.is_disabled() {
            describe(&span, context, transport);
        }
        #[cfg(feature = "otel")]
        let timer = {
            if let Some(remote) = remote {
                crate::telemetry::follow_remote(&span, remote, client_trace == ClientTrace::Link);
            }
            let tool = target.as_deref().filter(|_| method == "tools/call");
            crate::telemetry::OperationTimer::start(Side::Server, method, tool, Some(transport))
        };
        #[cfg(not(feature = "otel"))]
        let _ = server;
        Self(Ending::new(
            span,
            #[cfg(feature = "otel")]
            timer,
        ))
    }

    /// Answers inside the span, and records how the answer failed, if it did.
    pub(super) async fn run<T: Answer>(
        self,
        answer: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        let Self(ending) = self;
        let span = ending.span();
        let answer = if span.is_disabled() {
            answer.await
        } else {
            answer.instrument(span.clone()).await
        };
        let failure = match &answer {
            Err(error) => Some(Failure::Rpc(error.code.0)),
            Ok(answer) if answer.is_tool_error() => Some(Failure::Tool),
            Ok(_) => None,
        };
        ending.ended(failure);
        answer
    }
}

/// A request's answer, as far as its failing goes.
pub(super) trait Answer {
    /// Whether it is a tool's result with `isError`.
    fn is_tool_error(&self) -> bool {
        false
    }
}

impl Answer for CallToolResponse {
    fn is_tool_error(&self) -> bool {
        matches!(self, Self::Complete(result) if result.is_error == Some(true))
    }
}

macro_rules! plain_answers {
    ($($answer:ty),* $(,)?) => { $(impl Answer for $answer {})* };
}

plain_answers!(
    (),
    rmcp::model::ListToolsResult,
    rmcp::model::ListResourcesResult,
    rmcp::model::ListResourceTemplatesResult,
    rmcp::model::ReadResourceResponse,
    rmcp::model::ListPromptsResult,
    rmcp::model::GetPromptResponse,
    rmcp::model::CompleteResult,
    rmcp::model::GetTaskResult,
);

/// `tcp` for a request that came over HTTP, `pipe` for one over stdin.
fn transport_of(context: &RequestContext<RoleServer>) -> &'static str {
    #[cfg(feature = "http-server")]
    if context
        .extensions
        .get::<axum::http::request::Parts>()
        .is_some()
    {
        return "tcp";
    }
    let _ = context;
    "pipe"
}

/// The request's id, session, protocol version and transport on its span.
fn describe(span: &tracing::Span, context: &RequestContext<RoleServer>, transport: &str) {
    record_request_id(span, &context.id);
    span.record("network.transport", transport);
    // A version the request's `_meta` names may be any text: only a known one is recorded.
    if let Some(version) = context
        .protocol_version()
        .filter(|version| ProtocolVersion::KNOWN_VERSIONS.contains(version))
    {
        span.record("mcp.protocol.version", version.as_str());
    }
    // Without authorization a session id is all it takes to use the session: the span gets
    // a digest that tells sessions apart and opens none.
    #[cfg(feature = "http-server")]
    if let Some(session) = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
    {
        span.record("mcp.session.id", session_digest(session.as_bytes()));
    }
}

/// The first 16 hex digits of the SHA-256 of a session id.
#[cfg(feature = "http-server")]
fn session_digest(id: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(id);
    super::tasks::hex(&digest[..8])
}
