//! What a tool body can reach during a call: which call it is, the host's shared state,
//! a progress sink, and the other tools of the same snapshot (nested dispatch).

use std::any::{Any, TypeId};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::BoxFuture;
use crate::ask::{AnswererSlot, Elicited, InputKind, InputRequest, Root, Sampled, SamplingRequest};
use crate::call::{Surface, ToolCall};
use crate::error::ToolError;
use crate::outcome::ToolOutcome;
use crate::schema::Plan;

/// How deep nested dispatch may go: a tool calling a tool calling a tool… Past it, the call
/// fails with [`FailureKind::NestingTooDeep`](crate::error::FailureKind::NestingTooDeep), so a
/// tool that calls itself stops instead of exhausting the stack or the budget.
pub const MAX_NESTING: usize = 8;

/// What a tool body may know and reach during its call: the call id, the tool's name and the
/// surface; the host's state; a progress sink; and the other tools of the same snapshot.
///
/// A `#[tool]` function takes it as an optional `&ToolContext` parameter. Cloning it is an
/// `Arc` clone.
///
/// ```
/// use toolprism::prelude::*;
///
/// /// Says which call this is.
/// #[tool]
/// fn whoami(cx: &ToolContext) -> String {
///     format!("{} called as {}", cx.tool_name(), cx.call_id())
/// }
/// ```
#[derive(Clone)]
pub struct ToolContext {
    scope: Arc<dyn CallScope>,
}

/// The call a context belongs to, as the pipeline runs it. Behind a trait so that this module
/// does not depend on how the pipeline is built.
pub(crate) trait CallScope: Send + Sync + 'static {
    fn call_id(&self) -> &str;
    fn tool_name(&self) -> &str;
    fn surface(&self) -> Surface;
    fn state(&self) -> &StateMap;
    fn extensions(&self) -> &StateMap;
    fn report(&self, progress: &Progress);
    fn nested(self: Arc<Self>, call: ToolCall) -> BoxFuture<'static, ToolOutcome>;
    fn tool_names(&self) -> Box<dyn Iterator<Item = &str> + '_>;
    /// What a nested call of `name` with `arguments` does, as its tool declares it; `None` for
    /// a tool the snapshot does not have.
    fn effect_of(
        &self,
        name: &str,
        arguments: &serde_json::Value,
    ) -> Option<crate::effects::Effect>;
    /// The call's snapshot's tools, erased: this module sits below the one that defines them
    /// (tool search downcasts it).
    fn tools(&self) -> Arc<dyn std::any::Any + Send + Sync>;
    /// The plan of the called tool's output schema, if it has one.
    fn output_plan(&self) -> Option<&Plan>;
}

impl ToolContext {
    pub(crate) fn new(scope: Arc<dyn CallScope>) -> Self {
        Self { scope }
    }

    pub(crate) fn output_plan(&self) -> Option<&Plan> {
        self.scope.output_plan()
    }

    /// The call's snapshot's tools (a `ToolTable`), erased.
    pub(crate) fn tools(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.scope.tools()
    }

    /// The id of this call.
    pub fn call_id(&self) -> &str {
        self.scope.call_id()
    }

    /// The registered name of the tool being called.
    pub fn tool_name(&self) -> &str {
        self.scope.tool_name()
    }

    /// Whether a model or a program made this call.
    pub fn surface(&self) -> Surface {
        self.scope.surface()
    }

