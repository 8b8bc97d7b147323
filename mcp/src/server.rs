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
//! - A body's requests for input go to the client (the module `input`); a call may become a
//!   task the client polls (the module `tasks`); resources, prompts and completion go to the
//!   host's rmcp handler, if it gave one (the module `host`).
//! - A change to the registry is announced: `notifications/tools/list_changed` to sessions of
//!   2025-11-25, the `subscriptions/listen` stream on 2026-07-28.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::Poll;
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestMethod,
    CompleteRequestParams, CompleteResult, CreateTaskResult, GetPromptRequestMethod,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation,
    InputRequiredResult, JsonObject, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestMetaObject, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig, SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter, Tool,
    ToolAnnotations, UnsubscribeRequestMethod, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext,
};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};
use toolprism::context::Progress;
use toolprism::error::codes;
use toolprism::lower::description_with_examples;
use toolprism::pipeline::DispatchOptions;
use toolprism::tool::{IconTheme, TaskSupport, ToolAbout};
use toolprism::{BoxFuture, ChangeListener, Registry, SmolStr, Surface, ToolCall, ToolOutcome};

use crate::host::{self, HostHandler};
use crate::input::{self, RequestStates};
use crate::peer::{McpPeer, Session, TaskSlot};
use crate::progress::ProgressQueue;
use crate::resources::{OUTPUT_URI_PREFIX, handle_of, output_uri};
use crate::task_store::{MemoryTaskStore, TaskStore};
use crate::tasks::{self, DEFAULT_TASK_TTL, Tasks};
use crate::wire::result::to_result;
use crate::wire::schema::{as_object, legacy_form, wrap};
use crate::wire::text::quoted_for_error;

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

/// Why a key cannot seal request states (it is shorter than 32 bytes).
#[derive(Debug, thiserror::Error)]
#[error("request state key: {0}")]
pub struct RequestStateKeyError(String);

struct Shared {
    registry: Registry,
    settings: Settings,
    lists: Mutex<Option<Arc<ToolLists>>>,
    changes: watch::Receiver<u64>,
    _listener: ChangeListener,
}

