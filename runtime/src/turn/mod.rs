//! The other half of the loop: a model's turn read back from a provider's response, whole
//! ([`read_response`]) or streamed ([`StreamReader`]), as an [`AssistantTurn`] — its text, its
//! tool calls ready to dispatch, and everything the provider needs echoed back kept in place —
//! and, once the calls have run, the messages the next request appends
//! ([`AssistantTurn::next_messages`]). Pure data, like [`lower`](crate::lower): no HTTP client.
//!
//! ```
//! use serde_json::json;
//! use toolprism::lower::Provider;
//! use toolprism::turn::{StreamReader, read_response};
//!
//! // A whole response…
//! let body = br#"{"content":[{"type":"tool_use","id":"toolu_1","name":"add","input":{"a":1,"b":2}}],
//!                 "stop_reason":"tool_use","role":"assistant","type":"message"}"#;
//! let turn = read_response(Provider::Anthropic, body).unwrap();
//! assert_eq!(turn.calls()[0].arguments().json(), Some(&json!({"a": 1, "b": 2})));
//!
//! // …or a stream, in any chunking.
//! let stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n\
//!               data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n\
//!               data: [DONE]\n\n";
//! let mut reader = StreamReader::new(Provider::OpenAiChat);
//! for chunk in stream.as_bytes().chunks(7) {
//!     reader.feed(chunk).unwrap();
//! }
//! let turn = reader.finish().unwrap();
//! assert_eq!(turn.calls()[0].id(), "call_1");
//! assert_eq!(turn.calls()[0].arguments().json(), Some(&json!({"a": 1})));
//! ```
//!
//! # What is read, and what is kept
//!
//! | provider | calls | kept and echoed back as received |
//! |---|---|---|
//! | OpenAI Chat Completions | `tool_calls`; an empty id is replaced by one of toolprism's | Gemini's `extra_content` (thought signatures) where it came |
//! | OpenAI Responses | `function_call` items, answered by `call_id` | reasoning items (with `encrypted_content`), messages, server-side items (`tool_search_call`…) |
//! | Anthropic Messages | `tool_use` blocks, with `caller` for a program's calls | thinking blocks and their signatures, server tool uses and their results, the code execution container |
//! | Gemini (and Vertex) | `functionCall` parts; Vertex `partialArgs` assembled; a call without an id gets `gemini_call_<n>`, never sent back | `thoughtSignature` on the part that carried it, thought text, server-side calls answered in the same response |
//!
//! # Arguments are never guessed
//!
//! No argument text at all (`""`, no delta, no `args`) is `{}`. Text that is not JSON stays
//! the text it was ([`Arguments::NotJson`]): dispatched, it fails with `INVALID_TOOL_INPUT`
//! naming the byte where it broke, and the session log keeps it as sent. A call cut off — by a
//! token limit, or by a stream that ended before the call did — is [`Arguments::CutOff`] and is
//! never dispatched: the model is told its call was cut off. The turn's other calls still run.
//!
//! # Limits
//!
//! Every reader holds at most [`ReadLimits`]: arguments of one call up to
//! [`MAX_RAW_ARGS_BYTES`](crate::MAX_RAW_ARGS_BYTES) (more is [`Arguments::TooLarge`], not
//! held), a line and an event of 32 MiB, 1,024 calls and 64 MiB of text and kept parts in a
//! turn. A stream that breaks its own protocol (a delta for a block never started, an index out
//! of order, a second start for the same call) is a [`TurnError`] naming the event.

mod anthropic;
mod conversation;
mod gemini;
mod grammar;
mod next;
mod openai_chat;
mod openai_responses;
mod read;
mod repair;
mod run;
mod schedule;
mod sse;
mod stream;

use std::fmt;

use serde_json::{Map, Value};
use smol_str::SmolStr;

use crate::ToolCall;
use crate::error::{FailureError, FailureKind};
use crate::lower::Provider;
use crate::outcome::{ToolFailure, ToolOutcome};

