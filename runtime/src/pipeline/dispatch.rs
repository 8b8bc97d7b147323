//! One call from start to end: resolve the name, validate the arguments, pre-execute
//! policies, the chain, post-execute policies, then bounding what the model reads.

use std::sync::Arc;

use serde_json::Value;
use tracing::Instrument as _;

use crate::BoxFuture;
use crate::access::{Caller, Owner, ScopeRules, missing_scopes, required_scopes};
use crate::bound::{RetainError, Retention, is_oversized, preview_of, replace_text, text_blocks};
use crate::call::{CallArgs, MAX_RAW_ARGS_BYTES, Surface, ToolCall};
use crate::context::{CallScope, MAX_NESTING, Progress, ProgressSink, StateMap};
use crate::depth::{self, Shape};
use crate::error::{FailureError, FailureKind};
use crate::outcome::{DispatchToken, ToolOutcome};
use crate::panic::{catch, contain};
use crate::schema::Plan;
use crate::text::printable;
use crate::tool::{CompiledTool, ToolTable};

use super::approve::{Verdict, pre_execute};
use super::chain::{Chain, failure, input_error, malformed, run_body, run_chain, validated_args};
use super::policy::PostAction;
use super::stages::Stages;
use super::wrap::ExecuteCall;

/// How many tool names an unknown-tool failure lists.
const MAX_LISTED_TOOLS: usize = 20;
/// How much of an unknown name is echoed back.
const MAX_ECHOED_NAME: usize = 80;

/// What one call is dispatched against: the parts of a snapshot.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    pub(crate) table: &'a Arc<ToolTable>,
    pub(crate) stages: &'a Arc<Stages>,
    pub(crate) refusal: Option<&'a str>,
    /// The tool, when the host already looked the call's name up in `table`.
    pub(crate) resolved: Option<&'a Arc<CompiledTool>>,
}

/// How a host wants one dispatch run, beyond the call itself.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolprism::context::Progress;
/// use toolprism::pipeline::DispatchOptions;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let options = DispatchOptions::default().progress(move |p: &Progress| sink.lock().unwrap().push(p.done));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct DispatchOptions {
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    /// Values the host attached to this dispatch, by type (none allocates nothing).
    pub(crate) extensions: StateMap,
    /// How many dispatches enclose this one (0 for a host's own call).
    pub(crate) nesting: usize,
    /// A direct call a provider's program made (programmatic tool calling), not the model.
    pub(crate) by_program: bool,
}

impl DispatchOptions {
    /// Sends the body's [`ToolContext::progress`](crate::ToolContext::progress) reports (and
    /// those of the calls it makes) to `sink`.
    #[must_use]
    pub fn progress(mut self, sink: impl ProgressSink) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// [`progress`](Self::progress) with a sink the host keeps a handle on too (a queue it
    /// drains), without wrapping it again.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use toolprism::context::{Progress, ProgressSink};
    /// use toolprism::pipeline::DispatchOptions;
    /// use toolprism::prelude::*;
    ///
    /// #[derive(Default)]
    /// struct Latest(Mutex<Option<f64>>);
    ///
    /// impl ProgressSink for Latest {
    ///     fn report(&self, progress: &Progress) {
    ///         *self.0.lock().unwrap() = Some(progress.done);
    ///     }
    /// }
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
    /// let latest = Arc::new(Latest::default());
    /// let options = DispatchOptions::default().shared_progress(latest.clone());
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let call = ToolCall::new("c1", "work", serde_json::json!({}));
    /// registry.snapshot().dispatch_with(call, Surface::Direct, options).await;
    /// # });
    /// assert_eq!(*latest.0.lock().unwrap(), Some(2.0));
    /// ```
    #[must_use]
    pub fn shared_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Answers the body's requests for input ([`ask`](crate::ask)) with `answerer`; the calls
    /// the body makes ask it too. Without one, asking fails with `INPUT_UNAVAILABLE`.
    #[must_use]
    pub fn answerer(self, answerer: impl crate::ask::Answerer) -> Self {
        self.shared_answerer(Arc::new(answerer))
    }

