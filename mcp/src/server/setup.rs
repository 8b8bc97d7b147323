//! The server and what the host sets on it: its name, instructions, request-state key, host
//! handler, caching hints, task store and authorization. Cloning shares it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::model::{CacheScope, Implementation};
use tokio::sync::watch;
use toolprism::{ChangeListener, Registry};

use super::announce::Announcer;
use super::host::HostHandler;
use super::input::RequestStates;
use super::listing::ToolLists;
use super::peer::Session;
use super::task_store::{MemoryTaskStore, TaskStore};
use super::tasks::{DEFAULT_TASK_TTL, Tasks};

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
    pub(crate) shared: Arc<Shared>,
    /// What one connection (or HTTP session) set: clones share it, `for_session` does not.
    pub(super) session: Arc<Session>,
}

/// Why a key cannot seal request states (it is shorter than 32 bytes).
#[derive(Debug, thiserror::Error)]
#[error("request state key: {0}")]
pub struct RequestStateKeyError(String);

pub(crate) struct Shared {
    pub(super) registry: Registry,
    pub(crate) settings: Settings,
    lists: Mutex<Option<Arc<ToolLists>>>,
    pub(super) changes: watch::Receiver<u64>,
    /// Tells 2025-11-25 sessions of each change.
    pub(super) announcer: Arc<Announcer>,
    _listener: ChangeListener,
}

/// What the host chose for a server; the `with_` methods change one of them.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(super) implementation: Implementation,
    pub(super) instructions: Option<String>,
    /// Seals and opens the states of input-required results.
    pub(super) states: Arc<RequestStates>,
    /// Serves resources, prompts and completion beside the tools.
    pub(super) host: Option<Arc<dyn HostHandler>>,
    /// The caching hints of `tools/list` on 2026-07-28.
    pub(super) tool_list_cache: (u64, CacheScope),
    /// Where calls that became tasks are kept.
    pub(super) tasks: Arc<Tasks>,
    /// What the HTTP endpoint asks of a request.
    #[cfg(feature = "auth")]
    pub(super) authorization: Option<Arc<crate::auth::authorization::Authorization>>,
    /// The `Host` names (or `host:port`) the HTTP endpoint answers; `None` for loopback's
    /// (and, with authorization, the resource's).
    #[cfg(feature = "http-server")]
    pub(crate) allowed_hosts: Option<Vec<String>>,
    /// The host said, explicitly, that the HTTP endpoint may serve beyond loopback without
    /// authorization.
    #[cfg(feature = "http-server")]
    pub(crate) unauthenticated: bool,
    /// What a request's span makes of the trace context a client sent.
    pub(crate) client_trace: ClientTrace,
}

