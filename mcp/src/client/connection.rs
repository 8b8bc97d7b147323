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
use rmcp::service::{ClientInitializeError, Peer, RoleClient};
use rmcp::{ClientLifecycleMode, ClientServiceExt as _};
use tokio::sync::Notify;
use toolprism::Registry;

use super::error::ClientError;
use super::events::ClientEvents;
use super::input::InFlight;
use super::inspect::RefusedTool;
use super::options::ImportOptions;
use super::pins::{HeldTool, PinError, Pins};
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

/// Why a connection was not made: as the host is told, or the way a legacy server slow to
/// start fails the automatic choice of version (which starting it again may mend).
enum Failed {
    Client(ClientError),
    LateProbe(String),
}

impl From<ClientError> for Failed {
    fn from(error: ClientError) -> Self {
        Self::Client(error)
    }
}

impl From<Failed> for ClientError {
    fn from(failed: Failed) -> Self {
        match failed {
            Failed::Client(error) => error,
            Failed::LateProbe(message) => Self::Connect(message),
        }
    }
}

/// The same command again: program, arguments, environment and directory.
#[cfg(feature = "child-process")]
fn copy_of(command: &tokio::process::Command) -> tokio::process::Command {
    let std = command.as_std();
    let mut copy = tokio::process::Command::new(std.get_program());
    copy.args(std.get_args());
    for (key, value) in std.get_envs() {
        match value {
            Some(value) => copy.env(key, value),
            None => copy.env_remove(key),
        };
    }
    if let Some(dir) = std.get_current_dir() {
        copy.current_dir(dir);
    }
    copy
}

impl McpClient {
    /// Starts `command` and speaks MCP over its stdin and stdout. A legacy server slower to
    /// start than the 2026-07-28 probe waits (10 s: a first `npx` run) is started again and
    /// initialized at once.
    #[cfg(feature = "child-process")]
    pub async fn connect_stdio(
        command: tokio::process::Command,
        options: ImportOptions,
    ) -> Result<Self, ClientError> {
        let std = command.as_std();
        let endpoint = std::iter::once(std.get_program())
            .chain(std.get_args())
            .map(|part| part.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let endpoint = format!("stdio:{endpoint}");
        let again = options
            .protocol_version
            .is_none()
            .then(|| copy_of(&command));
        let unstarted = |error: std::io::Error| ClientError::Connect(error.to_string());
        let transport = rmcp::transport::TokioChildProcess::new(command).map_err(unstarted)?;
        match Self::connect_at(transport, options.clone(), endpoint.clone()).await {
            Err(Failed::LateProbe(error)) => {
                let Some(command) = again else {
                    return Err(ClientError::Connect(error));
                };
                // A legacy server slower to start than the 2026-07-28 probe waits: the probe's
                // late error was read as the answer to `initialize`. Start it again, and
                // initialize at once.
                tracing::warn!(%error, "the MCP server was slow to start: starting it again with initialize");
                let options = options.protocol_version(ProtocolVersion::V_2025_11_25);
                let transport =
                    rmcp::transport::TokioChildProcess::new(command).map_err(unstarted)?;
                Ok(Self::connect_at(transport, options, endpoint).await?)
            }
            connected => Ok(connected?),
        }
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
            return Ok(Self::connect_at(transport, options, url.to_owned()).await?);
        }
        let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
        Ok(Self::connect_at(transport, options, url.to_owned()).await?)
    }

    /// Speaks MCP over any rmcp client transport: 2026-07-28 if the server offers it, else
    /// 2025-11-25.
    /// Its pins ([`ImportOptions::pins`]) are kept under the endpoint `transport`, unless
    /// [`ImportOptions::endpoint`] names it.
    pub async fn connect<T, E, A>(transport: T, options: ImportOptions) -> Result<Self, ClientError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Ok(Self::connect_at(transport, options, "transport".to_owned()).await?)
    }

    async fn connect_at<T, E, A>(
        transport: T,
        options: ImportOptions,
        endpoint: String,
    ) -> Result<Self, Failed>
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
        .map_err(|error| {
            let late = match &error {
                ClientInitializeError::UncorrelatedErrorResponse { .. } => true,
                ClientInitializeError::LegacyFallbackFailed { fallback, .. } => matches!(
                    **fallback,
                    ClientInitializeError::UncorrelatedErrorResponse { .. }
                ),
                _ => false,
            };
            if late {
                Failed::LateProbe(error.to_string())
            } else {
                Failed::Client(ClientError::Connect(error.to_string()))
            }
        })?;
        let peer = service.peer().clone();
        // Pins are kept per server: the name it gives, at the endpoint reached.
        let name = peer
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|server| server.name.clone()))
            .unwrap_or_default();
        let endpoint = options.endpoint.clone().unwrap_or(endpoint);
        let identity = format!("{name} {endpoint}");
        Ok(Self {
            shared: Arc::new(ClientShared {
                identity,
                pins_seen: Mutex::new(None),
                held: Mutex::new(Vec::new()),
                force: std::sync::atomic::AtomicBool::new(false),
                held_events: tokio::sync::broadcast::channel(64).0,
                service: Mutex::new(Some(service)),
                peer,
                options,
                refresh,
                progress,
                in_flight,
                imported: Mutex::new(Vec::new()),
                refused: Mutex::new(Vec::new()),
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

    /// The server's identity its pins are kept under: the name it gives and the endpoint
    /// reached (`fastmcp-peer stdio:python3 server.py`).
    pub fn server_identity(&self) -> &str {
        &self.shared.identity
    }

    /// The tools held by their pins ([`ImportOptions::pins`]): changed since pinned (shown as
    /// pinned, and not called), or new and waiting (not imported), each with what changed.
    pub fn held(&self) -> Vec<HeldTool> {
        self.shared
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Each tool held anew from here on, with what changed ([`HeldTool::diff`]): a definition
    /// that differs from its pin, or a new tool that waits. A receiver that falls 64 behind
    /// misses the oldest; [`held`](Self::held) always says what is held.
    pub fn held_events(&self) -> tokio::sync::broadcast::Receiver<HeldTool> {
        self.shared.held_events.subscribe()
    }

    /// Accepts the definition `remote_name` is listed with now: it is pinned, and the tool is
    /// imported again as listed.
    pub async fn accept(&self, registry: &Registry, remote_name: &str) -> Result<(), ClientError> {
        let Some(pin_file) = &self.shared.options.pins else {
            return Err(ClientError::Pins(PinError::NothingPending {
                server: self.shared.identity.clone(),
                tool: remote_name.to_owned(),
            }));
        };
        let mut pins = Pins::load(pin_file.path())?;
        pins.accept(&self.shared.identity, remote_name)?;
        pins.save(pin_file.path())?;
        sync_tools(&self.shared, registry, None).await?;
        Ok(())
    }

    /// The tools of the server's last listing refused at import, and why: a hidden character
    /// (with where), a description past the limit, a name that reads as a local tool's.
    pub fn refused(&self) -> Vec<RefusedTool> {
        self.shared
            .refused
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
