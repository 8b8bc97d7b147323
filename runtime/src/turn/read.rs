//! A whole response read into an assistant turn, by the provider that sent it.

use serde_json::Value;

use super::{AssistantTurn, ReadLimits, TurnBuilder, TurnError, parse_json};
use super::{anthropic, gemini, openai_chat, openai_responses};
use crate::lower::Provider;

/// Reads a whole (not streamed) response body.
///
/// ```
/// use toolprism::lower::Provider;
/// use toolprism::turn::{Arguments, read_response};
///
/// let body = br#"{"candidates":[{"content":{"role":"model","parts":[
///     {"functionCall":{"name":"beep"}},
///     {"functionCall":{"name":"print","args":{"text":"hi"}}}]},"finishReason":"STOP"}]}"#;
/// let turn = read_response(Provider::Gemini, body).unwrap();
/// assert_eq!(turn.calls()[0].arguments(), &Arguments::Json(serde_json::json!({})));
/// assert_eq!(turn.calls()[1].id(), "gemini_call_1"); // Gemini sent no id
/// ```
pub fn read_response(provider: Provider, body: &[u8]) -> Result<AssistantTurn, TurnError> {
    read_response_with(provider, body, ReadLimits::default())
}

/// [`read_response`] within these limits.
pub fn read_response_with(
    provider: Provider,
    body: &[u8],
    limits: ReadLimits,
) -> Result<AssistantTurn, TurnError> {
    if body.len() > limits.max_turn_bytes {
        return Err(TurnError::TooLarge {
            what: "the response",
            limit: limits.max_turn_bytes,
        });
    }
    let value: Value = parse_json(body, "the response")?;
    let mut turn = TurnBuilder::new(provider, limits);
    match provider {
        Provider::OpenAiChat => openai_chat::read_whole(&mut turn, value)?,
        Provider::OpenAiResponses => openai_responses::read_whole(&mut turn, value)?,
        Provider::Anthropic => anthropic::read_whole(&mut turn, value)?,
        Provider::Gemini => gemini::read_whole(&mut turn, value)?,
    }
    Ok(turn.build())
}
