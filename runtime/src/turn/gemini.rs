//! Google Gemini (and Vertex): a `GenerateContentResponse` whose first candidate's parts hold
//! text and `functionCall`s, or a stream of such responses, each with the new parts only.
//! A part's `thoughtSignature` stays on that part. A call the server answered in the same
//! response (a `functionResponse` part after it: server-side MCP) is kept, not dispatched.
//! Vertex streams a call's arguments as `partialArgs`, assembled here to the value the whole
//! response would have carried.
//!
//! Streamed calls end with the stream (whether the server answers one is known only then);
//! their starts are reported as they arrive.

use serde_json::{Map, Value};

use super::grammar::{EventError, ProviderStream, StreamEvent};
use super::{
    Arguments, Caller, StopReason, TurnBuilder, TurnError, cut_message, set_in, str_field,
};
use crate::depth::MAX_DEPTH;
use crate::lower::Provider;

const PROVIDER: Provider = Provider::Gemini;

fn stop_reason(raw: &str, has_calls: bool) -> StopReason {
    match raw {
        "STOP" if has_calls => StopReason::ToolUse,
        "STOP" => StopReason::Ended,
        "MAX_TOKENS" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

fn provider_error(value: &Value) -> Option<TurnError> {
    let error = value.get("error")?;
    Some(TurnError::Provider {
        message: cut_message(error.get("message").unwrap_or(error)),
    })
}

/// The first candidate of a response, if it has one.
fn candidate(value: &Value) -> Option<&Value> {
    value
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|candidates| candidates.first())
}

fn parts_of(candidate: &Value) -> impl Iterator<Item = &Value> {
    candidate
        .get("content")
        .and_then(|content| content.get("parts"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A part of the turn, whole, before it is known whether a call was answered by the server.
#[derive(Clone, Debug)]
enum Part {
    /// Text (or thought text), and the part as it is echoed.
    Text {
        thought: bool,
        wire: Value,
    },
    Call {
        wire: Value,
    },
    Other {
        kind: String,
        wire: Value,
    },
}

/// The bytes a kept part holds, counted up to `max`.
fn held_size(part: &Value, max: usize) -> usize {
    crate::bound::json_len_within(part, max).unwrap_or(max.saturating_add(1))
}

/// Whether the call part at `at` is answered by a later `functionResponse` part.
fn answered(parts: &[Part], at: usize) -> bool {
    let Part::Call { wire } = &parts[at] else {
        return false;
    };
    let call = &wire["functionCall"];
    parts[at + 1..].iter().any(|part| match part {
        Part::Other { kind, wire } if kind == "functionResponse" => {
            let response = &wire["functionResponse"];
            str_field(response, "name") == str_field(call, "name")
                && (str_field(response, "id").is_none()
                    || str_field(response, "id") == str_field(call, "id"))
        }
        _ => false,
    })
}

fn classify(part: &Value) -> Part {
    if part.get("functionCall").is_some_and(Value::is_object) {
        return Part::Call { wire: part.clone() };
    }
    if part.get("text").is_some() {
        return Part::Text {
            thought: part
                .get("thought")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            wire: part.clone(),
        };
    }
    let kind = part
        .as_object()
        .and_then(|object| object.keys().find(|key| *key != "thoughtSignature"))
        .map_or_else(|| "part".to_owned(), Clone::clone);
    Part::Other {
        kind,
        wire: part.clone(),
    }
}

/// Puts whole parts into the turn: text, calls (those the server did not answer), and the rest
/// kept. Returns the calls' indices.
fn push_parts(
    turn: &mut TurnBuilder,
    parts: Vec<Part>,
    cut: Option<&str>,
) -> Result<Vec<usize>, TurnError> {
    let servers: Vec<bool> = (0..parts.len()).map(|at| answered(&parts, at)).collect();
    let last_call = parts
        .iter()
        .rposition(|part| matches!(part, Part::Call { .. }));
    let mut calls = Vec::new();
    for (at, (part, server)) in parts.into_iter().zip(servers).enumerate() {
        match part {
            Part::Text {
                thought: false,
                wire,
            } => {
                let text = str_field(&wire, "text").unwrap_or_default().to_owned();
                if !text.is_empty() || wire.get("thoughtSignature").is_some() {
                    turn.push_text_part(text, wire)?;
                }
            }
            Part::Text {
                thought: true,
                wire,
            } => turn.push_kept("thought", wire)?,
            Part::Call { wire } if server => turn.push_kept("functionCall", wire)?,
            Part::Call { mut wire } => {
                let call = &wire["functionCall"];
                let name = str_field(call, "name").unwrap_or_default().to_owned();
                let id = str_field(call, "id").map(str::to_owned);
                let args = call
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                let limit = turn.limits().max_call_bytes;
                let arguments = match cut {
                    Some(why) if Some(at) == last_call => Arguments::CutOff {
                        received: args.to_string(),
                        why: why.to_owned(),
                    },
                    _ => match crate::bound::json_len_within(&args, limit) {
                        Some(_) => Arguments::Json(args.clone()),
                        None => Arguments::TooLarge {
                            bytes: limit.saturating_add(1),
                            limit,
                        },
                    },
                };
                set_in(&mut wire, &["functionCall", "args"], args);
                calls.push(turn.push_call(id.as_deref(), name, arguments, Caller::Model, wire)?);
            }
            Part::Other { kind, wire } => turn.push_kept(&kind, wire)?,
        }
    }
    Ok(calls)
}

pub(super) fn read_whole(turn: &mut TurnBuilder, value: Value) -> Result<(), TurnError> {
    if let Some(error) = provider_error(&value) {
        return Err(error);
    }
    let Some(candidate) = candidate(&value) else {
        if let Some(reason) = value
            .get("promptFeedback")
            .and_then(|feedback| str_field(feedback, "blockReason"))
        {
            turn.stop(StopReason::Other, Some(reason.to_owned()));
            return Ok(());
        }
        return Err(TurnError::Shape {
            provider: PROVIDER,
            what: "the response".to_owned(),
            message: "it has no `candidates`".to_owned(),
        });
    };
    let raw = str_field(candidate, "finishReason");
    let parts: Vec<Part> = parts_of(candidate).map(classify).collect();
    let cut = raw.filter(|raw| *raw == "MAX_TOKENS");
    push_parts(turn, parts, cut)?;
    let has_calls = !turn.calls.is_empty();
    turn.stop(
        raw.map_or(StopReason::Other, |raw| stop_reason(raw, has_calls)),
        raw.map(str::to_owned),
    );
    Ok(())
}

/// A call whose arguments arrive as `partialArgs`.
#[derive(Clone, Debug)]
struct Streaming {
    /// Its place in `parts` (a `Part::Call` whose arguments are filled at the end).
    at: usize,
    args: Value,
    received: usize,
    dropped: bool,
}

#[derive(Clone, Debug, Default)]
pub(super) struct GeminiStream {
    parts: Vec<Part>,
    open: Option<Streaming>,
    finish: Option<String>,
    /// `functionCall` parts so far: the index a call's start is reported under.
    calls_seen: usize,
}

impl GeminiStream {
    fn text(&mut self, part: &Value, out: &mut Vec<StreamEvent>) {
        let thought = part
            .get("thought")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let text = str_field(part, "text").unwrap_or_default();
        let signature = part.get("thoughtSignature");
        if !thought && !text.is_empty() {
            out.push(StreamEvent::Text(text.to_owned()));
        }
        // Consecutive text of one kind is one part, unless a second signature would land on it.
        if let Some(Part::Text {
            thought: last,
            wire,
        }) = self.parts.last_mut()
            && *last == thought
            && !(signature.is_some() && wire.get("thoughtSignature").is_some())
        {
            if let Some(Value::String(joined)) = wire.get_mut("text") {
                joined.push_str(text);
            }
            if let (Some(signature), Value::Object(object)) = (signature, wire) {
                object.insert("thoughtSignature".to_owned(), signature.clone());
            }
            return;
        }
        self.parts.push(Part::Text {
            thought,
            wire: part.clone(),
        });
    }

    fn start(&mut self, part: &Value, call: &Value, out: &mut Vec<StreamEvent>) {
        let index = self.calls_seen;
        self.calls_seen += 1;
        out.push(StreamEvent::CallStarted {
            index,
            id: str_field(call, "id").map_or_else(|| format!("gemini_call_{index}"), str::to_owned),
            name: str_field(call, "name").unwrap_or_default().to_owned(),
        });
        let mut wire = part.clone();
        if let Some(Value::Object(call)) = wire.get_mut("functionCall") {
            call.remove("willContinue");
            call.remove("partialArgs");
        }
        self.parts.push(Part::Call { wire });
    }

    /// Ends the open streamed call: its assembled arguments go into its part.
    fn close(&mut self, limit: usize) -> Result<(), EventError> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        if let Some(Part::Call { wire }) = self.parts.get_mut(open.at) {
            if open.dropped {
                return Err(TurnError::TooLarge {
                    what: "a call's streamed arguments",
                    limit,
                }
                .into());
            }
            set_in(wire, &["functionCall", "args"], open.args);
        }
        Ok(())
    }

    /// Starts a call whose arguments arrive as `partialArgs` (the open one, if any, ended).
    fn start_streamed(
        &mut self,
        part: &Value,
        call: &Value,
        limit: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        self.close(limit)?;
        self.start(part, call, out);
        self.open = Some(Streaming {
            at: self.parts.len() - 1,
            args: Value::Object(Map::new()),
            received: 0,
            dropped: false,
        });
        Ok(())
    }

    fn function_call(
        &mut self,
        part: &Value,
        call: &Value,
        limit: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let name = str_field(call, "name");
        let continues = call.get("willContinue").and_then(Value::as_bool) == Some(true);
        let partial = call.get("partialArgs").and_then(Value::as_array);
        let has_args = call.get("args").is_some();
        match (name, partial) {
            (None, None) if !continues && !has_args => self.close(limit),
            (None, None) => Ok(()), // `{"willContinue": true}`: nothing new
            (Some(_), None) if continues && !has_args => {
                self.start_streamed(part, call, limit, out)
            }
            (Some(_), None) => {
                self.close(limit)?;
                self.start(part, call, out);
                Ok(())
            }
            (name, Some(partial)) => {
                // A call named with its arguments at once: it starts here (Vertex sends a short
                // call whole, in one event, without `willContinue`).
                if name.is_some() {
                    self.start_streamed(part, call, limit, out)?;
                }
                let Some(open) = self.open.as_mut() else {
                    return Err("partial arguments for no call in progress".into());
                };
                for piece in partial {
                    apply_partial(open, piece, limit)?;
                }
                if !continues {
                    self.close(limit)?;
                }
                Ok(())
            }
        }
    }
}

/// One `partialArgs` entry applied: a string continues the string already at its path, any
/// other value is set there, creating the objects and arrays on the way.
fn apply_partial(open: &mut Streaming, piece: &Value, limit: usize) -> Result<(), EventError> {
    let path = str_field(piece, "jsonPath").ok_or("a partial argument has no `jsonPath`")?;
    let segments = parse_path(path)?;
    let value = if let Some(text) = piece.get("stringValue").and_then(Value::as_str) {
        Value::String(text.to_owned())
    } else if let Some(number) = piece.get("numberValue") {
        number.clone()
    } else if let Some(flag) = piece.get("boolValue") {
        flag.clone()
    } else if piece.get("nullValue").is_some() {
        Value::Null
    } else {
        // A piece that only says more follows.
        return Ok(());
    };
    open.received += match &value {
        Value::String(text) => text.len(),
        _ => 8,
    };
    if open.received > limit {
        open.dropped = true;
        open.args = Value::Null;
    }
    if open.dropped {
        return Ok(());
    }
    let mut slot = &mut open.args;
    for segment in &segments {
        slot = match segment {
            Segment::Key(key) => {
                if slot.is_null() {
                    *slot = Value::Object(Map::new());
                }
                let Value::Object(object) = slot else {
                    return Err(format!(
                        "`{}` goes into a value that is not an object",
                        crate::text::printable(path, 200)
                    )
                    .into());
                };
                object.entry(key.clone()).or_insert(Value::Null)
            }
            Segment::Index(index) => {
                if slot.is_null() {
                    *slot = Value::Array(Vec::new());
                }
                let Value::Array(items) = slot else {
                    return Err(format!(
                        "`{}` goes into a value that is not an array",
                        crate::text::printable(path, 200)
                    )
                    .into());
                };
                if *index > items.len() {
                    return Err(format!(
                        "`{}` skips array elements",
                        crate::text::printable(path, 200)
                    )
                    .into());
                }
                if *index == items.len() {
                    items.push(Value::Null);
                }
                &mut items[*index]
            }
        };
    }
    match (slot, value) {
        (Value::String(existing), Value::String(more)) => existing.push_str(&more),
        (slot, value) => *slot = value,
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// `$.a.b[0]['c.d']` as segments; at most [`MAX_DEPTH`] of them.
fn parse_path(path: &str) -> Result<Vec<Segment>, EventError> {
    let bad = || {
        EventError::from(format!(
            "`{}` is not a JSON path",
            crate::text::printable(path, 200)
        ))
    };
    let mut rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if segments.len() >= MAX_DEPTH {
            return Err(format!(
                "`{}` is deeper than {MAX_DEPTH} levels",
                crate::text::printable(path, 200)
            )
            .into());
        }
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(bad());
            }
            segments.push(Segment::Key(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(bad)?;
            let inside = &after[..end];
            let segment = match inside.as_bytes().first() {
                Some(quote @ (b'\'' | b'"'))
                    if inside.len() >= 2 && inside.as_bytes()[inside.len() - 1] == *quote =>
                {
                    Segment::Key(inside[1..inside.len() - 1].to_owned())
                }
                _ => Segment::Index(inside.parse().map_err(|_| bad())?),
            };
            segments.push(segment);
            rest = &after[end + 1..];
        } else {
            return Err(bad());
        }
    }
    Ok(segments)
}

impl ProviderStream for GeminiStream {
    fn forked(&self) -> Box<dyn ProviderStream + Send + Sync> {
        Box::new(self.clone())
    }

    fn event(
        &mut self,
        turn: &mut TurnBuilder,
        data: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), EventError> {
        let value = super::grammar::event_json(data)?;
        if let Some(error) = provider_error(&value) {
            return Err(error.into());
        }
        let limit = turn.limits().max_call_bytes;
        let Some(candidate) = candidate(&value) else {
            return Ok(());
        };
        for part in parts_of(candidate) {
            if let Some(call) = part.get("functionCall").filter(|call| call.is_object()) {
                self.function_call(part, call, limit, out)?;
            } else if part.get("text").is_some() {
                turn.hold(str_field(part, "text").map_or(0, str::len))?;
                self.text(part, out);
            } else {
                turn.hold(held_size(part, turn.limits().max_turn_bytes))?;
                // A part arriving while a call streams would split it: the call ended.
                self.close(limit)?;
                if let Part::Other { kind, wire } = classify(part) {
                    self.parts.push(Part::Other { kind, wire });
                }
            }
        }
        // A stream whose server runs calls itself (server-side MCP: every event carries a
        // `turnToken`) says `finishReason` after a call it is about to answer, and goes on: a
        // finish is the turn's only when no call is left waiting on the server.
        let server_goes_on = value.get("turnToken").is_some()
            && matches!(self.parts.last(), Some(Part::Call { .. }));
        self.finish = str_field(candidate, "finishReason")
            .filter(|_| !server_goes_on)
            .map(str::to_owned);
        Ok(())
    }

    fn kind_of(&self, _data: &[u8]) -> String {
        "GenerateContentResponse".to_owned()
    }

    fn finish(
        &mut self,
        turn: &mut TurnBuilder,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), TurnError> {
        let cut = match self.finish.as_deref() {
            None => Some("the stream ended"),
            Some("MAX_TOKENS") => Some("MAX_TOKENS"),
            Some(_) => None,
        };
        // A call still streaming its arguments was cut off; every other call was whole.
        let cut_at = self.open.take().map(|open| open.at);
        let parts = std::mem::take(&mut self.parts);
        let last_call = parts
            .iter()
            .rposition(|part| matches!(part, Part::Call { .. }));
        let cut_for_last = match (cut, cut_at) {
            (Some(why), Some(at)) if Some(at) == last_call => Some(why),
            (Some(why), None) if why == "MAX_TOKENS" => Some(why),
            _ => None,
        };
        let calls = push_parts(turn, parts, cut_for_last)?;
        for index in calls {
            if let Some(Some(call)) = turn.calls.get(index)
                && matches!(call.arguments, Arguments::Json(_))
            {
                out.push(StreamEvent::CallEnded(call.clone()));
            }
        }
        let has_calls = !turn.calls.is_empty();
        match self.finish.as_deref() {
            Some(raw) => turn.stop(stop_reason(raw, has_calls), Some(raw.to_owned())),
            None => turn.stop(StopReason::Interrupted, None),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_read_keys_indices_and_quoted_keys() {
        assert_eq!(
            parse_path("$.a.b[2]['c.d'][\"e\"]").unwrap(),
            [
                Segment::Key("a".into()),
                Segment::Key("b".into()),
                Segment::Index(2),
                Segment::Key("c.d".into()),
                Segment::Key("e".into()),
            ]
        );
        assert!(parse_path("a.b").is_err());
        assert!(parse_path("$..a").is_err());
        assert!(parse_path(&format!("${}", ".a".repeat(65))).is_err());
    }

    #[test]
    fn partial_strings_join_and_other_values_are_set() {
        let mut open = Streaming {
            at: 0,
            args: Value::Object(Map::new()),
            received: 0,
            dropped: false,
        };
        for piece in [
            json!({"jsonPath": "$.steps[0]", "stringValue": "Cook", "willContinue": true}),
            json!({"jsonPath": "$.steps[0]", "stringValue": " it."}),
            json!({"jsonPath": "$.steps[0]", "stringValue": ""}),
            json!({"jsonPath": "$.price", "numberValue": 0.5}),
            json!({"jsonPath": "$.ok", "boolValue": true}),
            json!({"jsonPath": "$.none", "nullValue": "NULL_VALUE"}),
        ] {
            apply_partial(&mut open, &piece, 1 << 20).unwrap();
        }
        assert_eq!(
            open.args,
            json!({"steps": ["Cook it."], "price": 0.5, "ok": true, "none": null})
        );
        let skip = json!({"jsonPath": "$.steps[5]", "stringValue": "x"});
        assert!(apply_partial(&mut open, &skip, 1 << 20).is_err());
    }
}
