//! A [`Registry`] as an MCP server: a `ServerHandler` written over snapshots.
//!
//! - `tools/list`: the snapshot's definitions in registration order, schemas as registered,
//!   built once per registry generation and shared by every connection.
//! - `tools/call`: one dispatch on the direct surface. Success carries the rendered, bounded
//!   content, the value as `structuredContent` and the tool's card in `_meta`; failure carries
//!   `isError`, the message, and `{name, code}` in `_meta`. Invalid arguments are a tool error;
//!   an unknown tool is JSON-RPC `-32602`.
//! - `resources/read`: the full text of a bounded result, by the URI its marker names.
//! - Progress reports become `notifications/progress` when the client sent a token; a client's
//!   cancellation drops the dispatch.
//! - A change to the registry is announced: `notifications/tools/list_changed` to sessions of
//!   2025-11-25, the `subscriptions/listen` stream on 2026-07-28.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, RequestMetaObject, ResourceContents,
    ResourceTemplate, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext,
};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use toolprism::context::{Progress, ProgressSink};
use toolprism::lower::description_with_examples;
use toolprism::pipeline::DispatchOptions;
use toolprism::tool::{IconTheme, ToolAbout};
use toolprism::{ChangeListener, OutcomeParts, Registry, SmolStr, Surface, ToolOutcome};

use crate::content::into_mcp;
use crate::progress::ProgressQueue;
use crate::resources::{OUTPUT_URI_PREFIX, handle_of, output_uri};
use crate::schema::{WRAP_PROPERTY, as_object, legacy_form, wrap};

/// The `_meta` key of a success's card: what a UI shows, from the tool's `presentation_meta`.
pub const CARD_META_KEY: &str = "toolprism.dev/card";
/// The `_meta` key of a failure's `{name, code}`.
pub const ERROR_META_KEY: &str = "toolprism.dev/error";

/// The MCP client a call came from, attached by [`McpServer`] to every dispatch it makes: a
/// tool that asks the client something (elicitation, sampling on 2025-11-25) or logs to it
/// reads it with [`ToolContext::extension`](toolprism::ToolContext::extension). `None` there
/// when the tool is called any other way, so such a tool should do without, or fail saying
/// why.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism_mcp::McpPeer;
///
/// /// Says whether an MCP client is on the line.
/// #[tool]
/// fn over_mcp(cx: &ToolContext) -> bool {
///     cx.extension::<McpPeer>().is_some()
/// }
/// ```
///
/// It is also where the call's progress reports wait for the server to send them as
/// `notifications/progress` (when the client asked for progress): one allocation per call
/// serves both.
pub struct McpPeer {
    peer: rmcp::service::Peer<RoleServer>,
    session: Arc<Session>,
    progress: ProgressQueue<Progress>,
}

impl std::fmt::Debug for McpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPeer")
            .field("peer", &self.peer)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// Progress the call's body reports is queued, and sent by the task serving the request.
impl ProgressSink for McpPeer {
    fn report(&self, progress: &Progress) {
        self.progress.report(progress);
    }
}

impl McpPeer {
    /// The rmcp peer: requests and notifications to the client.
    pub fn peer(&self) -> &rmcp::service::Peer<RoleServer> {
        &self.peer
    }

    /// Sends a log message (`notifications/message`), unless the client asked
    /// (`logging/setLevel`) for more severe ones only. Logging is a 2025-11-25 feature that
    /// 2026-07-28 removed.
    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    pub async fn log(
        &self,
        level: rmcp::model::LoggingLevel,
        data: Value,
    ) -> Result<(), rmcp::service::ServiceError> {
        let wanted = self
            .session
            .log_level
            .load(std::sync::atomic::Ordering::Relaxed);
        if wanted != u8::MAX && (level as u8) < wanted {
            return Ok(());
        }
        self.peer
            .notify_logging_message(rmcp::model::LoggingMessageNotificationParam::new(
                level, data,
            ))
            .await
    }
}

