//! Importing an MCP server's tools into a registry.
//!
//! Each remote tool becomes a dynamic [`ToolDef`]: advertised under a provider-safe name and
//! called under its own; its `inputSchema` advertised unchanged and validated locally when it
//! is within what this crate validates; its `outputSchema` enforced on `structuredContent`
//! when it is (a FastMCP wrapper unwrapped), the value otherwise untyped —
//! `structuredContent`, else the text, never JSON guessed out of prose. The server's content
//! is what the model sees. No `$ref` is ever fetched: a schema that needs one is not
//! validated locally.
//!
//! A `list_changed` from the server (the notification, or the 2026-07-28 subscription stream)
//! re-lists and re-registers; calls in flight keep the snapshot they started with. A call to
//! a dead server fails at once, one to a hanging server after [`ImportOptions::call_timeout`]
//! (and the server is told the call was cancelled). What the server reports of a call's
//! progress reaches the local call's progress (messages cut at
//! [`MAX_PROGRESS_MESSAGE`](crate::MAX_PROGRESS_MESSAGE)).

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher as _, Hasher};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientRequest, ElicitRequestParams, ElicitResult,
    Implementation, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, RequestId,
    ServerNotification, ServerResult, SubscriptionFilter, Tool,
};
#[expect(
    deprecated,
    reason = "sampling and roots: rmcp marks them deprecated (SEP-2577), servers still ask"
)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RequestContext, RoleClient, RunningService,
    ServiceError,
};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, ErrorData};
use serde_json::Value;
use tokio::sync::Notify;
use toolprism::bound::json_len_within;
use toolprism::error::{FailureKind, codes};
use toolprism::present::is_media_type;
use toolprism::schema::{check_input_schema, check_output_schema};
use toolprism::tool::{Icon, IconTheme, Namespace, Presented, ToolAbout};
use toolprism::{ContentBlock, RegistrationError, Registry, ToolContext, ToolDef, ToolError};

use crate::client_input::{InFlight, MAX_INPUT_ROUNDS, answer_all, answer_live, follow_task};
use crate::remote_progress::ProgressRoutes;
use crate::wire::content::from_mcp;
use crate::wire::names::{NameError, provider_safe_name};
use crate::wire::result::ERROR_META_KEY;
use crate::wire::schema::{WRAP_PROPERTY, unwrap};
use crate::wire::text::quoted_for_error;

/// The code of a call that failed because the server could not be reached or went away.
pub const SERVER_UNAVAILABLE: &str = "MCP_SERVER_UNAVAILABLE";
/// The code of a call the server did not answer in time.
pub const SERVER_TIMEOUT: &str = "MCP_SERVER_TIMEOUT";
/// The code of a call the server answered with a JSON-RPC error.
pub const SERVER_ERROR: &str = "MCP_SERVER_ERROR";
/// The code of a remote tool's own failure (`isError`) when the server gave none.
pub const REMOTE_TOOL_ERROR: &str = "REMOTE_TOOL_ERROR";

/// The most tools imported from one server; a server that lists more is refused.
pub const MAX_IMPORTED_TOOLS: usize = 10_000;
/// The most `tools/list` pages read from one server in one listing.
const MAX_LIST_PAGES: usize = 1_000;
/// The most bytes of tool definitions (names, descriptions, schemas, as JSON) imported from one
/// server: every definition reaches the model on every turn, and each page of a listing may
/// be as large as the transport lets one message be.
pub const MAX_LISTING_BYTES: usize = 64 * 1024 * 1024;
/// The least time between two re-imports: a server announcing changes without pause makes
/// the client re-list once a second at most (announcements meanwhile become one re-list).
const MIN_RELIST_INTERVAL: Duration = Duration::from_secs(1);

/// How tools are imported.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Put before every remote name (e.g. `"github_"`), to keep servers apart.
    pub prefix: String,
    /// How long one call may take before it fails with [`SERVER_TIMEOUT`] (and is cancelled
    /// on the server). Default: 120 s.
    pub call_timeout: Duration,
    /// How long connecting and listing may take. Default: 30 s.
    pub connect_timeout: Duration,
    /// Speak only this protocol version (`2025-11-25` with `initialize`, `2026-07-28`
    /// without). Default: `None`, 2026-07-28 if the server offers it, else 2025-11-25.
    pub protocol_version: Option<ProtocolVersion>,
    /// Put every imported tool in this group for OpenAI Responses (`namespace` tools).
    pub namespace: Option<Namespace>,
    /// Defer every imported tool: left out of the first request, found through tool search.
    pub defer_loading: bool,
    /// The access token sent to a server reached over HTTP (`Authorization: Bearer …`).
    pub bearer_token: Option<BearerToken>,
    /// Authorize with the server's authorization server when it asks (OAuth 2.1 with PKCE),
    /// for a server reached over HTTP; see [`crate::OAuth`].
    #[cfg(feature = "oauth-client")]
    pub oauth: Option<crate::OAuth>,
}