/// What a server's request spans make of the trace context (`traceparent`, `tracestate`) a
/// client sends in a request's `_meta` (with the `otel` feature; without it, nothing is read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientTrace {
    /// The request's span continues the client's trace, as its child, sampled as the client
    /// sampled it: one trace from the agent into the server. For clients the host trusts.
    #[default]
    Continue,
    /// The request's span starts a trace of the server's own, sampled as the server's
    /// sampler decides, with a link to the client's span: what a server open to clients it
    /// does not trust does, so that none can join its spans to a trace of its choosing or have
    /// them all sampled.
    Link,
    /// Trace context from clients is not read.
    Ignore,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.shared.registry)
            .field("implementation", &self.shared.settings.implementation.name)
            .field("host_handler", &self.shared.settings.host.is_some())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server of this registry, named `toolprism` with this crate's version.
    pub fn new(registry: Registry) -> Self {
        Self::build(
            registry,
            Settings {
                implementation: Implementation::new("toolprism", env!("CARGO_PKG_VERSION")),
                instructions: None,
                states: Arc::new(RequestStates::random()),
                host: None,
                // Never wrong: a client re-lists before it relies on a list.
                tool_list_cache: (0, CacheScope::Private),
                tasks: Arc::new(Tasks::new(
                    Arc::new(MemoryTaskStore::new()),
                    DEFAULT_TASK_TTL,
                )),
                #[cfg(feature = "auth")]
                authorization: None,
                #[cfg(feature = "http-server")]
                allowed_hosts: None,
                #[cfg(feature = "http-server")]
                unauthenticated: false,
                client_trace: ClientTrace::Continue,
            },
        )
    }

    /// The same server with one setting changed.
    pub(crate) fn with_settings(self, change: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = self.shared.settings.clone();
        change(&mut settings);
        Self::build(self.shared.registry.clone(), settings)
    }

    /// The same server, under this name and version.
    #[must_use]
    pub fn with_implementation(self, name: &str, version: &str) -> Self {
        self.with_settings(|settings| settings.implementation = Implementation::new(name, version))
    }

    /// The same server, making this of the trace context clients send
    /// ([`ClientTrace::Continue`] by default).
    #[must_use]
    pub fn with_client_trace(self, client_trace: ClientTrace) -> Self {
        self.with_settings(|settings| settings.client_trace = client_trace)
    }

    /// The same server, with instructions for the model sent at initialization.
    #[must_use]
    pub fn with_instructions(self, instructions: impl Into<String>) -> Self {
        let instructions = instructions.into();
        self.with_settings(|settings| settings.instructions = Some(instructions))
    }

    /// The same server, sealing the `requestState` of its input-required results (2026-07-28)
    /// with `key` (at least 32 bytes), answerable for `ttl`. Replicas behind a load balancer
    /// share the key, so that any of them opens what another sealed; without one, each
    /// process seals under a random key of its own, and states last
    /// [`DEFAULT_REQUEST_STATE_TTL`](crate::DEFAULT_REQUEST_STATE_TTL).
    pub fn with_request_state_key(
        self,
        key: &[u8],
        ttl: Duration,
    ) -> Result<Self, RequestStateKeyError> {
        let states = Arc::new(RequestStates::with_key(key, ttl).map_err(RequestStateKeyError)?);
        Ok(self.with_settings(|settings| settings.states = states))
    }

    /// The same server, handing resources, prompts and completion requests to `handler`: any
    /// rmcp [`ServerHandler`], so what rmcp serves composes with the registry's tools.
    ///
    /// The handler's capabilities for prompts, completion and resources are declared as its
    /// own. `resources/list` is the handler's; `resources/templates/list` is the handler's
    /// with toolprism's template for retained outputs added to the first page;
    /// `resources/read` of a retained output's URI ([`OUTPUT_URI_PREFIX`](crate::OUTPUT_URI_PREFIX)) is toolprism's and
    /// of any other URI the handler's. Its tool methods are never called: tools are the
    /// registry's.
    ///
    /// ```
    /// use toolprism::prelude::*;
    /// use toolprism_mcp::McpServer;
    /// use toolprism_mcp::rmcp::ServerHandler;
    /// use toolprism_mcp::rmcp::model::{ServerCapabilities, ServerConfig};
    ///
    /// /// Prompts, written with rmcp.
    /// struct Prompts;
    ///
    /// impl ServerHandler for Prompts {
    ///     fn get_info(&self) -> ServerConfig {
    ///         ServerConfig::new(ServerCapabilities::builder().enable_prompts().build())
    ///     }
    /// }
    ///
    /// let server = McpServer::new(Registry::builder().build().unwrap()).with_handler(Prompts);
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn with_handler(self, handler: impl ServerHandler) -> Self {
        let host: Arc<dyn HostHandler> = Arc::new(handler);
        self.with_settings(|settings| settings.host = Some(host))
    }

    /// The same server, telling 2026-07-28 clients they may keep its `tools/list` for `ttl`,
    /// shared across users (`CacheScope::Public`) or only by the one who listed it. Without
    /// this, a listing is stale at once and private: always true, whatever the host does with
    /// its registry. A client that listens to `subscriptions/listen` is told of a change
    /// whatever it keeps.
    #[must_use]
    pub fn with_tool_list_caching(self, ttl: Duration, scope: CacheScope) -> Self {
        let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self.with_settings(|settings| settings.tool_list_cache = (ttl, scope))
    }

    /// The same server, keeping the tasks calls become in `store`, each running at most `ttl`
    /// (then stopped, and failed) and its entries kept twice `ttl` from their last change, so
    /// that a result can be read after the task ends. Replicas behind a load balancer share a
    /// store (`ObjectTaskStore`, feature `object-store`), so that any of them answers
    /// `tasks/get`, `tasks/update` and `tasks/cancel` for a task another runs. Without one,
    /// tasks are kept in this process's memory ([`MemoryTaskStore`]) for
    /// [`DEFAULT_TASK_TTL`]. At most [`MAX_RUNNING_TASKS`](crate::MAX_RUNNING_TASKS) run at
    /// once.
    #[must_use]
    pub fn with_task_store(self, store: impl TaskStore, ttl: Duration) -> Self {
        let tasks = Arc::new(Tasks::new(Arc::new(store), ttl));
        self.with_settings(|settings| settings.tasks = tasks)
    }

    /// The same server, its HTTP endpoint ([`serve_http`](Self::serve_http)) an OAuth 2.1
    /// resource server: a request needs a token `authorization` accepts (`401` with where to
    /// get one otherwise), a call the scopes of its tool (`403 insufficient_scope` at the door,
    /// and `INSUFFICIENT_SCOPE` wherever a call runs: nested calls, Code Mode programs and
    /// tasks too), and a listing shows only the tools the caller may call. What a call
    /// retains, and a task it becomes, are the caller's. A tool reads who called
    /// ([`ToolContext::caller`](toolprism::ToolContext::caller)).
    ///
    /// Refused when `authorization` requires a scope of a tool the registry lacks (a mistyped
    /// name would protect nothing): the error names the tools there are.
    #[cfg(feature = "auth")]
    pub fn with_authorization(
        self,
        authorization: crate::auth::authorization::Authorization,
    ) -> Result<Self, crate::AuthSetupError> {
        let authorization = Arc::new(authorization.serving(self.shared.registry.clone())?);
        Ok(self.with_settings(|settings| settings.authorization = Some(authorization)))
    }

    /// The scopes the authorization requires beyond those the tools declare.
    #[cfg_attr(
        not(feature = "auth"),
        expect(clippy::unused_self, reason = "it reads the authorization, a feature")
    )]
    pub(crate) fn scope_rules(&self) -> Option<Arc<toolprism::access::ScopeRules>> {
        #[cfg(feature = "auth")]
        if let Some(auth) = &self.shared.settings.authorization {
            return Some(auth.rules().clone());
        }
        None
    }

    #[cfg(feature = "auth")]
    pub(crate) fn authorization(&self) -> Option<Arc<crate::auth::authorization::Authorization>> {
        self.shared.settings.authorization.clone()
    }

    fn build(registry: Registry, settings: Settings) -> Self {
        let (sender, changes) = watch::channel(registry.snapshot().generation());
        // Called on whichever thread changed the registry: `send_replace` needs no runtime.
        let listener = registry.on_change(move |generation| {
            sender.send_replace(generation);
        });
        let server = Self {
            shared: Arc::new(Shared {
                registry,
                settings,
                lists: Mutex::new(None),
                changes,
                announcer: Arc::default(),
                _listener: listener,
            }),
            session: Session::new(false),
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
            session: Session::new(false),
        }
    }

    /// The same server for one request of stateless HTTP.
    #[cfg(feature = "http-server")]
    pub(crate) fn for_stateless_request(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            session: Session::new(true),
        }
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The tool lists of the registry's current generation, built once per generation.
    pub(super) fn lists(&self) -> Arc<ToolLists> {
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
        let lists = Arc::new(ToolLists::of(&snapshot));
        *cached = Some(lists.clone());
        lists
    }
}