    /// [`answerer`](Self::answerer), shared.
    #[must_use]
    pub fn shared_answerer(self, answerer: Arc<dyn crate::ask::Answerer>) -> Self {
        self.extension(crate::ask::AnswererSlot(answerer))
    }

    /// Lets the body ask to run on after the request that made the call is answered
    /// ([`ToolContext::detach`](crate::ToolContext::detach)): `detach` is called when it asks,
    /// and says whether the host will (an MCP server answering with a task). Without it, a body
    /// that asks goes on as it was.
    #[must_use]
    pub fn detachable(self, detach: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.extension(crate::context::DetachSlot(Box::new(detach)))
    }

    /// Says that a program the provider runs made this direct call (Anthropic's programmatic
    /// tool calling, an OpenAI program), not the model: a tool only programs may call takes
    /// it, and one only the model may call refuses it (`TOOL_NOT_CALLABLE`).
    /// [`run_calls`](crate::turn::run_calls) says it of every call a turn marks
    /// [`Caller::Program`](crate::turn::Caller::Program).
    #[must_use]
    pub fn from_program(mut self) -> Self {
        self.by_program = true;
        self
    }

    /// Attaches a value of type `T` to this dispatch, for the body to read with
    /// [`ToolContext::extension`](crate::ToolContext::extension) (one per type; a second
    /// replaces the first). Nested calls the body makes see it too.
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.shared_extension(Arc::new(value))
    }

    /// Runs the call for `caller`, whom the host authenticated: a tool whose scopes it lacks is
    /// refused (`INSUFFICIENT_SCOPE`), here and in every call the body makes (nested calls,
    /// Code Mode programs), and the body reads it with
    /// [`ToolContext::caller`](crate::ToolContext::caller). Without one the call is the host's
    /// own, and no scope is checked. See [`access`](crate::access).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolprism::access::Caller;
    /// use toolprism::error::codes;
    /// use toolprism::pipeline::DispatchOptions;
    /// use toolprism::prelude::*;
    ///
    /// /// Runs a shell command.
    /// #[tool(scopes = ["shell:run"])]
    /// fn shell(#[arg] command: String) -> String { command }
    ///
    /// let registry = Registry::builder().tool(Shell).build().unwrap();
    /// let claims = serde_json::json!({"sub": "ada", "scope": "files:read"});
    /// let ada = Arc::new(Caller::from_claims(claims.as_object().unwrap().clone()));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let call = ToolCall::new("c1", "shell", serde_json::json!({"command": "ls"}));
    /// let options = DispatchOptions::default().caller(ada);
    /// let outcome = registry.snapshot().dispatch_with(call, Surface::Direct, options).await;
    /// assert_eq!(outcome.error().unwrap().code(), Some(codes::INSUFFICIENT_SCOPE));
    /// # });
    /// ```
    #[must_use]
    pub fn caller(self, caller: Arc<crate::access::Caller>) -> Self {
        self.shared_extension(caller)
    }

    /// Requires `rules`' scopes of their tools too, beside those the tools declare, for every
    /// call [`caller`](Self::caller) makes here and below.
    #[must_use]
    pub fn scope_rules(self, rules: Arc<crate::access::ScopeRules>) -> Self {
        self.shared_extension(rules)
    }

    /// What the call retains (an output too long for the model) belongs to `owner`: only a
    /// reader of the same owner reads it back
    /// ([`Snapshot::read_retained`](crate::Snapshot::read_retained)).
    #[must_use]
    pub fn owner(self, owner: crate::access::Owner) -> Self {
        self.extension(owner)
    }

    /// [`extension`](Self::extension) with a value the host keeps a handle on too, without
    /// wrapping it again (the same allocation can then serve as the progress sink).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolprism::pipeline::DispatchOptions;
    /// use toolprism::prelude::*;
    ///
    /// struct Customer(&'static str);
    ///
    /// /// Names the tenant the call runs for.
    /// #[tool]
    /// fn tenant(cx: &ToolContext) -> String {
    ///     cx.extension::<Customer>().map_or("none", |tenant| tenant.0).to_owned()
    /// }
    ///
    /// let registry = Registry::builder().tool(Tenant).build().unwrap();
    /// let tenant = Arc::new(Customer("acme"));
    /// let options = DispatchOptions::default().shared_extension(tenant.clone());
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let call = ToolCall::new("c1", "tenant", serde_json::json!({}));
    /// let outcome = registry.snapshot().dispatch_with(call, Surface::Direct, options).await;
    /// assert_eq!(*outcome.value().unwrap(), serde_json::json!("acme"));
    /// # });
    /// assert_eq!(Arc::strong_count(&tenant), 1, "the dispatch let its handle go");
    /// ```
    #[must_use]
    pub fn shared_extension<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.extensions.insert(value);
        self
    }
}