    /// The host's state of type `T`, registered with
    /// [`RegistryBuilder::state`](crate::RegistryBuilder::state); `None` if there is none.
    ///
    /// A `#[tool]` function can also take it as a parameter, `State<T>`: the tool is then
    /// refused at registration if the registry has no such state.
    ///
    /// ```
    /// use std::path::PathBuf;
    /// use toolprism::prelude::*;
    ///
    /// struct Workspace { root: PathBuf }
    ///
    /// /// Says where the workspace is.
    /// #[tool]
    /// fn root(cx: &ToolContext) -> Result<String, ToolError> {
    ///     let workspace = cx.state::<Workspace>().ok_or_else(|| ToolError::new("no workspace"))?;
    ///     Ok(workspace.root.display().to_string())
    /// }
    ///
    /// let registry = Registry::builder()
    ///     .state(Workspace { root: "/srv/project".into() })
    ///     .tool(Root)
    ///     .build()
    ///     .unwrap();
    /// # let outcome = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(
    /// #     registry.dispatch(ToolCall::new("c", "root", serde_json::json!({})), Surface::Direct));
    /// # assert_eq!(outcome.value().unwrap(), &serde_json::json!("/srv/project"));
    /// ```
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.scope.state().get::<T>()
    }

    /// A value the host attached to this dispatch
    /// ([`DispatchOptions::extension`](crate::pipeline::DispatchOptions::extension)), by type:
    /// what only the host knows about this one request — the MCP peer that sent it, say, for
    /// a tool that asks that peer something. Nested calls see their caller's. `None` when the
    /// host attached none of this type; a tool should then do without.
    ///
    /// ```
    /// use toolprism::pipeline::DispatchOptions;
    /// use toolprism::prelude::*;
    ///
    /// struct Caller(String);
    ///
    /// /// Says who asked.
    /// #[tool]
    /// fn whoami(cx: &ToolContext) -> String {
    ///     cx.extension::<Caller>().map_or_else(|| "nobody".to_owned(), |caller| caller.0.clone())
    /// }
    ///
    /// let registry = Registry::builder().tool(Whoami).build().unwrap();
    /// let options = DispatchOptions::default().extension(Caller("ada".into()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let call = ToolCall::new("c1", "whoami", serde_json::json!({}));
    /// let outcome = registry.snapshot().dispatch_with(call, Surface::Direct, options).await;
    /// assert_eq!(outcome.value().unwrap(), &serde_json::json!("ada"));
    /// # });
    /// ```
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.scope.extensions().get::<T>()
    }

    /// Who the call runs for, when the host authenticated them
    /// ([`DispatchOptions::caller`](crate::pipeline::DispatchOptions::caller)); `None` for the
    /// host's own call. Nested calls run for the same caller.
    pub fn caller(&self) -> Option<Arc<crate::access::Caller>> {
        self.extension::<crate::access::Caller>()
    }

    /// Whether this call's answerer takes requests of this kind: whether asking for a form,
    /// a completion or the roots can get an answer here.
    pub fn can_ask(&self, kind: InputKind) -> bool {
        self.extension::<AnswererSlot>()
            .is_some_and(|answerer| answerer.0.can_answer(kind))
    }

    /// Asks for input, as MCP words it (see [`ask`](crate::ask)), and returns the answer's
    /// JSON as the answerer gave it, unchecked. `key` names the request within the call: a
    /// body asks each key once per run, and on MCP 2026-07-28 runs again with the answers
    /// (so everything before an ask must be safe to do twice). Fails with
    /// `INPUT_UNAVAILABLE` when nobody can answer, `INPUT_REQUIRED` when the answer comes on
    /// the next round.
    pub async fn ask(&self, key: &str, request: &InputRequest) -> Result<Value, ToolError> {
        crate::ask::ask(self.extension::<AnswererSlot>(), key, request).await
    }

    /// Asks the person behind the call to fill in a form for `T` (a struct of strings,
    /// numbers, booleans and enums): the accepted content is checked against `T`'s schema
    /// and deserialized. Fails with `INVALID_INPUT_ANSWER` when the content does not fit.
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        key: &str,
        message: &str,
    ) -> Result<Elicited<T>, ToolError> {
        let schema = crate::ask::form_schema_for::<T>().map_err(|why| {
            ToolError::new(format!(
                "`{}` cannot be asked as a form: {why}",
                std::any::type_name::<T>()
            ))
        })?;
        let elicited = self.elicit_with(key, message, schema).await?;
        crate::ask::typed(key, elicited)
    }

    /// [`elicit`](Self::elicit) with a form schema of the body's own.
    pub async fn elicit_with(
        &self,
        key: &str,
        message: &str,
        schema: Value,
    ) -> Result<Elicited<Value>, ToolError> {
        let request = InputRequest::elicit(message, schema);
        let answer = self.ask(key, &request).await?;
        crate::ask::read_elicited(key, &answer, &request.params()["requestedSchema"])
    }

    /// Asks the client's model for a completion.
    pub async fn sample(&self, key: &str, request: &SamplingRequest) -> Result<Sampled, ToolError> {
        let answer = self.ask(key, &InputRequest::sample(request)).await?;
        crate::ask::read_sampled(key, &answer)
    }

    /// Asks the client for its roots.
    pub async fn roots(&self, key: &str) -> Result<Vec<Root>, ToolError> {
        let answer = self.ask(key, &InputRequest::roots()).await?;
        crate::ask::read_roots(key, &answer)
    }

    /// Asks to run on after the request that made this call is answered: an MCP server whose
    /// client takes tasks answers the request now with a task, which the client polls, and the
    /// body goes on. True if the host will; false where it runs no tasks (a direct dispatch,
    /// the command line, a client that did not opt in), and the call then goes on as it was.
    /// What the body asks before detaching is asked on the request; what it asks after, on
    /// the task. A tool declared `task = "optional"` or `"required"` is detached before its
    /// body starts.
    pub fn detach(&self) -> bool {
        self.extension::<DetachSlot>()
            .is_some_and(|slot| (slot.0)())
    }

    /// Reports progress to the sink the host gave this dispatch
    /// ([`DispatchOptions::progress`](crate::pipeline::DispatchOptions::progress)); without one,
    /// this does nothing. It never blocks and never fails: a report that is not finite, or a
    /// sink that panics, is dropped.
    ///
    /// ```
    /// use toolprism::prelude::*;
    ///
    /// /// Counts to three, slowly.
    /// #[tool]
    /// async fn count(cx: &ToolContext) -> u32 {
    ///     for step in 1..=3 {
    ///         cx.progress(f64::from(step), Some(3.0), "counting");
    ///     }
    ///     3
    /// }
    /// ```
    pub fn progress(&self, done: f64, total: Option<f64>, message: &str) {
        if !done.is_finite() || total.is_some_and(|total| !total.is_finite()) {
            return;
        }
        self.scope.report(&Progress {
            done,
            total,
            message: (!message.is_empty()).then(|| message.to_owned()),
        });
    }

    /// Dispatches another tool of the same snapshot, as a program would: on the nested
    /// surface, so the outcome carries the value and no presentation metadata, no card and no
    /// bounding. Pre- and post-execute policies apply as to any call; past [`MAX_NESTING`]
    /// levels the call fails with `NESTING_TOO_DEEP`.
    ///
    /// ```
    /// use toolprism::prelude::*;
    /// use serde_json::json;
    ///
    /// /// Adds.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// /// Doubles, by asking `add`.
    /// #[tool]
    /// async fn double(#[arg] n: i64, cx: &ToolContext) -> Result<i64, ToolError> {
    ///     let outcome = cx.dispatch(ToolCall::new("inner", "add", json!({"a": n, "b": n}))).await;
    ///     match outcome.value() {
    ///         Some(value) => Ok(value.as_i64().unwrap_or_default()),
    ///         None => Err(ToolError::new(outcome.error().map(|e| e.message.clone()).unwrap_or_default())),
    ///     }
    /// }
    ///
    /// let registry = Registry::builder().tool(Add).tool(Double).build().unwrap();
    /// # let outcome = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(
    /// #     registry.dispatch(ToolCall::new("c", "double", json!({"n": 21})), Surface::Direct));
    /// # assert_eq!(outcome.value().unwrap(), &json!(42));
    /// ```
    pub fn dispatch(&self, call: ToolCall) -> BoxFuture<'static, ToolOutcome> {
        self.scope.clone().nested(call)
    }

    /// The names of the tools nested dispatch can reach (those of the call's snapshot that
    /// programs may call, and whose scopes the caller holds), in registration order: what a
    /// program host such as Code Mode offers a program.
    ///
    /// ```
    /// use toolprism::prelude::*;
    ///
    /// /// Names the tools it can call.
    /// #[tool]
    /// fn peers(cx: &ToolContext) -> Vec<String> {
    ///     cx.tool_names().map(str::to_owned).collect()
    /// }
    /// ```
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.scope.tool_names()
    }

    /// A handle for nested dispatch that outlives the borrow of the context: for a program that
    /// runs tools from a task of its own (Code Mode). It keeps the call's snapshot alive.
    pub fn dispatcher(&self) -> NestedDispatcher {
        NestedDispatcher {
            scope: self.scope.clone(),
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id())
            .field("tool_name", &self.tool_name())
            .field("surface", &self.surface())
            .finish_non_exhaustive()
    }
}

