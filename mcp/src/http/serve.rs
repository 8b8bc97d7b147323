//! Serving over streamable HTTP: rmcp's tower service, mounted with axum, on loopback unless
//! the host says otherwise.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;
use crate::http::door::{
    HEADER_READ_TIMEOUT, MAX_HEADER_BYTES, MAX_HEADERS, SHUTDOWN_GRACE, bounded_body,
};

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

    /// Stops accepting, lets requests in flight finish (for
    /// [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE) at most), and waits for the server to end.
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
        // The body is read (bounded) just before the endpoint; with authorization, only once
        // the token passed.
        let router = axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn(bounded_body));
        #[cfg(feature = "auth")]
        let router = match self.authorization() {
            Some(auth) => router
                .layer(axum::middleware::from_fn_with_state(
                    auth.clone(),
                    crate::http::guard::guard,
                ))
                .merge(crate::http::guard::metadata_routes(&auth, MCP_PATH)),
            None => router,
        };
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve_connections(listener, router, shutdown.clone()));
        Ok(RunningHttp {
            addr,
            shutdown,
            task,
        })
    }
}

/// Accepts connections until `stop`, each served over HTTP/1.1 with the head bounded in time
/// and size; then lets the requests in flight finish, for [`SHUTDOWN_GRACE`] at most.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_HEADER_BYTES)
        .max_headers(MAX_HEADERS);
    let connections = tokio_util::task::TaskTracker::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection reset before it was accepted is that client's trouble.
                Err(error) if is_connection_error(&error) => continue,
                // Out of file descriptors, say: wait rather than spin.
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                        () = stop.cancelled() => break,
                    }
                }
            },
            () = stop.cancelled() => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let connection = http
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
            .with_upgrades();
        let stop = stop.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    connections.close();
    // Past the grace, what is left is dropped with the task.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connections.wait()).await;
    Ok(())
}

fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        error.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}
