//! Serving over streamable HTTP: rmcp's tower service, mounted with axum, on loopback unless
//! the host says otherwise.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// Where an HTTP server binds unless told otherwise: loopback only.
pub const DEFAULT_HTTP_ADDR: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8765);

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// How the HTTP endpoint keeps (or does not keep) sessions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMode {
    /// Sessions for 2025-11-25 clients (server-sent list changes on a `GET` stream);
    /// 2026-07-28 requests are stateless either way.
    #[default]
    Sessions,
    /// No session for anyone: every request stands alone, so any replica behind any load
    /// balancer can answer it. Responses are plain JSON unless a call reports progress.
    Stateless,
}

/// An HTTP server started by [`McpServer::serve_http`]: its address, and a handle to stop it.
#[derive(Debug)]
pub struct RunningHttp {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningHttp {
    /// The address bound (with the port the system chose, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8765/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Stops accepting, lets requests in flight finish, and waits for the server to end.
    pub async fn shutdown(self) -> std::io::Result<()> {
        self.shutdown.cancel();
        self.task.await.map_err(std::io::Error::other)?
    }

    /// Runs until the server ends (on an I/O error, or never).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.map_err(std::io::Error::other)?
    }
}

impl McpServer {
    /// The streamable HTTP endpoint as a tower service, to mount in an axum router (or any
    /// tower stack) of the host's own. Each request or session gets this server's tools and
    /// lists by `Arc` clones (no per-request router) and state of its own.
    ///
    /// `Host` headers are checked against loopback names (rmcp's default, against DNS
    /// rebinding); a public deployment sets its own with `configure`. It carries no
    /// authorization: [`serve_http`](Self::serve_http) adds it in front.
    pub fn http_service(
        &self,
        mode: HttpMode,
        configure: impl FnOnce(StreamableHttpServerConfig) -> StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(mode == HttpMode::Sessions)
            .with_json_response(mode == HttpMode::Stateless);
        let server = self.clone();
        let stateless = mode == HttpMode::Stateless;
        StreamableHttpService::new(
            move || {
                Ok(if stateless {
                    server.for_stateless_request()
                } else {
                    server.for_session()
                })
            },
            Arc::new(LocalSessionManager::default()),
            configure(config),
        )
    }

    /// Binds `addr` (use [`DEFAULT_HTTP_ADDR`], or port 0 for any free port) and serves the
    /// endpoint at [`MCP_PATH`] until [`RunningHttp::shutdown`]. With
    /// [`with_authorization`](Self::with_authorization), every request to the endpoint needs a
    /// valid token, and the protected-resource metadata is served at
    /// `/.well-known/oauth-protected-resource` (and under the endpoint's path).
    ///
    /// ```no_run
    /// use toolprism::Registry;
    /// use toolprism_mcp::{HttpMode, McpServer};
    ///
    /// # async fn run(registry: Registry) -> std::io::Result<()> {
    /// let running = McpServer::new(registry)
    ///     .serve_http("127.0.0.1:0".parse().unwrap(), HttpMode::Stateless)
    ///     .await?;
    /// println!("serving at {}", running.url());
    /// running.wait().await
    /// # }
    /// ```
    pub async fn serve_http(
        &self,
        addr: SocketAddr,
        mode: HttpMode,
    ) -> std::io::Result<RunningHttp> {
        let shutdown = CancellationToken::new();
        let service = self.http_service(mode, |config| {
            config
                .with_cancellation_token(shutdown.child_token())
                .with_sse_keep_alive(None)
        });
        let router = axum::Router::new().nest_service(MCP_PATH, service);
        #[cfg(feature = "auth")]
        let router = match self.authorization() {
            Some(auth) => router
                .layer(axum::middleware::from_fn_with_state(
                    auth.clone(),
                    crate::auth::guard,
                ))
                .merge(crate::auth::metadata_routes(&auth, MCP_PATH)),
            None => router,
        };
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let stop = shutdown.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move { stop.cancelled_owned().await })
                .await
        });
        Ok(RunningHttp {
            addr,
            shutdown,
            task,
        })
    }
}
