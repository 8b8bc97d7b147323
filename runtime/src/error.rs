//! Errors: what a tool body reports ([`ToolError`]), the kinds of failure the pipeline assigns
//! ([`FailureKind`], with their [`codes`]), and the error a failed outcome carries
//! ([`FailureError`]).

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// What kind of failure an outcome is: each kind has its class [`name`](Self::name) and its
/// machine-readable [`code`](Self::code), which is what travels on the wire (in
/// [`ErrorInfo`], MCP `_meta`, the session log). A body's own error keeps the name and code it
/// set ([`ToolError::with_code`]); one without is [`ToolFailed`](Self::ToolFailed).
///
/// ```
/// use toolprism::error::{FailureKind, codes};
///
/// assert_eq!(FailureKind::InvalidInput.code(), codes::INVALID_TOOL_INPUT);
/// assert_eq!(FailureKind::InvalidInput.name(), "ToolInputError");
/// assert_eq!(FailureKind::from_code("UNKNOWN_TOOL"), Some(FailureKind::UnknownTool));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// The arguments were not valid JSON or did not match the input schema; the body never ran.
    InvalidInput,
    /// The tool produced a value that is not lossless JSON or fails its output schema, or its
    /// `render`/`presentation_meta` projection failed.
    InvalidOutput,
    /// No tool of that name is advertised by the snapshot the call was dispatched through.
    UnknownTool,
    /// The body panicked. The panic was contained; the process goes on.
    ToolPanicked,
    /// The body returned an error that carries no code of its own.
    ToolFailed,
    /// A pre-execute policy denied the call; the body never ran.
    DeniedByPolicy,
    /// A policy asked for approval and the approver refused (or there is none); the body never
    /// ran.
    RefusedByApprover,
    /// A post-execute policy blocked the result.
    BlockedByPolicy,
    /// A policy, a wrapper or the approver panicked; the call fails closed.
    PolicyFailed,
    /// The host said no tools may run for this request (e.g. a final step).
    ToolsDisabled,
    /// The output was too big for the model and its full text could not be retained, so no
    /// lossy preview was published.
    OutputNotRetained,
    /// A nested dispatch would go deeper than the limit (a tool calling tools calling tools…).
    NestingTooDeep,
    /// The pipeline itself failed (a bug in toolprism or a dependency); the panic was
    /// contained.
    Internal,
    /// The body ran past the tool's timeout (or the registry's) and was dropped.
    Timeout,
    /// The tool may not be called this way: a tool only programs may call, called by the
    /// model, or one only the model may call, called by a program.
    NotCallable,
    /// The body asked for input ([`ask`](crate::ask)) that nobody here can give: no answerer,
    /// or a client that does not take this kind of request.
    InputUnavailable,
    /// The body asked for input that comes on the call's next round (MCP 2026-07-28): the
    /// call runs again with the answer.
    InputRequired,
    /// An answer to the body's request for input is not what was asked for.
    InvalidAnswer,
    /// The caller the call runs for lacks a scope the tool needs
    /// ([`access`](crate::access)); the body never ran.
    ScopeMissing,
    /// A policy asked for approval and nobody can answer now ([`Approval::Pending`]): the body
    /// did not run, and the call waits for a decision
    /// ([`Decisions`](crate::session::Decisions)). Not an answer for the model.
    ///
    /// [`Approval::Pending`]: crate::pipeline::Approval::Pending
    DecisionPending,
}

impl FailureKind {
    /// Every kind, for matching a code back to its kind.
    const ALL: [Self; 20] = [
        Self::InvalidInput,
        Self::InvalidOutput,
        Self::UnknownTool,
        Self::ToolPanicked,
        Self::ToolFailed,
        Self::DeniedByPolicy,
        Self::RefusedByApprover,
        Self::BlockedByPolicy,
        Self::PolicyFailed,
        Self::ToolsDisabled,
        Self::OutputNotRetained,
        Self::NestingTooDeep,
        Self::Internal,
        Self::Timeout,
        Self::NotCallable,
        Self::InputUnavailable,
        Self::InputRequired,
        Self::InvalidAnswer,
        Self::ScopeMissing,
        Self::DecisionPending,
    ];