/// An access token, kept out of every `Debug` print and log.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// The token as sent.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(…)")
    }
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            prefix: String::new(),
            call_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(30),
            protocol_version: None,
            namespace: None,
            defer_loading: false,
            bearer_token: None,
            #[cfg(feature = "oauth-client")]
            oauth: None,
        }
    }
}

impl ImportOptions {
    /// The same options with this name prefix.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The same options with this call timeout.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The same options, speaking only this protocol version.
    #[must_use]
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = Some(version);
        self
    }

    /// The same options, with every imported tool in this namespace (OpenAI Responses).
    #[must_use]
    pub fn namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(namespace);
        self
    }

    /// The same options, with every imported tool deferred to tool search.
    #[must_use]
    pub fn defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }

    /// The same options, sending this access token to a server reached over HTTP (one the host
    /// got from the server's authorization server).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(BearerToken(token.into()));
        self
    }

    /// The same options, authorizing with the server's authorization server when it asks
    /// (a bearer token given too is sent first). An authorization at connection counts in the
    /// [`connect_timeout`](Self::connect_timeout): give a person the time they need.
    #[cfg(feature = "oauth-client")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The same options with this timeout for connecting and listing.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }
}

/// Why connecting or importing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be started or reached.
    #[error("cannot connect to the MCP server: {0}")]
    Connect(String),
    /// The server did not answer in time.
    #[error("the MCP server did not answer within {0:?}")]
    Timeout(Duration),
    /// The server answered a request with an error, or went away.
    #[error("the MCP server failed: {0}")]
    Service(#[from] ServiceError),
    /// A remote name has no local name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The server lists more than [`MAX_IMPORTED_TOOLS`] tools, or pages without end.
    #[error(
        "the MCP server lists more than {MAX_IMPORTED_TOOLS} tools (or more than {MAX_LIST_PAGES} pages of them); nothing was imported"
    )]
    TooManyTools,
    /// The server's tool definitions take more than [`MAX_LISTING_BYTES`] bytes of JSON.
    #[error(
        "the MCP server's tool definitions take more than {MAX_LISTING_BYTES} bytes of JSON; nothing was imported"
    )]
    ListingTooLarge,
    /// The registry refused an imported tool.
    #[error("cannot register remote tool `{remote}`: {source}")]
    Register {
        /// The remote name.
        remote: String,
        /// Why.
        source: RegistrationError,
    },
}

/// One imported tool: its local and remote names, and whether its schemas are enforced here.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteTool {
    /// The name the registry advertises.
    pub local_name: String,
    /// The name on the wire.
    pub remote_name: String,
    /// Whether arguments are validated here against the server's `inputSchema` (otherwise
    /// only as an object, and by the server).
    pub input_validated: bool,
    /// Whether `structuredContent` is validated here against the server's `outputSchema`.
    pub output_validated: bool,
}

/// A connection to one MCP server, whose tools can be imported into a registry.
///
/// ```no_run
/// use toolprism::Registry;
/// use toolprism_mcp::{ImportOptions, McpClient};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::builder().build()?;
/// let mut command = tokio::process::Command::new("uvx");
/// command.arg("mcp-server-time");
/// let client = McpClient::connect_stdio(command, ImportOptions::default().prefix("time_")).await?;
/// let imported = client.import_into(&registry).await?;
/// println!("imported {:?}", imported.iter().map(|tool| &tool.local_name).collect::<Vec<_>>());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    shared: Arc<ClientShared>,
}

struct ClientShared {
    service: Mutex<Option<RunningService<RoleClient, ClientEvents>>>,
    peer: Peer<RoleClient>,
    options: ImportOptions,
    refresh: Arc<Notify>,
    progress: Arc<ProgressRoutes>,
    /// The calls in flight, for what a 2025-11-25 server asks during one.
    in_flight: Arc<InFlight>,
    imported: Mutex<Vec<RemoteTool>>,
    /// The keys listings are hashed under, to tell an unchanged one.
    listing_keys: RandomState,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("options", &self.shared.options)
            .field("imported", &self.imported())
            .finish_non_exhaustive()
    }
}