pub use conversation::{Conversation, ProviderRequest};
pub use grammar::StreamEvent;
pub use read::{read_response, read_response_with};
pub use repair::{Repair, RepairRequest};
pub use run::{Retry, RunOptions, run_calls};
pub use stream::StreamReader;

/// What one reader may hold. The defaults suit any provider's real traffic; a host lowers them
/// to bound a turn tighter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadLimits {
    /// Argument text of one call (default [`MAX_RAW_ARGS_BYTES`](crate::MAX_RAW_ARGS_BYTES)):
    /// more is [`Arguments::TooLarge`], and no more of it is held.
    pub max_call_bytes: usize,
    /// One line of a stream, and one event's data (default 32 MiB).
    pub max_line_bytes: usize,
    /// Calls in one turn (default 1,024).
    pub max_calls: usize,
    /// Text and kept parts of one turn, and a whole response's body (default 64 MiB).
    pub max_turn_bytes: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            max_call_bytes: crate::MAX_RAW_ARGS_BYTES,
            max_line_bytes: 32 << 20,
            max_calls: 1_024,
            max_turn_bytes: 64 << 20,
        }
    }
}

impl ReadLimits {
    /// These limits with at most `calls` calls a turn.
    #[must_use]
    pub fn with_max_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls;
        self
    }

    /// These limits with at most `bytes` of argument text a call.
    #[must_use]
    pub fn with_max_call_bytes(mut self, bytes: usize) -> Self {
        self.max_call_bytes = bytes;
        self
    }

    /// These limits with lines and events of at most `bytes`.
    #[must_use]
    pub fn with_max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// These limits with at most `bytes` of text and kept parts a turn.
    #[must_use]
    pub fn with_max_turn_bytes(mut self, bytes: usize) -> Self {
        self.max_turn_bytes = bytes;
        self
    }
}

/// Why a response or a stream could not be read. Every message is bounded and names where the
/// input broke; nothing read so far is returned as if it were the whole turn.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// A whole response, or one event of a stream, is not JSON.
    #[error("{what} is not JSON: {message}")]
    NotJson {
        /// `"the response"`, or the event (`"event 3"`).
        what: String,
        /// Where it broke.
        message: String,
    },
    /// JSON that is not what the provider sends: a missing or mistyped field.
    #[error("{what} is not what {provider} sends: {message}")]
    Shape {
        /// The provider read for.
        provider: Provider,
        /// `"the response"`, or the event.
        what: String,
        /// The field and what was wrong with it.
        message: String,
    },
    /// A stream that broke its own protocol: a delta for a block never started, an index out
    /// of order, a second start for the same call.
    #[error("event {event} ({kind}) breaks the protocol of a {provider} stream: {message}")]
    Protocol {
        /// The provider read for.
        provider: Provider,
        /// The event's number in the stream, from 1.
        event: usize,
        /// The event's type.
        kind: String,
        /// What was wrong.
        message: String,
    },
    /// The provider reported an error inside the response or the stream.
    #[error("the provider reported an error: {message}")]
    Provider {
        /// What it said, cut to 1,000 characters.
        message: String,
    },
    /// More than a limit of [`ReadLimits`].
    #[error("{what} is over the limit of {limit}")]
    TooLarge {
        /// What was too large (`"a line"`, `"the turn's calls"`…).
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// Not one outcome per call: [`AssistantTurn::results`] needs them all, in order.
    #[error("the turn has {calls} calls, and {outcomes} outcomes were given")]
    Outcomes {
        /// The turn's calls.
        calls: usize,
        /// The outcomes given.
        outcomes: usize,
    },
    /// A call waits for a decision ([`Decisions`](crate::session::Decisions)): the model is
    /// answered once it is decided and the turn resumed ([`RunOptions::resume`]).
    #[error("call `{id}` waits for a decision: decide it, then run the turn again with resume")]
    DecisionPending {
        /// The call's id.
        id: String,
    },
    /// OpenAI Responses' tool search found tools, and no definitions were given to answer
    /// with ([`AssistantTurn::results_with_tools`]).
    #[error(
        "a tool search's output needs the found tools' definitions as lowered for OpenAI Responses"
    )]
    ToolSearchWithoutTools,
    /// `feed` after an error, or after `finish`.
    #[error("the stream reader has already failed or finished")]
    Finished,
}

