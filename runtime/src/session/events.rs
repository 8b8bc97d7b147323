//! The events of a session log, and what an event may hold to be read back as written.

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ToolCall;
use crate::depth::check_depth;
use crate::error::{FailureError, FailureKind};
use crate::outcome::{ToolFailure, ToolOutcome};
use crate::pipeline::Snapshot;
use crate::present::ContentBlock;
use crate::tool::Fingerprint;
use crate::value::present_json;

/// The event format version this crate writes.
pub const LOG_FORMAT_VERSION: u64 = 1;

/// The longest line (one event, newline excluded) the writer writes and the reader reads.
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// One durable event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// A call, as the model made it.
    ToolCall(CallEvent),
    /// What the model saw of a call's result.
    ToolResult(ResultEvent),
    /// What a program saw of a nested dispatch made during a call.
    NestedResult(NestedEvent),
    /// A call that waits for a person's decision ([`Decisions`](super::Decisions)).
    DecisionRequested(DecisionRequest),
    /// A person's decision on a call that waited for one.
    Decided(DecisionEvent),
}

/// A call, as the model made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallEvent {
    /// The call id.
    pub id: String,
    /// The tool name the model asked for.
    pub name: String,
    /// The arguments, when they were JSON (`null` included).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub args: Option<Value>,
    /// The arguments as the provider sent them, when they were not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_args: Option<String>,
    /// The tool's title, when the snapshot that ran the call knew one (for a UI: the model
    /// called it by `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The host's repair of the call logged before it under the same id, attempt `n` (from
    /// 1): these are the corrected arguments ([`turn::Repair`](crate::turn::Repair)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<u32>,
}

impl CallEvent {
    pub(super) fn of(call: &ToolCall) -> io::Result<Self> {
        let (args, raw_args) = call
            .logged_args()
            .map_err(|error| unloggable(&format!("its arguments nest {error}")))?;
        Ok(Self {
            id: call.id().to_owned(),
            name: call.name().to_owned(),
            args,
            raw_args,
            title: None,
            repair: None,
        })
    }

    /// The call as `snapshot` knows it: with its tool's title.
    pub(super) fn in_snapshot(call: &ToolCall, snapshot: &Snapshot) -> io::Result<Self> {
        let mut event = Self::of(call)?;
        event.title = snapshot
            .definition(call.name())
            .and_then(|tool| tool.about().title.clone());
        Ok(event)
    }

    /// The arguments for presentation: the JSON, or the raw text as a string.
    pub fn shown_args(&self) -> Value {
        match (&self.args, &self.raw_args) {
            (Some(args), _) => args.clone(),
            (None, Some(raw)) => Value::String(raw.clone()),
            (None, None) => Value::Null,
        }
    }
}

/// What the model saw of a call's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultEvent {
    /// The call id.
    pub id: String,
    /// The content, after policies and bounding.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The error of a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<FailureError>,
    /// Presentation metadata, when there was any (`null` included).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub meta: Option<Value>,
    /// The canonical value of a success, when the log keeps values
    /// ([`LogOptions::values`](super::LogOptions::values)): what a resumed turn or program
    /// is given back.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub value: Option<Value>,
}

impl ResultEvent {
    pub(super) fn of(id: &str, outcome: &ToolOutcome, values: bool) -> Self {
        Self {
            id: id.to_owned(),
            content: outcome.content().to_vec(),
            is_error: outcome.is_error(),
            error: outcome.error().cloned(),
            meta: outcome.meta().cloned(),
            value: kept_value(outcome, values),
        }
    }

    /// The outcome this result gives back to a resumed turn: the content and metadata the
    /// model was shown, with the value when the log kept it. A success logged without its
    /// value is given back as an `OUTPUT_NOT_RETAINED` failure: it is not run again, and no
    /// value is made up for it.
    pub fn to_outcome(&self) -> ToolOutcome {
        logged_outcome(
            &self.id,
            &self.content,
            self.meta.as_ref(),
            self.error.as_ref(),
            self.value.as_ref().filter(|_| !self.is_error),
        )
    }
}

/// The canonical value of a success, when the log keeps values.
fn kept_value(outcome: &ToolOutcome, values: bool) -> Option<Value> {
    values
        .then(|| outcome.value().map(|value| value.as_value().clone()))
        .flatten()
}

/// An outcome given back from the log: the logged error, the logged value, or, for a success
/// logged without its value, an `OUTPUT_NOT_RETAINED` failure (never a value made up, never a
/// second run).
fn logged_outcome(
    id: &str,
    content: &[ContentBlock],
    meta: Option<&Value>,
    error: Option<&FailureError>,
    value: Option<&Value>,
) -> ToolOutcome {
    let result = match (error, value) {
        (Some(error), _) => Err(error.clone()),
        (None, Some(value)) => Ok(value.clone()),
        (None, None) => {
            return ToolOutcome::Failure(ToolFailure::new(FailureError::new(
                FailureKind::OutputNotRetained,
                format!(
                    "The call `{id}` ran before, and its result was logged without its value: it is not run again."
                ),
            )));
        }
    };
    ToolOutcome::from_log(content.to_vec(), meta.cloned(), result)
}