/// What the client hears from the server outside a request.
struct ClientEvents {
    refresh: Arc<Notify>,
    progress: Arc<ProgressRoutes>,
    in_flight: Arc<InFlight>,
}

/// A live request's answer, as the rmcp type it is read into.
fn answer_as<T: serde::de::DeserializeOwned>(answer: Value) -> Result<T, ErrorData> {
    serde_json::from_value(answer).map_err(|error| {
        ErrorData::internal_error(
            format!("the answer is not what was asked for: {error}"),
            None,
        )
    })
}

#[expect(
    deprecated,
    reason = "sampling and roots: rmcp marks them deprecated (SEP-2577), servers still ask"
)]
impl ClientHandler for ClientEvents {
    /// Forms, completions and roots are declared, and tasks: what a server asks is answered by
    /// whoever answers the local call that asked it (its answerer), or refused if nobody does.
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder()
            .enable_elicitation()
            .enable_sampling()
            .enable_roots()
            .enable_tasks()
            .build();
        ClientConfig::new(
            capabilities,
            Implementation::new("toolprism", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(request)
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        let answer = answer_live(&self.in_flight, "elicitation/create", params).await?;
        answer_as(answer)
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(request)
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        let answer = answer_live(&self.in_flight, "sampling/createMessage", params).await?;
        answer_as(answer)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let answer = answer_live(&self.in_flight, "roots/list", serde_json::json!({})).await?;
        answer_as(answer)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.refresh.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.report(&params);
    }
}

impl McpClient {
    /// Starts `command` and speaks MCP over its stdin and stdout.
    #[cfg(feature = "child-process")]
    pub async fn connect_stdio(
        command: tokio::process::Command,
        options: ImportOptions,
    ) -> Result<Self, ClientError> {
        let transport = rmcp::transport::TokioChildProcess::new(command)
            .map_err(|error| ClientError::Connect(error.to_string()))?;
        Self::connect(transport, options).await
    }

    /// Speaks MCP over streamable HTTP to `url`.
    #[cfg(feature = "http-client")]
    pub async fn connect_http(url: &str, options: ImportOptions) -> Result<Self, ClientError> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = &options.bearer_token {
            config = config.auth_header(token.secret().to_owned());
        }
        #[cfg(feature = "oauth-client")]
        if let Some(oauth) = options.oauth.clone() {
            let http = crate::client_auth::OAuthHttpClient::new(url, oauth)
                .map_err(|error| ClientError::Connect(error.to_string()))?;
            let transport =
                rmcp::transport::StreamableHttpClientTransport::with_client(http, config);
            return Self::connect(transport, options).await;
        }
        let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
        Self::connect(transport, options).await
    }

    /// Speaks MCP over any rmcp client transport: 2026-07-28 if the server offers it, else
    /// 2025-11-25.
    pub async fn connect<T, E, A>(transport: T, options: ImportOptions) -> Result<Self, ClientError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let refresh = Arc::new(Notify::new());
        let progress = Arc::new(ProgressRoutes::default());
        let in_flight = Arc::new(InFlight::default());
        let events = ClientEvents {
            refresh: refresh.clone(),
            progress: progress.clone(),
            in_flight: in_flight.clone(),
        };
        let lifecycle = match &options.protocol_version {
            None => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Some(version) if version.has_initialize() => ClientLifecycleMode::Initialize,
            Some(version) => ClientLifecycleMode::Discover {
                preferred_versions: vec![version.clone()],
            },
        };
        let service = tokio::time::timeout(
            options.connect_timeout,
            events.serve_with_lifecycle(transport, lifecycle),
        )
        .await
        .map_err(|_| ClientError::Timeout(options.connect_timeout))?
        .map_err(|error| ClientError::Connect(error.to_string()))?;
        let peer = service.peer().clone();
        Ok(Self {
            shared: Arc::new(ClientShared {
                service: Mutex::new(Some(service)),
                peer,
                options,
                refresh,
                progress,
                in_flight,
                imported: Mutex::new(Vec::new()),
                listing_keys: RandomState::new(),
            }),
        })
    }

    /// The tools imported so far.
    pub fn imported(&self) -> Vec<RemoteTool> {
        self.shared
            .imported
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The rmcp peer, for requests this crate does not make (resources, prompts).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.shared.peer
    }

    /// Lists the server's tools and registers each in `registry`; then keeps them current:
    /// when the server says its list changed, the tools are listed and registered again.
    /// Fails, registering nothing, if a name collides with another remote tool or with a
    /// tool the registry has, or the registry refuses a tool. Each re-import is one change of
    /// the registry ([`Registry::replace`]): a snapshot sees the whole old list or the whole new
    /// one, and a re-import that fails keeps the old.
    pub async fn import_into(&self, registry: &Registry) -> Result<Vec<RemoteTool>, ClientError> {
        let (imported, listing) = sync_tools(&self.shared, registry, None).await?;
        // A 2025-11-25 server has no stream: it announces changes with a plain notification.
        // One that never acknowledges the stream does not hold up the import.
        let listen = self.shared.peer.listen(tools_filter());
        let subscription = tokio::time::timeout(self.shared.options.connect_timeout, listen)
            .await
            .ok()
            .and_then(Result::ok);
        tokio::spawn(keep_current(
            Arc::downgrade(&self.shared),
            registry.clone(),
            subscription,
            listing,
        ));
        Ok(imported)
    }

    /// Closes the connection (and stops a child process). Imported tools stay registered and
    /// fail with [`SERVER_UNAVAILABLE`].
    pub async fn close(&self) {
        let service = self
            .shared
            .service
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
    }
}