/// Why a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model ended its turn.
    Ended,
    /// The model asked for its tool calls to run.
    ToolUse,
    /// A token limit cut the turn off: a call that had not ended is never dispatched.
    MaxTokens,
    /// The stream ended before the provider said the turn was over.
    Interrupted,
    /// Anything else the provider said: a content filter, a refusal, a malformed call, a
    /// pause ([`AssistantTurn::raw_stop_reason`] says which).
    Other,
}

/// A call's arguments, as read.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Arguments {
    /// JSON, parsed (no text at all is `{}`).
    Json(Value),
    /// Text that is not JSON, kept as it was sent. Dispatched, it fails with
    /// `INVALID_TOOL_INPUT` naming the byte where it broke.
    NotJson(String),
    /// The call was cut off before its arguments ended; never dispatched.
    CutOff {
        /// The text received before the cut.
        received: String,
        /// Why: `"max_tokens"`, `"the stream ended"`…
        why: String,
    },
    /// More text than [`ReadLimits::max_call_bytes`]; not held, never dispatched.
    TooLarge {
        /// How many bytes were sent before reading stopped.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
}

impl Arguments {
    /// The parsed arguments, if they are JSON.
    pub fn json(&self) -> Option<&Value> {
        match self {
            Self::Json(value) => Some(value),
            _ => None,
        }
    }

    /// Why these arguments cannot run, in the words the model is told; `None` for JSON.
    ///
    /// ```
    /// use toolprism::turn::Arguments;
    ///
    /// let broken = Arguments::NotJson(r#"{"a": 1,"#.to_owned());
    /// assert!(broken.problem().unwrap().contains("not valid JSON at byte"));
    /// assert_eq!(Arguments::Json(serde_json::json!({})).problem(), None);
    /// ```
    pub fn problem(&self) -> Option<String> {
        match self {
            Self::Json(_) => None,
            Self::NotJson(text) => {
                Some(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                    Err(error) => format!(
                        "the arguments are not valid JSON at byte {}: {error}",
                        crate::text::json_error_byte(text.as_bytes(), &error)
                    ),
                    // A shape serde reads but a value cannot hold (nesting past its limit).
                    Ok(_) => "the arguments could not be read".to_owned(),
                })
            }
            Self::CutOff { received, why } => Some(format!(
                "the call was cut off ({why}) after {} bytes of arguments, so it did not run; call it again with complete arguments",
                received.len()
            )),
            Self::TooLarge { bytes, limit } => Some(format!(
                "the arguments are more than {bytes} bytes of JSON text, more than the {limit} a call may send"
            )),
        }
    }

    /// Arguments from a call's whole text: none is `{}`, JSON is parsed, anything else is kept.
    pub(crate) fn from_text(text: &str, limit: usize) -> Self {
        if text.len() > limit {
            return Self::TooLarge {
                bytes: text.len(),
                limit,
            };
        }
        if text.is_empty() {
            return Self::Json(Value::Object(Map::new()));
        }
        match serde_json::from_str(text) {
            Ok(value) => Self::Json(value),
            Err(_) => Self::NotJson(text.to_owned()),
        }
    }

    /// Arguments from the field a provider sends them in as text (`arguments`): text as
    /// [`from_text`](Self::from_text); an object sent where text belongs is taken as it is;
    /// no field at all is `{}`; anything else is kept as the JSON it was, never coerced.
    pub(crate) fn from_field(field: Option<&Value>, limit: usize) -> Self {
        match field {
            None | Some(Value::Null) => Self::Json(Value::Object(Map::new())),
            Some(Value::String(text)) => Self::from_text(text, limit),
            Some(object @ Value::Object(_)) => Self::Json(object.clone()),
            Some(other) => Self::NotJson(other.to_string()),
        }
    }

    /// The text to echo where a provider takes arguments as text.
    fn echo_text(&self) -> String {
        match self {
            Self::Json(value) => value.to_string(),
            Self::NotJson(text) => text.clone(),
            Self::CutOff { received, .. } => received.clone(),
            Self::TooLarge { .. } => "{}".to_owned(),
        }
    }

    /// The object to echo where a provider takes arguments as an object: a call whose
    /// arguments are not an object is echoed with `{}`, and its result says why it did not run.
    fn echo_object(&self) -> Value {
        match self {
            Self::Json(value @ Value::Object(_)) => value.clone(),
            _ => Value::Object(Map::new()),
        }
    }
}