impl std::fmt::Debug for DispatchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatchOptions")
            .field("progress", &self.progress.is_some())
            .field("extensions", &self.extensions.len())
            .field("nesting", &self.nesting)
            .field("by_program", &self.by_program)
            .finish()
    }
}

/// One dispatch. The work that never waits (resolving, validating, building the call) runs
/// before the returned future is first polled, so that the future holds only what lives across
/// an await: a host moves it whole wherever it spawns it.
pub(crate) fn dispatch(
    target: Target<'_>,
    call: ToolCall,
    surface: Surface,
    options: DispatchOptions,
) -> impl Future<Output = ToolOutcome> + Send + '_ {
    let span = execute_tool_span(&call, surface);
    #[cfg(feature = "otel")]
    let measured = crate::telemetry::metrics::instruments().map(|instruments| {
        let tool = target.resolved.or_else(|| target.table.get(call.name()));
        let tool = tool.map(|tool| tool.definition.shared_name());
        (instruments, tool, std::time::Instant::now())
    });
    // The last line of defence: a panic in the pipeline itself (a bug here or in a
    // dependency) is a failure too. User code is contained closer to where it runs.
    // A span nobody listens to is not entered (its guard costs more than the check).
    let start = || catch(|| start(target, call, surface, options, &span));
    let started = if span.is_disabled() {
        start()
    } else {
        span.in_scope(start)
    };
    async move {
        let outcome = match started {
            // Nobody listens (no subscriber, or one that filters the span out): the rest runs
            // without a span entered around each of its polls.
            Ok(Started::Run(rest)) if span.is_disabled() => {
                let rest = std::pin::pin!(rest);
                contain(|| rest).await.unwrap_or_else(pipeline_panicked)
            }
            Ok(Started::Run(rest)) => {
                let rest = std::pin::pin!(rest.instrument(span.clone()));
                contain(|| rest).await.unwrap_or_else(pipeline_panicked)
            }
            Ok(Started::Ended(outcome)) => outcome,
            Err(panic) => pipeline_panicked(panic),
        };
        if span.is_disabled() {
            log_outcome(&outcome);
        } else {
            span.in_scope(|| {
                record_outcome(&span, &outcome);
                log_outcome(&outcome);
            });
        }
        #[cfg(feature = "otel")]
        if let Some((instruments, tool, started)) = measured {
            instruments.ended(tool, &outcome, started);
        }
        outcome
    }
}

/// The call's span, named and described as the GenAI semantic conventions' `execute_tool`
/// (see [`telemetry`](crate::telemetry)). Its fields are computed only when someone listens.
fn execute_tool_span(call: &ToolCall, surface: Surface) -> tracing::Span {
    let name = || printable(call.name(), MAX_ECHOED_NAME);
    tracing::info_span!(
        target: "toolprism",
        "execute_tool",
        otel.name = %format_args!("execute_tool {}", name()),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %name(),
        gen_ai.tool.call.id = %printable(call.id(), MAX_ECHOED_NAME),
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = tracing::field::Empty,
        gen_ai.tool.call.result = tracing::field::Empty,
        error.type = tracing::field::Empty,
        "toolprism.surface" = surface.as_str(),
    )
}

