//! Errors: what a tool body reports, and the failure classes the pipeline assigns.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Failure codes the pipeline assigns. A model, a host or a test can match on them.
pub mod codes {
    /// The arguments were not valid JSON or did not match the input schema; the body never ran.
    pub const INVALID_TOOL_INPUT: &str = "INVALID_TOOL_INPUT";
    /// The tool produced a value that is not lossless JSON or fails its output schema, or its
    /// `render`/`meta` projection failed.
    pub const INVALID_TOOL_OUTPUT: &str = "INVALID_TOOL_OUTPUT";
    /// No tool of that name is advertised by the snapshot the call was dispatched through.
    pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
    /// The body panicked. The panic was contained; the process goes on.
    pub const TOOL_PANICKED: &str = "TOOL_PANICKED";
    /// The body returned an error that carries no code of its own.
    pub const TOOL_FAILED: &str = "TOOL_FAILED";
    /// A pre-execute policy denied the call; the body never ran.
    pub const DENIED_BY_POLICY: &str = "DENIED_BY_POLICY";
    /// A policy asked for approval and the approver refused (or there is none); the body never
    /// ran.
    pub const REFUSED_BY_APPROVER: &str = "REFUSED_BY_APPROVER";
    /// A post-execute policy blocked the result.
    pub const BLOCKED_BY_POLICY: &str = "BLOCKED_BY_POLICY";
    /// A policy or wrapper panicked; the call fails closed.
    pub const POLICY_FAILED: &str = "POLICY_FAILED";
    /// The host said no tools may run for this request (e.g. a final step).
    pub const TOOLS_DISABLED: &str = "TOOLS_DISABLED";
    /// The output was too big for the model and its full text could not be retained, so no
    /// lossy preview was published.
    pub const OUTPUT_NOT_RETAINED: &str = "OUTPUT_NOT_RETAINED";
    /// The pipeline itself failed (a bug in toolprism or a dependency); the panic was
    /// contained.
    pub const INTERNAL_ERROR: &str = "INTERNAL_ERROR";
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
        let info = ErrorInfo {
            name: self.name.unwrap_or(Cow::Borrowed("ToolError")).into_owned(),
            code: self
                .code
                .unwrap_or(Cow::Borrowed(codes::TOOL_FAILED))
                .into_owned(),
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
    pub(crate) fn coded(name: &str, code: &str, message: String) -> Self {
        Self {
            message,
            info: Some(ErrorInfo {
                name: name.to_owned(),
                code: code.to_owned(),
            }),
        }
    }

    /// The failure code, if any.
    pub fn code(&self) -> Option<&str> {
        self.info.as_ref().map(|info| info.code.as_str())
    }
}

impl fmt::Display for FailureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
