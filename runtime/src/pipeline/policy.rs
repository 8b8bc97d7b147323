//! Policies: before a body runs (allow, deny, or ask an approver) and after it ran (keep,
//! replace the content, replace the value, or block).
//!
//! # Replacing content is not a confidentiality mechanism
//!
//! [`PostAction::ReplaceContent`] changes what the *model* reads and nothing else: the canonical
//! value stays, and a program that dispatches the tool (Code Mode, a script, another agent)
//! still reads it in full. To keep data from programs, replace the value
//! ([`PostAction::ReplaceValue`], which is validated and re-rendered) or block the call.

use std::future::Future;

use serde_json::Value;

use super::wrap::ExecuteCall;
use crate::BoxFuture;
use crate::outcome::{AdditionalContext, ToolOutcome};
use crate::present::ContentBlock;
use crate::tool::Fingerprint;

/// What a pre-execute policy decides about a call whose arguments are valid.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PreDecision {
    /// Let the call run (subject to the next policies).
    Allow,
    /// Refuse the call; the model is told `reason`. The body never runs.
    Deny {
        /// What the model is told.
        reason: String,
    },
    /// Ask the host's [`Approver`] (a terminal prompt, a UI button…); the body runs only if it
    /// approves.
    Ask {
        /// What to ask, e.g. "Run `rm -rf build/`?".
        question: String,
    },
}

impl PreDecision {
    /// Refuses the call with this reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny {
            reason: reason.into(),
        }
    }

    /// Asks the approver this question.
    pub fn ask(question: impl Into<String>) -> Self {
        Self::Ask {
            question: question.into(),
        }
    }
}

/// Decides, before the body runs, whether a call may run. Runs after the arguments were
/// validated, so it sees well-formed arguments; runs for direct and nested calls alike (the
/// call says which).
///
/// Any `Fn(&ExecuteCall) -> PreDecision` is one:
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::pipeline::{ExecuteCall, PreDecision};
///
/// let no_deletes = |call: &ExecuteCall| {
///     if call.name().starts_with("delete") {
///         PreDecision::deny("deleting is not allowed in this session")
///     } else {
///         PreDecision::Allow
///     }
/// };
/// let registry = Registry::builder().pre_execute(no_deletes).build().unwrap();
/// # let _ = registry;
/// ```
pub trait PreExecutePolicy: Send + Sync + 'static {
    /// Decides about one call.
    fn check(&self, call: &ExecuteCall) -> PreDecision;

    /// The policy's name, recorded with each approval it asks for (by default, its type's).
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

impl<F> PreExecutePolicy for F
where
    F: Fn(&ExecuteCall) -> PreDecision + Send + Sync + 'static,
{
    fn check(&self, call: &ExecuteCall) -> PreDecision {
        self(call)
    }
}

/// A question for the host's approver.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The call in question, with its validated arguments.
    pub call: ExecuteCall,
    /// What the policy asks.
    pub question: String,
    /// The name of the policy that asks ([`PreExecutePolicy::name`]).
    pub policy: String,
    /// The fingerprint of the tool's definition the call runs against: an answer given for
    /// another definition is not an answer to this call.
    pub definition: Fingerprint,
}

/// The approver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run it.
    Approved,
    /// Do not run it; the model is told the reason, if one is given.
    Refused {
        /// Why, for the model.
        reason: Option<String>,
    },
    /// Run it with these arguments in place of the model's. They are validated against the
    /// input schema first, as the model's were: an edit that breaks it fails the call with
    /// `INVALID_TOOL_INPUT`, and the body does not run.
    Edited {
        /// The arguments the call runs with.
        arguments: Value,
    },
    /// Do not run it: its value is this one, validated against the output schema and
    /// projected as the tool's own would be (an invalid one fails the call with
    /// `INVALID_TOOL_OUTPUT`).
    Substituted {
        /// The value the call answers.
        value: Value,
    },
    /// Nobody can answer now. The call does not run and is not answered: it fails with
    /// `DECISION_PENDING`, which a host's loop keeps from the model, and runs again once
    /// decided ([`Decisions`](crate::session::Decisions)).
    Pending,
}

impl Approval {
    /// Its kind, as a trace names it: `approved`, `refused`, `edited`, `substituted` or
    /// `pending`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Refused { .. } => "refused",
            Self::Edited { .. } => "edited",
            Self::Substituted { .. } => "substituted",
            Self::Pending => "pending",
        }
    }
}

