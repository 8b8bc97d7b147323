//! The pipeline of one call: resolve, validate input, pre-execute policies, the wrappers
//! around the body, normalization of every value into a frozen canonical value and its
//! projections, post-execute policies, then bounding. Panics of user code are contained at
//! every step ([`panic`]).
//!
//! Numbers in comments refer to the steps of the pipeline in the README.

mod panic;
mod policy;
mod snapshot;
mod stages;
mod wrap;

use std::sync::Arc;

use serde_json::Value;
use tracing::Instrument as _;

use crate::BoxFuture;
use crate::bound::{BoundLimits, RetainError, meta_fits, oversized_text, preview_of, replace_text};
use crate::call::{CallArgs, Surface, ToolCall};
use crate::context::ToolContext;
use crate::depth::{self, Shape};
use crate::error::{FailureError, codes};
use crate::outcome::{DispatchToken, ToolFailure, ToolOutcome, ToolSuccess};
use crate::present::{ContentBlock, MetaError};
use crate::schema::{coerce_integral_floats, describe_violations, strip_refused_nulls};
use crate::text::printable;
use crate::tool::{BodyError, CompiledTool, ToolTable};
use crate::value::FrozenValue;

pub use crate::outcome::AdditionalContext;
pub(crate) use panic::{catch, contain};
pub use policy::{
    Approval, ApprovalRequest, Approver, PostAction, PostDecision, PostExecutePolicy, PreDecision,
    PreExecutePolicy,
};
pub use snapshot::Snapshot;
pub(crate) use stages::Stages;
pub use wrap::{ExecuteCall, Executed, Next, Wrapper};

/// How many tool names an unknown-tool failure lists.
const MAX_LISTED_TOOLS: usize = 20;
/// How much of an unknown name is echoed back.
const MAX_ECHOED_NAME: usize = 80;

/// One call on its way through the wrappers to the body.
pub(crate) struct Chain {
    stages: Arc<Stages>,
    tool: Arc<CompiledTool>,
    call: ExecuteCall,
    token: DispatchToken,
}

pub(crate) async fn dispatch(snapshot: &Snapshot, call: ToolCall, surface: Surface) -> ToolOutcome {
    let span = tracing::debug_span!(
        "tool_dispatch",
        tool = %printable(call.name(), MAX_ECHOED_NAME),
        call_id = %printable(call.id(), MAX_ECHOED_NAME),
        ?surface,
    );
    // The last line of defence: a panic in the pipeline itself (a bug here or in a
    // dependency) is a failure too. User code is contained closer to where it runs.
    let run = std::pin::pin!(run(snapshot, call, surface).instrument(span.clone()));
    let outcome = match contain(|| run).await {
        Ok(outcome) => outcome,
        Err(panic) => {
            tracing::error!(panic, "the dispatch pipeline panicked");
            failure(FailureError::coded(
                "InternalError",
                codes::INTERNAL_ERROR,
                format!("The call failed because of a bug in the tool runtime: {panic}"),
            ))
        }
    };
    span.in_scope(|| match &outcome {
        ToolOutcome::Failure(failure) => {
            tracing::debug!(code = failure.error.code(), "tool call failed");
        }
        ToolOutcome::Success(_) => tracing::trace!("tool call succeeded"),
    });
    outcome
}

async fn run(snapshot: &Snapshot, call: ToolCall, surface: Surface) -> ToolOutcome {
    let (id, name, args) = call.into_parts();
    // Measured before anything else touches them: an over-deep value is taken apart here,
    // without recursion, whatever happens to the call next.
    let args = measured_args(args);

    if let Some(reason) = &snapshot.refusal {
        return failure(FailureError::coded(
            "ToolsDisabled",
            codes::TOOLS_DISABLED,
            format!("No tools may run now: {reason}"),
        ));
    }

    // 1. Resolve the name in this snapshot.
    let Some(tool) = snapshot.table.get(&name) else {
        return failure(unknown_tool(&snapshot.table, &name));
    };

    // 2. Validate the arguments before anything else sees them, so that policies (and a
    //    human asked to approve) judge well-formed arguments.
    let (mut args, shape) = match args {
        Ok(measured) => measured,
        Err(problem) => return failure(input_error(tool, &format!("- {problem}"))),
    };
    let schema = tool.definition.input_schema();
    if !tool.input.is_valid(&args) {
        // `null` for an optional property is how strict-mode models leave it out.
        let stripped = shape.null && strip_refused_nulls(schema, tool.input_draft_07, &mut args);
        if !(stripped && tool.input.is_valid(&args)) {
            let violations = describe_violations(&tool.input, &args);
            return failure(input_error(tool, &violations));
        }
    }
    if shape.integral_float {
        coerce_integral_floats(schema, tool.input_draft_07, &mut args);
    }
    let call = ExecuteCall {
        id,
        name: tool.definition.shared_name(),
        args: Arc::new(args),
        surface,
    };

    // 3. Pre-execute policies.
    if let Err(error) = pre_execute(&snapshot.stages, &call).await {
        return failure(error);
    }

    // 4–7. Wrappers around the body; every success they hand back is normalized.
    let chain = Arc::new(Chain {
        stages: snapshot.stages.clone(),
        tool: tool.clone(),
        call,
        token: DispatchToken::fresh(),
    });
    let outcome = run_chain(chain.clone(), 0).await;

    // 8. Post-execute policies.
    let outcome = post_execute(&chain, outcome);

    // 9. Bound what the model reads. Last, so that a tool's own render limits and every
    //    policy have run, whatever their registration order. Nested calls never reach model
    //    context and are not bounded.
    if surface == Surface::Direct {
        return bound(&chain, outcome).await;
    }
    outcome
}