/// Who made a call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Caller {
    /// The model.
    Model,
    /// A program the provider runs (Anthropic's programmatic tool calling, an OpenAI program):
    /// the id of the server-side tool use that made it.
    Program {
        /// The server-side tool use (`srvtoolu_…`) or program that made the call.
        id: String,
    },
}

/// One tool call of a turn.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadCall {
    id: SmolStr,
    provider_id: Option<String>,
    name: String,
    arguments: Arguments,
    caller: Caller,
    /// The call's element on the wire (a tool call, an item, a block, a part), echoed with the
    /// arguments as read.
    wire: Value,
}

impl ReadCall {
    /// The id results are sent back under: the provider's, or, where it sent none, one of
    /// toolprism's that is stable for the response.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id the provider sent, if it sent one.
    pub fn provider_id(&self) -> Option<&str> {
        self.provider_id.as_deref()
    }

    /// The tool's name, as the model wrote it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments.
    pub fn arguments(&self) -> &Arguments {
        &self.arguments
    }

    /// Who made the call.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The call to dispatch, or, for a call that must not run (cut off, or over the size
    /// limit), the failure the model is told instead.
    pub fn to_call(&self) -> Result<ToolCall, ToolOutcome> {
        match &self.arguments {
            Arguments::Json(value) => Ok(ToolCall::new(
                self.id.clone(),
                self.name.as_str(),
                value.clone(),
            )),
            Arguments::NotJson(text) => Ok(ToolCall::from_raw_args(
                self.id.clone(),
                self.name.as_str(),
                text.as_str(),
            )),
            refused => Err(refusal(format!(
                "`{}`: {}",
                crate::text::printable(&self.name, 80),
                refused.problem().unwrap_or_default()
            ))),
        }
    }
}

fn refusal(message: String) -> ToolOutcome {
    ToolOutcome::Failure(ToolFailure::new(FailureError::new(
        FailureKind::InvalidInput,
        message,
    )))
}

/// One part of a turn, in the order the provider sent it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TurnPart {
    /// Text for the user.
    Text(String),
    /// A tool call: an index into [`AssistantTurn::calls`].
    Call(usize),
    /// Something the provider needs echoed back and the host does not act on: thinking and
    /// its signature, a reasoning item, a server-side tool use or its result.
    Kept(KeptPart),
}

/// A part kept for the echo, as the provider sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptPart {
    kind: String,
    wire: Value,
}

impl KeptPart {
    /// Its kind on the wire: `thinking`, `reasoning`, `server_tool_use`, `tool_search_call`,
    /// `functionCall` (a Gemini call the server ran)…
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The part itself, as it is echoed.
    pub fn wire(&self) -> &Value {
        &self.wire
    }
}

/// A model's turn: its parts in order, its calls, and why it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct AssistantTurn {
    provider: Provider,
    parts: Vec<TurnPart>,
    calls: Vec<ReadCall>,
    /// The text parts' own wire elements, where the provider needs them echoed as they were
    /// (a Responses message item, a Gemini part with a signature); by position in `parts`.
    text_wire: Vec<(usize, Value)>,
    stop: StopReason,
    raw_stop: Option<String>,
    /// Anthropic's code execution container, which the next request names.
    container: Option<String>,
    /// OpenAI Chat: fields of the message to echo beside its content (Gemini's
    /// `extra_content`).
    message_extra: Map<String, Value>,
}

