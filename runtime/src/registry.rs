//! The registry: the tools, checked and compiled once, and the stages around them; it hands
//! out the immutable [`Snapshot`]s that calls are dispatched through.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};

use crate::bound::{BoundLimits, ToolOutputStore};
use crate::call::{Surface, ToolCall};
use crate::outcome::ToolOutcome;
use crate::pipeline::{Approver, PostExecutePolicy, PreExecutePolicy, Snapshot, Stages, Wrapper};
use crate::tool::{CompiledTool, IntoToolDef, RegistrationError, ToolDef, ToolTable, Toolset};

/// A set of tools that calls are dispatched through, with the stages (wrappers, policies)
/// that run around every call.
///
/// Cloning a `Registry` shares it. [`Registry::snapshot`] captures the tools registered at
/// that moment; registering or removing tools later affects later snapshots only.
///
/// ```
/// use toolprism::prelude::*;
/// use serde_json::json;
///
/// /// Greets someone.
/// #[tool]
/// fn greet(#[arg(description = "Who to greet.")] name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = Registry::builder().tool(Greet).build()?;
/// let outcome = registry
///     .dispatch(ToolCall::new("call_1", "greet", json!({"name": "Ada"})), Surface::Direct)
///     .await;
/// assert_eq!(outcome.value().unwrap(), &json!("Hello, Ada!"));
/// assert_eq!(outcome.content(), [ContentBlock::text("Hello, Ada!")]);
/// # Ok::<(), toolprism::RegistrationError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Registry {
    tools: Arc<RwLock<Arc<ToolTable>>>,
    stages: Arc<Stages>,
    listeners: Arc<Listeners>,
}

type Listener = Arc<dyn Fn(u64) + Send + Sync>;

/// Who is told when the registry's tools change.
#[derive(Default)]
struct Listeners {
    next_id: Mutex<u64>,
    all: Mutex<Vec<(u64, Listener)>>,
}

/// Keeps a listener added with [`Registry::on_change`]; dropping it removes the listener.
#[must_use = "the listener is removed when this is dropped"]
pub struct ChangeListener {
    id: u64,
    listeners: Weak<Listeners>,
}

impl Drop for ChangeListener {
    fn drop(&mut self) {
        if let Some(listeners) = self.listeners.upgrade() {
            listeners
                .all
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|(id, _)| *id != self.id);
        }
    }
}