/// What the host chose for a server; the `with_` methods change one of them.
#[derive(Clone)]
struct Settings {
    implementation: Implementation,
    instructions: Option<String>,
    /// Seals and opens the states of input-required results.
    states: Arc<RequestStates>,
    /// Serves resources, prompts and completion beside the tools.
    host: Option<Arc<dyn HostHandler>>,
    /// The caching hints of `tools/list` on 2026-07-28.
    tool_list_cache: (u64, CacheScope),
    /// Where calls that became tasks are kept.
    tasks: Arc<Tasks>,
    /// What the HTTP endpoint asks of a request.
    #[cfg(feature = "auth")]
    authorization: Option<Arc<crate::auth::Authorization>>,
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
            },
        )
    }

    /// The same server with one setting changed.
    fn with_settings(self, change: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = self.shared.settings.clone();
        change(&mut settings);
        Self::build(self.shared.registry.clone(), settings)
    }

    /// The same server, under this name and version.
    #[must_use]
    pub fn with_implementation(self, name: &str, version: &str) -> Self {
        self.with_settings(|settings| settings.implementation = Implementation::new(name, version))
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
    /// `resources/read` of a retained output's URI ([`OUTPUT_URI_PREFIX`]) is toolprism's and
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
    /// get one otherwise), a call the scopes of its tool (`403 insufficient_scope`), and a
    /// listing shows only the tools the caller may call. A tool reads who called
    /// (`cx.extension::<Caller>()`).
    #[cfg(feature = "auth")]
    #[must_use]
    pub fn with_authorization(self, authorization: crate::auth::Authorization) -> Self {
        let authorization = Arc::new(authorization.serving(self.shared.registry.clone()));
        self.with_settings(|settings| settings.authorization = Some(authorization))
    }

    #[cfg(feature = "auth")]
    pub(crate) fn authorization(&self) -> Option<Arc<crate::auth::Authorization>> {
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
        let current = is_current(&context.meta, &context.peer);
        let takes_tasks = takes_tasks(&context.meta, &context.peer, current);
        let task_support = tool.definition().about().task;
        if task_support == TaskSupport::Required && !takes_tasks {
            return Err(tasks::tasks_required());
        }
        let wrapped = !tool.definition().output_is_object() && !current;
        let args = Value::Object(request.arguments.unwrap_or_default());
        let id = call_id(&context.id);
        // On 2026-07-28 a body that asks for input ends the round; its next state is bound to
        // these arguments, and a retry's answers are opened against them before it runs.
        let (kept_args, answers) = if current {
            let answers = self.answers_of(
                &request.name,
                &args,
                request.request_state.as_deref(),
                request.input_responses,
            )?;
            (Some(args.clone()), answers)
        } else {
            (None, BTreeMap::new())
        };

        // The request's peer is moved, not cloned: a clone is some ten reference counts to
        // raise and lower again on every call.
        #[cfg(feature = "auth")]
        let caller = caller_of(&context);
        let RequestContext { ct, meta, peer, .. } = context;
        let progress_token = meta.get_progress_token();
        let client = Arc::new(McpPeer {
            peer,
            session: self.session.clone(),
            progress: ProgressQueue::default(),
            meta,
            current,
            answers: Mutex::new(answers),
            answerer: OnceLock::new(),
            task: TaskSlot::default(),
        });
        let mut options = DispatchOptions::default()
            .shared_extension(client.clone())
            .shared_answerer(client.clone());
        #[cfg(feature = "auth")]
        if let Some(caller) = caller {
            options = options.shared_extension(caller);
        }
        // Progress is forwarded by this task, between polls of the dispatch: no task is spawned
        // per call. A call that may become a task keeps its reports without a token too: they
        // become the task's status message.
        let mut progress = None;
        if progress_token.is_some() || takes_tasks {
            options = options.shared_progress(client.clone());
        }
        if let Some(token) = progress_token {
            progress = Some((token, &client.progress));
        }
        let round = Round {
            name: &request.name,
            args: kept_args.as_ref(),
            wrapped,
        };

        if takes_tasks {
            // The body may become a task (from its start, if the tool says so): the dispatch
            // is boxed and owns its snapshot, so that it can run on after this request.
            let detached = Arc::new(Notify::new());
            let signal = self.detach_signal(&client, &detached);
            if task_support != TaskSupport::Never
                && !signal()
                && task_support == TaskSupport::Required
            {
                return Err(tasks::no_room());
            }
            let options = options.detachable(signal);
            let call = ToolCall::new(id, request.name.clone(), args);
            let mut dispatch: BoxFuture<'static, ToolOutcome> =
                Box::pin(
                    async move { snapshot.dispatch_with(call, Surface::Direct, options).await },
                );
            return match drive(
                dispatch.as_mut(),
                &ct,
                progress.as_ref(),
                &client,
                Some(&detached),
            )
            .await
            {
                Driven::Ended(outcome) => self.respond(&client, outcome, &round),
                Driven::Cancelled => Err(cancelled_by_client()),
                Driven::Detached => {
                    self.run_as_task(&client, dispatch, progress.as_ref(), wrapped)
                        .await
                }
            };
        }
        let mut dispatch = std::pin::pin!(tool.dispatch(id, args, Surface::Direct, options));
        match drive(dispatch.as_mut(), &ct, progress.as_ref(), &client, None).await {
            Driven::Ended(outcome) => self.respond(&client, outcome, &round),
            Driven::Cancelled | Driven::Detached => Err(cancelled_by_client()),
        }
    }

    /// The answers a 2026-07-28 retry carries (none for a first round).
    fn answers_of(
        &self,
        tool: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<BTreeMap<String, Value>>,
    ) -> Result<BTreeMap<String, Value>, ErrorData> {
        if state.is_none() && responses.is_none() {
            return Ok(BTreeMap::new());
        }
        input::open_answers(&self.shared.settings.states, tool, args, state, responses)
    }

    /// What a call that ended answers: its result, the next round of input it needs
    /// (2026-07-28), or the protocol error its failure stands for.
    fn respond(
        &self,
        client: &McpPeer,
        outcome: ToolOutcome,
        round: &Round<'_>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(answerer) = client.answerer.get() {
            let code = outcome.error().and_then(|error| error.code());
            if code == Some(codes::INPUT_UNAVAILABLE)
                && let Some(missing) = answerer.missing_capability()
            {
                return Err(missing);
            }
            // An answer of the wrong shape is the client's protocol error, not the tool's.
            if client.current
                && code == Some(codes::INVALID_INPUT_ANSWER)
                && let Some(error) = outcome.error()
            {
                return Err(ErrorData::invalid_params(error.message.clone(), None));
            }
            if let Some(args) = round.args
                && let Some((requests, state)) =
                    answerer.next_round(&self.shared.settings.states, round.name, args)?
            {
                return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                    Some(requests),
                    Some(state),
                )));
            }
        }
        Ok(CallToolResponse::Complete(to_result(
            outcome,
            round.wrapped,
        )))
    }

    /// What a body calls to detach: it takes room for a task (false if there is none) and
    /// wakes the request's driver.
    fn detach_signal(
        &self,
        client: &Arc<McpPeer>,
        detached: &Arc<Notify>,
    ) -> impl Fn() -> bool + Send + Sync + 'static {
        let (client, detached) = (client.clone(), detached.clone());
        let tasks = self.shared.settings.tasks.clone();
        move || {
            // A call detaches once, and only while the server has room for a task.
            let mut room = client
                .task
                .room
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if room.is_none() {
                let Some(reserved) = tasks.reserve() else {
                    return false;
                };
                *room = Some(reserved);
                client.task.detached.store(true, Ordering::Release);
                detached.notify_one();
            }
            true
        }
    }

    /// Answers the request with a new task and runs the rest of the call on it. What the body
    /// reported so far reaches the client before the task's id.
    async fn run_as_task(
        &self,
        client: &Arc<McpPeer>,
        dispatch: BoxFuture<'static, ToolOutcome>,
        progress: Option<&ProgressStream<'_>>,
        wrapped: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        if progress.is_some_and(|(_, queue)| queue.has_reports()) {
            Box::pin(send_progress(&client.peer, progress)).await;
        }
        let told = (!self.session.stateless).then(|| client.peer.clone());
        let running = self.shared.settings.tasks.create(told).await?;
        client.task.running.send_replace(Some(running.clone()));
        let created = CreateTaskResult::new(running.task());
        tokio::spawn(tasks::run(running, dispatch, client.clone(), wrapped));
        Ok(CallToolResponse::Task(created))
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
pub(crate) type ProgressStream<'a> = (rmcp::model::ProgressToken, &'a ProgressQueue<Progress>);

