//! The chain around one body: the wrappers, outermost first, then the body; and the
//! normalization every success goes through — validate the value, freeze it, project it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::BoxFuture;
use crate::bound::{BoundLimits, meta_fits};
use crate::call::{SmolStr, Surface};
use crate::context::{ProgressSink, StateMap, ToolContext};
use crate::depth;
use crate::depth::Shape;
use crate::error::{FailureError, FailureKind};
use crate::outcome::{DispatchToken, ToolFailure, ToolOutcome, ToolSuccess};
use crate::panic::{catch, contain};
use crate::present::{ContentBlock, MetaError};
use crate::schema::{
    coerce_integral_floats, describe_input_violations, describe_violations, strip_refused_nulls,
};
use crate::tool::{BodyError, CompiledTool, Kept, ToolTable};
use crate::value::FrozenValue;

use super::stages::Stages;
use super::wrap::{CallView, ExecuteCall, Executed, Next, Rest};

/// One call on its way through the wrappers to the body.
pub(crate) struct Chain {
    pub(super) stages: Arc<Stages>,
    /// The snapshot's tools, for nested dispatch.
    pub(super) table: Arc<ToolTable>,
    pub(super) tool: Arc<CompiledTool>,
    /// The call id (untrusted), the resolved tool's name, the validated arguments and where
    /// the call came from: what [`ExecuteCall`] shows.
    pub(super) id: SmolStr,
    pub(super) name: Arc<str>,
    pub(super) args: Value,
    pub(super) surface: Surface,
    pub(super) token: DispatchToken,
    pub(super) progress: Option<Arc<dyn ProgressSink>>,
    pub(super) extensions: StateMap,
    pub(super) nesting: usize,
}

impl Rest for Chain {
    fn run_from(self: Arc<Self>, index: usize) -> BoxFuture<'static, ToolOutcome> {
        run_chain(self, index)
    }

    fn call(&self) -> CallView<'_> {
        CallView {
            id: &self.id,
            name: &self.name,
            args: &self.args,
            surface: self.surface,
        }
    }
}

/// Runs the wrappers from `index` inward, then the body.
pub(crate) fn run_chain(chain: Arc<Chain>, index: usize) -> BoxFuture<'static, ToolOutcome> {
    Box::pin(async move {
        let Some(wrapper) = chain.stages.wrappers.get(index) else {
            return run_body(&chain).await;
        };
        let next = Next::new(chain.clone(), index + 1);
        let call = ExecuteCall(chain.clone());
        tracing::info!(target: "toolprism", wrapper = index, "toolprism.wrapper");
        match contain(|| wrapper.wrap(call, next)).await {
            Ok(executed) => settle(&chain, executed),
            Err(panic) => {
                tracing::warn!(
                    tool = chain.tool.name(),
                    wrapper = index,
                    panic,
                    "wrapper panicked"
                );
                failure(FailureError::new(
                    FailureKind::PolicyFailed,
                    format!(
                        "Tool `{}` failed unexpectedly (a wrapper panicked): {panic}",
                        chain.tool.name()
                    ),
                ))
            }
        }
    })
}

/// A wrapper's result as a canonical outcome: passed through if this dispatch normalized it,
/// normalized (again) under the resolved tool's declaration otherwise.
fn settle(chain: &Chain, executed: Executed) -> ToolOutcome {
    let value = match executed {
        Executed::Outcome(ToolOutcome::Success(success)) if success.token == chain.token => {
            return ToolOutcome::Success(success);
        }
        Executed::Outcome(ToolOutcome::Success(success)) => success.value,
        Executed::Outcome(failure) => return failure,
        Executed::Value(value) => match chain.freeze(value) {
            Ok(value) => value,
            Err(error) => return failure(error),
        },
    };
    chain.normalize(value, None, None, None)
}

/// Runs the body, and normalizes what it produced.
pub(super) async fn run_body(chain: &Arc<Chain>) -> ToolOutcome {
    let Chain { tool, args, .. } = &**chain;
    let cx = ToolContext::new(chain.clone());
    let body = contain(|| tool.handler.call(args, cx));
    let ran = match tool.timeout.or(chain.stages.default_timeout) {
        None => body.await,
        Some(limit) => match within(limit, body).await {
            Some(ran) => ran,
            None => {
                return failure(FailureError::new(
                    FailureKind::Timeout,
                    format!(
                        "Tool `{}` did not finish within its time limit of {} and was stopped.",
                        tool.name(),
                        shown_duration(limit)
                    ),
                ));
            }
        },
    };
    let produced = match ran.map(|output| output.0) {
        Ok(Ok(produced)) => produced,
        Ok(Err(BodyError::Input(why))) => {
            return failure(input_error(tool, &format!("- {why}")));
        }
        Ok(Err(BodyError::Failed(error))) => return failure(error.into_failure_error()),
        Ok(Err(BodyError::Output(error))) => {
            return failure(output_error(
                tool,
                &format!("its value is not lossless JSON: {error}"),
            ));
        }
        Err(panic) => {
            tracing::warn!(tool = tool.name(), panic, "tool body panicked");
            return failure(FailureError::new(
                FailureKind::ToolPanicked,
                format!(
                    "Tool `{}` failed unexpectedly (it panicked): {panic}",
                    tool.name()
                ),
            ));
        }
    };
    chain.normalize(
        FrozenValue::freeze(produced.value),
        produced.content,
        produced.judged,
        produced.kept,
    )
}

