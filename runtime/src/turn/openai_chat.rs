//! OpenAI Chat Completions: a `chat.completion`, or a stream of `chat.completion.chunk`s
//! ended by `[DONE]`. Only the first choice is read. A streamed call's arguments are complete
//! when the choice's `finish_reason` arrives (or `[DONE]`): a buffer that happens to parse may
//! still be the prefix of longer arguments.

use serde_json::{Map, Value, json};

use super::grammar::{EventError, ProviderStream, StreamEvent};
use super::{Arguments, Caller, StopReason, TurnBuilder, TurnError, cut_message, field, str_field};
use crate::lower::Provider;

const PROVIDER: Provider = Provider::OpenAiChat;

fn stop_reason(raw: &str) -> StopReason {
    match raw {
        "stop" => StopReason::Ended,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

/// The fields of a tool call echoed beside its id, name and arguments (Gemini's
/// OpenAI-compatible endpoint puts thought signatures in `extra_content`).
fn extra_of(value: &Value) -> Map<String, Value> {
    let mut extra = Map::new();
    if let Some(content) = value.get("extra_content") {
        extra.insert("extra_content".to_owned(), content.clone());
    }
    extra
}

/// A tool call as it is echoed. No argument text at all is echoed as `{}`: an empty string
/// would be refused by the provider on every later request that replays the turn.
fn call_wire(id: &str, name: &str, arguments: &str, extra: Map<String, Value>) -> Value {
    let arguments = if arguments.is_empty() {
        "{}"
    } else {
        arguments
    };
    let mut wire = json!({
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    });
    if let Value::Object(object) = &mut wire {
        object.extend(extra);
    }
    wire
}

fn provider_error(value: &Value) -> Option<TurnError> {
    let error = value.get("error")?;
    let message = error.get("message").unwrap_or(error);
    Some(TurnError::Provider {
        message: cut_message(message),
    })
}

pub(super) fn read_whole(turn: &mut TurnBuilder, value: Value) -> Result<(), TurnError> {
    if let Some(error) = provider_error(&value) {
        return Err(error);
    }
    let what = "the response";
    let choice = field(PROVIDER, &value, "choices", what)?
        .as_array()
        .and_then(|choices| choices.first())
        .ok_or_else(|| TurnError::Shape {
            provider: PROVIDER,
            what: what.to_owned(),
            message: "`choices` is not a list with a first choice".to_owned(),
        })?;
    let message = field(PROVIDER, choice, "message", "the first choice")?;
    turn.message_extra = extra_of(message);
    if let Some(text) = str_field(message, "content") {
        turn.push_text(text)?;
    }
    let max_call_bytes = turn.limits().max_call_bytes;
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = field(PROVIDER, call, "function", "a tool call")?;
        let name = str_field(function, "name").unwrap_or_default().to_owned();
        let arguments = Arguments::from_field(function.get("arguments"), max_call_bytes);
        let text =
            str_field(function, "arguments").map_or_else(|| arguments.echo_text(), str::to_owned);
        let index = turn.start_call(str_field(call, "id"))?;
        let wire = call_wire(turn.call_id(index), &name, &text, extra_of(call));
        turn.end_call(index, name, arguments, Caller::Model, wire);
    }
    match str_field(choice, "finish_reason") {
        Some(raw) => {
            let reason = stop_reason(raw);
            if reason == StopReason::MaxTokens {
                turn.cut_trailing_call(raw);
            }
            turn.stop(reason, Some(raw.to_owned()));
        }
        None => turn.stop(StopReason::Other, None),
    }
    Ok(())
}

/// A call being streamed.
#[derive(Clone, Debug)]
struct OpenCall {
    index: usize,
    name: String,
    arguments: String,
    /// Bytes sent past the limit; the text is no longer held.
    dropped: Option<usize>,
    extra: Map<String, Value>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct ChatStream {
    calls: Vec<OpenCall>,
    finish: Option<String>,
    done: bool,
}

impl ChatStream {
    fn tool_call_delta(
        &mut self,
        turn: &mut TurnBuilder,
        delta: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let function = delta.get("function");
        let name = function.and_then(|f| str_field(f, "name"));
        let id = str_field(delta, "id");
        let position = self.position(turn, delta, id)?;
        match position.cmp(&self.calls.len()) {
            std::cmp::Ordering::Equal => {
                let Some(name) = name else {
                    return Err(
                        format!("a delta for tool call {position}, which never started").into(),
                    );
                };
                let index = turn.start_call(id)?;
                out.push(StreamEvent::CallStarted {
                    index,
                    id: turn.call_id(index).to_owned(),
                    name: name.to_owned(),
                });
                self.calls.push(OpenCall {
                    index,
                    name: name.to_owned(),
                    arguments: String::new(),
                    dropped: None,
                    extra: extra_of(delta),
                });
            }
            std::cmp::Ordering::Greater => {
                return Err(format!(
                    "tool call {position} starts before tool call {}",
                    self.calls.len()
                )
                .into());
            }
            std::cmp::Ordering::Less => {
                let call = &self.calls[position];
                let started_id = turn.call_id(call.index);
                if id.is_some_and(|id| !id.is_empty() && id != started_id)
                    || name.is_some_and(|name| !name.is_empty() && name != call.name)
                {
                    return Err(format!("a second start for tool call {position}").into());
                }
            }
        }
        let call = &mut self.calls[position];
        if let Some(extra) = delta.get("extra_content") {
            call.extra.insert("extra_content".to_owned(), extra.clone());
        }
        let fragment = function
            .and_then(|f| str_field(f, "arguments"))
            .unwrap_or_default();
        if fragment.is_empty() {
            return Ok(());
        }
        let limit = turn.limits().max_call_bytes;
        match &mut call.dropped {
            Some(bytes) => *bytes += fragment.len(),
            None if call.arguments.len() + fragment.len() > limit => {
                call.dropped = Some(call.arguments.len() + fragment.len());
                call.arguments = String::new();
            }
            None => call.arguments.push_str(fragment),
        }
        out.push(StreamEvent::ArgumentsDelta {
            index: call.index,
            delta: fragment.to_owned(),
        });
        Ok(())
    }

    /// The call a delta is for: its `index`, or where a delta without one goes.
    fn position(
        &self,
        turn: &TurnBuilder,
        delta: &Value,
        id: Option<&str>,
    ) -> Result<usize, EventError> {
        match delta.get("index") {
            Some(index) => {
                let index = index
                    .as_u64()
                    .ok_or("a tool call `index` that is not a number")?;
                Ok(usize::try_from(index).map_err(|_| "a tool call index out of range")?)
            }
            // Some OpenAI-compatible servers (Mistral's) send no `index`: a delta with an id
            // of its own starts a call, any other continues the call in progress.
            None => self.unindexed_position(turn, id),
        }
    }

    /// Where a delta without `index` goes: a new call when it carries an id no call has (or no
    /// call is in progress), else the call in progress.
    fn unindexed_position(
        &self,
        turn: &TurnBuilder,
        id: Option<&str>,
    ) -> Result<usize, EventError> {
        let Some(last) = self.calls.last() else {
            return match id {
                Some(id) if !id.is_empty() => Ok(0),
                _ => Err("a tool call delta has neither `index` nor an id".into()),
            };
        };
        let new_id = id.is_some_and(|id| !id.is_empty() && id != turn.call_id(last.index));
        Ok(if new_id {
            self.calls.len()
        } else {
            self.calls.len() - 1
        })
    }

    /// Ends every call: complete, or, when `cut` says why, the last one cut off (each earlier
    /// one ended when the next one started).
    fn end_calls(&mut self, turn: &mut TurnBuilder, cut: Option<&str>, out: &mut Vec<StreamEvent>) {
        let limit = turn.limits().max_call_bytes;
        let last = self.calls.len().checked_sub(1);
        for (position, call) in self.calls.drain(..).enumerate() {
            let arguments = match (call.dropped, cut) {
                (Some(bytes), _) => Arguments::TooLarge { bytes, limit },
                (None, Some(why)) if Some(position) == last => Arguments::CutOff {
                    received: call.arguments.clone(),
                    why: why.to_owned(),
                },
                (None, _) => Arguments::from_text(&call.arguments, limit),
            };
            let ended = matches!(arguments, Arguments::Json(_) | Arguments::NotJson(_));
            let wire = call_wire(
                turn.call_id(call.index),
                &call.name,
                &call.arguments,
                call.extra,
            );
            let read = turn.end_call(call.index, call.name, arguments, Caller::Model, wire);
            if ended {
                out.push(StreamEvent::CallEnded(read.clone()));
            }
        }
    }
}

impl ProviderStream for ChatStream {
    fn forked(&self) -> Box<dyn ProviderStream + Send + Sync> {
        Box::new(self.clone())
    }

    fn event(
        &mut self,
        turn: &mut TurnBuilder,
        data: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        if data == b"[DONE]" {
            self.done = true;
            return Ok(());
        }
        let value = super::grammar::event_json(data)?;
        if let Some(error) = provider_error(&value) {
            return Err(error.into());
        }
        for choice in value
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|choice| choice.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        {
            if let Some(delta) = choice.get("delta") {
                if let Some(text) = str_field(delta, "content") {
                    turn.push_text(text)?;
                    if !text.is_empty() {
                        out.push(StreamEvent::Text(text.to_owned()));
                    }
                }
                for call in delta
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.tool_call_delta(turn, call, out)?;
                }
                if let Some(extra) = delta.get("extra_content") {
                    turn.message_extra
                        .insert("extra_content".to_owned(), extra.clone());
                }
            }
            if let Some(raw) = str_field(choice, "finish_reason") {
                let reason = stop_reason(raw);
                let cut = (reason == StopReason::MaxTokens).then_some(raw);
                self.end_calls(turn, cut, out);
                self.finish = Some(raw.to_owned());
                turn.stop(reason, Some(raw.to_owned()));
            }
        }
        Ok(())
    }

    fn kind_of(&self, _data: &[u8]) -> String {
        "chat.completion.chunk".to_owned()
    }

    fn finish(
        &mut self,
        turn: &mut TurnBuilder,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), TurnError> {
        if self.finish.is_some() {
            return Ok(());
        }
        if self.done {
            // `[DONE]` without a finish reason: the stream ended as it should.
            self.end_calls(turn, None, out);
            turn.stop(StopReason::Ended, None);
        } else {
            // A call ended when the next one started; the last one had not.
            self.end_calls(turn, Some("the stream ended"), out);
            turn.stop(StopReason::Interrupted, None);
        }
        Ok(())
    }
}
