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
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ProtocolVersion;
use rmcp::service::{Peer, RoleClient};
use rmcp::{ClientLifecycleMode, ClientServiceExt as _};
use tokio::sync::Notify;
use toolprism::Registry;

use super::error::ClientError;
use super::events::ClientEvents;
use super::input::InFlight;
use super::options::ImportOptions;
use super::progress::ProgressRoutes;
use super::shared::{ClientShared, RemoteTool};
use super::sync::{keep_current, sync_tools, tools_filter};

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

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("options", &self.shared.options)
            .field("imported", &self.imported())
            .finish_non_exhaustive()
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
            let http = super::auth::OAuthHttpClient::new(url, oauth)
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
    /// fail with [`SERVER_UNAVAILABLE`](crate::SERVER_UNAVAILABLE).
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