/// Dispatches tools of one call's snapshot on the nested surface; see
/// [`ToolContext::dispatch`]. Cheap to clone.
#[derive(Clone)]
pub struct NestedDispatcher {
    scope: Arc<dyn CallScope>,
}

impl NestedDispatcher {
    /// Dispatches one call, as [`ToolContext::dispatch`] does.
    pub fn dispatch(&self, call: ToolCall) -> BoxFuture<'static, ToolOutcome> {
        self.scope.clone().nested(call)
    }

    /// What a call of `name` with `arguments` would do, as its tool declares it
    /// ([`effects`](crate::effects)): for ordering calls made at once. `None` for a tool the
    /// snapshot does not have (its call fails at once, touching nothing).
    pub fn effect_of(
        &self,
        name: &str,
        arguments: &serde_json::Value,
    ) -> Option<crate::effects::Effect> {
        self.scope.effect_of(name, arguments)
    }
}

impl fmt::Debug for NestedDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NestedDispatcher")
            .field("parent", &self.scope.call_id())
            .finish_non_exhaustive()
    }
}

/// One progress report of a running call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How much is done (finite).
    pub done: f64,
    /// Out of how much, when known (finite).
    pub total: Option<f64>,
    /// What is going on, when the body said.
    pub message: Option<String>,
}