/// The arguments as JSON within [`MAX_DEPTH`](crate::depth::MAX_DEPTH), with their shape; or
/// why not, the value already disposed of.
fn measured_args(args: CallArgs) -> Result<(Value, Shape), String> {
    let value = match args {
        CallArgs::Json(value) => value,
        CallArgs::Raw(text) => match serde_json::from_str(&text) {
            Ok(value) => value,
            // serde_json stops at 128 levels; say it in this crate's terms.
            Err(error) if error.to_string().starts_with("recursion limit exceeded") => {
                return Err(format!(
                    "the arguments nest deeper than {} levels of arrays and objects",
                    crate::depth::MAX_DEPTH
                ));
            }
            Err(error) => return Err(format!("the arguments are not valid JSON: {error}")),
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

/// Replaces oversized text by a preview, after retaining it in full. If it cannot be retained,
/// the call fails: a lossy success is never published.
async fn bound(chain: &Chain, mut outcome: ToolOutcome) -> ToolOutcome {
    let limits = chain.limits();
    let preview = {
        let Some(texts) = oversized_text(outcome.content(), limits) else {
            return outcome;
        };
        let name = chain.tool.name();
        let retained = contain(|| chain.stages.store.retain(&chain.call.id, name, &texts))
            .await
            .unwrap_or_else(|panic| {
                Err(RetainError(std::io::Error::other(format!(
                    "the store panicked: {panic}"
                ))))
            });
        match retained {
            Ok(retained) => preview_of(&texts, &retained, limits),
            Err(error) => {
                tracing::warn!(tool = name, %error, "output not retained");
                return failure(FailureError::coded(
                    "OutputNotRetained",
                    codes::OUTPUT_NOT_RETAINED,
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

/// Runs the wrappers from `index` inward, then the body.
pub(crate) fn run_chain(chain: Arc<Chain>, index: usize) -> BoxFuture<'static, ToolOutcome> {
    Box::pin(async move {
        let Some(wrapper) = chain.stages.wrappers.get(index) else {
            return run_body(&chain).await;
        };
        let next = Next {
            chain: chain.clone(),
            index: index + 1,
        };
        let call = chain.call.clone();
        match contain(|| wrapper.wrap(call, next)).await {
            Ok(executed) => settle(&chain, executed),
            Err(panic) => {
                tracing::warn!(
                    tool = chain.tool.name(),
                    wrapper = index,
                    panic,
                    "wrapper panicked"
                );
                failure(FailureError::coded(
                    "PolicyFailed",
                    codes::POLICY_FAILED,
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
    chain.normalize(value)
}

async fn run_body(chain: &Chain) -> ToolOutcome {
    let Chain { tool, call, .. } = chain;
    let cx = ToolContext::new(call.id.clone(), call.name.clone(), call.surface);
    let value = match contain(|| tool.handler.call(&call.args, cx)).await {
        Ok(Ok(value)) => value,
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
            return failure(FailureError::coded(
                "ToolPanic",
                codes::TOOL_PANICKED,
                format!(
                    "Tool `{}` failed unexpectedly (it panicked): {panic}",
                    tool.name()
                ),
            ));
        }
    };
    chain.normalize(FrozenValue::freeze(value))
}

impl Chain {
    fn limits(&self) -> &BoundLimits {
        self.tool.limits.as_ref().unwrap_or(&self.stages.limits)
    }

    /// A value a wrapper or a policy made, frozen once it is known to be within the depth
    /// limit; one that is not is taken apart without recursion.
    fn freeze(&self, value: Value) -> Result<FrozenValue, FailureError> {
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

    fn normalize(&self, value: FrozenValue) -> ToolOutcome {
        let limits = self.limits();
        match normalize(
            &self.tool,
            &self.call.args,
            value,
            self.call.surface,
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

/// Runs the pre-execute policies in order; the first denial or refusal ends the call.
async fn pre_execute(stages: &Stages, call: &ExecuteCall) -> Result<(), FailureError> {
    for policy in &stages.pre {
        let decision = catch(|| policy.check(call)).map_err(|panic| {
            tracing::warn!(tool = call.name(), panic, "pre-execute policy panicked");
            FailureError::coded(
                "PolicyFailed",
                codes::POLICY_FAILED,
                format!(
                    "The call to `{}` was not run: a policy failed.",
                    call.name()
                ),
            )
        })?;
        let question = match decision {
            PreDecision::Allow => continue,
            PreDecision::Deny { reason } => {
                return Err(FailureError::coded(
                    "ToolDenied",
                    codes::DENIED_BY_POLICY,
                    format!("The call to `{}` was denied: {reason}", call.name()),
                ));
            }
            PreDecision::Ask { question } => question,
        };
        let refused = |reason: &str| {
            FailureError::coded(
                "ToolRefused",
                codes::REFUSED_BY_APPROVER,
                format!("The call to `{}` was not approved: {reason}", call.name()),
            )
        };
        let Some(approver) = &stages.approver else {
            return Err(refused("it needs approval, and no approver is available"));
        };
        let request = ApprovalRequest {
            call: call.clone(),
            question,
        };
        match contain(|| approver.approve(request)).await {
            Ok(Approval::Approved) => {}
            Ok(Approval::Refused { reason }) => {
                return Err(refused(reason.as_deref().unwrap_or("the user said no")));
            }
            Err(panic) => {
                tracing::warn!(tool = call.name(), panic, "approver panicked");
                return Err(refused("the approver failed"));
            }
        }
    }
    Ok(())
}

/// Runs the post-execute policies in order, each on the outcome the previous one left.
fn post_execute(chain: &Chain, mut outcome: ToolOutcome) -> ToolOutcome {
    let mut contexts = Vec::new();
    for policy in &chain.stages.post {
        let decision = match catch(|| policy.review(&chain.call, &outcome)) {
            Ok(decision) => decision,
            Err(panic) => {
                // Fail closed: a redaction policy that panics must not let the result through.
                tracing::warn!(
                    tool = chain.tool.name(),
                    panic,
                    "post-execute policy panicked"
                );
                outcome = failure(FailureError::coded(
                    "PolicyFailed",
                    codes::POLICY_FAILED,
                    format!(
                        "The result of `{}` was withheld: a policy failed.",
                        chain.tool.name()
                    ),
                ));
                break;
            }
        };
        contexts.extend(decision.additional_contexts);
        outcome = match decision.action {
            PostAction::Keep => outcome,
            PostAction::ReplaceContent(content) => {
                *outcome.content_mut() = content;
                outcome
            }
            PostAction::ReplaceValue(value) => match chain.freeze(value) {
                Ok(value) => chain.normalize(value),
                Err(error) => failure(error),
            },
            PostAction::Block(message) => failure(FailureError::coded(
                "ToolBlocked",
                codes::BLOCKED_BY_POLICY,
                message,
            )),
        };
    }
    outcome.additional_contexts_mut().extend(contexts);
    outcome
}

/// Turns a value into a canonical success: validate against the output schema (6), freeze (7),
/// render (8) and, for direct calls, project metadata (9). Every projection is computed from
/// the frozen, validated value.
fn normalize(
    tool: &CompiledTool,
    args: &Value,
    value: FrozenValue,
    surface: Surface,
    limits: &BoundLimits,
) -> Result<(Vec<ContentBlock>, Option<Value>, FrozenValue), FailureError> {
    if !tool.output.is_valid(&value) {
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
            .project(args, &value, surface == Surface::Direct)
    })
    .map_err(|panic| format!("its projections panicked: {panic}"))
    .and_then(|projected| projected)
    .map_err(|problem| output_error(tool, &problem))?;
    let content = match projected.content {
        None => default_render(&value),
        Some(Ok(content)) => content,
        Some(Err(problem)) => return Err(output_error(tool, &problem)),
    };
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

/// Without a `render`, a string is one text block and anything else is serialized once.
fn default_render(value: &Value) -> Vec<ContentBlock> {
    let text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    vec![ContentBlock::text(text)]
}

fn failure(error: FailureError) -> ToolOutcome {
    ToolOutcome::Failure(ToolFailure::new(error))
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
    FailureError::coded(
        "UnknownToolError",
        codes::UNKNOWN_TOOL,
        format!(
            "Unknown tool `{}`. Available tools: {available}.",
            printable(name, MAX_ECHOED_NAME)
        ),
    )
}

fn input_error(tool: &CompiledTool, problems: &str) -> FailureError {
    FailureError::coded(
        "ToolInputError",
        codes::INVALID_TOOL_INPUT,
        format!(
            "Invalid arguments for tool `{}`:\n{problems}\nFix the arguments to match the tool's input schema and call it again.",
            tool.name()
        ),
    )
}

fn output_error(tool: &CompiledTool, problem: &str) -> FailureError {
    tracing::warn!(
        tool = tool.name(),
        problem,
        "tool produced an invalid value"
    );
    FailureError::coded(
        "ToolOutputError",
        codes::INVALID_TOOL_OUTPUT,
        format!(
            "Tool `{}` produced an invalid result: {problem}",
            tool.name()
        ),
    )
}