/// The request a call answers, for what it answers when it ends.
struct Round<'a> {
    name: &'a str,
    /// The arguments a 2026-07-28 round's state is bound to.
    args: Option<&'a Value>,
    /// Whether a 2025-11-25 client reads the value wrapped in an object.
    wrapped: bool,
}

/// How driving a dispatch for its request ended.
enum Driven {
    Ended(ToolOutcome),
    Cancelled,
    /// The body asked to run on as a task.
    Detached,
}

/// Polls a dispatch to its end, sending its progress as it comes, unless the client cancels
/// the request or (with `detached`) the body asks to run on as a task.
async fn drive<F: Future<Output = ToolOutcome> + ?Sized>(
    mut dispatch: std::pin::Pin<&mut F>,
    ct: &tokio_util::sync::CancellationToken,
    progress: Option<&ProgressStream<'_>>,
    client: &McpPeer,
    detached: Option<&Notify>,
) -> Driven {
    if let Some(detached) = detached
        && client.task.detached.load(Ordering::Acquire)
    {
        detached.notified().await;
        return Driven::Detached;
    }
    // A call that ends on its first poll (most do) never makes the futures that wait for
    // cancellation or progress.
    let first = std::future::poll_fn(|cx| Poll::Ready(dispatch.as_mut().poll(cx))).await;
    let outcome = match first {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => loop {
            tokio::select! {
                biased;
                outcome = &mut dispatch => break outcome,
                () = ct.cancelled() => return Driven::Cancelled,
                () = async {
                    match detached {
                        Some(detached) => detached.notified().await,
                        None => std::future::pending().await,
                    }
                } => return Driven::Detached,
                () = reports_ready(progress) => {
                    Box::pin(send_progress(&client.peer, progress)).await;
                }
            }
        },
    };
    // Every report reaches the client before the result does. (Sending is boxed, here and
    // above: most calls send none, and the future of one carried inline would make every
    // call's task larger to spawn.)
    if progress.is_some_and(|(_, queue)| queue.has_reports()) {
        Box::pin(send_progress(&client.peer, progress)).await;
    }
    Driven::Ended(outcome)
}

impl McpServer {
    /// The tools of a listing the request's caller may call: all of them, unless the endpoint
    /// is authorized and the caller lacks a tool's scopes.
    #[cfg_attr(
        not(feature = "auth"),
        expect(clippy::unused_self, reason = "it reads the authorization, a feature")
    )]
    fn callable(&self, tools: &[Tool], context: &RequestContext<RoleServer>) -> Vec<Tool> {
        #[cfg(feature = "auth")]
        if let (Some(auth), Some(caller)) = (self.authorization(), caller_of(context)) {
            return tools
                .iter()
                .filter(|tool| auth.missing_scopes(&tool.name, &caller).is_empty())
                .cloned()
                .collect();
        }
        let _ = context;
        tools.to_vec()
    }
}