/// Serves a [`Registry`] over MCP. Cloning shares it: every connection, session or stateless
/// HTTP request gets a clone, and the tool lists are built once per change of the registry.
///
/// ```no_run
/// use toolprism::prelude::*;
/// use toolprism_mcp::McpServer;
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: f64, b: f64) -> f64 { a + b }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::builder().tool(Add).build()?;
/// McpServer::new(registry).serve_stdio().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    /// What one connection (or HTTP session) set: clones share it, `for_session` does not.
    session: Arc<Session>,
}

/// The state one client sets on its connection.
#[derive(Debug)]
struct Session {
    /// The least severe `LoggingLevel` (as its index) the client wants; `u8::MAX` before it
    /// said, when everything is sent.
    log_level: std::sync::atomic::AtomicU8,
}

impl Session {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            log_level: std::sync::atomic::AtomicU8::new(u8::MAX),
        })
    }
}

struct Shared {
    registry: Registry,
    implementation: Implementation,
    instructions: Option<String>,
    lists: Mutex<Option<Arc<ToolLists>>>,
    changes: watch::Receiver<u64>,
    _listener: ChangeListener,
}

/// The advertised tools of one registry generation, for each protocol generation.
struct ToolLists {
    generation: u64,
    /// 2026-07-28: schemas as registered.
    current: Vec<Tool>,
    /// 2025-11-25: output schemas object-rooted, wrapped where they were not.
    legacy: Vec<Tool>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.shared.registry)
            .field("implementation", &self.shared.implementation.name)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server of this registry, named `toolprism` with this crate's version.
    pub fn new(registry: Registry) -> Self {
        Self::build(
            registry,
            Implementation::new("toolprism", env!("CARGO_PKG_VERSION")),
            None,
        )
    }

    /// The same server, under this name and version.
    #[must_use]
    pub fn with_implementation(self, name: &str, version: &str) -> Self {
        let shared = &self.shared;
        Self::build(
            shared.registry.clone(),
            Implementation::new(name, version),
            shared.instructions.clone(),
        )
    }

    /// The same server, with instructions for the model sent at initialization.
    #[must_use]
    pub fn with_instructions(self, instructions: impl Into<String>) -> Self {
        let shared = &self.shared;
        Self::build(
            shared.registry.clone(),
            shared.implementation.clone(),
            Some(instructions.into()),
        )
    }

    fn build(
        registry: Registry,
        implementation: Implementation,
        instructions: Option<String>,
    ) -> Self {
        let (sender, changes) = watch::channel(registry.snapshot().generation());
        // Called on whichever thread changed the registry: `send_replace` needs no runtime.
        let listener = registry.on_change(move |generation| {
            sender.send_replace(generation);
        });
        let server = Self {
            shared: Arc::new(Shared {
                registry,
                implementation,
                instructions,
                lists: Mutex::new(None),
                changes,
                _listener: listener,
            }),
            session: Session::new(),
        };
        // Built now, like the registry's schemas: the first client to list does not pay for
        // it. After a change, the first listing builds the new generation's.
        server.lists();
        server
    }

    /// The same server for a new connection: the tools and lists shared, the per-connection
    /// state (the client's logging level) fresh.
    #[must_use]
    pub fn for_session(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            session: Session::new(),
        }
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The tool lists of the registry's current generation, built once per generation.
    fn lists(&self) -> Arc<ToolLists> {
        let snapshot = self.shared.registry.snapshot();
        let mut cached = self
            .shared
            .lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(lists) = cached.as_ref()
            && lists.generation == snapshot.generation()
        {
            return lists.clone();
        }
        let mut current = Vec::with_capacity(snapshot.definitions().len());
        let mut legacy = Vec::with_capacity(snapshot.definitions().len());
        // A tool only programs may call is not offered to an MCP host's model.
        for definition in snapshot
            .definitions()
            .filter(|definition| definition.about().callers.direct())
        {
            let (input, output) = (definition.input_schema(), definition.output_schema());
            let tool = |input: JsonObject, output: JsonObject| {
                about_tool(
                    Tool::new_with_raw(
                        definition.name().to_owned(),
                        Some(description_with_examples(definition).into_owned().into()),
                        Arc::new(input),
                    )
                    .with_raw_output_schema(Arc::new(output)),
                    definition.about(),
                )
            };
            let legacy_output = if definition.output_is_object() {
                legacy_form(output)
            } else {
                wrap(output)
            };
            legacy.push(tool(legacy_form(input), legacy_output));
            current.push(tool(as_object(input), as_object(output)));
        }
        let lists = Arc::new(ToolLists {
            generation: snapshot.generation(),
            current,
            legacy,
        });
        *cached = Some(lists.clone());
        lists
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let snapshot = self.shared.registry.snapshot();
        let Some(tool) = snapshot.resolve(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", quoted_for_error(&request.name)),
                None,
            ));
        };
        // Most tools return objects: the schema is read first, the protocol version only when
        // the value would need wrapping.
        let wrapped =
            !tool.definition().output_is_object() && !is_current(&context.meta, &context.peer);
        let args = Value::Object(request.arguments.unwrap_or_default());
        let id = call_id(&context.id);

        // The request's peer is moved, not cloned: a clone is some ten reference counts to
        // raise and lower again on every call.
        let RequestContext { ct, meta, peer, .. } = context;
        let client = Arc::new(McpPeer {
            peer,
            session: self.session.clone(),
            progress: ProgressQueue::default(),
        });
        let mut options = DispatchOptions::default().shared_extension(client.clone());
        // Progress is forwarded by this task, between polls of the dispatch: no task is spawned
        // per call (rmcp's own client sends a token with every request).
        let mut progress = None;
        if let Some(token) = meta.get_progress_token() {
            options = options.shared_progress(client.clone());
            progress = Some((token, &client.progress));
        }

        let mut dispatch = std::pin::pin!(tool.dispatch(id, args, Surface::Direct, options));
        // A call that ends on its first poll (most do) never makes the futures that wait for
        // cancellation or progress.
        let first = std::future::poll_fn(|cx| Poll::Ready(dispatch.as_mut().poll(cx))).await;
        let outcome = match first {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => loop {
                tokio::select! {
                    biased;
                    outcome = &mut dispatch => break outcome,
                    () = ct.cancelled() => {
                        // Dropping the dispatch drops the body where it stands.
                        return Err(ErrorData::internal_error("the call was cancelled by the client", None));
                    }
                    () = reports_ready(progress.as_ref()) => {
                        Box::pin(send_progress(&client.peer, progress.as_ref())).await;
                    }
                }
            },
        };
        // Every report reaches the client before the result does. (Sending is boxed, here and
        // above: most calls send none, and the future of one carried inline would make every
        // call's task larger to spawn.)
        if progress
            .as_ref()
            .is_some_and(|(_, queue)| queue.has_reports())
        {
            Box::pin(send_progress(&client.peer, progress.as_ref())).await;
        }
        Ok(CallToolResponse::Complete(to_result(outcome, wrapped)))
    }

    /// The `subscriptions/listen` stream of a 2026-07-28 client: a notification per change of
    /// the registry, until the client closes it.
    async fn listen_to_changes(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return Ok(());
        }
        let mut changes = self.shared.changes.clone();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                seen = changes.changed() => {
                    if seen.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// A call's progress token and the queue its reports wait in.
type ProgressStream<'a> = (rmcp::model::ProgressToken, &'a ProgressQueue<Progress>);