fn tools_filter() -> SubscriptionFilter {
    SubscriptionFilter::builder().tools_list_changed().build()
}

/// Re-imports on every change the server announces, until the client is dropped or closed.
async fn keep_current(
    shared: Weak<ClientShared>,
    registry: Registry,
    mut subscription: Option<rmcp::service::Subscription>,
    mut listing: Listing,
) {
    loop {
        let refresh = match shared.upgrade() {
            Some(shared) => shared.refresh.clone(),
            None => return,
        };
        let changed = async {
            match subscription.as_mut() {
                Some(subscription) => loop {
                    match subscription.next().await {
                        Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                            return true;
                        }
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => return false,
                    }
                },
                None => std::future::pending().await,
            }
        };
        let keep_going = tokio::select! {
            () = refresh.notified() => true,
            changed = changed => changed,
            // Nothing tells this task the connection closed: look now and then.
            () = tokio::time::sleep(Duration::from_secs(5)) => {
                match shared.upgrade() {
                    Some(shared) if !shared.peer.is_transport_closed() => continue,
                    _ => return,
                }
            }
        };
        if !keep_going {
            // The stream ended: the server went away or closed it; plain notifications may
            // still come.
            subscription = None;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if keep_going {
            match sync_tools(&shared, &registry, Some(listing)).await {
                Ok((_, listed)) => listing = listed,
                Err(error) => tracing::warn!(%error, "re-importing the MCP server's tools failed"),
            }
        }
        if shared.peer.is_transport_closed() {
            return;
        }
        drop(shared);
        if keep_going {
            tokio::time::sleep(MIN_RELIST_INTERVAL).await;
        }
    }
}

/// A keyed hash of one listing of a server's tools, as JSON.
type Listing = u64;

/// Lists the remote tools and makes the registry's imported tools exactly those, unless the
/// listing is `unchanged_from` the one imported last: a server announcing changes it did not
/// make then changes nothing here (nor for whoever listens to the registry).
async fn sync_tools(
    shared: &Arc<ClientShared>,
    registry: &Registry,
    unchanged_from: Option<Listing>,
) -> Result<(Vec<RemoteTool>, Listing), ClientError> {
    let timeout = shared.options.connect_timeout;
    let tools = tokio::time::timeout(timeout, list_bounded(&shared.peer))
        .await
        .map_err(|_| ClientError::Timeout(timeout))??;
    let listing = fingerprint(&tools, &shared.listing_keys);
    if unchanged_from == Some(listing) {
        let imported = shared
            .imported
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        return Ok((imported, listing));
    }

    let previous: HashSet<String> = shared
        .imported
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|tool| tool.local_name.clone())
        .collect();
    let snapshot = registry.snapshot();
    let mut taken: HashMap<String, String> = HashMap::new();
    let mut defs = Vec::with_capacity(tools.len());
    for tool in tools {
        let local = provider_safe_name(&shared.options.prefix, &tool.name)?;
        if let Some(other) = taken.get(&local) {
            return Err(NameError::Collision {
                remote: tool.name.to_string(),
                local,
                taken_by: format!("remote tool `{other}`"),
            }
            .into());
        }
        if !previous.contains(&local) && snapshot.definition(&local).is_some() {
            return Err(NameError::Collision {
                remote: tool.name.to_string(),
                local,
                taken_by: "a tool in the registry".to_owned(),
            }
            .into());
        }
        taken.insert(local.clone(), tool.name.to_string());
        defs.push(remote_tool_def(local, tool, shared));
    }

    // One change of the registry, all or nothing: a snapshot taken meanwhile sees every
    // tool of the old list or every tool of the new one, and a refused tool leaves the old.
    let (imported, defs): (Vec<RemoteTool>, Vec<ToolDef>) = defs.into_iter().unzip();
    registry
        .replace(previous.iter().map(String::as_str), defs)
        .map_err(|source| ClientError::Register {
            remote: taken
                .get(source.tool_name())
                .cloned()
                .unwrap_or_else(|| source.tool_name().to_owned()),
            source,
        })?;
    shared
        .imported
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone_from(&imported);
    Ok((imported, listing))
}