/// The outcome on the call's span: its error's code and status, and (when the host opted in
/// to content) its value or message, bounded.
fn record_outcome(span: &tracing::Span, outcome: &ToolOutcome) {
    let content = crate::telemetry::content_limit();
    match outcome {
        ToolOutcome::Failure(failure) => {
            span.record("otel.status_code", "error");
            span.record("error.type", failure.error.code().unwrap_or("tool_error"));
            if let Some(limit) = content {
                let message = crate::telemetry::bounded_text(&failure.error.message, limit);
                span.record("otel.status_description", message);
            }
        }
        ToolOutcome::Success(success) => {
            if let Some(limit) = content {
                span.record(
                    "gen_ai.tool.call.result",
                    crate::telemetry::bounded_json(success.value.as_value(), limit),
                );
            }
        }
    }
}

fn log_outcome(outcome: &ToolOutcome) {
    match outcome {
        ToolOutcome::Failure(failure) => {
            tracing::debug!(code = failure.error.code(), "tool call failed");
        }
        ToolOutcome::Success(_) => tracing::trace!("tool call succeeded"),
    }
}

fn pipeline_panicked(panic: String) -> ToolOutcome {
    tracing::error!(panic, "the dispatch pipeline panicked");
    failure(FailureError::new(
        FailureKind::Internal,
        format!("The call failed because of a bug in the tool runtime: {panic}"),
    ))
}

/// How a call stands once the steps that never wait have run.
enum Started<F> {
    /// The rest of the call, to run.
    Run(F),
    /// The call ended before its body: why.
    Ended(ToolOutcome),
}

/// Steps 1–2, which never wait. `span`: the call's, for its arguments when content is
/// recorded.
fn start(
    target: Target<'_>,
    call: ToolCall,
    surface: Surface,
    options: DispatchOptions,
    span: &tracing::Span,
) -> Started<impl Future<Output = ToolOutcome> + Send + use<>> {
    let (id, name, args) = call.into_parts();
    // Measured before anything else touches them: an over-deep value is taken apart here,
    // without recursion, whatever happens to the call next.
    let args = measured_args(args);

    if options.nesting > MAX_NESTING {
        return Started::Ended(failure(FailureError::new(
            FailureKind::NestingTooDeep,
            format!(
                "The call to `{}` was not run: tools calling tools went more than {MAX_NESTING} levels deep.",
                printable(&name, MAX_ECHOED_NAME)
            ),
        )));
    }

    if let Some(reason) = target.refusal {
        return Started::Ended(failure(FailureError::new(
            FailureKind::ToolsDisabled,
            format!("No tools may run now: {reason}"),
        )));
    }

    // 1. Resolve the name in this snapshot (unless the host did), and check that the caller
    //    may call it: the model, a tool only programs may call; a program, one only the model
    //    may call.
    let Some(tool) = target.resolved.or_else(|| target.table.get(&name)) else {
        return Started::Ended(failure(unknown_tool(target.table, &name)));
    };
    let by_program = surface == Surface::Nested || options.by_program;
    let callable = if by_program {
        tool.callers.programs()
    } else {
        tool.callers.direct()
    };
    if !callable {
        return Started::Ended(failure(not_callable(tool.name(), by_program)));
    }
    if let Some(refused) = scope_refusal(tool, &options.extensions) {
        return Started::Ended(failure(refused));
    }

    // 2. Validate the arguments before anything else sees them, so that policies (and a
    //    human asked to approve) judge well-formed arguments.
    let (args, shape) = match args {
        Ok(measured) => measured,
        Err(problem) => return Started::Ended(failure(input_error(tool, &format!("- {problem}")))),
    };
    let args = match validated_args(tool, args, shape) {
        Ok(args) => args,
        Err(violations) => return Started::Ended(failure(input_error(tool, &violations))),
    };
    if let Some(limit) = crate::telemetry::content_limit()
        && !span.is_disabled()
    {
        let recorded = crate::telemetry::bounded_json(&args, limit);
        span.record("gen_ai.tool.call.arguments", recorded);
    }
    let chain = Arc::new(Chain {
        stages: target.stages.clone(),
        table: target.table.clone(),
        tool: tool.clone(),
        id,
        name: tool.definition.shared_name(),
        args,
        surface,
        token: DispatchToken::fresh(),
        progress: options.progress,
        extensions: options.extensions,
        nesting: options.nesting,
    });
    Started::Run(run(chain))
}

