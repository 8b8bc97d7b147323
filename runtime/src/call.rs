//! What comes in: a tool call, and the surface it arrives on.

use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use smol_str::SmolStr;

use crate::depth::{TooDeep, check_depth, dispose_checked};

/// The most JSON text a call's raw arguments may hold: 16 MiB, what one MCP message may carry
/// over stdio. Longer text is refused with `INVALID_TOOL_INPUT` before it is parsed (parsed,
/// JSON text takes many times its size in memory), and the session log keeps it as the text
/// it is.
///
/// ```
/// # use toolprism::MAX_RAW_ARGS_BYTES;
/// assert_eq!(MAX_RAW_ARGS_BYTES, 16 * 1024 * 1024);
/// ```
pub const MAX_RAW_ARGS_BYTES: usize = 16 * 1024 * 1024;

/// Where a call comes from, which decides which projections it gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Surface {
    /// Called by the model: its result enters model context, gets presentation meta and is
    /// bounded.
    Direct,
    /// Called by a program (Code Mode, a script, another tool): the program gets the value;
    /// no presentation meta, no card, no spill.
    Nested,
}

impl Surface {
    /// The name it has in serialized form: `direct` or `nested`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Nested => "nested",
        }
    }
}

/// One call of a tool, as a model or a program makes it.
///
/// Arguments are either parsed JSON or the raw text a provider sent; raw text that is not
/// valid JSON, or is longer than [`MAX_RAW_ARGS_BYTES`], becomes an `INVALID_TOOL_INPUT`
/// failure when dispatched, never a panic.
///
/// ```
/// use toolprism::ToolCall;
/// use serde_json::json;
///
/// let parsed = ToolCall::new("call_1", "read", json!({"path": "a.txt"}));
/// let raw = ToolCall::from_raw_args("call_2", "read", r#"{"path": "a.txt"}"#);
/// assert_eq!(parsed.name(), raw.name());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    // Both are short as a rule (an MCP request id is a number, a tool name most often a word
    // or two): held inline up to 23 bytes, a call allocates for neither.
    id: SmolStr,
    name: SmolStr,
    args: CallArgs,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CallArgs {
    Json(Value),
    Raw(String),
}

impl ToolCall {
    /// A call with already-parsed arguments. The id and the name are anything a
    /// [`SmolStr`] is made from (`&str`, `String`, `Arc<str>`, `Cow<str>`…); up to 23 bytes
    /// they are held inline, without an allocation.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolprism::ToolCall;
    /// use serde_json::json;
    ///
    /// let id: Arc<str> = "call_1".into();
    /// let call = ToolCall::new(id, String::from("read"), json!({"path": "a.txt"}));
    /// assert_eq!((call.id(), call.name()), ("call_1", "read"));
    /// ```
    pub fn new(id: impl Into<SmolStr>, name: impl Into<SmolStr>, args: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args: CallArgs::Json(args),
        }
    }

    /// A call whose arguments are still the JSON text the provider sent.
    pub fn from_raw_args(
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        raw_args: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args: CallArgs::Raw(raw_args.into()),
        }
    }

    /// The call id, as the model or the peer gave it. Treat it as untrusted text.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool name the caller asked for.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments for the session log: the JSON, or the raw text when it does not parse
    /// into JSON within the depth limit or is too long to parse. `Err` for JSON arguments
    /// nested too deep to log.
    pub(crate) fn logged_args(&self) -> Result<(Option<Value>, Option<String>), TooDeep> {
        match &self.args {
            CallArgs::Json(value) => {
                check_depth(value)?;
                Ok((Some(value.clone()), None))
            }
            CallArgs::Raw(text) if text.len() > MAX_RAW_ARGS_BYTES => {
                Ok((None, Some(text.clone())))
            }
            CallArgs::Raw(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) if check_depth(&value).is_ok() => Ok((Some(value), None)),
                // Logged as the text the provider sent, which is faithful at any depth.
                Ok(value) => {
                    dispose_checked(value);
                    Ok((None, Some(text.clone())))
                }
                Err(_) => Ok((None, Some(text.clone()))),
            },
        }
    }

    /// Drops the call, taking over-deep arguments apart without recursion.
    pub(crate) fn dispose(self) {
        if let CallArgs::Json(value) = self.args {
            dispose_checked(value);
        }
    }

    /// The call's parts: id, name, arguments.
    pub(crate) fn into_parts(self) -> (SmolStr, SmolStr, CallArgs) {
        (self.id, self.name, self.args)
    }
}