/// `future`'s output, or `None` once `limit` has passed (the future is then dropped).
async fn within<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
    let future = std::pin::pin!(future);
    match futures_util::future::select(future, futures_timer::Delay::new(limit)).await {
        futures_util::future::Either::Left((output, _)) => Some(output),
        futures_util::future::Either::Right(_) => None,
    }
}

/// A duration as a person writes it: `250 ms`, `30 s`, `1.5 s`.
fn shown_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1_000 {
        format!("{millis} ms")
    } else if millis.is_multiple_of(1_000) {
        format!("{} s", millis / 1_000)
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

impl Chain {
    /// This call with other arguments (a person's edit), validated by the caller.
    pub(super) fn with_args(&self, args: Value) -> Self {
        Self {
            stages: self.stages.clone(),
            table: self.table.clone(),
            tool: self.tool.clone(),
            id: self.id.clone(),
            name: self.name.clone(),
            args,
            surface: self.surface,
            token: self.token,
            progress: self.progress.clone(),
            extensions: self.extensions.clone(),
            nesting: self.nesting,
        }
    }

    pub(super) fn limits(&self) -> &BoundLimits {
        self.tool.limits.as_ref().unwrap_or(&self.stages.limits)
    }

    /// A value a wrapper or a policy made, frozen once it is known to be within the depth
    /// limit; one that is not is taken apart without recursion.
    pub(super) fn freeze(&self, value: Value) -> Result<FrozenValue, FailureError> {
        match depth::check_depth(&value) {
            Ok(()) => Ok(FrozenValue::freeze(value)),
            Err(error) => {
                depth::dispose(value);
                Err(output_error(
                    &self.tool,
                    &format!("its value nests {error}"),
                ))
            }
        }
    }

    /// `content`: what a body presented elsewhere made for the value, in place of `render`.
    /// `judged`: whether the output schema's plan accepted the value as it was snapshotted
    /// (`None`: it did not judge it, so it is judged here). `kept`: the value the body returned,
    /// for `render` and `meta` to borrow.
    pub(super) fn normalize(
        &self,
        value: FrozenValue,
        content: Option<Vec<ContentBlock>>,
        judged: Option<bool>,
        kept: Option<Kept>,
    ) -> ToolOutcome {
        let limits = self.limits();
        match normalize(
            &self.tool,
            &self.args,
            Made {
                value,
                presented: content,
                judged,
                kept,
            },
            self.surface,
            limits,
        ) {
            Ok((content, meta, value)) => ToolOutcome::Success(ToolSuccess {
                value,
                content,
                meta,
                additional_contexts: Vec::new(),
                token: self.token,
            }),
            Err(error) => failure(error),
        }
    }
}

/// A value on its way to becoming a success, and what came with it (see [`Chain::normalize`]).
struct Made {
    value: FrozenValue,
    presented: Option<Vec<ContentBlock>>,
    judged: Option<bool>,
    kept: Option<Kept>,
}

/// Turns a value into a canonical success: validate it against the output schema and freeze it
/// (step 6), then render it and, for direct calls, project metadata (step 7). Every projection
/// is computed from the frozen, validated value.
fn normalize(
    tool: &CompiledTool,
    args: &Value,
    Made {
        value,
        presented,
        judged,
        kept,
    }: Made,
    surface: Surface,
    limits: &BoundLimits,
) -> Result<(Vec<ContentBlock>, Option<Value>, FrozenValue), FailureError> {
    // A value the plan accepts is one the validator accepts. One the snapshot did not judge (a
    // dynamic tool's, a wrapper's or a policy's) is walked by the plan here; one it doubted
    // goes to the validator without a second walk by the plan.
    let accepted = judged.unwrap_or_else(|| {
        tool.output_plan
            .as_ref()
            .is_some_and(|plan| plan.accepts(&value))
    });
    if !accepted && !tool.output.is_valid(&value) {
        let violations = describe_violations(&tool.output, &value);
        return Err(output_error(
            tool,
            &format!("its value does not match its output schema:\n{violations}"),
        ));
    }

    // Deserializing the value back, rendering, projecting meta and dropping what they made all
    // run user code.
    let projected = catch(|| {
        tool.handler
            .project(args, &value, surface == Surface::Direct, kept)
    })
    .map_err(|panic| format!("its projections panicked: {panic}"))
    .and_then(|projected| projected)
    .map_err(|problem| output_error(tool, &problem))?;
    let content = match (presented, projected.content) {
        (Some(content), _) | (None, Some(Ok(content))) => content,
        (None, None) => default_render(&value),
        (None, Some(Err(problem))) => return Err(output_error(tool, &problem)),
    };
    if let Some(problem) = malformed(&content) {
        return Err(output_error(tool, &problem));
    }
    let meta = match projected.meta {
        None | Some(Ok(None)) => None,
        Some(Ok(Some(meta))) if meta_fits(&meta, limits.max_meta_bytes) => Some(meta),
        Some(Ok(Some(_))) => {
            // Metadata is measured on its own, and never becomes an unbounded side channel.
            tracing::warn!(
                tool = tool.name(),
                max_bytes = limits.max_meta_bytes,
                "presentation meta dropped: too large"
            );
            None
        }
        Some(Err(MetaError::Invalid(problem))) => {
            tracing::warn!(tool = tool.name(), problem, "presentation meta dropped");
            None
        }
        Some(Err(MetaError::Failed(problem))) => return Err(output_error(tool, &problem)),
    };

    Ok((content, meta, value))
}

/// Why a block of `content` cannot be carried, naming the first such block.
#[inline]
pub(super) fn malformed(content: &[ContentBlock]) -> Option<String> {
    // Text needs no check, and most content is text: only other blocks leave this loop.
    if content.iter().all(|block| block.as_text().is_some()) {
        return None;
    }
    content
        .iter()
        .enumerate()
        .find_map(|(at, block)| Some(format!("its content block {at} {}", block.malformed()?)))
}

/// Without a `render`, a string is one text block and anything else is serialized once.
fn default_render(value: &Value) -> Vec<ContentBlock> {
    let text = match value {
        Value::String(text) => text.clone(),
        // Written into one buffer: `Display` (`to_string()`) prints the same text through the
        // formatter a piece at a time, for 2.5× the instructions (1,168 against 462 for
        // `{"sum": 42}`). A `Value` written to memory cannot fail: its keys are strings and its
        // numbers finite.
        other => serde_json::to_string(other).expect("a JSON value always serializes"),
    };
    vec![ContentBlock::text(text)]
}

pub(super) fn failure(error: FailureError) -> ToolOutcome {
    ToolOutcome::Failure(ToolFailure::new(error))
}

/// The arguments as the body gets them, or why they are refused: valid against the input
/// schema (the plan decides those it accepts; the validator, all others, and explains), a
/// `null` for an optional property left out (how strict-mode models leave it out), integral
/// floats made integers where the schema wants integers. `args` is within the depth limit, as
/// `shape` measured it.
pub(super) fn validated_args(
    tool: &CompiledTool,
    mut args: Value,
    shape: Shape,
) -> Result<Value, String> {
    let schema = tool.definition.input_schema();
    let accepted = tool
        .input_plan
        .as_ref()
        .is_some_and(|plan| plan.accepts(&args));
    if !accepted && !tool.input.is_valid(&args) {
        let stripped = shape.null && strip_refused_nulls(schema, tool.input_draft_07, &mut args);
        if !(stripped && tool.input.is_valid(&args)) {
            return Err(describe_input_violations(&tool.input, schema, &args));
        }
    }
    if shape.integral_float {
        coerce_integral_floats(schema, tool.input_draft_07, &mut args);
    }
    Ok(args)
}

pub(super) fn input_error(tool: &CompiledTool, problems: &str) -> FailureError {
    FailureError::new(
        FailureKind::InvalidInput,
        format!(
            "Invalid arguments for tool `{}`:\n{problems}\nFix the arguments to match the tool's input schema and call it again.",
            tool.name()
        ),
    )
}

pub(super) fn output_error(tool: &CompiledTool, problem: &str) -> FailureError {
    // The event a trace shows says which tool; what was wrong (it quotes the value) is for
    // logs at debug level, as content is kept out of traces unless asked for.
    tracing::warn!(target: "toolprism", tool = tool.name(), "toolprism.invalid_output");
    tracing::debug!(
        tool = tool.name(),
        problem,
        "tool produced an invalid value"
    );
    FailureError::new(
        FailureKind::InvalidOutput,
        format!(
            "Tool `{}` produced an invalid result: {problem}",
            tool.name()
        ),
    )
}