impl AssistantTurn {
    /// The provider whose response this is.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The parts, in order.
    pub fn parts(&self) -> &[TurnPart] {
        &self.parts
    }

    /// The tool calls, in order; server-side uses are not among them.
    pub fn calls(&self) -> &[ReadCall] {
        &self.calls
    }

    /// The text for the user, its parts joined.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                TurnPart::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Why the turn ended.
    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }

    /// The stop reason as the provider wrote it (`"tool_use"`, `"length"`, `"MAX_TOKENS"`…).
    pub fn raw_stop_reason(&self) -> Option<&str> {
        self.raw_stop.as_deref()
    }

    /// Anthropic's code execution container id, which a request continuing a programmatic
    /// tool call must name (`"container"` at the top of the request).
    pub fn container(&self) -> Option<&str> {
        self.container.as_deref()
    }
}

/// JSON from a body or an event, the error naming the byte where it broke.
pub(crate) fn parse_json(bytes: &[u8], what: &str) -> Result<Value, TurnError> {
    serde_json::from_slice(bytes).map_err(|error| TurnError::NotJson {
        what: what.to_owned(),
        message: describe_json_error(bytes, &error),
    })
}

/// `error` with the byte where it happened.
pub(crate) fn describe_json_error(bytes: &[u8], error: &serde_json::Error) -> String {
    format!(
        "{error} (byte {})",
        crate::text::json_error_byte(bytes, error)
    )
}

/// A provider's message, cut for an error.
fn cut_message(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    crate::text::printable(&text, 1_000)
}

/// Builds a turn while a reader reads, holding it to its limits. Parts are reserved in the
/// order they start and filled when they end, so a stream's parts keep their order however
/// long each takes.
#[derive(Clone, Debug)]
pub(crate) struct TurnBuilder {
    provider: Provider,
    limits: ReadLimits,
    slots: Vec<Slot>,
    calls: Vec<Option<ReadCall>>,
    /// The ids calls are answered under, by call index, from their start.
    ids: Vec<(SmolStr, Option<String>)>,
    stop: Option<(StopReason, Option<String>)>,
    container: Option<String>,
    message_extra: Map<String, Value>,
    held: usize,
}

/// A part of a turn being built.
#[derive(Clone, Debug)]
enum Slot {
    /// Text, and its wire element when it must be echoed as it was.
    Text(String, Option<Value>),
    Call(usize),
    Kept(KeptPart),
    /// Reserved for a part that has not ended; dropped if it never does (a thinking block cut
    /// off before its signature cannot be echoed).
    Pending,
}

impl TurnBuilder {
    pub(crate) fn new(provider: Provider, limits: ReadLimits) -> Self {
        Self {
            provider,
            limits,
            slots: Vec::new(),
            calls: Vec::new(),
            ids: Vec::new(),
            stop: None,
            container: None,
            message_extra: Map::new(),
            held: 0,
        }
    }

    fn limits(&self) -> ReadLimits {
        self.limits
    }

    /// Counts `bytes` more held by the turn, refusing past its limit.
    fn hold(&mut self, bytes: usize) -> Result<(), TurnError> {
        self.held = self.held.saturating_add(bytes);
        if self.held > self.limits.max_turn_bytes {
            return Err(TurnError::TooLarge {
                what: "the turn's text and kept parts",
                limit: self.limits.max_turn_bytes,
            });
        }
        Ok(())
    }

    /// Appends text: to the last part if it is text with no wire element of its own, else as a
    /// new part.
    fn push_text(&mut self, text: &str) -> Result<(), TurnError> {
        if text.is_empty() {
            return Ok(());
        }
        self.hold(text.len())?;
        match self.slots.last_mut() {
            Some(Slot::Text(last, None)) => last.push_str(text),
            _ => self.slots.push(Slot::Text(text.to_owned(), None)),
        }
        Ok(())
    }

