//! Serving over streamable HTTP: rmcp's tower service, mounted with axum behind the door's
//! limits, the authorization and the sessions' binding; on loopback unless the host says
//! otherwise, and beyond it only with authorization or the host's explicit word.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;
use crate::http::connections::{
    Connections, WRITE_TIMEOUT, WriteDeadline, connection_cap, raise_fd_limit,
};
use crate::http::door::{
    Door, HEADER_READ_TIMEOUT, MAX_HEADER_BYTES, MAX_HEADERS, SHUTDOWN_GRACE, bounded_body,
};
use crate::http::sessions::{SESSION_IDLE_TIMEOUT, Sessions, bind};

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

    /// Runs until the process is asked to stop (`SIGTERM`, as a service manager or an
    /// orchestrator asks, or `SIGINT`), then [`shutdown`](Self::shutdown)s: requests in
    /// flight finish, and whatever the host holds (buffered telemetry) is released as it
    /// returns. Ends sooner if the server does.
    pub async fn wait_for_stop_signal(mut self) -> std::io::Result<()> {
        tokio::select! {
            ended = &mut self.task => ended.map_err(std::io::Error::other)?,
            () = stop_signal() => {
                // A second signal stops at once, requests in flight or not.
                tokio::select! {
                    stopped = self.shutdown() => stopped,
                    () = stop_signal() => Ok(()),
                }
            }
        }
    }
}

/// Resolves on the first `SIGTERM` or `SIGINT` (on Windows, Ctrl-C); never if neither can be
/// listened to.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut terminate), Ok(mut interrupt)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

impl McpServer {
    /// The same server, its HTTP endpoint answering only requests whose `Host` header names one
    /// of `hosts` (a name, or `name:port`), against DNS rebinding. Without this, loopback's
    /// names are answered, and with [`with_authorization`](Self::with_authorization) the
    /// resource URL's host too. The check keeps browsers from being turned against a local
    /// server; it is not access control: a client sends whatever `Host` it likes.
    #[must_use]
    pub fn with_allowed_hosts<S: Into<String>>(self, hosts: impl IntoIterator<Item = S>) -> Self {
        let hosts: Vec<String> = hosts.into_iter().map(Into::into).collect();
        self.with_settings(|settings| settings.allowed_hosts = Some(hosts))
    }

    /// The same server, allowed to serve HTTP on an address beyond loopback **without
    /// authorization**: anyone who can reach the address may call every tool, read what they
    /// retain and answer their tasks. Without this, [`serve_http`](Self::serve_http) refuses
    /// such an address unless [`with_authorization`](Self::with_authorization) was given.
    #[must_use]
    pub fn allow_unauthenticated_network_access(self) -> Self {
        self.with_settings(|settings| settings.unauthenticated = true)
    }

    /// The `Host` names the endpoint answers.
    fn allowed_hosts(&self) -> Vec<String> {
        if let Some(hosts) = &self.shared.settings.allowed_hosts {
            return hosts.clone();
        }
        let loopback = StreamableHttpServerConfig::default().allowed_hosts;
        #[cfg(feature = "auth")]
        if let Some(auth) = self.authorization()
            && let Some(authority) = authority_of(auth.resource())
        {
            return loopback.into_iter().chain([authority.to_owned()]).collect();
        }
        loopback
    }

    /// The streamable HTTP endpoint as rmcp's tower service, to mount in a tower stack of the
    /// host's own: `Host` checked against [`with_allowed_hosts`](Self::with_allowed_hosts), and
    /// nothing else. It carries no authorization, binds no session to its caller and bounds
    /// no body: [`http_router`](Self::http_router) adds those, [`serve_http`](Self::serve_http)
    /// the connection limits too. Each request or session gets this server's tools and lists
    /// by `Arc` clones (no per-request router) and state of its own.
    pub fn http_service(
        &self,
        mode: HttpMode,
        configure: impl FnOnce(StreamableHttpServerConfig) -> StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        self.endpoint(mode, Arc::new(LocalSessionManager::default()), configure)
    }