/// Steps 3–9, from the pre-execute policies to bounding.
#[expect(
    clippy::manual_async_fn,
    reason = "an `async fn` would hold its argument twice in its future"
)]
fn run(chain: Arc<Chain>) -> impl Future<Output = ToolOutcome> + Send {
    async move {
        // 3. Pre-execute policies. Boxed, like every await below that may not come: what is
        //    rare stays out of the dispatch future. An approver may edit the arguments, or
        //    answer in the body's place.
        let (chain, substitute) = if chain.stages.pre.is_empty() {
            (chain, None)
        } else {
            match Box::pin(pre_execute(chain)).await {
                Ok(Verdict::Run(chain)) => (chain, None),
                Ok(Verdict::Substitute(chain, value)) => (chain, Some(value)),
                Err(error) => return failure(error),
            }
        };

        // 4–7. Wrappers around the body; every success they hand back is normalized.
        let outcome = if let Some(value) = substitute {
            match chain.freeze(value) {
                Ok(value) => chain.normalize(value, None, None, None),
                Err(error) => failure(error),
            }
        } else if chain.stages.wrappers.is_empty() {
            // No wrapper to hand the chain to: the body runs here, without a boxed step.
            run_body(&chain).await
        } else {
            run_chain(chain.clone(), 0).await
        };

        // 8. Post-execute policies.
        let outcome = post_execute(&chain, outcome);

        // 9. Bound what the model reads. Last, so that a tool's own render limits and every
        //    policy have run, whatever their registration order. Nested calls never reach
        //    model context and are not bounded.
        if chain.surface == Surface::Direct && is_oversized(outcome.content(), chain.limits()) {
            return Box::pin(bound(&chain, outcome)).await;
        }
        outcome
    }
}

/// The arguments as JSON within [`MAX_DEPTH`](crate::depth::MAX_DEPTH), with their shape; or
/// why not, the value already disposed of.
fn measured_args(args: CallArgs) -> Result<(Value, Shape), String> {
    let value = match args {
        CallArgs::Json(value) => value,
        CallArgs::Raw(text) if text.len() > MAX_RAW_ARGS_BYTES => {
            return Err(format!(
                "the arguments are {} bytes of JSON text, more than the {MAX_RAW_ARGS_BYTES} a call may send",
                text.len()
            ));
        }
        CallArgs::Raw(text) => match serde_json::from_str(&text) {
            Ok(value) => value,
            // serde_json stops at 128 levels; say it in this crate's terms.
            Err(error) if depth::is_past_parser_depth(&error) => {
                return Err(format!(
                    "the arguments nest deeper than {} levels of arrays and objects",
                    crate::depth::MAX_DEPTH
                ));
            }
            Err(error) => {
                let at = crate::text::json_error_byte(text.as_bytes(), &error);
                return Err(format!(
                    "the arguments are not valid JSON at byte {at}: {error}"
                ));
            }
        },
    };
    match depth::inspect(&value) {
        Ok(shape) => Ok((value, shape)),
        Err(error) => {
            depth::dispose(value);
            Err(format!("the arguments nest {error}"))
        }
    }
}

/// What a body's [`ToolContext`](crate::ToolContext) reaches: its call, and through it the
/// snapshot. Here, beside `dispatch`, because nested dispatch is a dispatch.
impl CallScope for Chain {
    fn call_id(&self) -> &str {
        &self.id
    }