    /// A text part of its own, echoed as `wire`.
    fn push_text_part(&mut self, text: String, wire: Value) -> Result<(), TurnError> {
        self.hold(text.len())?;
        self.slots.push(Slot::Text(text, Some(wire)));
        Ok(())
    }

    /// Reserves a text part that deltas extend ([`append_text`](Self::append_text)).
    fn reserve_text(&mut self) -> usize {
        self.slots.push(Slot::Text(String::new(), None));
        self.slots.len() - 1
    }

    fn append_text(&mut self, at: usize, delta: &str) -> Result<(), TurnError> {
        self.hold(delta.len())?;
        if let Some(Slot::Text(text, _)) = self.slots.get_mut(at) {
            text.push_str(delta);
        }
        Ok(())
    }

    /// Fills a reserved place with a text part echoed as `wire`.
    fn fill_text(&mut self, at: usize, text: String, wire: Value) -> Result<(), TurnError> {
        self.hold(text.len())?;
        if let Some(slot) = self.slots.get_mut(at) {
            *slot = Slot::Text(text, Some(wire));
        }
        Ok(())
    }

    /// Reserves the place of a part that is filled when it ends.
    fn reserve(&mut self) -> usize {
        self.slots.push(Slot::Pending);
        self.slots.len() - 1
    }

    fn push_kept(&mut self, kind: &str, wire: Value) -> Result<(), TurnError> {
        let at = self.reserve();
        self.fill_kept(at, kind, wire)
    }

    fn fill_kept(&mut self, at: usize, kind: &str, wire: Value) -> Result<(), TurnError> {
        let bytes = crate::bound::json_len_within(&wire, self.limits.max_turn_bytes)
            .unwrap_or(self.limits.max_turn_bytes + 1);
        self.hold(bytes)?;
        if let Some(slot) = self.slots.get_mut(at) {
            *slot = Slot::Kept(KeptPart {
                kind: kind.to_owned(),
                wire,
            });
        }
        Ok(())
    }

    /// Starts a call: its place among the parts and the id it is answered under (the
    /// provider's, or one assigned by its index).
    fn start_call(&mut self, provider_id: Option<&str>) -> Result<usize, TurnError> {
        if self.calls.len() >= self.limits.max_calls {
            return Err(TurnError::TooLarge {
                what: "the turn's number of calls",
                limit: self.limits.max_calls,
            });
        }
        let index = self.calls.len();
        let provider_id = provider_id.filter(|id| !id.is_empty()).map(str::to_owned);
        let id = match &provider_id {
            Some(id) => SmolStr::new(id),
            None if self.provider == Provider::Gemini => {
                SmolStr::new(format!("gemini_call_{index}"))
            }
            None => SmolStr::new(format!("toolprism_call_{index}")),
        };
        self.calls.push(None);
        self.ids.push((id, provider_id));
        self.slots.push(Slot::Call(index));
        Ok(index)
    }

    /// Ends a started call; returns it as read.
    fn end_call(
        &mut self,
        index: usize,
        name: String,
        arguments: Arguments,
        caller: Caller,
        wire: Value,
    ) -> &ReadCall {
        let (id, provider_id) = self.ids[index].clone();
        self.calls[index].insert(ReadCall {
            id,
            provider_id,
            name,
            arguments,
            caller,
            wire,
        })
    }

    /// Starts and ends a call that arrived whole.
    fn push_call(
        &mut self,
        provider_id: Option<&str>,
        name: String,
        arguments: Arguments,
        caller: Caller,
        wire: Value,
    ) -> Result<usize, TurnError> {
        let index = self.start_call(provider_id)?;
        self.end_call(index, name, arguments, caller, wire);
        Ok(index)
    }

    /// The id a started call is answered under.
    fn call_id(&self, index: usize) -> &str {
        &self.ids[index].0
    }

    fn stop(&mut self, reason: StopReason, raw: Option<String>) {
        self.stop = Some((reason, raw));
    }

    fn has_stop(&self) -> bool {
        self.stop.is_some()
    }

