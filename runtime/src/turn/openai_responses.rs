//! OpenAI Responses: a `response` whose `output` is a list of items, or a stream of events
//! around each item (`response.output_item.added` … `response.output_item.done`). Calls are
//! `function_call` items, answered by `call_id`; every other item (reasoning with its
//! `encrypted_content`, messages, server-side tool search) is echoed back as it was. Streamed,
//! an item is taken from its `done` event: the `added` one may carry an unfinished
//! `encrypted_content`.

use serde_json::{Value, json};

use super::grammar::{EventError, ProviderStream, StreamEvent};
use super::{Arguments, Caller, StopReason, TurnBuilder, TurnError, cut_message, field, str_field};
use crate::lower::Provider;
use crate::search;

const PROVIDER: Provider = Provider::OpenAiResponses;

fn caller_of(item: &Value) -> Caller {
    match item.get("caller") {
        Some(caller) if str_field(caller, "type") == Some("program") => Caller::Program {
            id: str_field(caller, "caller_id")
                .unwrap_or_default()
                .to_owned(),
        },
        _ => Caller::Model,
    }
}

/// Whether an item is a call the host answers: a `function_call`, or a `tool_search_call` the
/// client executes (answered by the tool named [`search::DEFAULT_NAME`]).
fn is_client_call(item: &Value) -> bool {
    match str_field(item, "type") {
        Some("function_call") => true,
        Some("tool_search_call") => str_field(item, "execution") == Some("client"),
        _ => false,
    }
}

/// The tool a client call is for.
fn call_name(item: &Value) -> String {
    if str_field(item, "type") == Some("tool_search_call") {
        return search::DEFAULT_NAME.to_owned();
    }
    str_field(item, "name").unwrap_or_default().to_owned()
}

fn message_text(item: &Value) -> String {
    item.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|part| str_field(part, "type") == Some("output_text"))
        .filter_map(|part| str_field(part, "text"))
        .collect()
}

/// A function call's arguments from its finished item.
fn call_arguments(item: &Value, limit: usize, cut: Option<&str>) -> Arguments {
    let text = str_field(item, "arguments").unwrap_or_default();
    if let Some(why) = cut {
        return Arguments::CutOff {
            received: text.to_owned(),
            why: why.to_owned(),
        };
    }
    if str_field(item, "status") == Some("incomplete") {
        return Arguments::CutOff {
            received: text.to_owned(),
            why: "the item is incomplete".to_owned(),
        };
    }
    Arguments::from_field(item.get("arguments"), limit)
}

/// The stop reason of a finished `response` object.
fn stop_of(response: &Value, has_calls: bool) -> (StopReason, Option<String>) {
    match str_field(response, "status") {
        Some("completed") => (
            if has_calls {
                StopReason::ToolUse
            } else {
                StopReason::Ended
            },
            Some("completed".to_owned()),
        ),
        Some("incomplete") => {
            let reason = response
                .get("incomplete_details")
                .and_then(|details| str_field(details, "reason"))
                .unwrap_or("incomplete");
            let stop = if reason == "max_output_tokens" {
                StopReason::MaxTokens
            } else {
                StopReason::Other
            };
            (stop, Some(reason.to_owned()))
        }
        other => (StopReason::Other, other.map(str::to_owned)),
    }
}

fn failure(response: &Value) -> Option<TurnError> {
    let error = response.get("error").filter(|error| !error.is_null());
    if error.is_none() && str_field(response, "status") != Some("failed") {
        return None;
    }
    let message = error
        .map(|error| error.get("message").unwrap_or(error))
        .map_or_else(|| "the response failed".to_owned(), cut_message);
    Some(TurnError::Provider { message })
}

pub(super) fn read_whole(turn: &mut TurnBuilder, value: Value) -> Result<(), TurnError> {
    if let Some(error) = failure(&value) {
        return Err(error);
    }
    let output = field(PROVIDER, &value, "output", "the response")?
        .as_array()
        .ok_or_else(|| TurnError::Shape {
            provider: PROVIDER,
            what: "the response".to_owned(),
            message: "`output` is not a list".to_owned(),
        })?;
    let limit = turn.limits().max_call_bytes;
    for item in output {
        read_item(turn, item.clone(), limit)?;
    }
    let (stop, raw) = stop_of(&value, !turn.calls.is_empty());
    if stop == StopReason::MaxTokens {
        turn.cut_trailing_call("max_output_tokens");
    }
    turn.stop(stop, raw);
    Ok(())
}

/// One finished item, whole.
fn read_item(turn: &mut TurnBuilder, item: Value, limit: usize) -> Result<(), TurnError> {
    match str_field(&item, "type") {
        _ if is_client_call(&item) => {
            let name = call_name(&item);
            let arguments = call_arguments(&item, limit, None);
            let caller = caller_of(&item);
            let call_id = str_field(&item, "call_id").map(str::to_owned);
            turn.push_call(call_id.as_deref(), name, arguments, caller, item)?;
        }
        Some("message") => turn.push_text_part(message_text(&item), item)?,
        kind => {
            let kind = kind.unwrap_or("item").to_owned();
            turn.push_kept(&kind, item)?;
        }
    }
    Ok(())
}

/// An item being streamed.
#[derive(Clone, Debug)]
enum Open {
    Call {
        index: usize,
        name: String,
        received: usize,
        /// The argument text so far, for a call cut off before its item ended.
        arguments: String,
        dropped: bool,
    },
    /// A message or any other item: its reserved place.
    Other {
        at: usize,
    },
    Done,
}

#[derive(Clone, Debug, Default)]
pub(super) struct ResponsesStream {
    items: Vec<Open>,
    ended: bool,
}