impl fmt::Debug for ChangeListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangeListener")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// Starts building a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The tools registered now, frozen. Two `Arc` clones under a read lock, whatever the
    /// number of tools.
    pub fn snapshot(&self) -> Snapshot {
        let table = self
            .tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Snapshot {
            table,
            stages: self.stages.clone(),
            refusal: None,
        }
    }

    /// Dispatches one call through a fresh snapshot. See [`Snapshot::dispatch`].
    pub fn dispatch(
        &self,
        call: ToolCall,
        surface: Surface,
    ) -> impl Future<Output = ToolOutcome> + Send + 'static {
        let snapshot = self.snapshot();
        async move { snapshot.dispatch(call, surface).await }
    }

    /// Registers one more tool. Its schemas are checked and compiled before the registry is
    /// touched; snapshots taken before this returns do not see it.
    pub fn register(&self, tool: impl IntoToolDef) -> Result<(), RegistrationError> {
        let tool = self.compile(tool.into_tool_def())?;
        let generation = {
            let mut current = self.tools.write().unwrap_or_else(PoisonError::into_inner);
            let mut table = ToolTable::clone(&current);
            table.push(tool)?;
            table.generation += 1;
            let generation = table.generation;
            *current = Arc::new(table);
            generation
        };
        self.changed(generation);
        Ok(())
    }

    /// Removes the tools named in `remove` and registers `add`, as one change: a snapshot sees
    /// all of the old tools or all of the new ones, never some of each, and listeners hear of
    /// it once. When any tool of `add` is refused (its schemas, its state, a name taken by a
    /// tool that stays), nothing changes. For a host that keeps a set of tools in step with
    /// something else — an MCP client re-importing a server's list.
    ///
    /// ```
    /// use serde_json::Value;
    /// use toolprism::prelude::*;
    ///
    /// let echo = |name: &str| {
    ///     ToolDef::builder(name)
    ///         .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
    ///         .build()
    /// };
    /// let registry = Registry::builder().tools([echo("a"), echo("b")]).build().unwrap();
    /// registry.replace(["a", "b"], [echo("c"), echo("d")]).unwrap();
    /// let names = |registry: &Registry| {
    ///     registry.snapshot().definitions().map(|tool| tool.name().to_owned()).collect::<Vec<_>>()
    /// };
    /// assert_eq!(names(&registry), ["c", "d"]);
    /// assert_eq!(registry.snapshot().generation(), 1, "one change");
    /// // Two new tools of one name: refused, and the registry is as it was.
    /// assert!(registry.replace(["c"], [echo("e"), echo("e")]).is_err());
    /// assert_eq!(names(&registry), ["c", "d"]);
    /// assert_eq!(registry.snapshot().generation(), 1);
    /// ```
    pub fn replace<'a>(
        &self,
        remove: impl IntoIterator<Item = &'a str>,
        add: impl IntoIterator<Item = ToolDef>,
    ) -> Result<(), RegistrationError> {
        // Schemas are compiled before the registry is touched, as `register` does.
        let added = add
            .into_iter()
            .map(|def| self.compile(def))
            .collect::<Result<Vec<_>, RegistrationError>>()?;
        let removed: HashSet<&str> = remove.into_iter().collect();
        let generation = {
            let mut current = self.tools.write().unwrap_or_else(PoisonError::into_inner);
            let kept = current
                .tools()
                .iter()
                .filter(|tool| !removed.contains(tool.name()))
                .cloned()
                .collect();
            let mut table = ToolTable::indexed(kept, current.generation + 1);
            for tool in added {
                table.push(tool)?;
            }
            let generation = table.generation;
            *current = Arc::new(table);
            generation
        };
        self.changed(generation);
        Ok(())
    }

    /// A tool's schemas checked and compiled, and the host state it takes found.
    fn compile(&self, def: ToolDef) -> Result<CompiledTool, RegistrationError> {
        let tool = CompiledTool::new(def)?;
        tool.check_state(|id| self.stages.state.contains(id))?;
        Ok(tool)
    }

    /// Calls `listener` with the new [`Snapshot::generation`] after every change to the
    /// registry's tools (a tool registered or removed), until the returned guard is dropped.
    /// It runs on the thread that made the change, after the change is visible to
    /// [`snapshot`](Self::snapshot); a panic in it is contained. An MCP server uses this to
    /// tell its peers the list changed.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    /// use toolprism::prelude::*;
    ///
    /// /// Says hi.
    /// #[tool]
    /// fn hi() -> String { "hi".into() }
    ///
    /// let registry = Registry::builder().build().unwrap();
    /// let seen = Arc::new(AtomicU64::new(0));
    /// let last = seen.clone();
    /// let guard = registry.on_change(move |generation| last.store(generation, Ordering::SeqCst));
    /// registry.register(Hi).unwrap();
    /// assert_eq!(seen.load(Ordering::SeqCst), 1);
    /// assert_eq!(registry.snapshot().generation(), 1);
    /// drop(guard);
    /// registry.remove("hi");
    /// assert_eq!(seen.load(Ordering::SeqCst), 1);
    /// ```
    pub fn on_change(&self, listener: impl Fn(u64) + Send + Sync + 'static) -> ChangeListener {
        let id = {
            let mut next = self
                .listeners
                .next_id
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *next += 1;
            *next
        };
        self.listeners
            .all
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, Arc::new(listener)));
        ChangeListener {
            id,
            listeners: Arc::downgrade(&self.listeners),
        }
    }

    fn changed(&self, generation: u64) {
        // Called outside the lock, so a listener may take a snapshot or add a listener.
        let listeners: Vec<Listener> = self
            .listeners
            .all
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(_, listener)| listener.clone())
            .collect();
        for listener in listeners {
            if let Err(panic) = crate::panic::catch(|| listener(generation)) {
                tracing::warn!(panic, "a registry change listener panicked");
            }
        }
    }

    /// Removes a tool, if there is one of that name. Calls already dispatched through an
    /// earlier snapshot still run it.
    pub fn remove(&self, name: &str) -> bool {
        let generation = {
            let mut current = self.tools.write().unwrap_or_else(PoisonError::into_inner);
            if current.get(name).is_none() {
                return false;
            }
            let tools = current
                .tools()
                .iter()
                .filter(|tool| tool.name() != name)
                .cloned()
                .collect();
            let generation = current.generation + 1;
            *current = Arc::new(ToolTable::indexed(tools, generation));
            generation
        };
        self.changed(generation);
        true
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("snapshot", &self.snapshot())
            .finish_non_exhaustive()
    }
}