/// `tools` as JSON, hashed under the client's own keys (a server cannot make two listings
/// collide without knowing them).
fn fingerprint(tools: &[Tool], keys: &RandomState) -> Listing {
    struct Hashing<H>(H);
    impl<H: Hasher> std::io::Write for Hashing<H> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hashing = Hashing(keys.build_hasher());
    // A listing serializes: it was counted as JSON when it was read.
    let _ = serde_json::to_writer(&mut hashing, tools);
    hashing.0.finish()
}

/// Every page of the server's tools, refused past [`MAX_IMPORTED_TOOLS`] tools,
/// [`MAX_LIST_PAGES`] pages or [`MAX_LISTING_BYTES`]: a server cannot make the client hold an
/// unbounded list (at most the limit and one page, which the transport bounds).
async fn list_bounded(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ClientError> {
    let mut tools = Vec::new();
    let mut bytes = 0_usize;
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer.list_tools(Some(params)).await?;
        for tool in &page.tools {
            bytes += json_len_within(tool, MAX_LISTING_BYTES - bytes)
                .ok_or(ClientError::ListingTooLarge)?;
        }
        tools.extend(page.tools);
        if tools.len() > MAX_IMPORTED_TOOLS {
            return Err(ClientError::TooManyTools);
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(tools),
        }
    }
    Err(ClientError::TooManyTools)
}

/// The longest error code kept from a server.
const MAX_REMOTE_CODE: usize = 64;