/// Ready when a report waits, or never when the client asked for none.
async fn reports_ready(progress: Option<&ProgressStream<'_>>) {
    match progress {
        Some((_, queue)) => queue.ready().await,
        None => std::future::pending().await,
    }
}

/// Sends the reports waiting, oldest first.
async fn send_progress(
    peer: &rmcp::service::Peer<RoleServer>,
    progress: Option<&ProgressStream<'_>>,
) {
    let Some((token, queue)) = progress else {
        return;
    };
    for report in queue.take() {
        let mut param = ProgressNotificationParam::new(token.clone(), report.done);
        param.total = report.total;
        param.message = report.message;
        // A client that went away misses its progress; the result tells it the rest.
        let _ = peer.notify_progress(param).await;
    }
}

/// The request id as a call id, without an allocation: a number is written out digit by digit
/// into the id's inline buffer (without the formatting machinery or an intermediate `String`),
/// a short string copied there, a long one shared.
fn call_id(id: &rmcp::model::RequestId) -> SmolStr {
    match id {
        rmcp::model::NumberOrString::String(id) => SmolStr::from(id.clone()),
        rmcp::model::NumberOrString::Number(number) => {
            // `i64::MIN` is 20 characters.
            let mut digits = [0_u8; 20];
            let mut at = digits.len();
            let mut rest = number.unsigned_abs();
            loop {
                at -= 1;
                digits[at] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            if *number < 0 {
                at -= 1;
                digits[at] = b'-';
            }
            SmolStr::new(std::str::from_utf8(&digits[at..]).expect("digits are ASCII"))
        }
    }
}

/// Text a peer sent (an unknown name, a URI, an error code), quoted back bounded and printable.
pub(crate) fn quoted_for_error(name: &str) -> String {
    let printable = name
        .chars()
        .map(|ch| if ch.is_control() { '?' } else { ch });
    format!("`{}`", cut(printable, 128))
}

/// The first `max` characters of `chars`, the cut (if any) marked with `…`.
pub(crate) fn cut(mut chars: impl Iterator<Item = char>, max: usize) -> String {
    let mut kept: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        kept.push('…');
    }
    kept
}

