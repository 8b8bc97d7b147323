//! A call to an imported tool: sent, answered through its rounds of input or its task, and
//! its result read by the tool's output shape.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ProtocolVersion, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;
use toolprism::error::{FailureKind, codes};
use toolprism::tool::Presented;
use toolprism::{ContentBlock, ToolContext, ToolError};
use tracing::Instrument as _;

use super::error::{REMOTE_TOOL_ERROR, SERVER_ERROR, SERVER_TIMEOUT, SERVER_UNAVAILABLE};
use super::input::{InFlight, MAX_INPUT_ROUNDS, answer_all, follow_task};
use super::progress::ProgressRoutes;
use crate::telemetry::{Ending, Failure, Side, peer_text, record_request_id, request_span};
use crate::wire::content::from_mcp;
use crate::wire::result::ERROR_META_KEY;
use crate::wire::schema::WRAP_PROPERTY;
use crate::wire::text::quoted_for_error;

/// The longest error code kept from a server.
pub(super) const MAX_REMOTE_CODE: usize = 64;

/// The error code a server sent with a failure, when it is one: 1 to [`MAX_REMOTE_CODE`] ASCII
/// letters, digits, `_`, `-` or `.`. Anything else (what a host would print, log or match on
/// unchecked) is why not, quoted bounded and printable.
pub(super) fn remote_code(sent: &Value) -> Result<&str, String> {
    let Some(code) = sent.as_str() else {
        return Err("it is not a string".to_owned());
    };
    let fits = (1..=MAX_REMOTE_CODE).contains(&code.len())
        && code
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'));
    if fits {
        Ok(code)
    } else {
        Err(format!(
            "{} is not 1 to {MAX_REMOTE_CODE} ASCII letters, digits, `_`, `-` or `.`",
            quoted_for_error(code)
        ))
    }
}

/// How an imported tool's `structuredContent` becomes its value.
#[derive(Clone)]
pub(super) enum OutputShape {
    /// Validated against the server's schema, as it is.
    Typed,
    /// Validated against the schema inside a FastMCP wrapper; the value is `result`.
    Wrapped,
    /// Not validated here: `structuredContent`, else the text.
    Untyped,
}

/// What a call to an imported tool needs of its server.
pub(super) struct Remote {
    pub(super) peer: Peer<RoleClient>,
    pub(super) progress: Arc<ProgressRoutes>,
    pub(super) in_flight: Arc<InFlight>,
    pub(super) timeout: Duration,
}

impl Remote {
    /// Sends the call and waits (up to the timeout) for its result, passing the server's
    /// progress on to `cx` meanwhile. A call dropped before its result (the timeout, or the
    /// local call cancelled) tells the server, as rmcp's own `call_tool` does.
    async fn request(
        &self,
        params: CallToolRequestParams,
        cx: &ToolContext,
    ) -> Result<ServerResult, ServiceError> {
        let tool = peer_text(&params.name);
        let span = request_span(Side::Client, "tools/call", Some(&tool));
        if !span.is_disabled()
            && let Some(version) = self
                .peer
                .peer_info()
                .map(|info| info.protocol_version.clone())
            && ProtocolVersion::KNOWN_VERSIONS.contains(&version)
        {
            span.record("mcp.protocol.version", version.as_str());
        }
        #[cfg_attr(not(feature = "otel"), expect(unused_mut, reason = "set with `otel`"))]
        let mut options = PeerRequestOptions::no_options();
        #[cfg(feature = "otel")]
        let timer = {
            let mut meta = rmcp::model::RequestMetaObject::default();
            crate::telemetry::inject(&span, &mut meta);
            if !meta.is_empty() {
                options.meta = Some(meta);
            }
            crate::telemetry::OperationTimer::start(Side::Client, "tools/call", Some(&tool), None)
        };
        // Dropped before the answer (the call's timeout, the local call cancelled), it is
        // recorded as cancelled.
        let ending = Ending::new(
            span.clone(),
            #[cfg(feature = "otel")]
            timer,
        );
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let sent = async {
            let handle = self.peer.send_request_with_option(request, options).await?;
            record_request_id(&tracing::Span::current(), &handle.id);
            // rmcp picks the token as it sends: a report overtaking this line (possible only
            // on a multi-threaded runtime, within microseconds) finds no call, and is dropped.
            let _route = self
                .progress
                .route(handle.progress_token.clone(), cx.clone());
            let mut abandoned = Abandoned::new(&self.peer, handle.id.clone());
            let response = handle.await_response().await;
            abandoned.disarm();
            response
        };
        let answer = if span.is_disabled() {
            sent.await
        } else {
            sent.instrument(span).await
        };
        let failure = match &answer {
            Err(ServiceError::McpError(error)) => Some(Failure::Rpc(error.code.0)),
            Err(_) => Some(Failure::Transport),
            Ok(ServerResult::CallToolResult(result)) if result.is_error == Some(true) => {
                Some(Failure::Tool)
            }
            Ok(_) => None,
        };
        ending.ended(failure);
        answer
    }