    fn endpoint(
        &self,
        mode: HttpMode,
        sessions: Arc<LocalSessionManager>,
        configure: impl FnOnce(StreamableHttpServerConfig) -> StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(mode == HttpMode::Sessions)
            .with_json_response(mode == HttpMode::Stateless)
            .with_allowed_hosts(self.allowed_hosts());
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
            sessions,
            configure(config),
        )
    }

    /// The endpoint at [`MCP_PATH`] as an axum router with every limit a request has: with
    /// [`with_authorization`](Self::with_authorization), a valid token first (`401`) and the
    /// protected-resource metadata routes; sessions bound to their caller and capped; the body
    /// read within its size and time ([`MAX_BODY_BYTES`](crate::MAX_BODY_BYTES),
    /// [`BODY_READ_TIMEOUT`](crate::BODY_READ_TIMEOUT)) and heavy ones decoded a few at a
    /// time. To merge into a host's own axum app; what it leaves to the host's server is what
    /// [`serve_http`](Self::serve_http) adds per connection: the head's size and time, the
    /// connection cap, the write timeout.
    pub fn http_router(&self, mode: HttpMode) -> axum::Router {
        self.router(mode, |config| config)
    }

    fn router(
        &self,
        mode: HttpMode,
        configure: impl FnOnce(StreamableHttpServerConfig) -> StreamableHttpServerConfig,
    ) -> axum::Router {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(SESSION_IDLE_TIMEOUT);
        let manager = Arc::new(manager);
        let sessions = Sessions::new(manager.clone());
        let service = self.endpoint(mode, manager, configure);
        // Inside out: the body is read (bounded) just before the endpoint, sessions are bound
        // to the caller the authorization found, and with authorization the body is read only
        // once the token passed.
        let router = axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(
                Door::new(),
                bounded_body,
            ))
            .layer(axum::middleware::from_fn_with_state(sessions, bind));
        #[cfg(feature = "auth")]
        if let Some(auth) = self.authorization() {
            return router
                .layer(axum::middleware::from_fn_with_state(
                    auth.clone(),
                    crate::http::guard::guard,
                ))
                .merge(crate::http::guard::metadata_routes(&auth, MCP_PATH));
        }
        router
    }

    /// Why this server may not serve on `addr`: beyond loopback without authorization, unless
    /// the host said it may.
    fn refusal(&self, addr: SocketAddr) -> Option<String> {
        #[cfg(feature = "auth")]
        if self.authorization().is_some() {
            return None;
        }
        if addr.ip().is_loopback() || self.shared.settings.unauthenticated {
            return None;
        }
        Some(format!(
            "refusing to serve on {addr} without authorization: anyone who reaches it could run \
             every tool. Give the server an authorization (mcp_server: --issuer URL --resource \
             URL), bind a loopback address, or say allow_unauthenticated_network_access \
             (mcp_server: --allow-unauthenticated)"
        ))
    }

    /// Binds `addr` (use [`DEFAULT_HTTP_ADDR`], or port 0 for any free port) and serves the
    /// endpoint at [`MCP_PATH`] until [`RunningHttp::shutdown`], with every limit of
    /// [`http_router`](Self::http_router) and, per connection, the head's size and time, the
    /// connection cap ([`MAX_CONNECTIONS`](crate::MAX_CONNECTIONS), kept below the
    /// file-descriptor limit, which is raised first) and the write timeout
    /// ([`WRITE_TIMEOUT`](crate::WRITE_TIMEOUT)).
    ///
    /// An address beyond loopback is refused (`InvalidInput`, saying what to add) unless the
    /// server has [`with_authorization`](Self::with_authorization) or
    /// [`allow_unauthenticated_network_access`](Self::allow_unauthenticated_network_access).
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
        if let Some(refusal) = self.refusal(addr) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                refusal,
            ));
        }
        let shutdown = CancellationToken::new();
        let router = self.router(mode, |config| {
            config
                .with_cancellation_token(shutdown.child_token())
                .with_sse_keep_alive(None)
        });
        let connections = Connections::new(connection_cap(raise_fd_limit()));
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve_connections(
            listener,
            router,
            connections,
            shutdown.clone(),
        ));
        Ok(RunningHttp {
            addr,
            shutdown,
            task,
        })
    }
}

/// The `host[:port]` of a URL.
#[cfg(feature = "auth")]
fn authority_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    // Credentials are no part of a `Host` header.
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!authority.is_empty()).then_some(authority)
}

/// Accepts connections until `stop`, each admitted among `connections` (the oldest idle one
/// giving way when full) and served over HTTP/1.1 with the head bounded in time and size and
/// every write in time; then lets the requests in flight finish, for [`SHUTDOWN_GRACE`] at
/// most.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    connections: Arc<Connections>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_HEADER_BYTES)
        .max_headers(MAX_HEADERS);
    let tracker = tokio_util::task::TaskTracker::new();
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
        // Room for it: an idle connection gives way only now that a newcomer is here; when
        // every one is busy, accepting waits (and the next wait in the listen queue).
        let admitted = tokio::select! {
            admitted = connections.admit() => admitted,
            () = stop.cancelled() => break,
        };
        let busy = admitted.handle();
        let router = router.clone();
        // Each request marks the connection busy until its response's body is dropped: a
        // connection in the middle of a request never gives way to a newcomer.
        let service = hyper::service::service_fn(move |request| {
            // On a connection already giving way, the request goes with it.
            let held = busy.busy();
            let call = tower::ServiceExt::oneshot(router.clone(), request);
            async move {
                let response = call.await?;
                Ok::<_, Infallible>(response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _held = &held;
                        frame
                    }))
                }))
            }
        });
        let io = hyper_util::rt::TokioIo::new(WriteDeadline::new(stream, WRITE_TIMEOUT));
        let connection = http.serve_connection(io, service).with_upgrades();
        let stop = stop.clone();
        tracker.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = admitted.evicted() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(admitted);
        });
    }
    tracker.close();
    // Past the grace, what is left is dropped with the task.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, tracker.wait()).await;
    Ok(())
}

fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        error.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

#[cfg(all(test, feature = "auth"))]
mod tests {
    use super::authority_of;

    #[test]
    fn the_authority_of_a_resource_is_its_host_and_port() {
        assert_eq!(
            authority_of("https://mcp.example.com/mcp"),
            Some("mcp.example.com")
        );
        assert_eq!(
            authority_of("http://10.0.0.5:8765/mcp"),
            Some("10.0.0.5:8765")
        );
        assert_eq!(authority_of("https://user:pw@host:1/x?y"), Some("host:1"));
        assert_eq!(authority_of("no scheme"), None);
    }
}