/// Whether the request is of 2026-07-28 or later: its own `_meta` says, or else the session's
/// handshake (read in place: `RequestContext::protocol_version` clones it).
fn is_current(meta: &RequestMetaObject, peer: &rmcp::service::Peer<RoleServer>) -> bool {
    let current = |version: &str| version >= ProtocolVersion::V_2026_07_28.as_str();
    match meta.protocol_version() {
        Some(version) => current(version.as_str()),
        None => peer
            .peer_info()
            .is_some_and(|info| current(info.protocol_version.as_str())),
    }
}

/// An outcome as an MCP tool result. The value is moved, not copied: it is the largest part.
pub(crate) fn to_result(outcome: ToolOutcome, wrapped: bool) -> CallToolResult {
    let OutcomeParts {
        result,
        content,
        meta,
        additional_contexts,
        ..
    } = outcome.into_parts();
    let content = content
        .into_iter()
        .map(into_mcp)
        .chain(
            additional_contexts
                .into_iter()
                .map(|context| rmcp::model::ContentBlock::text(context.text)),
        )
        .collect();
    match result {
        Ok(value) => {
            let value = value.into_value();
            let structured = if wrapped {
                Value::Object(Map::from_iter([(WRAP_PROPERTY.to_owned(), value)]))
            } else {
                value
            };
            // Not `CallToolResult::structured`, which prints the value into a text block of its
            // own: the content is the rendered one.
            let mut result = CallToolResult::success(content);
            result.structured_content = Some(structured);
            result.meta =
                meta.map(|card| MetaObject(Map::from_iter([(CARD_META_KEY.to_owned(), card)])));
            result
        }
        Err(error) => {
            let mut result = CallToolResult::error(content);
            result.meta = error.info.map(|info| {
                MetaObject(Map::from_iter([(
                    ERROR_META_KEY.to_owned(),
                    json!({"name": info.name, "code": info.code}),
                )]))
            });
            result
        }
    }
}