/// Answers a policy's [`PreDecision::Ask`]: the host's terminal prompt, UI button, or rule.
///
/// Any `Fn(ApprovalRequest) -> impl Future<Output = Approval>` is one. Without an approver,
/// every "ask" is refused.
pub trait Approver: Send + Sync + 'static {
    /// Answers one request.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval>;

    /// A request this approver left [`Pending`](Approval::Pending) was decided by the person
    /// behind the call's client, on a form the call's answerer asked (an MCP client's
    /// elicitation, the terminal): `Approved`, or `Refused` with their reason. The decision
    /// holds only once this returns `Ok`; an `Err` refuses the call. By default, nothing is
    /// recorded.
    fn decided(&self, request: &ApprovalRequest, approval: &Approval) -> Result<(), String> {
        let _ = (request, approval);
        Ok(())
    }
}

impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval> {
        Box::pin(self(request))
    }
}

/// What a post-execute policy does to an outcome: exactly one action, so "replace the content
/// and the value" cannot be said.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PostAction {
    /// Leave the outcome as it is.
    Keep,
    /// Replace what the model sees. The value and the metadata stay. This is not a
    /// confidentiality mechanism: a program dispatching the tool still reads the whole value.
    /// To keep data from programs, use [`ReplaceValue`](Self::ReplaceValue) or
    /// [`Block`](Self::Block). Content a provider would refuse (inline bytes that are not
    /// standard base64, a media type that is not `type/subtype`) withholds the result instead:
    /// a `POLICY_FAILED` failure.
    ReplaceContent(Vec<ContentBlock>),
    /// Replace the value. It is validated against the tool's output schema, then the content
    /// and the metadata are projected from it again; an invalid replacement makes the call an
    /// `INVALID_TOOL_OUTPUT` failure. On a failed call, this makes it a success.
    ReplaceValue(Value),
    /// Make the call a failure with this message, and no value.
    Block(String),
}

impl PostAction {
    /// What it changes, as a trace names it (`replace_content`, `replace_value`, `block`);
    /// `None` for [`Keep`](Self::Keep).
    pub const fn as_str(&self) -> Option<&'static str> {
        match self {
            Self::Keep => None,
            Self::ReplaceContent(_) => Some("replace_content"),
            Self::ReplaceValue(_) => Some("replace_value"),
            Self::Block(_) => Some("block"),
        }
    }
}

/// A post-execute policy's decision: one [`PostAction`], plus any text to inject beside the
/// result.
#[derive(Clone, Debug, PartialEq)]
pub struct PostDecision {
    /// What to do to the outcome.
    pub action: PostAction,
    /// Text for the host to put beside the result.
    pub additional_contexts: Vec<AdditionalContext>,
}

impl PostDecision {
    /// Leaves the outcome as it is.
    pub fn keep() -> Self {
        PostAction::Keep.into()
    }

    /// Replaces what the model sees, keeping the value and metadata.
    pub fn replace_content(content: Vec<ContentBlock>) -> Self {
        PostAction::ReplaceContent(content).into()
    }

    /// Replaces the value; content and metadata are projected from it again.
    pub fn replace_value(value: Value) -> Self {
        PostAction::ReplaceValue(value).into()
    }

    /// Makes the call a failure with this message.
    pub fn block(message: impl Into<String>) -> Self {
        PostAction::Block(message.into()).into()
    }

    /// Adds text to inject beside the result.
    #[must_use]
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        self.additional_contexts.push(AdditionalContext::new(text));
        self
    }
}

impl From<PostAction> for PostDecision {
    fn from(action: PostAction) -> Self {
        Self {
            action,
            additional_contexts: Vec::new(),
        }
    }
}

/// Reviews an outcome after the body (and the wrappers) ran. Policies run in registration
/// order, each seeing the outcome the previous one left; they run for direct and nested calls
/// alike. A panicking policy blocks the call: it fails closed.
///
/// Any `Fn(&ExecuteCall, &ToolOutcome) -> PostDecision` is one:
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::pipeline::{ExecuteCall, PostDecision};
///
/// let redact_tokens = |_call: &ExecuteCall, outcome: &ToolOutcome| match outcome.value() {
///     Some(value) if value.to_string().contains("sk-") => {
///         let redacted = value.to_string().replace("sk-", "[redacted]-");
///         PostDecision::replace_value(serde_json::from_str(&redacted).unwrap())
///     }
///     _ => PostDecision::keep(),
/// };
/// let registry = Registry::builder().post_execute(redact_tokens).build().unwrap();
/// # let _ = registry;
/// ```
pub trait PostExecutePolicy: Send + Sync + 'static {
    /// Reviews one outcome.
    fn review(&self, call: &ExecuteCall, outcome: &ToolOutcome) -> PostDecision;
}

impl<F> PostExecutePolicy for F
where
    F: Fn(&ExecuteCall, &ToolOutcome) -> PostDecision + Send + Sync + 'static,
{
    fn review(&self, call: &ExecuteCall, outcome: &ToolOutcome) -> PostDecision {
        self(call, outcome)
    }
}
