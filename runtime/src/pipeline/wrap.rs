//! Around-execute wrappers: middleware around the body, in the style of tower.
//!
//! A wrapper gets the call (with its validated arguments) and a [`Next`] that runs the rest of
//! the chain and the body; it may run it zero or more times. It returns the canonical union —
//! an outcome or a value — never bare content: whatever it returns as a success is normalized
//! under the resolved tool's output declaration (snapshot, validate, freeze, render, meta)
//! unless it is exactly what this dispatch's `next` produced. A wrapper therefore cannot make
//! the model read text that is not a projection of a valid value.
//!
//! Wrappers run in registration order: the first registered is the outermost.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::BoxFuture;
use crate::call::Surface;
use crate::error::ToolError;
use crate::outcome::{ToolFailure, ToolOutcome};

/// A call as wrappers and policies see it: after its name was resolved and its arguments
/// validated. Cheap to clone: a clone shares the dispatch's own record of the call (one
/// allocation per call serves both), so one kept after the call ended also keeps the snapshot
/// it ran against.
#[derive(Clone)]
pub struct ExecuteCall(pub(crate) Arc<dyn Rest>);

impl ExecuteCall {
    /// The call id (untrusted text from a model or a peer).
    pub fn id(&self) -> &str {
        self.0.call().id
    }

    /// The resolved tool's name.
    pub fn name(&self) -> &str {
        self.0.call().name
    }

    /// The arguments, valid against the tool's input schema.
    pub fn args(&self) -> &Value {
        self.0.call().args
    }

    /// Whether a model or a program made the call.
    pub fn surface(&self) -> Surface {
        self.0.call().surface
    }
}

impl std::fmt::Debug for ExecuteCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecuteCall")
            .field("id", &self.id())
            .field("name", &self.name())
            .field("args", self.args())
            .field("surface", &self.surface())
            .finish()
    }
}

/// What a wrapper returns.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Executed {
    /// An outcome: the one `next` returned (passed through as is), or one kept from elsewhere
    /// (a cache), whose value is normalized again under the resolved tool's declaration.
    Outcome(ToolOutcome),
    /// A value the wrapper produced itself, normalized like a body's value.
    Value(Value),
}

impl From<ToolOutcome> for Executed {
    fn from(outcome: ToolOutcome) -> Self {
        Self::Outcome(outcome)
    }
}

impl From<ToolError> for Executed {
    fn from(error: ToolError) -> Self {
        Self::Outcome(ToolOutcome::Failure(ToolFailure::new(
            error.into_failure_error(),
        )))
    }
}

/// Middleware around a tool's body.
///
/// Any `Fn(ExecuteCall, Next) -> impl Future<Output = Executed>` is one:
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use toolprism::prelude::*;
/// use toolprism::pipeline::{ExecuteCall, Executed, Next};
///
/// let calls = Arc::new(AtomicUsize::new(0));
/// let counter = calls.clone();
/// let count_calls = move |_call: ExecuteCall, next: Next| {
///     counter.fetch_add(1, Ordering::Relaxed);
///     async move { Executed::from(next.run().await) }
/// };
/// let registry = Registry::builder().wrap(count_calls).build().unwrap();
/// # let _ = registry;
/// ```
pub trait Wrapper: Send + Sync + 'static {
    /// Runs around one call.
    fn wrap(&self, call: ExecuteCall, next: Next) -> BoxFuture<'_, Executed>;
}

impl<F, Fut> Wrapper for F
where
    F: Fn(ExecuteCall, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Executed> + Send + 'static,
{
    fn wrap(&self, call: ExecuteCall, next: Next) -> BoxFuture<'_, Executed> {
        Box::pin(self(call, next))
    }
}

/// The rest of the chain: the inner wrappers, then the body. Cheap to clone; run it as many
/// times as needed (a retry), or not at all (a cache hit).
#[derive(Clone)]
pub struct Next {
    rest: Arc<dyn Rest>,
    index: usize,
}

/// What `Next` runs (the chain from a wrapper's index inward) and what `ExecuteCall` shows.
/// Implemented by the pipeline's chain, behind this trait so that wrappers do not depend on
/// how the chain is built.
pub(crate) trait Rest: Send + Sync + 'static {
    fn run_from(self: Arc<Self>, index: usize) -> BoxFuture<'static, ToolOutcome>;
    fn call(&self) -> CallView<'_>;
}

/// The call a chain runs.
pub(crate) struct CallView<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) args: &'a Value,
    pub(crate) surface: Surface,
}

impl Next {
    pub(crate) fn new(rest: Arc<dyn Rest>, index: usize) -> Self {
        Self { rest, index }
    }

    /// Runs the rest of the chain. The outcome is already normalized: returning it as is
    /// costs no second validation or render.
    pub fn run(&self) -> BoxFuture<'static, ToolOutcome> {
        self.rest.clone().run_from(self.index)
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}