impl ServerHandler for McpServer {
    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_logging()
            .build();
        let mut config = ServerConfig::new(capabilities);
        config.server_info = self.shared.implementation.clone();
        config.instructions.clone_from(&self.shared.instructions);
        config
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25])
    }

    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session
            .log_level
            .store(request.level as u8, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let lists = self.lists();
        let tools = if is_current(&context.meta, &context.peer) {
            lists.current.clone()
        } else {
            lists.legacy.clone()
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    // Not `async fn`s calling `call` and `listen_to_changes`: rmcp spawns a task per request
    // whose future is as large as the largest of these, and a wrapper would hold the arguments
    // twice.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        self.call(request, context)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // Retained outputs belong to the calls that made them: they are read by the URI a
        // result names, never listed to whoever asks.
        Ok(ListResourcesResult::default())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template =
            ResourceTemplate::new(format!("{OUTPUT_URI_PREFIX}{{handle}}"), "tool-output")
                .with_description(
                    "The full text of a tool result that was too long to show in full.",
                )
                .with_mime_type("text/plain");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let not_found = || {
            ErrorData::resource_not_found(
                format!("no retained output at {}", quoted_for_error(&request.uri)),
                None,
            )
        };
        let Some(handle) = handle_of(&request.uri) else {
            return Err(not_found());
        };
        match self.shared.registry.snapshot().read_retained(handle).await {
            Ok(Some(text)) => Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
                vec![ResourceContents::text(text, output_uri(handle))],
            ))),
            Ok(None) => Err(not_found()),
            Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
        }
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = Some(true);
        Some(accepted)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        // Boxed: a stream lives long and is opened once per session.
        Box::pin(self.listen_to_changes(context))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session of 2025-11-25: told of every change until it closes.
        let mut changes = self.shared.changes.clone();
        changes.mark_unchanged();
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    seen = changes.changed() => {
                        if seen.is_err() || peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
                    }
                    // The peer has no "closed" future: look once a second.
                    () = tokio::time::sleep(Duration::from_secs(1)) => {
                        if peer.is_transport_closed() {
                            return;
                        }
                    }
                }
            }
        });
    }
}

/// A tool's title, hints and icons, in MCP's fields (the same at both protocol generations).
fn about_tool(mut tool: Tool, about: &ToolAbout) -> Tool {
    if let Some(title) = &about.title {
        tool = tool.with_title(title.clone());
    }
    let hints = about.hints;
    if !hints.is_empty() {
        let mut annotations = ToolAnnotations::new();
        if let Some(value) = hints.read_only {
            annotations = annotations.read_only(value);
        }
        if let Some(value) = hints.destructive {
            annotations = annotations.destructive(value);
        }
        if let Some(value) = hints.idempotent {
            annotations = annotations.idempotent(value);
        }
        if let Some(value) = hints.open_world {
            annotations = annotations.open_world(value);
        }
        tool = tool.with_annotations(annotations);
    }
    if !about.icons.is_empty() {
        let icons = about
            .icons
            .iter()
            .map(|icon| {
                let mut mcp_icon = rmcp::model::Icon::new(icon.src.clone());
                if let Some(mime) = &icon.mime_type {
                    mcp_icon = mcp_icon.with_mime_type(mime.clone());
                }
                if !icon.sizes.is_empty() {
                    mcp_icon = mcp_icon.with_sizes(icon.sizes.clone());
                }
                if let Some(theme) = icon.theme {
                    mcp_icon = mcp_icon.with_theme(match theme {
                        IconTheme::Dark => rmcp::model::IconTheme::Dark,
                        _ => rmcp::model::IconTheme::Light,
                    });
                }
                mcp_icon
            })
            .collect();
        tool = tool.with_icons(icons);
    }
    tool
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::call_id;

    #[test]
    fn a_request_id_becomes_the_same_call_id_however_it_is_printed() {
        for number in [0, 7, 10, -1, -10, 1 << 53, i64::MAX, i64::MIN] {
            let id = NumberOrString::Number(number);
            assert_eq!(&*call_id(&id), id.to_string());
        }
        let short: std::sync::Arc<str> = "req-1/../é".into();
        let inline = call_id(&NumberOrString::String(short.clone()));
        assert_eq!(inline, *short);
        assert!(!inline.is_heap_allocated(), "a short id is held inline");
        let long: std::sync::Arc<str> = "a request id longer than twenty-three bytes".into();
        let shared = call_id(&NumberOrString::String(long.clone()));
        assert_eq!(shared, *long);
        assert_eq!(
            std::sync::Arc::strong_count(&long),
            2,
            "a long string id is shared, not copied"
        );
    }
}