/// Who made an HTTP request, as the authorization in front of the endpoint found.
#[cfg(feature = "auth")]
fn caller_of(context: &RequestContext<RoleServer>) -> Option<Arc<crate::auth::Caller>> {
    context
        .extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<Arc<crate::auth::Caller>>()
        .cloned()
}

fn cancelled_by_client() -> ErrorData {
    // Dropping the dispatch drops the body where it stands.
    ErrorData::internal_error("the call was cancelled by the client", None)
}

/// Whether the client takes tasks: it declared the extension in this request's `_meta`
/// (2026-07-28) or when it initialized (2025-11-25).
fn takes_tasks(
    meta: &RequestMetaObject,
    peer: &rmcp::service::Peer<RoleServer>,
    current: bool,
) -> bool {
    if current {
        meta.client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
    } else {
        peer.peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks())
    }
}

/// Ready when a report waits to be sent (never, without a progress token).
pub(crate) async fn reports_ready(progress: Option<&ProgressStream<'_>>) {
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

/// How long a client may keep a retained output it read: what a handle names never changes.
const RETAINED_OUTPUT_TTL_MS: u64 = 3_600_000;

/// `-32602` naming the URI, as 2026-07-28 asks of an unknown resource.
fn resource_not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource at {}", quoted_for_error(uri)),
        Some(json!({ "uri": uri })),
    )
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

impl ServerHandler for McpServer {
    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    fn get_info(&self) -> ServerConfig {
        let settings = &self.shared.settings;
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_logging()
            .enable_tasks()
            .build();
        if let Some(host) = &settings.host {
            capabilities = host::merged(capabilities, host.capabilities());
        }
        let mut config = ServerConfig::new(capabilities);
        config.server_info = settings.implementation.clone();
        config.instructions.clone_from(&settings.instructions);
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
        let current = is_current(&context.meta, &context.peer);
        let tools = self.callable(
            if current {
                &lists.current
            } else {
                &lists.legacy
            },
            &context,
        );
        if !current {
            return Ok(ListToolsResult::with_all_items(tools));
        }
        let (ttl, scope) = self.shared.settings.tool_list_cache;
        let mut result = ListToolsResult::with_all_items(tools);
        result.ttl_ms = Some(ttl);
        result.cache_scope = Some(scope);
        Ok(result)
    }

    /// The tool a request names, for the transport to check its `Mcp-Param-*` headers
    /// against the arguments (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.lists()
            .current
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
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
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // Retained outputs belong to the calls that made them: they are read by the URI a
        // result names, never listed to whoever asks.
        match &self.shared.settings.host {
            Some(host) => host.list_resources(request, context).await,
            None => Ok(ListResourcesResult::default()),
        }
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let first_page = request.as_ref().is_none_or(|page| page.cursor.is_none());
        let mut result = match &self.shared.settings.host {
            Some(host) => host.list_resource_templates(request, context).await?,
            None => ListResourceTemplatesResult::default(),
        };
        if first_page {
            let template =
                ResourceTemplate::new(format!("{OUTPUT_URI_PREFIX}{{handle}}"), "tool-output")
                    .with_description(
                        "The full text of a tool result that was too long to show in full.",
                    )
                    .with_mime_type("text/plain");
            result.resource_templates.push(template);
        }
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(handle) = handle_of(&request.uri) else {
            return match &self.shared.settings.host {
                Some(host) => host.read_resource(request, context).await,
                None => Err(resource_not_found(&request.uri)),
            };
        };
        match self.shared.registry.snapshot().read_retained(handle).await {
            Ok(Some(text)) => {
                let mut result =
                    ReadResourceResult::new(vec![ResourceContents::text(text, output_uri(handle))]);
                // What a handle names never changes, and belongs to whoever made the call.
                result.ttl_ms = Some(RETAINED_OUTPUT_TTL_MS);
                result.cache_scope = Some(CacheScope::Private);
                Ok(ReadResourceResponse::Complete(result))
            }
            Ok(None) => Err(resource_not_found(&request.uri)),
            Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.subscribe(request, context).await,
            None => Err(ErrorData::method_not_found::<SubscribeRequestMethod>()),
        }
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.unsubscribe(request, context).await,
            None => Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>()),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.list_prompts(request, context).await,
            None => Err(ErrorData::method_not_found::<ListPromptsRequestMethod>()),
        }
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.get_prompt(request, context).await,
            None => Err(ErrorData::method_not_found::<GetPromptRequestMethod>()),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.complete(request, context).await,
            None => Err(ErrorData::method_not_found::<CompleteRequestMethod>()),
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.shared.settings.tasks.get(&request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = &self.shared.settings.tasks;
        tasks
            .update(&request.task_id, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.settings.tasks.cancel(&request.task_id).await
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
