//! Before the body: the pre-execute policies in order, and the approver's answer when one
//! asks — run, run with edited arguments, answer in the body's place, refuse, or wait.

use std::sync::Arc;

use serde_json::Value;

use super::chain::{Chain, validated_args};
use super::policy::{Approval, ApprovalRequest, PreDecision};
use super::wrap::ExecuteCall;
use serde_json::json;

use crate::ask::{AnswererSlot, Elicited, InputKind, InputRequest, read_elicited};
use crate::depth;
use crate::error::ToolError;
use crate::error::{FailureError, FailureKind};
use crate::panic::{catch, contain};
use crate::schema::describe_violations;
use crate::tool::CompiledTool;

/// What the policies let a call do.
pub(super) enum Verdict {
    /// Run the body with the arguments this chain holds (an approver may have edited them).
    Run(Arc<Chain>),
    /// Answer with this value, which the approver gave; the body does not run.
    Substitute(Arc<Chain>, Value),
}

/// Runs the pre-execute policies in order; the first denial, refusal or wait ends the call.
/// A policy after an edit judges the edited arguments.
pub(super) async fn pre_execute(mut chain: Arc<Chain>) -> Result<Verdict, FailureError> {
    let stages = chain.stages.clone();
    for (index, policy) in stages.pre.iter().enumerate() {
        let call = ExecuteCall(chain.clone());
        let decision = catch(|| policy.check(&call)).map_err(|panic| {
            tracing::warn!(tool = call.name(), panic, "pre-execute policy panicked");
            FailureError::new(
                FailureKind::PolicyFailed,
                format!(
                    "The call to `{}` was not run: a policy failed.",
                    call.name()
                ),
            )
        })?;
        let question = match decision {
            PreDecision::Allow => continue,
            PreDecision::Deny { reason } => {
                tracing::info!(
                    target: "toolprism",
                    policy = policy.name(),
                    decision = "deny",
                    "toolprism.policy"
                );
                return Err(FailureError::new(
                    FailureKind::DeniedByPolicy,
                    format!("The call to `{}` was denied: {reason}", call.name()),
                ));
            }
            PreDecision::Ask { question } => question,
        };
        let request = ApprovalRequest {
            definition: chain.tool.definition.fingerprint(),
            policy: policy.name().to_owned(),
            call,
            question,
        };
        let mut approval = ask(&chain, request.clone()).await?;
        if matches!(approval, Approval::Pending) {
            // The person behind the call's client may decide now, on a form.
            approval = asked_on_the_call(&chain, index, &request).await?;
        }
        tracing::info!(
            target: "toolprism",
            policy = policy.name(),
            decision = approval.as_str(),
            "toolprism.policy"
        );
        match approval {
            Approval::Approved => {}
            Approval::Edited { arguments } => {
                chain = Arc::new(chain.with_args(edited(&chain, arguments)?));
            }
            Approval::Substituted { value } => return Ok(Verdict::Substitute(chain, value)),
            Approval::Refused { reason } => {
                return Err(refused(
                    &chain,
                    reason.as_deref().unwrap_or("the user said no"),
                ));
            }
            Approval::Pending => {
                return Err(FailureError::new(
                    FailureKind::DecisionPending,
                    format!(
                        "The call to `{}` waits for a decision; it has not run.",
                        chain.name
                    ),
                ));
            }
        }
    }
    Ok(Verdict::Run(chain))
}