/// Receives the progress reports of one dispatch: the MCP bridge turns them into progress
/// notifications, a command line into a progress bar. It is called on the body's own task, so
/// it must not block: hand the report to a channel, an atomic, a UI queue.
///
/// Any `Fn(&Progress)` is one.
pub trait ProgressSink: Send + Sync + 'static {
    /// Takes one report.
    fn report(&self, progress: &Progress);
}

impl<F: Fn(&Progress) + Send + Sync + 'static> ProgressSink for F {
    fn report(&self, progress: &Progress) {
        self(progress);
    }
}

/// Host state of type `T`, for a `#[tool]` parameter: `State(workspace): State<Workspace>`.
/// The tool is refused at registration when the registry has no state of that type.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use toolprism::context::State;
/// use toolprism::prelude::*;
///
/// struct Hits(AtomicU64);
///
/// /// Counts a hit.
/// #[tool]
/// fn hit(State(hits): State<Hits>) -> u64 {
///     hits.0.fetch_add(1, Ordering::Relaxed) + 1
/// }
///
/// let registry = Registry::builder().state(Hits(AtomicU64::new(0))).tool(Hit).build().unwrap();
/// # let _ = registry;
/// assert!(Registry::builder().tool(Hit).build().is_err(), "no `Hits` state: refused");
/// ```
#[derive(Debug)]
pub struct State<T>(pub Arc<T>);

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// The host's state, one value per type. A list, not a hash map: it holds a handful of types,
/// and is built per dispatch for extensions. (Holding the first value inline would save the
/// list's allocation for one extension, but every dispatch then moves and drops a larger map:
/// measured, the in-process call paid more than the MCP call saved.)
#[derive(Clone, Default)]
pub(crate) struct StateMap {
    values: Vec<(TypeId, Arc<dyn Any + Send + Sync>)>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        let id = TypeId::of::<T>();
        match self.values.iter_mut().find(|(held, _)| *held == id) {
            Some((_, slot)) => *slot = value,
            None => self.values.push((id, value)),
        }
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let id = TypeId::of::<T>();
        let (_, value) = self.values.iter().find(|(held, _)| *held == id)?;
        value.clone().downcast().ok()
    }

    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.values.iter().any(|(held, _)| *held == id)
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
}

/// How a body asks its host to run on as a task ([`ToolContext::detach`]), as an extension.
pub(crate) struct DetachSlot(pub(crate) Box<dyn Fn() -> bool + Send + Sync>);

#[cfg(test)]
mod tests {
    use std::any::TypeId;
    use std::sync::Arc;

    use super::StateMap;

    #[test]
    fn a_state_map_holds_one_value_per_type() {
        let mut map = StateMap::default();
        assert_eq!(map.len(), 0);
        assert!(map.get::<u8>().is_none());

        map.insert(Arc::new(1_u8));
        map.insert(Arc::new("two"));
        map.insert(Arc::new(3_u32));
        assert_eq!(map.len(), 3);

        // Replacing the first value and a later one changes those, and nothing else.
        map.insert(Arc::new(10_u8));
        map.insert(Arc::new(30_u32));
        assert_eq!(map.len(), 3);
        assert_eq!(map.get::<u8>().as_deref(), Some(&10));
        assert_eq!(map.get::<&str>().as_deref(), Some(&"two"));
        assert_eq!(map.get::<u32>().as_deref(), Some(&30));
        assert!(map.contains(TypeId::of::<&str>()));
        assert!(!map.contains(TypeId::of::<u64>()));

        let copy = map.clone();
        assert_eq!(copy.len(), 3);
        assert_eq!(copy.get::<u32>().as_deref(), Some(&30));
    }
}
