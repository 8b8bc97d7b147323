//! A snapshot: the tools of a registry at one moment, with the stages around them — what one
//! model request sees and dispatches through.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::call::{SmolStr, Surface, ToolCall};
use crate::outcome::ToolOutcome;
use crate::tool::{AdvertisedTool, CompiledTool, ToolTable};

use super::dispatch::{DispatchOptions, Target, dispatch};
use super::stages::Stages;

/// The tools of a registry at one moment, with its stages: what one model request sees.
/// Dispatching through a snapshot always runs the tool it advertised, whatever happens to the
/// registry meanwhile. Cloning is two `Arc` clones.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) table: Arc<ToolTable>,
    pub(crate) stages: Arc<Stages>,
    pub(crate) refusal: Option<Arc<str>>,
}

impl Snapshot {
    /// The advertised definitions, in registration order. No schema work is done here.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &AdvertisedTool> {
        self.table.tools().iter().map(|tool| &tool.definition)
    }

    /// The definition of one tool.
    pub fn definition(&self, name: &str) -> Option<&AdvertisedTool> {
        self.table.get(name).map(|tool| &tool.definition)
    }

    /// One tool, looked up once: for a host that reads a tool's definition before it
    /// dispatches a call to it (to answer an unknown name its own way, or to shape the result
    /// by the tool's schema). The dispatch does not look the name up again.
    ///
    /// ```
    /// use toolprism::pipeline::DispatchOptions;
    /// use toolprism::prelude::*;
    ///
    /// /// Adds two numbers.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let snapshot = Registry::builder().tool(Add).build().unwrap().snapshot();
    /// assert!(snapshot.resolve("sub").is_none());
    /// let add = snapshot.resolve("add").unwrap();
    /// assert!(!add.definition().output_is_object());
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let args = serde_json::json!({"a": 2, "b": 3});
    /// let outcome = add.dispatch("c1", args, Surface::Direct, DispatchOptions::default()).await;
    /// assert_eq!(outcome.value().map(|value| value.as_value().clone()), Some(5.into()));
    /// # });
    /// ```
    pub fn resolve(&self, name: &str) -> Option<ResolvedTool<'_>> {
        let tool = self.table.get(name)?;
        Some(ResolvedTool {
            snapshot: self,
            tool,
        })
    }

    /// How many times the registry's tools had changed when this snapshot was taken: two
    /// snapshots of one registry with the same generation advertise the same tools.
    pub fn generation(&self) -> u64 {
        self.table.generation
    }

    /// Reads back an output the registry's [`ToolOutputStore`](crate::bound::ToolOutputStore)
    /// retained when it bounded a result, by its (untrusted) handle, for a reader who is
    /// `owner` with `caller` (see [`Retention::admits`](crate::bound::Retention::admits)):
    /// `Ok(None)` when there is none of that name, or the reader may not read it — the same
    /// answer, so that a reader learns nothing of another's outputs.
    pub async fn read_retained(
        &self,
        handle: &str,
        owner: Option<&crate::access::Owner>,
        caller: Option<&crate::access::Caller>,
    ) -> Result<Option<String>, crate::bound::RetainError> {
        let read = match crate::panic::contain(|| self.stages.store.read(handle)).await {
            Ok(read) => read?,
            Err(panic) => {
                return Err(crate::bound::RetainError(std::io::Error::other(format!(
                    "the output store panicked: {panic}"
                ))));
            }
        };
        Ok(read
            .filter(|retained| retained.retention.admits(owner, caller))
            .map(|retained| retained.text))
    }

    /// The same definitions, but every call fails with `TOOLS_DISABLED` and this reason: for a
    /// final step, where the tools stay advertised (so a cached prompt prefix survives) but
    /// none may run.
    #[must_use]
    pub fn refusing_calls(mut self, reason: impl Into<String>) -> Self {
        self.refusal = Some(reason.into().into());
        self
    }

    /// Runs one call through the pipeline: resolve, validate the arguments, pre-execute
    /// policies, the wrappers and the body, normalization of the value (snapshot, validate,
    /// freeze, render, meta for direct calls), post-execute policies. Never panics, whatever
    /// the call, the tool, a wrapper or a policy does.
    ///
    /// Cancellation is dropping the returned future: no outcome is produced, and the
    /// wrappers and the body are dropped where they stand.
    pub fn dispatch(
        &self,
        call: ToolCall,
        surface: Surface,
    ) -> impl Future<Output = ToolOutcome> + Send + '_ {
        self.dispatch_with(call, surface, DispatchOptions::default())
    }

    /// [`dispatch`](Self::dispatch), with options: a sink for the body's progress reports.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use toolprism::context::Progress;
    /// use toolprism::pipeline::DispatchOptions;
    /// use toolprism::prelude::*;
    ///
    /// /// Works in two steps.
    /// #[tool]
    /// async fn work(cx: &ToolContext) -> u8 {
    ///     cx.progress(1.0, Some(2.0), "halfway");
    ///     cx.progress(2.0, Some(2.0), "done");
    ///     2
    /// }
    ///
    /// let registry = Registry::builder().tool(Work).build().unwrap();
    /// let reports = Arc::new(Mutex::new(Vec::new()));
    /// let sink = reports.clone();
    /// let options = DispatchOptions::default()
    ///     .progress(move |p: &Progress| sink.lock().unwrap().push(p.message.clone()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let call = ToolCall::new("c1", "work", serde_json::json!({}));
    /// registry.snapshot().dispatch_with(call, Surface::Direct, options).await;
    /// # });
    /// assert_eq!(*reports.lock().unwrap(), [Some("halfway".to_owned()), Some("done".to_owned())]);
    /// ```
    pub fn dispatch_with(
        &self,
        call: ToolCall,
        surface: Surface,
        options: DispatchOptions,
    ) -> impl Future<Output = ToolOutcome> + Send + '_ {
        dispatch(self.target(None), call, surface, options)
    }

    fn target<'a>(&'a self, resolved: Option<&'a Arc<CompiledTool>>) -> Target<'a> {
        Target {
            table: &self.table,
            stages: &self.stages,
            refusal: self.refusal.as_deref(),
            resolved,
        }
    }
}

/// A tool of a [`Snapshot`], found by [`Snapshot::resolve`] (whose example dispatches one).
#[derive(Clone, Copy)]
pub struct ResolvedTool<'a> {
    snapshot: &'a Snapshot,
    tool: &'a Arc<CompiledTool>,
}

impl<'a> ResolvedTool<'a> {
    /// The tool's definition, as the snapshot advertises it.
    pub fn definition(&self) -> &'a AdvertisedTool {
        &self.tool.definition
    }

    /// [`Snapshot::dispatch_with`] for a call to this tool, with its id and arguments: the
    /// same pipeline, without looking the name up again.
    pub fn dispatch(
        self,
        id: impl Into<SmolStr>,
        args: Value,
        surface: Surface,
        options: DispatchOptions,
    ) -> impl Future<Output = ToolOutcome> + Send + 'a {
        let call = ToolCall::new(id, self.tool.definition.shared_name(), args);
        dispatch(
            self.snapshot.target(Some(self.tool)),
            call,
            surface,
            options,
        )
    }
}

impl fmt::Debug for ResolvedTool<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedTool")
            .field("name", &self.tool.name())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("tools", &self.table.names().collect::<Vec<_>>())
            .field("refusal", &self.refusal)
            .finish_non_exhaustive()
    }
}
