//! Anthropic Messages: a `message` whose `content` is a list of blocks, or a stream of events
//! around each block (`content_block_start` … `content_block_stop`). Calls are `tool_use`
//! blocks, with the `caller` that says a program made them; thinking blocks (with their
//! signatures), server tool uses and their results are echoed back as they were. A streamed
//! call ends at its block's `content_block_stop`, or arrives whole inside `message_start`.

use serde_json::{Map, Value};

use super::grammar::{EventError, ProviderStream, StreamEvent};
use super::{Arguments, Caller, StopReason, TurnBuilder, TurnError, cut_message, field, str_field};
use crate::lower::Provider;

const PROVIDER: Provider = Provider::Anthropic;

fn stop_reason(raw: &str) -> StopReason {
    match raw {
        "end_turn" | "stop_sequence" => StopReason::Ended,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

fn caller_of(block: &Value) -> Caller {
    match block.get("caller") {
        Some(caller) if str_field(caller, "type").is_some_and(|kind| kind != "direct") => {
            Caller::Program {
                id: str_field(caller, "tool_id").unwrap_or_default().to_owned(),
            }
        }
        _ => Caller::Model,
    }
}

fn provider_error(value: &Value) -> Option<TurnError> {
    if str_field(value, "type") != Some("error") {
        return None;
    }
    let error = value.get("error").unwrap_or(value);
    Some(TurnError::Provider {
        message: cut_message(error.get("message").unwrap_or(error)),
    })
}

/// One block that arrived whole: a call, text, or a part kept for the echo.
fn read_block(turn: &mut TurnBuilder, block: Value) -> Result<Option<usize>, TurnError> {
    match str_field(&block, "type") {
        Some("tool_use") => {
            let name = str_field(&block, "name").unwrap_or_default().to_owned();
            let arguments = match block.get("input") {
                Some(input) => Arguments::Json(input.clone()),
                None => Arguments::Json(Value::Object(Map::new())),
            };
            let caller = caller_of(&block);
            let id = str_field(&block, "id").map(str::to_owned);
            turn.push_call(id.as_deref(), name, arguments, caller, block)
                .map(Some)
        }
        Some("text") => {
            let text = str_field(&block, "text").unwrap_or_default().to_owned();
            // An empty text block is refused when echoed: it is left out.
            if !text.is_empty() {
                turn.push_text_part(text, block)?;
            }
            Ok(None)
        }
        kind => {
            let kind = kind.unwrap_or("block").to_owned();
            turn.push_kept(&kind, block)?;
            Ok(None)
        }
    }
}

fn read_container(turn: &mut TurnBuilder, holder: &Value) {
    if let Some(id) = holder
        .get("container")
        .and_then(|container| str_field(container, "id"))
    {
        turn.container = Some(id.to_owned());
    }
}

pub(super) fn read_whole(turn: &mut TurnBuilder, value: Value) -> Result<(), TurnError> {
    if let Some(error) = provider_error(&value) {
        return Err(error);
    }
    let content = field(PROVIDER, &value, "content", "the response")?
        .as_array()
        .ok_or_else(|| TurnError::Shape {
            provider: PROVIDER,
            what: "the response".to_owned(),
            message: "`content` is not a list".to_owned(),
        })?;
    for block in content {
        read_block(turn, block.clone())?;
    }
    read_container(turn, &value);
    match str_field(&value, "stop_reason") {
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

/// A block being streamed.
#[derive(Clone, Debug)]
enum Open {
    Text {
        at: usize,
    },
    Thinking {
        at: usize,
        thinking: String,
        signature: String,
    },
    /// A client call (`tool_use`) or a server one (`server_tool_use`): its start block, and its
    /// input as text so far.
    Use {
        call: Option<usize>,
        at: usize,
        block: Value,
        input: String,
        received: usize,
    },
    /// A block that arrived whole in its start event.
    Whole,
    Stopped,
}

#[derive(Clone, Debug, Default)]
pub(super) struct AnthropicStream {
    blocks: Vec<Open>,
    ended: bool,
}

impl AnthropicStream {
    fn index_of(event: &Value) -> Result<usize, EventError> {
        event
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|index| usize::try_from(index).ok())
            .ok_or_else(|| "it has no `index`".into())
    }

    fn message_start(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let message = event.get("message").ok_or("it has no `message`")?;
        // Blocks already whole in the message (a programmatic call's continuation).
        for block in message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(index) = read_block(turn, block.clone())? {
                let call = &turn.calls[index];
                if let Some(call) = call {
                    out.push(StreamEvent::CallStarted {
                        index,
                        id: call.id().to_owned(),
                        name: call.name().to_owned(),
                    });
                    out.push(StreamEvent::CallEnded(call.clone()));
                }
            }
            self.blocks.push(Open::Stopped);
        }
        read_container(turn, message);
        if let Some(raw) = str_field(message, "stop_reason") {
            turn.stop(stop_reason(raw), Some(raw.to_owned()));
        }
        Ok(())
    }

    fn block_start(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let index = Self::index_of(event)?;
        if index < self.blocks.len() {
            return Err(format!("a second start for block {index}").into());
        }
        if index > self.blocks.len() {
            return Err(format!(
                "block {index} starts where block {} was due",
                self.blocks.len()
            )
            .into());
        }
        let block = event
            .get("content_block")
            .ok_or("it has no `content_block`")?;
        let open = match str_field(block, "type") {
            Some("text") => {
                let at = turn.reserve_text();
                let text = str_field(block, "text").unwrap_or_default();
                if !text.is_empty() {
                    turn.append_text(at, text)?;
                    out.push(StreamEvent::Text(text.to_owned()));
                }
                Open::Text { at }
            }
            Some("thinking") => Open::Thinking {
                at: turn.reserve(),
                thinking: str_field(block, "thinking").unwrap_or_default().to_owned(),
                signature: str_field(block, "signature").unwrap_or_default().to_owned(),
            },
            Some(kind @ ("tool_use" | "server_tool_use")) => {
                let call = if kind == "tool_use" {
                    let index = turn.start_call(str_field(block, "id"))?;
                    out.push(StreamEvent::CallStarted {
                        index,
                        id: turn.call_id(index).to_owned(),
                        name: str_field(block, "name").unwrap_or_default().to_owned(),
                    });
                    Some(index)
                } else {
                    None
                };
                Open::Use {
                    call,
                    at: if call.is_some() { 0 } else { turn.reserve() },
                    block: block.clone(),
                    input: String::new(),
                    received: 0,
                }
            }
            kind => {
                let kind = kind.unwrap_or("block").to_owned();
                turn.push_kept(&kind, block.clone())?;
                Open::Whole
            }
        };
        self.blocks.push(open);
        Ok(())
    }

    fn block_delta(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let index = Self::index_of(event)?;
        let delta = event.get("delta").ok_or("it has no `delta`")?;
        let kind = str_field(delta, "type").unwrap_or_default();
        let limit = turn.limits().max_call_bytes;
        let Some(open) = self.blocks.get_mut(index) else {
            return Err(format!("a delta for block {index}, which never started").into());
        };
        match (open, kind) {
            (Open::Text { at }, "text_delta") => {
                let text = str_field(delta, "text").unwrap_or_default();
                turn.append_text(*at, text)?;
                if !text.is_empty() {
                    out.push(StreamEvent::Text(text.to_owned()));
                }
            }
            (Open::Text { .. }, "citations_delta") => {}
            (Open::Thinking { thinking, .. }, "thinking_delta") => {
                let text = str_field(delta, "thinking").unwrap_or_default();
                turn.hold(text.len())?;
                thinking.push_str(text);
            }
            (Open::Thinking { signature, .. }, "signature_delta") => {
                // One per block, assigned: the signature is opaque, never joined.
                str_field(delta, "signature")
                    .unwrap_or_default()
                    .clone_into(signature);
            }
            (
                Open::Use {
                    call,
                    input,
                    received,
                    ..
                },
                "input_json_delta",
            ) => {
                let fragment = str_field(delta, "partial_json").unwrap_or_default();
                *received += fragment.len();
                if *received > limit {
                    input.clear();
                } else {
                    input.push_str(fragment);
                }
                if let (Some(index), false) = (call, fragment.is_empty()) {
                    out.push(StreamEvent::ArgumentsDelta {
                        index: *index,
                        delta: fragment.to_owned(),
                    });
                }
            }
            (Open::Stopped, _) => {
                return Err(format!("a delta for block {index}, which has stopped").into());
            }
            (_, kind) => {
                return Err(format!(
                    "a `{}` delta for block {index}, which cannot take it",
                    crate::text::printable(kind, 64)
                )
                .into());
            }
        }
        Ok(())
    }

    fn block_stop(
        &mut self,
        turn: &mut TurnBuilder,
        event: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let index = Self::index_of(event)?;
        let limit = turn.limits().max_call_bytes;
        let Some(open) = self.blocks.get_mut(index) else {
            return Err(format!("a stop for block {index}, which never started").into());
        };
        match std::mem::replace(open, Open::Stopped) {
            Open::Text { .. } | Open::Whole => {}
            Open::Thinking {
                at,
                thinking,
                signature,
            } => {
                let block = serde_json::json!({
                    "type": "thinking",
                    "thinking": thinking,
                    "signature": signature,
                });
                turn.fill_kept(at, "thinking", block)?;
            }
            Open::Use {
                call,
                at,
                mut block,
                input,
                received,
            } => {
                let arguments = if received > limit {
                    Arguments::TooLarge {
                        bytes: received,
                        limit,
                    }
                } else if input.is_empty() {
                    // No delta: the input came whole in the start event (`{}` for no arguments).
                    Arguments::Json(
                        block
                            .get("input")
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Map::new())),
                    )
                } else {
                    Arguments::from_text(&input, limit)
                };
                if let (Some(slot), Some(value)) = (block.get_mut("input"), arguments.json()) {
                    *slot = value.clone();
                }
                match call {
                    Some(index) => {
                        let name = str_field(&block, "name").unwrap_or_default().to_owned();
                        let caller = caller_of(&block);
                        let ended = matches!(arguments, Arguments::Json(_) | Arguments::NotJson(_));
                        let call = turn.end_call(index, name, arguments, caller, block);
                        if ended {
                            out.push(StreamEvent::CallEnded(call.clone()));
                        }
                    }
                    None => turn.fill_kept(at, "server_tool_use", block)?,
                }
            }
            Open::Stopped => {
                return Err(format!("a second stop for block {index}").into());
            }
        }
        Ok(())
    }
}

