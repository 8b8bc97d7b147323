//! The events of a session log, and what an event may hold to be read back as written.

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ToolCall;
use crate::depth::check_depth;
use crate::error::FailureError;
use crate::outcome::ToolOutcome;
use crate::pipeline::Snapshot;
use crate::present::ContentBlock;
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
}

impl ResultEvent {
    pub(super) fn of(id: &str, outcome: &ToolOutcome) -> Self {
        Self {
            id: id.to_owned(),
            content: outcome.content().to_vec(),
            is_error: outcome.is_error(),
            error: outcome.error().cloned(),
            meta: outcome.meta().cloned(),
        }
    }
}

/// What a program saw of a nested dispatch: its rendered content and whether it failed.
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
}

impl NestedEvent {
    pub(super) fn of(
        parent_id: &str,
        id: String,
        name: String,
        outcome: &ToolOutcome,
    ) -> SessionEvent {
        SessionEvent::NestedResult(Self {
            parent_id: parent_id.to_owned(),
            id,
            name,
            content: outcome.content().to_vec(),
            is_error: outcome.is_error(),
        })
    }
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
        SessionEvent::ToolResult(result) => (result.meta.as_ref(), "its presentation metadata"),
        SessionEvent::NestedResult(_) => (None, ""),
    };
    match json.map(check_depth) {
        Some(Err(error)) => Err(format!("{what} nest {error}")),
        _ => Ok(()),
    }
}