    /// Whether the stream ended before its provider said the turn was complete.
    fn interrupted(&self) -> bool {
        matches!(self.stop, Some((StopReason::Interrupted, _)))
    }

    /// Marks every call cut off, however complete it looked: a turn the stream did not finish
    /// may have been cut between a call's end and what would have changed it (a server-side
    /// answer, a later call), so none of it runs.
    fn cut_every_call(&mut self, why: &str) {
        for call in self.calls.iter_mut().flatten() {
            let received = match &call.arguments {
                Arguments::Json(value) => value.to_string(),
                Arguments::NotJson(text) => text.clone(),
                _ => continue,
            };
            call.arguments = Arguments::CutOff {
                received,
                why: why.to_owned(),
            };
        }
    }

    /// Marks the last call cut off when it is the turn's last part and the turn was cut off:
    /// a whole response has no other sign of where a call ended.
    fn cut_trailing_call(&mut self, why: &str) {
        let Some(Slot::Call(index)) = self.slots.last() else {
            return;
        };
        let Some(call) = self.calls[*index].as_mut() else {
            return;
        };
        let received = match &call.arguments {
            Arguments::Json(value) => value.to_string(),
            Arguments::NotJson(text) => text.clone(),
            _ => return,
        };
        call.arguments = Arguments::CutOff {
            received,
            why: why.to_owned(),
        };
    }

    fn build(self) -> AssistantTurn {
        let (stop, raw_stop) = self.stop.unwrap_or((StopReason::Other, None));
        let mut parts = Vec::with_capacity(self.slots.len());
        let mut text_wire = Vec::new();
        for slot in self.slots {
            match slot {
                Slot::Text(text, wire) => {
                    if let Some(wire) = wire {
                        text_wire.push((parts.len(), wire));
                    } else if text.is_empty() {
                        continue;
                    }
                    parts.push(TurnPart::Text(text));
                }
                Slot::Call(index) => parts.push(TurnPart::Call(index)),
                Slot::Kept(kept) => parts.push(TurnPart::Kept(kept)),
                Slot::Pending => {}
            }
        }
        let calls = self
            .calls
            .into_iter()
            .zip(self.ids)
            .map(|(call, (id, provider_id))| {
                // A reader ends every call it starts; one it could not is a cut-off call.
                call.unwrap_or_else(|| ReadCall {
                    id,
                    provider_id,
                    name: String::new(),
                    arguments: Arguments::CutOff {
                        received: String::new(),
                        why: "the stream ended".to_owned(),
                    },
                    caller: Caller::Model,
                    wire: Value::Null,
                })
            })
            .collect();
        AssistantTurn {
            provider: self.provider,
            parts,
            calls,
            text_wire,
            stop,
            raw_stop,
            container: self.container,
            message_extra: self.message_extra,
        }
    }
}

/// A field of an object, or a shape error naming it.
fn field<'a>(
    provider: Provider,
    value: &'a Value,
    name: &str,
    what: &str,
) -> Result<&'a Value, TurnError> {
    value.get(name).ok_or_else(|| TurnError::Shape {
        provider,
        what: what.to_owned(),
        message: format!("it has no `{name}`"),
    })
}

/// Sets `value` at `keys` inside `target`, where every step is an object (a provider's element
/// of another shape is left as it is, never a panic).
fn set_in(target: &mut Value, keys: &[&str], value: Value) {
    let Some((last, path)) = keys.split_last() else {
        return;
    };
    let mut slot = target;
    for key in path {
        match slot.get_mut(*key) {
            Some(next @ Value::Object(_)) => slot = next,
            _ => return,
        }
    }
    if let Value::Object(object) = slot {
        object.insert((*last).to_owned(), value);
    }
}

/// A string field, if present and a string.
fn str_field<'a>(value: &'a Value, name: &str) -> Option<&'a str> {
    value.get(name).and_then(Value::as_str)
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ended => "ended",
            Self::ToolUse => "tool use",
            Self::MaxTokens => "max tokens",
            Self::Interrupted => "interrupted",
            Self::Other => "other",
        })
    }
}