    /// The machine-readable code, e.g. `"INVALID_TOOL_INPUT"`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidInput => "INVALID_TOOL_INPUT",
            Self::InvalidOutput => "INVALID_TOOL_OUTPUT",
            Self::UnknownTool => "UNKNOWN_TOOL",
            Self::ToolPanicked => "TOOL_PANICKED",
            Self::ToolFailed => "TOOL_FAILED",
            Self::DeniedByPolicy => "DENIED_BY_POLICY",
            Self::RefusedByApprover => "REFUSED_BY_APPROVER",
            Self::BlockedByPolicy => "BLOCKED_BY_POLICY",
            Self::PolicyFailed => "POLICY_FAILED",
            Self::ToolsDisabled => "TOOLS_DISABLED",
            Self::OutputNotRetained => "OUTPUT_NOT_RETAINED",
            Self::NestingTooDeep => "NESTING_TOO_DEEP",
            Self::Internal => "INTERNAL_ERROR",
            Self::Timeout => "TOOL_TIMEOUT",
            Self::NotCallable => "TOOL_NOT_CALLABLE",
            Self::InputUnavailable => "INPUT_UNAVAILABLE",
            Self::InputRequired => "INPUT_REQUIRED",
            Self::InvalidAnswer => "INVALID_INPUT_ANSWER",
            Self::ScopeMissing => "INSUFFICIENT_SCOPE",
            Self::DecisionPending => "DECISION_PENDING",
        }
    }

    /// The error class, e.g. `"ToolInputError"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::InvalidInput => "ToolInputError",
            Self::InvalidOutput => "ToolOutputError",
            Self::UnknownTool => "UnknownToolError",
            Self::ToolPanicked => "ToolPanic",
            Self::ToolFailed => "ToolError",
            Self::DeniedByPolicy => "ToolDenied",
            Self::RefusedByApprover => "ToolRefused",
            Self::BlockedByPolicy => "ToolBlocked",
            Self::PolicyFailed => "PolicyFailed",
            Self::ToolsDisabled => "ToolsDisabled",
            Self::OutputNotRetained => "OutputNotRetained",
            Self::NestingTooDeep => "NestingTooDeep",
            Self::Internal => "InternalError",
            Self::Timeout => "ToolTimeout",
            Self::NotCallable => "ToolNotCallable",
            Self::InputUnavailable => "InputUnavailable",
            Self::InputRequired => "InputRequired",
            Self::InvalidAnswer => "InvalidInputAnswer",
            Self::ScopeMissing => "ToolForbidden",
            Self::DecisionPending => "DecisionPending",
        }
    }

    /// The kind a code stands for, if it is one of these.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.code() == code)
    }
}

/// The codes of the [`FailureKind`]s, as constants to match on.
pub mod codes {
    use super::FailureKind;

    /// [`FailureKind::InvalidInput`].
    pub const INVALID_TOOL_INPUT: &str = FailureKind::InvalidInput.code();
    /// [`FailureKind::InvalidOutput`].
    pub const INVALID_TOOL_OUTPUT: &str = FailureKind::InvalidOutput.code();
    /// [`FailureKind::UnknownTool`].
    pub const UNKNOWN_TOOL: &str = FailureKind::UnknownTool.code();
    /// [`FailureKind::ToolPanicked`].
    pub const TOOL_PANICKED: &str = FailureKind::ToolPanicked.code();
    /// [`FailureKind::ToolFailed`].
    pub const TOOL_FAILED: &str = FailureKind::ToolFailed.code();
    /// [`FailureKind::DeniedByPolicy`].
    pub const DENIED_BY_POLICY: &str = FailureKind::DeniedByPolicy.code();
    /// [`FailureKind::RefusedByApprover`].
    pub const REFUSED_BY_APPROVER: &str = FailureKind::RefusedByApprover.code();
    /// [`FailureKind::BlockedByPolicy`].
    pub const BLOCKED_BY_POLICY: &str = FailureKind::BlockedByPolicy.code();
    /// [`FailureKind::PolicyFailed`].
    pub const POLICY_FAILED: &str = FailureKind::PolicyFailed.code();
    /// [`FailureKind::ToolsDisabled`].
    pub const TOOLS_DISABLED: &str = FailureKind::ToolsDisabled.code();
    /// [`FailureKind::OutputNotRetained`].
    pub const OUTPUT_NOT_RETAINED: &str = FailureKind::OutputNotRetained.code();
    /// [`FailureKind::NestingTooDeep`].
    pub const NESTING_TOO_DEEP: &str = FailureKind::NestingTooDeep.code();
    /// [`FailureKind::Internal`].
    pub const INTERNAL_ERROR: &str = FailureKind::Internal.code();
    /// [`FailureKind::Timeout`].
    pub const TOOL_TIMEOUT: &str = FailureKind::Timeout.code();
    /// [`FailureKind::NotCallable`].
    pub const TOOL_NOT_CALLABLE: &str = FailureKind::NotCallable.code();
    /// [`FailureKind::InputUnavailable`].
    pub const INPUT_UNAVAILABLE: &str = FailureKind::InputUnavailable.code();
    /// [`FailureKind::InputRequired`].
    pub const INPUT_REQUIRED: &str = FailureKind::InputRequired.code();
    /// [`FailureKind::InvalidAnswer`].
    pub const INVALID_INPUT_ANSWER: &str = FailureKind::InvalidAnswer.code();
    /// [`FailureKind::ScopeMissing`].
    pub const INSUFFICIENT_SCOPE: &str = FailureKind::ScopeMissing.code();
    /// [`FailureKind::DecisionPending`].
    pub const DECISION_PENDING: &str = FailureKind::DecisionPending.code();
}