    fn output_plan(&self) -> Option<&Plan> {
        self.tool.output_plan.as_ref()
    }

    fn tool_name(&self) -> &str {
        &self.name
    }

    fn surface(&self) -> Surface {
        self.surface
    }

    fn state(&self) -> &StateMap {
        &self.stages.state
    }

    fn extensions(&self) -> &StateMap {
        &self.extensions
    }

    fn report(&self, progress: &Progress) {
        if let Some(sink) = &self.progress
            && let Err(panic) = catch(|| sink.report(progress))
        {
            tracing::warn!(tool = self.tool.name(), panic, "progress sink panicked");
        }
    }

    fn nested(self: Arc<Self>, call: ToolCall) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            let target = Target {
                table: &self.table,
                stages: &self.stages,
                refusal: None,
                resolved: None,
            };
            let options = DispatchOptions {
                progress: self.progress.clone(),
                extensions: self.extensions.clone(),
                nesting: self.nesting + 1,
                by_program: false,
            };
            let recorder = self.extensions.get::<NestedRecording>();
            let logged = match &recorder {
                Some(recorder) => {
                    // A program run again gets what its earlier run got, without a second run.
                    if let Some(outcome) = recorder.0.answered(&self.id, &call) {
                        return outcome;
                    }
                    let args = call.logged_args().ok().and_then(|(args, _)| args);
                    Some((call.id().to_owned(), call.name().to_owned(), args))
                }
                None => None,
            };
            let outcome = dispatch(target, call, Surface::Nested, options).await;
            if let (Some(recorder), Some((id, name, args))) = (recorder, logged) {
                recorder.0.record(&self.id, id, name, args, &outcome);
            }
            outcome
        })
    }

    fn tool_names(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        // Those a nested call may reach: not the ones only the model may call, nor those whose
        // scopes the caller lacks.
        Box::new(
            self.table
                .tools()
                .iter()
                .filter(|tool| tool.callers.programs())
                .filter(|tool| scope_refusal(tool, &self.extensions).is_none())
                .map(|tool| tool.definition.name()),
        )
    }

    fn tools(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.table.clone()
    }

    fn effect_of(&self, name: &str, arguments: &Value) -> Option<crate::effects::Effect> {
        let tool = self.table.get(name)?;
        Some(tool.definition.about().effect_of(arguments))
    }
}

/// Records the nested dispatches made during a call (the session log does), when attached
/// to the call as a [`NestedRecording`] extension; nested calls inherit it.
pub(crate) trait NestedRecorder: Send + Sync + 'static {
    /// What an earlier run of the call `parent_id` got from this same nested call, given back
    /// in place of running it again.
    fn answered(&self, parent_id: &str, call: &ToolCall) -> Option<ToolOutcome> {
        let _ = (parent_id, call);
        None
    }

    fn record(
        &self,
        parent_id: &str,
        id: String,
        name: String,
        args: Option<Value>,
        outcome: &ToolOutcome,
    );
}

/// The extension that carries a [`NestedRecorder`].
pub(crate) struct NestedRecording(pub(crate) Arc<dyn NestedRecorder>);

/// Replaces oversized text by a preview, after retaining it in full. If it cannot be retained,
/// the call fails: a lossy success is never published.
async fn bound(chain: &Chain, mut outcome: ToolOutcome) -> ToolOutcome {
    let limits = chain.limits();
    let preview = {
        let texts: Vec<&str> = text_blocks(outcome.content()).collect();
        let name = chain.tool.name();
        let retention = retention_of(chain);
        let retained = contain(|| {
            chain
                .stages
                .store
                .retain(&chain.id, name, &texts, &retention)
        })
        .await
        .unwrap_or_else(|panic| {
            Err(RetainError(std::io::Error::other(format!(
                "the store panicked: {panic}"
            ))))
        });
        match retained {
            Ok(retained) => {
                let bytes: usize = texts.iter().map(|text| text.len()).sum();
                tracing::info!(target: "toolprism", bytes = bytes, "toolprism.spill");
                #[cfg(feature = "otel")]
                if let Some(instruments) = crate::telemetry::metrics::instruments() {
                    instruments.spilled(chain.tool.definition.shared_name());
                }
                preview_of(&texts, &retained, limits)
            }
            Err(error) => {
                tracing::warn!(tool = name, %error, "output not retained");
                return failure(FailureError::new(
                    FailureKind::OutputNotRetained,
                    format!(
                        "The output of `{name}` was too large to show, and could not be saved for reading: {error}"
                    ),
                ));
            }
        }
    };
    let content = std::mem::take(outcome.content_mut());
    *outcome.content_mut() = replace_text(content, preview);
    outcome
}