/// Collects tool definitions and the stages around them, then checks and compiles it all in
/// [`build`](Self::build).
#[derive(Default)]
#[must_use = "a builder does nothing until `build()`"]
pub struct RegistryBuilder {
    defs: Vec<ToolDef>,
    stages: Stages,
}

impl RegistryBuilder {
    /// Adds a tool: a [`ToolDef`] or the struct `#[tool]` generates.
    pub fn tool(mut self, tool: impl IntoToolDef) -> Self {
        self.defs.push(tool.into_tool_def());
        self
    }

    /// Adds several tool definitions.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.defs.extend(tools);
        self
    }

    /// Adds every tool of a `#[toolset]` type, capturing `state` for them all.
    pub fn toolset<S: Toolset>(self, state: S) -> Self {
        self.toolset_shared(Arc::new(state))
    }

    /// Adds every tool of a `#[toolset]` type whose state the host keeps a handle to as well.
    pub fn toolset_shared<S: Toolset>(self, state: Arc<S>) -> Self {
        self.tools(state.tool_defs())
    }

    /// Adds host state every tool can reach: a `State<T>` parameter of a `#[tool]` function,
    /// or [`ToolContext::state`](crate::ToolContext::state). One value per type; adding a
    /// second of the same type replaces the first.
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.state_shared(Arc::new(value))
    }

    /// Adds host state the host keeps a handle to as well.
    pub fn state_shared<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.stages.state.insert(value);
        self
    }

    /// Adds an around-execute wrapper. The first added is the outermost.
    pub fn wrap(mut self, wrapper: impl Wrapper) -> Self {
        self.stages.wrappers.push(Box::new(wrapper));
        self
    }

    /// Adds a pre-execute policy. Policies run in the order added; the first denial wins.
    pub fn pre_execute(mut self, policy: impl PreExecutePolicy) -> Self {
        self.stages.pre.push(Box::new(policy));
        self
    }

    /// Sets the approver that answers a policy's "ask".
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.stages.approver = Some(Box::new(approver));
        self
    }

    /// Bounds the model text of direct calls by these limits (default: 2,000 lines, 50 KiB).
    /// A tool's own limits ([`ToolDef::with_limits`]) take precedence.
    pub fn limits(mut self, limits: BoundLimits) -> Self {
        self.stages.limits = limits;
        self
    }

    /// Drops a body and fails its call with `TOOL_TIMEOUT` after this long, for every tool
    /// that says nothing of its own ([`ToolDef::with_timeout`]); nested calls included.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolprism::prelude::*;
    ///
    /// /// Never answers.
    /// #[tool]
    /// async fn hang() -> u32 { std::future::pending().await }
    ///
    /// let registry = Registry::builder().tool(Hang).default_timeout(Duration::from_millis(20)).build().unwrap();
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let outcome = registry.dispatch(ToolCall::new("c1", "hang", serde_json::json!({})), Surface::Direct).await;
    /// assert_eq!(outcome.error().unwrap().code(), Some("TOOL_TIMEOUT"));
    /// # });
    /// ```
    pub fn default_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.stages.default_timeout = Some(timeout);
        self
    }

    /// Retains the full text of bounded outputs in this store (default: an [`FsOutputStore`](crate::bound::FsOutputStore)
    /// in the user's cache directory).
    pub fn output_store(mut self, store: impl ToolOutputStore) -> Self {
        self.stages.store = Box::new(store);
        self
    }

    /// Adds a post-execute policy. Policies run in the order added, each on the outcome the
    /// previous one left.
    pub fn post_execute(mut self, policy: impl PostExecutePolicy) -> Self {
        self.stages.post.push(Box::new(policy));
        self
    }

    /// Checks every name and schema and compiles the validators. Fails on the first tool
    /// that is refused, naming it.
    pub fn build(self) -> Result<Registry, RegistrationError> {
        let mut table = ToolTable::default();
        for def in self.defs {
            let tool = CompiledTool::new(def)?;
            tool.check_state(|id| self.stages.state.contains(id))?;
            table.push(tool)?;
        }
        Ok(Registry {
            tools: Arc::new(RwLock::new(Arc::new(table))),
            stages: Arc::new(self.stages),
            listeners: Arc::default(),
        })
    }
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field(
                "tools",
                &self.defs.iter().map(ToolDef::name).collect::<Vec<_>>(),
            )
            .field("wrappers", &self.stages.wrappers.len())
            .field("pre_execute", &self.stages.pre.len())
            .field("post_execute", &self.stages.post.len())
            .field("state", &self.stages.state.len())
            .finish()
    }
}