    pub(super) async fn call(
        &self,
        name: String,
        args: Value,
        cx: ToolContext,
        shape: &OutputShape,
    ) -> Result<Presented, ToolError> {
        let Value::Object(arguments) = args else {
            // The input schema requires an object; nothing else gets this far.
            return Err(ToolError::new("arguments must be a JSON object"));
        };
        let _in_flight = self.in_flight.enter(&cx);
        let params = CallToolRequestParams::new(name.clone()).with_arguments(arguments);
        let timeout = self.timeout;
        let Ok(result) = tokio::time::timeout(timeout, self.rounds(&name, params, &cx)).await
        else {
            return Err(ToolError::new(format!(
                "The MCP server did not answer the call to `{name}` within {timeout:?}; it was cancelled"
            ))
            .with_code(SERVER_TIMEOUT));
        };
        presented(&name, result?, shape)
    }

    /// Sends the call, answering what the server asks: each input-required result with a
    /// retry carrying the answers (at most [`MAX_INPUT_ROUNDS`]), a task by following it.
    async fn rounds(
        &self,
        name: &str,
        mut params: CallToolRequestParams,
        cx: &ToolContext,
    ) -> Result<CallToolResult, ToolError> {
        for _ in 0..MAX_INPUT_ROUNDS {
            let asked = match self.request(params.clone(), cx).await {
                Ok(ServerResult::CallToolResult(result)) => return Ok(result),
                // What rmcp's `call_tool` reads as a result without content.
                Ok(ServerResult::EmptyResult(_)) => return Ok(CallToolResult::default()),
                Ok(ServerResult::CreateTaskResult(created)) => {
                    return follow_task(&self.peer, name, created, cx).await;
                }
                Ok(ServerResult::InputRequiredResult(asked)) => asked,
                Ok(_) => {
                    return Err(ToolError::new(format!(
                        "The MCP server behind `{name}` answered the call with something other than a tool result"
                    ))
                    .with_code(SERVER_ERROR));
                }
                Err(ServiceError::McpError(error)) => {
                    return Err(ToolError::new(format!(
                        "The MCP server refused the call to `{name}`: {} (JSON-RPC {})",
                        error.message, error.code.0
                    ))
                    .with_code(SERVER_ERROR));
                }
                Err(error) => {
                    return Err(ToolError::new(format!(
                        "The MCP server behind `{name}` is unavailable: {error}"
                    ))
                    .with_code(SERVER_UNAVAILABLE));
                }
            };
            let requests = asked.input_requests.unwrap_or_default();
            params.input_responses = Some(answer_all(name, &requests, cx).await?);
            params.request_state = asked.request_state;
        }
        Err(ToolError::new(format!(
            "The MCP server behind `{name}` still asked for input after {MAX_INPUT_ROUNDS} rounds"
        ))
        .with_code(SERVER_ERROR))
    }
}

/// A request sent and not yet answered: dropped armed, it tells the server the answer is no
/// longer wanted (`notifications/cancelled`), so that it stops working on it.
pub(super) struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl<'a> Abandoned<'a> {
    fn new(peer: &'a Peer<RoleClient>, id: RequestId) -> Self {
        Self { peer, id: Some(id) }
    }

    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        let cancelled = CancelledNotificationParam::new(
            Some(id),
            Some("request abandoned by the caller".to_owned()),
        );
        runtime.spawn(async move {
            // A server that went away needs no telling.
            let _ = peer.notify_cancelled(cancelled).await;
        });
    }
}

/// A remote tool result as what the call presents: its content, and its value read by the
/// tool's output shape.
pub(super) fn presented(
    name: &str,
    result: CallToolResult,
    shape: &OutputShape,
) -> Result<Presented, ToolError> {
    let content: Vec<ContentBlock> = result.content.into_iter().map(from_mcp).collect();
    let text = || {
        content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        let sent = result
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(ERROR_META_KEY))
            .and_then(|error| error.get("code"));
        return Err(match sent.map(remote_code) {
            None => ToolError::new(text()).with_code(REMOTE_TOOL_ERROR),
            Some(Ok(code)) => ToolError::new(text()).with_code(code.to_owned()),
            Some(Err(refused)) => ToolError::new(format!(
                "{}\n(The server's error code was not kept: {refused}.)",
                text()
            ))
            .with_code(REMOTE_TOOL_ERROR),
        });
    }
    let missing = |what: &str| {
        ToolError::new(format!(
            "Tool `{name}` produced an invalid result: the MCP server advertised an output schema but sent {what}"
        ))
        .with_code(codes::INVALID_TOOL_OUTPUT)
        .with_name(FailureKind::InvalidOutput.name())
    };
    let value =
        match (shape, result.structured_content) {
            (OutputShape::Typed | OutputShape::Untyped, Some(value)) => value,
            (OutputShape::Wrapped, Some(Value::Object(mut wrapper))) => wrapper
                .remove(WRAP_PROPERTY)
                .ok_or_else(|| missing("no `result` in its wrapped `structuredContent`"))?,
            (OutputShape::Wrapped, Some(_)) => {
                return Err(missing(
                    "a `structuredContent` that is not the wrapper object",
                ));
            }
            (OutputShape::Typed | OutputShape::Wrapped, None) => {
                return Err(missing("no `structuredContent`"));
            }
            (OutputShape::Untyped, None) => Value::String(text()),
        };
    Ok(Presented::new(value, content))
}
