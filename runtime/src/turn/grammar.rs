//! What a provider's stream grammar is to the reader that drives it: the events a stream
//! yields, the grammar's interface, and how an event's JSON is read.

use serde_json::Value;

use super::{ReadCall, TurnBuilder, TurnError};

/// What a stream says as it goes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// Text for the user.
    Text(String),
    /// A tool call started: its index among the turn's calls, the id it is answered under,
    /// and the tool's name.
    CallStarted {
        /// The call's index among the turn's calls.
        index: usize,
        /// The id it is answered under.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a call's argument text.
    ArgumentsDelta {
        /// The call's index among the turn's calls.
        index: usize,
        /// The text.
        delta: String,
    },
    /// A call ended with its arguments complete: it may be dispatched now. A call cut off, or
    /// over the size limit, never ends this way; it is in the finished turn, to be refused.
    CallEnded(ReadCall),
}

/// Why one event could not be read: it broke the stream's protocol (said how), or something
/// else a [`TurnError`] says (a limit, the provider's own error).
#[derive(Debug)]
pub(super) enum EventError {
    Protocol(String),
    Turn(TurnError),
}

impl From<TurnError> for EventError {
    fn from(error: TurnError) -> Self {
        Self::Turn(error)
    }
}

impl From<String> for EventError {
    fn from(message: String) -> Self {
        Self::Protocol(message)
    }
}

impl From<&str> for EventError {
    fn from(message: &str) -> Self {
        Self::Protocol(message.to_owned())
    }
}

/// One provider's stream grammar.
pub(super) trait ProviderStream: std::fmt::Debug {
    /// Reads one event's data.
    fn event(
        &mut self,
        turn: &mut TurnBuilder,
        data: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError>;

    /// The event's type, for an error naming it.
    fn kind_of(&self, data: &[u8]) -> String {
        type_of(data)
    }

    /// The same stream, read so far, to read on apart.
    fn forked(&self) -> Box<dyn ProviderStream + Send + Sync>;

    /// The end of the stream: what had not ended is cut off.
    fn finish(
        &mut self,
        turn: &mut TurnBuilder,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), TurnError>;
}

/// An event's JSON, or why it is not.
pub(super) fn event_json(data: &[u8]) -> Result<Value, EventError> {
    serde_json::from_slice(data).map_err(|error| {
        EventError::Protocol(format!(
            "it is not JSON: {}",
            super::describe_json_error(data, &error)
        ))
    })
}

/// The `type` of an event's JSON, read without parsing the event again when it is the first
/// field (as every provider writes it); else `"event"`.
pub(super) fn type_of(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(&data[..data.len().min(200)]);
    text.split_once("\"type\"")
        .and_then(|(_, rest)| rest.split('"').nth(1))
        .map_or_else(
            || "event".to_owned(),
            |kind| crate::text::printable(kind, 64),
        )
}
