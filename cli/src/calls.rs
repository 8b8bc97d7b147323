//! `calls`: what toolprism reads of a saved provider response or stream, one JSON line per
//! text part and per call, so a user debugging a provider sees exactly what a host would
//! dispatch.

use std::io::Read;

use clap::ValueEnum;
use serde_json::json;
use toolprism::lower::Provider;
use toolprism::turn::{AssistantTurn, ReadLimits, StreamReader, TurnPart, read_response};

use crate::out::outln;
use crate::visible::visible_json;
use crate::{error, exit};

/// A provider's wire format, for `calls --provider`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum ProviderArg {
    OpenaiChat,
    OpenaiResponses,
    Anthropic,
    Gemini,
}

impl From<ProviderArg> for Provider {
    fn from(provider: ProviderArg) -> Self {
        match provider {
            ProviderArg::OpenaiChat => Self::OpenAiChat,
            ProviderArg::OpenaiResponses => Self::OpenAiResponses,
            ProviderArg::Anthropic => Self::Anthropic,
            ProviderArg::Gemini => Self::Gemini,
        }
    }
}

/// Reads `source` (a file, or `-` for standard input) as a whole response or, with `stream`,
/// as server-sent events, and prints its lines.
pub(crate) fn calls(provider: ProviderArg, stream: bool, source: &str) -> u8 {
    let input: Box<dyn Read> = if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match std::fs::File::open(source) {
            Ok(file) => Box::new(file),
            Err(failure) => {
                return error(
                    exit::USAGE,
                    &format!("`{source}` could not be read: {failure}"),
                );
            }
        }
    };
    let read = if stream {
        read_stream(provider.into(), input)
    } else {
        read_whole(provider.into(), input)
    };
    match read {
        Ok(turn) => {
            for line in lines(&turn) {
                outln!("{}", visible_json(&line));
            }
            exit::OK
        }
        Err(message) => error(exit::UNREADABLE, &message),
    }
}

fn read_whole(provider: Provider, input: Box<dyn Read>) -> Result<AssistantTurn, String> {
    let limit = ReadLimits::default().max_turn_bytes;
    let mut body = Vec::new();
    input
        .take(limit as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|failure| format!("the response could not be read: {failure}"))?;
    if body.len() > limit {
        return Err(format!("the response is more than {limit} bytes"));
    }
    read_response(provider, &body).map_err(|failure| failure.to_string())
}

fn read_stream(provider: Provider, mut input: Box<dyn Read>) -> Result<AssistantTurn, String> {
    let mut reader = StreamReader::new(provider);
    let mut chunk = vec![0; 64 * 1024];
    loop {
        let read = input
            .read(&mut chunk)
            .map_err(|failure| format!("the stream could not be read: {failure}"))?;
        if read == 0 {
            break;
        }
        reader
            .feed(&chunk[..read])
            .map_err(|failure| failure.to_string())?;
    }
    reader.finish().map_err(|failure| failure.to_string())
}

/// One line per text part and per call, in the turn's order, fields in the order documented
/// (`serde_json` objects would sort them).
fn lines(turn: &AssistantTurn) -> Vec<String> {
    turn.parts()
        .iter()
        .filter_map(|part| match part {
            TurnPart::Text(text) if !text.is_empty() => {
                Some(format!("{{\"text\":{}}}", json!(text)))
            }
            TurnPart::Call(index) => {
                let call = &turn.calls()[*index];
                let head = format!(
                    "{{\"id\":{},\"name\":{}",
                    json!(call.provider_id()),
                    json!(call.name())
                );
                Some(
                    match (call.arguments().json(), call.arguments().problem()) {
                        (Some(arguments), _) => format!("{head},\"arguments\":{arguments}}}"),
                        (None, problem) => format!(
                            "{head},\"error\":{{\"code\":{},\"message\":{}}}}}",
                            json!(toolprism::error::codes::INVALID_TOOL_INPUT),
                            json!(problem.unwrap_or_default())
                        ),
                    },
                )
            }
            _ => None,
        })
        .collect()
}