impl ProviderStream for AnthropicStream {
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
            "message_start" => self.message_start(turn, &event, out),
            "content_block_start" => self.block_start(turn, &event, out),
            "content_block_delta" => self.block_delta(turn, &event, out),
            "content_block_stop" => self.block_stop(turn, &event, out),
            "message_delta" => {
                if let Some(delta) = event.get("delta") {
                    if let Some(raw) = str_field(delta, "stop_reason") {
                        turn.stop(stop_reason(raw), Some(raw.to_owned()));
                    }
                    read_container(turn, delta);
                }
                Ok(())
            }
            "message_stop" => {
                self.ended = true;
                Ok(())
            }
            "error" => Err(provider_error(&event)
                .unwrap_or(TurnError::Provider {
                    message: "an error event".to_owned(),
                })
                .into()),
            _ => Ok(()),
        }
    }

    fn finish(
        &mut self,
        turn: &mut TurnBuilder,
        _out: &mut Vec<StreamEvent>,
    ) -> Result<(), TurnError> {
        let why = match turn.stop.as_ref() {
            Some((StopReason::MaxTokens, Some(raw))) => raw.clone(),
            _ => "the stream ended".to_owned(),
        };
        for open in &mut self.blocks {
            if let Open::Use {
                call: Some(index),
                block,
                input,
                ..
            } = std::mem::replace(open, Open::Stopped)
            {
                let name = str_field(&block, "name").unwrap_or_default().to_owned();
                let caller = caller_of(&block);
                let cut = Arguments::CutOff {
                    received: input,
                    why: why.clone(),
                };
                turn.end_call(index, name, cut, caller, block);
            }
        }
        if !self.ended && !turn.has_stop() {
            turn.stop(StopReason::Interrupted, None);
        }
        Ok(())
    }
}
