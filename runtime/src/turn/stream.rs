//! Reading a streamed response as it arrives: server-sent events in any chunking, each event
//! read once (never a growing buffer read again), what a UI shows yielded as it happens, and
//! each call yielded when its provider says it ended.

use super::anthropic::AnthropicStream;
use super::gemini::GeminiStream;
use super::grammar::{EventError, ProviderStream, StreamEvent};
use super::openai_chat::ChatStream;
use super::openai_responses::ResponsesStream;
use super::sse::{FeedError, SseDecoder, SseError};
use super::{AssistantTurn, ReadLimits, TurnBuilder, TurnError};
use crate::lower::Provider;

/// Reads one provider's stream, fed bytes as they arrive.
///
/// ```
/// use toolprism::lower::Provider;
/// use toolprism::turn::{StreamEvent, StreamReader};
///
/// let mut reader = StreamReader::new(Provider::Anthropic);
/// let events = reader.feed(concat!(
///     "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"add\",\"input\":{}}}\n\n",
///     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": 1}\"}}\n\n",
/// ).as_bytes()).unwrap();
/// assert!(matches!(&events[0], StreamEvent::CallStarted { name, .. } if name == "add"));
/// // Not ended yet: `{"a": 1}` parses, but it could be the start of longer arguments.
/// assert!(!events.iter().any(|event| matches!(event, StreamEvent::CallEnded(_))));
/// let events = reader.feed(b"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n").unwrap();
/// assert!(matches!(&events[0], StreamEvent::CallEnded(call) if call.id() == "toolu_1"));
/// ```
#[derive(Debug)]
pub struct StreamReader {
    provider: Provider,
    sse: SseDecoder,
    grammar: Box<dyn ProviderStream + Send + Sync>,
    turn: Option<TurnBuilder>,
    /// Events read so far, for errors naming one.
    events: usize,
}

impl StreamReader {
    /// A reader of `provider`'s stream, within the default [`ReadLimits`].
    pub fn new(provider: Provider) -> Self {
        Self::with_limits(provider, ReadLimits::default())
    }

    /// A reader within these limits.
    pub fn with_limits(provider: Provider, limits: ReadLimits) -> Self {
        let grammar: Box<dyn ProviderStream + Send + Sync> = match provider {
            Provider::OpenAiChat => Box::<ChatStream>::default(),
            Provider::OpenAiResponses => Box::<ResponsesStream>::default(),
            Provider::Anthropic => Box::<AnthropicStream>::default(),
            Provider::Gemini => Box::<GeminiStream>::default(),
        };
        Self {
            provider,
            sse: SseDecoder::new(limits.max_line_bytes, limits.max_line_bytes),
            grammar,
            turn: Some(TurnBuilder::new(provider, limits)),
            events: 0,
        }
    }

    /// Reads the next bytes of the stream; returns what they said. After an error the reader
    /// is spent: every later call fails with [`TurnError::Finished`].
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, TurnError> {
        let mut out = Vec::new();
        self.feed_into(bytes, &mut out)?;
        Ok(out)
    }

    /// [`feed`](Self::feed), appending what the bytes said to `out`.
    pub fn feed_into(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), TurnError> {
        let Some(turn) = self.turn.as_mut() else {
            return Err(TurnError::Finished);
        };
        let (provider, grammar, events) = (self.provider, &mut self.grammar, &mut self.events);
        let result = self.sse.feed(bytes, &mut |data| {
            *events += 1;
            read_event(provider, grammar.as_mut(), turn, *events, data, out)
        });
        self.check(result)
    }

    /// The end of the stream: the turn as read. A call that had not ended is cut off, never
    /// to be dispatched; and when the stream ended before the provider said the turn was
    /// complete (a connection lost, [`StopReason::Interrupted`](super::StopReason::Interrupted)),
    /// every call is cut off, those that had ended included: a host dispatches the calls of a
    /// finished turn, not those a [`StreamEvent::CallEnded`] announced along the way.
    pub fn finish(self) -> Result<AssistantTurn, TurnError> {
        self.finish_with_events().map(|(turn, _)| turn)
    }

    /// [`finish`](Self::finish), with what the end of the stream said: a last event without
    /// its blank line, calls that the end of the stream completed.
    pub fn finish_with_events(mut self) -> Result<(AssistantTurn, Vec<StreamEvent>), TurnError> {
        let mut out = Vec::new();
        let Some(turn) = self.turn.as_mut() else {
            return Err(TurnError::Finished);
        };
        let (provider, grammar, events) = (self.provider, &mut self.grammar, &mut self.events);
        let result = self.sse.finish(&mut |data| {
            *events += 1;
            read_event(provider, grammar.as_mut(), turn, *events, data, &mut out)
        });
        self.check(result)?;
        let mut turn = self.turn.take().ok_or(TurnError::Finished)?;
        self.grammar.finish(&mut turn, &mut out)?;
        if turn.interrupted() {
            turn.cut_every_call("the stream ended before the provider said the turn was complete");
        }
        Ok((turn.build(), out))
    }

    /// The same reader, as far as it has read, to read on apart: what the stream would give
    /// if it ended here ([`finish`](Self::finish) the fork), while the reader goes on.
    #[must_use]
    pub fn fork(&self) -> Self {
        Self {
            provider: self.provider,
            sse: self.sse.clone(),
            grammar: self.grammar.forked(),
            turn: self.turn.clone(),
            events: self.events,
        }
    }

    /// The provider this reader reads.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Turns a framing or event error into a [`TurnError`], spending the reader.
    fn check(&mut self, result: Result<(), FeedError>) -> Result<(), TurnError> {
        let Err(error) = result else {
            return Ok(());
        };
        self.turn = None;
        Err(match error {
            FeedError::Sse(SseError::LineTooLong(limit)) => TurnError::TooLarge {
                what: "a line of the stream",
                limit,
            },
            FeedError::Sse(SseError::EventTooLarge(limit)) => TurnError::TooLarge {
                what: "an event of the stream",
                limit,
            },
            FeedError::Event(error) => error,
        })
    }
}

/// Reads one event, naming it in a protocol error.
fn read_event(
    provider: Provider,
    grammar: &mut (dyn ProviderStream + Send + Sync),
    turn: &mut TurnBuilder,
    number: usize,
    data: &[u8],
    out: &mut Vec<StreamEvent>,
) -> Result<(), TurnError> {
    grammar.event(turn, data, out).map_err(|error| match error {
        EventError::Turn(error) => error,
        EventError::Protocol(message) => TurnError::Protocol {
            provider,
            event: number,
            kind: grammar.kind_of(data),
            message,
        },
    })
}