/// The failure a tool body returns: one message for the model, and optionally a class
/// `name` and a machine-readable `code`.
///
/// Any [`std::error::Error`] converts into it (its message is the error and its sources,
/// joined by `": "`), so `?` works on I/O, parse and `thiserror` errors alike. Like
/// `anyhow::Error`, `ToolError` does not itself implement `std::error::Error`; that is what
/// lets the blanket conversion exist.
///
/// ```
/// use toolprism::ToolError;
///
/// let plain = ToolError::new("file is empty");
/// assert_eq!(plain.message(), "file is empty");
///
/// let coded = ToolError::new("no match for `foo`").with_code("NO_MATCH");
/// assert_eq!(coded.code(), Some("NO_MATCH"));
///
/// let io: ToolError = std::io::Error::new(std::io::ErrorKind::NotFound, "a.txt").into();
/// assert_eq!(io.message(), "a.txt");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    name: Option<Cow<'static, str>>,
    code: Option<Cow<'static, str>>,
}

impl ToolError {
    /// A failure with this message and no code.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            name: None,
            code: None,
        }
    }

    /// Attaches a machine-readable code (e.g. `"NO_MATCH"`).
    #[must_use]
    pub fn with_code(mut self, code: impl Into<Cow<'static, str>>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Attaches an error class name (defaults to `"ToolError"` when a code is present).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The message the model sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code, if one was attached.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The class name, if one was attached.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub(crate) fn into_failure_error(self) -> FailureError {
        let kind = FailureKind::ToolFailed;
        let info = ErrorInfo {
            name: self.name.unwrap_or(Cow::Borrowed(kind.name())).into_owned(),
            code: self.code.unwrap_or(Cow::Borrowed(kind.code())).into_owned(),
        };
        FailureError {
            message: self.message,
            info: Some(info),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E> From<E> for ToolError
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn from(error: E) -> Self {
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Self::new(message)
    }
}

/// The error of a failed outcome: one message, plus optional `{name, code}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureError {
    /// What the model is told.
    pub message: String,
    /// The class and code of the failure, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<ErrorInfo>,
}

/// The class `name` and machine-readable `code` of a failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// The error class, e.g. `"ToolInputError"`.
    pub name: String,
    /// The code, e.g. [`codes::INVALID_TOOL_INPUT`].
    pub code: String,
}

impl FailureError {
    /// A failure of this kind, with its name and code.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            info: Some(ErrorInfo {
                name: kind.name().to_owned(),
                code: kind.code().to_owned(),
            }),
        }
    }

    /// The failure code, if any.
    pub fn code(&self) -> Option<&str> {
        self.info.as_ref().map(|info| info.code.as_str())
    }

    /// The kind, when the code is one of the pipeline's (a body's own code is not).
    pub fn kind(&self) -> Option<FailureKind> {
        self.code().and_then(FailureKind::from_code)
    }
}

impl fmt::Display for FailureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