/// Who may read back what `chain` retains: its owner, holding the scopes its tool needs.
fn retention_of(chain: &Chain) -> Retention {
    let rules = chain.extensions.get::<ScopeRules>();
    let scopes = required_scopes(
        &chain.tool.definition.about().scopes,
        chain.tool.name(),
        rules.as_deref(),
    );
    Retention::new(chain.extensions.get::<Owner>().as_deref(), scopes)
}

/// Runs the post-execute policies in order, each on the outcome the previous one left.
fn post_execute(chain: &Arc<Chain>, mut outcome: ToolOutcome) -> ToolOutcome {
    if chain.stages.post.is_empty() {
        return outcome;
    }
    let call = ExecuteCall(chain.clone());
    let mut contexts = Vec::new();
    for policy in &chain.stages.post {
        let decision = match catch(|| policy.review(&call, &outcome)) {
            Ok(decision) => decision,
            Err(panic) => {
                // Fail closed: a redaction policy that panics must not let the result through.
                tracing::warn!(
                    tool = chain.tool.name(),
                    panic,
                    "post-execute policy panicked"
                );
                outcome = failure(FailureError::new(
                    FailureKind::PolicyFailed,
                    format!(
                        "The result of `{}` was withheld: a policy failed.",
                        chain.tool.name()
                    ),
                ));
                break;
            }
        };
        contexts.extend(decision.additional_contexts);
        if let Some(action) = decision.action.as_str() {
            tracing::info!(target: "toolprism", decision = action, "toolprism.policy");
        }
        outcome = match decision.action {
            PostAction::Keep => outcome,
            // Replaced content is held to what a tool's is: a provider would refuse it whole.
            PostAction::ReplaceContent(content) => match malformed(&content) {
                None => {
                    *outcome.content_mut() = content;
                    outcome
                }
                Some(problem) => failure(FailureError::new(
                    FailureKind::PolicyFailed,
                    format!(
                        "The result of `{}` was withheld: a policy replaced its content, and {problem}.",
                        chain.tool.name()
                    ),
                )),
            },
            PostAction::ReplaceValue(value) => match chain.freeze(value) {
                Ok(value) => chain.normalize(value, None, None, None),
                Err(error) => failure(error),
            },
            PostAction::Block(message) => {
                failure(FailureError::new(FailureKind::BlockedByPolicy, message))
            }
        };
    }
    outcome.additional_contexts_mut().extend(contexts);
    outcome
}

fn unknown_tool(table: &ToolTable, name: &str) -> FailureError {
    let mut available: Vec<String> = table
        .names()
        .take(MAX_LISTED_TOOLS)
        .map(|name| format!("`{name}`"))
        .collect();
    if table.names().nth(MAX_LISTED_TOOLS).is_some() {
        available.push("…".to_owned());
    }
    let available = if available.is_empty() {
        "none".to_owned()
    } else {
        available.join(", ")
    };
    FailureError::new(
        FailureKind::UnknownTool,
        format!(
            "Unknown tool `{}`. Available tools: {available}.",
            printable(name, MAX_ECHOED_NAME)
        ),
    )
}