/// The error code a server sent with a failure, when it is one: 1 to [`MAX_REMOTE_CODE`] ASCII
/// letters, digits, `_`, `-` or `.`. Anything else (what a host would print, log or match on
/// unchecked) is why not, quoted bounded and printable.
fn remote_code(sent: &Value) -> Result<&str, String> {
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
enum OutputShape {
    /// Validated against the server's schema, as it is.
    Typed,
    /// Validated against the schema inside a FastMCP wrapper; the value is `result`.
    Wrapped,
    /// Not validated here: `structuredContent`, else the text.
    Untyped,
}

fn remote_tool_def(local: String, tool: Tool, shared: &ClientShared) -> (RemoteTool, ToolDef) {
    let (peer, progress) = (shared.peer.clone(), shared.progress.clone());
    let in_flight = shared.in_flight.clone();
    let timeout = shared.options.call_timeout;
    let remote_name = tool.name.to_string();
    let mut about = remote_about(&tool);
    about.namespace.clone_from(&shared.options.namespace);
    about.defer_loading = shared.options.defer_loading;
    let input = Value::Object(Arc::unwrap_or_clone(tool.input_schema));
    let input_validated = check_input_schema(&input).is_ok();
    let declared = tool
        .output_schema
        .map(|schema| Value::Object(Arc::unwrap_or_clone(schema)));
    let (output_schema, shape) = match declared {
        Some(schema) => match unwrap(&schema) {
            Some(inner) if check_output_schema(&inner).is_ok() => (inner, OutputShape::Wrapped),
            None if check_output_schema(&schema).is_ok() => (schema, OutputShape::Typed),
            _ => (Value::Bool(true), OutputShape::Untyped),
        },
        None => (Value::Bool(true), OutputShape::Untyped),
    };
    let output_validated = !matches!(shape, OutputShape::Untyped);

    let wire_name = remote_name.clone();
    let builder = ToolDef::builder(local.clone())
        .description(
            tool.description
                .map(std::borrow::Cow::into_owned)
                .unwrap_or_default(),
        )
        .input_schema(if input_validated {
            input.clone()
        } else {
            serde_json::json!({"type": "object"})
        })
        .output_schema(output_schema)
        .presented_handler(move |args: Value, cx: ToolContext| {
            let remote = Remote {
                peer: peer.clone(),
                progress: progress.clone(),
                in_flight: in_flight.clone(),
                timeout,
            };
            let name = wire_name.clone();
            let shape = shape.clone();
            async move { remote.call(name, args, cx, &shape).await }
        });
    let mut def = builder.build().with_about(about);
    if !input_validated {
        def = def.with_advertised_input_schema(input);
    }
    (
        RemoteTool {
            local_name: local,
            remote_name,
            input_validated,
            output_validated,
        },
        def,
    )
}

/// The most icons kept of an imported tool, and the longest title and icon address.
const MAX_REMOTE_ICONS: usize = 8;
const MAX_REMOTE_TITLE: usize = 200;
const MAX_REMOTE_ICON_SRC: usize = 2_048;

/// What a remote tool says of itself: its title, hints and icons, kept as the server's hints —
/// nothing here trusts them for a decision. What registration would refuse is left out rather
/// than refusing the tool: a title past 200 characters is cut (and left out if what remains
/// is blank), icons past 8 or whose address is not http(s) or data: (or past 2,048 bytes) are
/// dropped, a media type or size registration would refuse is left out of its icon, and hints
/// that contradict each other (read-only and destructive) say neither.
fn remote_about(tool: &Tool) -> ToolAbout {
    let mut about = ToolAbout::default();
    let annotations = tool.annotations.as_ref();
    about.title = tool
        .title
        .clone()
        .or_else(|| annotations.and_then(|annotations| annotations.title.clone()))
        .map(|title| title.chars().take(MAX_REMOTE_TITLE).collect::<String>())
        .filter(|title| !title.trim().is_empty());
    if let Some(annotations) = annotations {
        about.hints.read_only = annotations.read_only_hint;
        about.hints.destructive = annotations.destructive_hint;
        about.hints.idempotent = annotations.idempotent_hint;
        about.hints.open_world = annotations.open_world_hint;
        if about.hints.read_only == Some(true) && about.hints.destructive == Some(true) {
            about.hints.read_only = None;
            about.hints.destructive = None;
        }
    }
    for icon in tool.icons.iter().flatten().take(MAX_REMOTE_ICONS) {
        let scheme_ok = ["https://", "http://", "data:"]
            .iter()
            .any(|scheme| icon.src.starts_with(scheme));
        if !scheme_ok || icon.src.len() > MAX_REMOTE_ICON_SRC {
            continue;
        }
        let mut kept = Icon::new(icon.src.clone());
        if let Some(mime) = icon
            .mime_type
            .as_ref()
            .filter(|mime| mime.len() <= 128 && is_media_type(mime))
        {
            kept = kept.with_mime_type(mime.clone());
        }
        for size in icon.sizes.iter().flatten().take(8) {
            let fine = size == "any"
                || size.split_once('x').is_some_and(|(width, height)| {
                    !width.is_empty()
                        && !height.is_empty()
                        && width.len() <= 6
                        && height.len() <= 6
                        && width
                            .bytes()
                            .chain(height.bytes())
                            .all(|b| b.is_ascii_digit())
                });
            if fine {
                kept = kept.with_size(size.clone());
            }
        }
        if let Some(theme) = icon.theme {
            kept = kept.with_theme(match theme {
                rmcp::model::IconTheme::Dark => IconTheme::Dark,
                _ => IconTheme::Light,
            });
        }
        about.icons.push(kept);
    }
    // Whatever else registration would refuse in them, the title and icons go, not the tool.
    if about.check().is_err() {
        about.title = None;
        about.icons.clear();
    }
    about
}

/// What a call to an imported tool needs of its server.
struct Remote {
    peer: Peer<RoleClient>,
    progress: Arc<ProgressRoutes>,
    in_flight: Arc<InFlight>,
    timeout: Duration,
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
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let sent = async {
            let handle = self
                .peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await?;
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
        sent.await
    }

    async fn call(
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
struct Abandoned<'a> {
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
fn presented(
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