impl ResponsesStream {
    fn item_at(&mut self, event: &Value) -> Result<(usize, &mut Open), EventError> {
        let position = event
            .get("output_index")
            .and_then(Value::as_u64)
            .and_then(|index| usize::try_from(index).ok())
            .ok_or("it has no `output_index`")?;
        match self.items.get_mut(position) {
            Some(open) => Ok((position, open)),
            None => Err(format!("it is about output item {position}, which never started").into()),
        }
    }

    fn added(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let position = event
            .get("output_index")
            .and_then(Value::as_u64)
            .ok_or("it has no `output_index`")?;
        if position != self.items.len() as u64 {
            return Err(format!(
                "output item {position} starts where item {} was due",
                self.items.len()
            )
            .into());
        }
        let item = event.get("item").ok_or("it has no `item`")?;
        let open = if is_client_call(item) {
            let index = turn.start_call(str_field(item, "call_id"))?;
            out.push(StreamEvent::CallStarted {
                index,
                id: turn.call_id(index).to_owned(),
                name: call_name(item),
            });
            Open::Call {
                index,
                name: call_name(item),
                received: 0,
                arguments: String::new(),
                dropped: false,
            }
        } else {
            Open::Other { at: turn.reserve() }
        };
        self.items.push(open);
        Ok(())
    }

    fn arguments_delta(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let limit = turn.limits().max_call_bytes;
        let delta = str_field(event, "delta").unwrap_or_default();
        let (position, open) = self.item_at(event)?;
        let Open::Call {
            index,
            received,
            arguments,
            dropped,
            ..
        } = open
        else {
            return Err(format!(
                "argument text for output item {position}, which is not an open call"
            )
            .into());
        };
        *received += delta.len();
        if *received > limit {
            *dropped = true;
            *arguments = String::new();
        } else {
            arguments.push_str(delta);
        }
        if !delta.is_empty() {
            out.push(StreamEvent::ArgumentsDelta {
                index: *index,
                delta: delta.to_owned(),
            });
        }
        Ok(())
    }

    fn done(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let limit = turn.limits().max_call_bytes;
        let item = event.get("item").ok_or("it has no `item`")?.clone();
        let (position, open) = self.item_at(event)?;
        match std::mem::replace(open, Open::Done) {
            Open::Call {
                index,
                received,
                dropped,
                ..
            } => {
                if !is_client_call(&item) {
                    return Err(format!(
                        "output item {position} started as a call and ended as another item"
                    )
                    .into());
                }
                let arguments = if dropped {
                    Arguments::TooLarge {
                        bytes: received,
                        limit,
                    }
                } else {
                    call_arguments(&item, limit, None)
                };
                let name = call_name(&item);
                let caller = caller_of(&item);
                let ended = matches!(arguments, Arguments::Json(_) | Arguments::NotJson(_));
                let call = turn.end_call(index, name, arguments, caller, item);
                if ended {
                    out.push(StreamEvent::CallEnded(call.clone()));
                }
            }
            Open::Other { at } => match str_field(&item, "type") {
                Some("message") => {
                    let text = message_text(&item);
                    turn.fill_text(at, text, item)?;
                }
                kind => {
                    let kind = kind.unwrap_or("item").to_owned();
                    turn.fill_kept(at, &kind, item)?;
                }
            },
            Open::Done => {
                return Err(format!("output item {position} ends a second time").into());
            }
        }
        Ok(())
    }

    /// Cuts off every call whose item had not ended.
    fn cut_open_calls(&mut self, turn: &mut TurnBuilder, why: &str) {
        for open in &mut self.items {
            if let Open::Call {
                index,
                name,
                arguments,
                ..
            } = std::mem::replace(open, Open::Done)
            {
                // Echoed without the item's `id`, which would need a reasoning item beside it.
                let wire = json!({
                    "type": "function_call",
                    "call_id": turn.call_id(index),
                    "name": name,
                    "arguments": arguments,
                });
                let cut = Arguments::CutOff {
                    received: arguments,
                    why: why.to_owned(),
                };
                turn.end_call(index, name, cut, Caller::Model, wire);
            }
        }
    }
}

impl ProviderStream for ResponsesStream {
    fn forked(&self) -> Box<dyn ProviderStream + Send + Sync> {
        Box::new(self.clone())
    }

    fn event(
        &mut self,
        turn: &mut TurnBuilder,
        data: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let event = super::grammar::event_json(data)?;
        match str_field(&event, "type").unwrap_or_default() {
            "response.output_item.added" => self.added(turn, &event, out),
            "response.function_call_arguments.delta" => self.arguments_delta(turn, &event, out),
            "response.output_item.done" => self.done(turn, &event, out),
            "response.output_text.delta" => {
                let delta = str_field(&event, "delta").unwrap_or_default();
                if !delta.is_empty() {
                    out.push(StreamEvent::Text(delta.to_owned()));
                }
                Ok(())
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = event.get("response").ok_or("it has no `response`")?;
                if let Some(error) = failure(response) {
                    return Err(error.into());
                }
                let (stop, raw) = stop_of(response, !turn.calls.is_empty());
                if stop == StopReason::MaxTokens {
                    self.cut_open_calls(turn, "max_output_tokens");
                }
                turn.stop(stop, raw);
                self.ended = true;
                Ok(())
            }
            "error" => Err(TurnError::Provider {
                message: cut_message(event.get("message").unwrap_or(&event)),
            }
            .into()),
            _ => Ok(()),
        }
    }

    fn finish(
        &mut self,
        turn: &mut TurnBuilder,
        _out: &mut Vec<StreamEvent>,
    ) -> Result<(), TurnError> {
        self.cut_open_calls(turn, "the stream ended");
        if !self.ended {
            turn.stop(StopReason::Interrupted, None);
        }
        Ok(())
    }
}