/// Why the caller a dispatch carries may not call `tool`: the scopes it lacks. A dispatch
/// without a caller is the host's own, and needs none.
fn scope_refusal(tool: &CompiledTool, extensions: &StateMap) -> Option<FailureError> {
    let caller = extensions.get::<Caller>()?;
    let rules = extensions.get::<ScopeRules>();
    let missing = missing_scopes(
        &tool.definition.about().scopes,
        tool.name(),
        rules.as_deref(),
        &caller,
    );
    (!missing.is_empty()).then(|| {
        FailureError::new(
            FailureKind::ScopeMissing,
            format!(
                "Tool `{}` was not run: the caller lacks the scope{} {} it needs.",
                printable(tool.name(), MAX_ECHOED_NAME),
                if missing.len() == 1 { "" } else { "s" },
                missing
                    .iter()
                    .map(|scope| format!("`{}`", printable(scope, MAX_ECHOED_NAME)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

/// The failure of a call its tool does not take from this caller.
fn not_callable(name: &str, by_program: bool) -> FailureError {
    let (only, here) = if by_program {
        ("the model", "a program")
    } else {
        ("programs", "the model")
    };
    FailureError::new(
        FailureKind::NotCallable,
        format!(
            "Tool `{}` may be called only by {only}, not by {here}.",
            printable(name, MAX_ECHOED_NAME)
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex, PoisonError};

    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    use crate::prelude::*;

    /// A subscriber that notes, for each event, the name of the span entered around it.
    #[derive(Default)]
    struct Spans {
        names: Mutex<Vec<&'static str>>,
        entered: Mutex<Vec<u64>>,
        events_in: Arc<Mutex<Vec<Option<&'static str>>>>,
    }

    impl Subscriber for Spans {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            let mut names = self.names.lock().unwrap();
            names.push(span.metadata().name());
            Id::from_u64(names.len() as u64)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {
            let names = self.names.lock().unwrap();
            let current = self.entered.lock().unwrap().last().copied();
            let name = current.map(|id| names[usize::try_from(id).unwrap() - 1]);
            self.events_in.lock().unwrap().push(name);
        }
        fn enter(&self, span: &Id) {
            self.entered.lock().unwrap().push(span.into_u64());
        }
        fn exit(&self, _: &Id) {
            self.entered.lock().unwrap().pop();
        }
    }

    fn dispatch_logs() -> ToolOutcome {
        let logs = ToolDef::builder("logs")
            .handler(|_: serde_json::Value, _: ToolContext| async {
                tracing::info!("in the body");
                Ok::<_, ToolError>(1)
            })
            .build();
        let registry = Registry::builder().tool(logs).build().unwrap();
        let call = ToolCall::new("c1", "logs", serde_json::json!({}));
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(registry.dispatch(call, Surface::Direct))
    }

    /// The two tests below share the body's callsites: one registering them (as never
    /// interesting, with no subscriber anywhere) while the other rebuilds their interest
    /// would leave them off for it.
    static CALLSITES: Mutex<()> = Mutex::new(());

    #[test]
    fn with_a_subscriber_the_body_runs_inside_the_dispatch_span() {
        let _callsites = CALLSITES.lock().unwrap_or_else(PoisonError::into_inner);
        let spans = Spans::default();
        let events_in = spans.events_in.clone();
        let outcome = tracing::subscriber::with_default(spans, || {
            // Every callsite of a dispatch registered (other tests, on other threads, may
            // have registered some while no subscriber was listening anywhere), then their
            // interest rebuilt, then the call that is judged.
            dispatch_logs();
            tracing::callsite::rebuild_interest_cache();
            events_in.lock().unwrap().clear();
            dispatch_logs()
        });
        assert!(!outcome.is_error(), "{outcome:?}");
        let events_in = events_in.lock().unwrap();
        assert_eq!(
            events_in.first(),
            Some(&Some("execute_tool")),
            "{events_in:?}"
        );
    }

    #[test]
    fn without_one_the_call_runs_the_same() {
        let _callsites = CALLSITES.lock().unwrap_or_else(PoisonError::into_inner);
        let outcome = dispatch_logs();
        assert_eq!(outcome.value().unwrap().as_value(), &serde_json::json!(1));
    }
}