/// A decision the approver left pending, asked of the person behind the call's client as a
/// form on the call's answerer (an MCP client's elicitation, the terminal): approve, or
/// reject with a reason. The answer is handed to the approver to record before it holds.
/// Without an answerer that takes forms, the call stays pending; a form that will be answered
/// on the call's next round (MCP 2026-07-28) ends this one with `INPUT_REQUIRED`.
async fn asked_on_the_call(
    chain: &Chain,
    index: usize,
    request: &ApprovalRequest,
) -> Result<Approval, FailureError> {
    let Some(answerer) = chain
        .extensions
        .get::<AnswererSlot>()
        .filter(|slot| slot.0.can_answer(InputKind::Elicitation))
    else {
        return Ok(Approval::Pending);
    };
    let key = format!("decision-{index}");
    let form = InputRequest::elicit(
        format!("{} (`{}`)", request.question, chain.name),
        json!({
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "reject"], "title": "Decision"},
                "reason": {"type": "string", "title": "Why, if rejected"},
            },
            "required": ["decision"],
        }),
    );
    let answer = crate::ask::ask(Some(answerer), &key, &form)
        .await
        .map_err(ToolError::into_failure_error)?;
    let elicited = read_elicited(&key, &answer, &form.params()["requestedSchema"])
        .map_err(ToolError::into_failure_error)?;
    let approval = match elicited {
        Elicited::Accepted(content) if content["decision"] == "approve" => Approval::Approved,
        Elicited::Accepted(content) => Approval::Refused {
            reason: Some(
                content["reason"]
                    .as_str()
                    .filter(|reason| !reason.trim().is_empty())
                    .unwrap_or("the user rejected it")
                    .to_owned(),
            ),
        },
        Elicited::Declined | Elicited::Cancelled => Approval::Refused {
            reason: Some("the user declined to decide".to_owned()),
        },
    };
    let Some(approver) = &chain.stages.approver else {
        return Ok(approval);
    };
    match catch(|| approver.decided(request, &approval)) {
        Ok(Ok(())) => Ok(approval),
        Ok(Err(problem)) => Err(refused(
            chain,
            &format!("the decision could not be recorded: {problem}"),
        )),
        Err(panic) => {
            tracing::warn!(
                tool = &*chain.name,
                panic,
                "approver panicked recording a decision"
            );
            Err(refused(chain, "the approver failed"))
        }
    }
}

/// The approver's answer; a missing or panicking approver refuses.
async fn ask(chain: &Chain, request: ApprovalRequest) -> Result<Approval, FailureError> {
    let Some(approver) = &chain.stages.approver else {
        return Err(refused(
            chain,
            "it needs approval, and no approver is available",
        ));
    };
    contain(|| approver.approve(request))
        .await
        .map_err(|panic| {
            tracing::warn!(tool = &*chain.name, panic, "approver panicked");
            refused(chain, "the approver failed")
        })
}

fn refused(chain: &Chain, reason: &str) -> FailureError {
    FailureError::new(
        FailureKind::RefusedByApprover,
        format!("The call to `{}` was not approved: {reason}", chain.name),
    )
}

/// Arguments an approver edited, held to what the model's were.
fn edited(chain: &Chain, arguments: Value) -> Result<Value, FailureError> {
    checked_arguments(&chain.tool, arguments).map_err(|problems| {
        FailureError::new(
            FailureKind::InvalidInput,
            format!(
                "The arguments given in place of the model's for `{}` were refused, and the call did not run:\n{problems}",
                chain.name
            ),
        )
    })
}

/// Arguments a person gives for a call of `tool`, as the body would get them, or why they
/// are refused: within the depth limit and valid against the input schema, as the model's
/// must be.
pub(crate) fn checked_arguments(tool: &CompiledTool, arguments: Value) -> Result<Value, String> {
    match depth::inspect(&arguments) {
        Ok(shape) => validated_args(tool, arguments, shape),
        Err(error) => {
            depth::dispose(arguments);
            Err(format!("- the arguments nest {error}"))
        }
    }
}

/// Whether a value a person gives in a call's place is one `tool` could have returned:
/// within the depth limit and valid against its output schema.
pub(crate) fn checked_result(tool: &CompiledTool, value: &Value) -> Result<(), String> {
    depth::check_depth(value).map_err(|error| format!("- the value nests {error}"))?;
    let accepted = tool
        .output_plan
        .as_ref()
        .is_some_and(|plan| plan.accepts(value));
    if accepted || tool.output.is_valid(value) {
        Ok(())
    } else {
        Err(describe_violations(&tool.output, value))
    }
}