/// What a program saw of a nested dispatch: its rendered content and whether it failed, and
/// what a program run again is given back in its place (its arguments, its error, and its
/// value when the log keeps values).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedEvent {
    /// The call during which the program made this dispatch.
    pub parent_id: String,
    /// The nested call's id.
    pub id: String,
    /// The tool it called.
    pub name: String,
    /// Its rendered content.
    pub content: Vec<ContentBlock>,
    /// Whether it failed.
    pub is_error: bool,
    /// The arguments it was called with (absent in logs of earlier versions, or when they were
    /// not JSON).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub args: Option<Value>,
    /// The error of a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<FailureError>,
    /// The canonical value of a success, when the log keeps values.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub value: Option<Value>,
}

impl NestedEvent {
    pub(super) fn of(
        parent_id: &str,
        id: String,
        name: String,
        args: Option<Value>,
        outcome: &ToolOutcome,
        values: bool,
    ) -> SessionEvent {
        SessionEvent::NestedResult(Self {
            parent_id: parent_id.to_owned(),
            id,
            name,
            content: outcome.content().to_vec(),
            is_error: outcome.is_error(),
            args,
            error: outcome.error().cloned(),
            value: kept_value(outcome, values),
        })
    }

    /// The outcome this dispatch gives back to a program run again ([`ResultEvent::to_outcome`]).
    pub fn to_outcome(&self) -> ToolOutcome {
        logged_outcome(
            &self.id,
            &self.content,
            None,
            self.error.as_ref(),
            self.value.as_ref().filter(|_| !self.is_error),
        )
    }
}

/// A call that waits for a person's decision: what they are asked to decide on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionRequest {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The call's arguments, validated against the tool's input schema.
    pub args: Value,
    /// The fingerprint of the tool's definition when it was asked: a decision holds for this
    /// definition only.
    pub definition: Fingerprint,
    /// The policy that asked ([`PreExecutePolicy::name`](crate::pipeline::PreExecutePolicy::name)).
    pub policy: String,
    /// What the policy asked.
    pub question: String,
    /// When it was asked, in milliseconds since the Unix epoch.
    pub at: u64,
}

/// A person's decision on a call, as logged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionEvent {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments the decision was asked about.
    pub args: Value,
    /// The policy that asked.
    pub policy: String,
    /// The fingerprint of the definition the decision was made for.
    pub definition: Fingerprint,
    /// The decision.
    pub decision: Decision,
    /// When it was made, in milliseconds since the Unix epoch.
    pub at: u64,
    /// Taken by the person behind the call's client, on a form its answerer asked (an MCP
    /// client's elicitation). Such a decision also settles what the client's earlier rounds
    /// of the same call asked (same tool, arguments, policy and definition): an MCP client
    /// sends each round with a request id of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_form: bool,
}

/// What a person decides about a call that waits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "choice", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run it as the model made it.
    Approve,
    /// Run it with these arguments, valid against the tool's input schema.
    Edit {
        /// The arguments the call runs with.
        arguments: Value,
    },
    /// Do not run it; the model is told why.
    Reject {
        /// Why, for the model.
        reason: String,
    },
    /// Do not run it; answer with this value, valid against the tool's output schema.
    Substitute {
        /// The value the call answers.
        result: Value,
    },
    /// Run it, and every later call of this tool (with these arguments only, when given) the
    /// same policy asks about, while the tool's definition stays as it is.
    AllowAlways {
        /// The only arguments allowed from now on; any, when absent.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present_json"
        )]
        arguments: Option<Value>,
    },
}

/// Why an event cannot be logged faithfully.
pub(super) fn unloggable(problem: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("this event cannot be logged faithfully: {problem}"),
    )
}

/// The rule writer and reader share: what an event may hold to be read back as written.
pub(super) fn check_event(event: &SessionEvent) -> Result<(), String> {
    let (json, what) = match event {
        SessionEvent::ToolCall(call) => (call.args.as_ref(), "its arguments"),
        SessionEvent::ToolResult(result) => {
            if let Some(Err(error)) = result.value.as_ref().map(check_depth) {
                return Err(format!("its value nests {error}"));
            }
            (result.meta.as_ref(), "its presentation metadata")
        }
        SessionEvent::NestedResult(nested) => {
            if let Some(Err(error)) = nested.args.as_ref().map(check_depth) {
                return Err(format!("its arguments nest {error}"));
            }
            (nested.value.as_ref(), "its value")
        }
        SessionEvent::DecisionRequested(request) => (Some(&request.args), "its arguments"),
        SessionEvent::Decided(decided) => {
            if let Err(error) = check_depth(&decided.args) {
                return Err(format!("its arguments nest {error}"));
            }
            match &decided.decision {
                Decision::Edit { arguments }
                | Decision::AllowAlways {
                    arguments: Some(arguments),
                } => (Some(arguments), "its edited arguments"),
                Decision::Substitute { result } => (Some(result), "its substituted result"),
                _ => (None, ""),
            }
        }
    };
    match json.map(check_depth) {
        Some(Err(error)) => Err(format!("{what} nest {error}")),
        _ => Ok(()),
    }
}
