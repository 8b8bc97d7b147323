//! Lowering a tool result — the content the model was shown, and whether it failed — to each
//! provider's wire shape.

use serde_json::{Value, json};

use super::Provider;
use crate::outcome::ToolOutcome;
use crate::present::{ContentBlock, ResourceContents};

/// Media types Anthropic accepts in image blocks.
const ANTHROPIC_IMAGES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Lowers an outcome's content (never its value) for `provider`. See [`lower_content`].
pub fn lower_outcome(
    provider: Provider,
    call_id: &str,
    tool: &str,
    outcome: &ToolOutcome,
) -> Vec<Value> {
    lower_content(
        provider,
        call_id,
        tool,
        outcome.content(),
        outcome.is_error(),
    )
}

/// Lowers the result of the call `call_id` to `tool`: its content blocks, and whether it
/// failed. Returns, per provider:
///
/// - OpenAI Chat: messages — a `role: "tool"` message whose content is the text (failures
///   prefixed `Error: `, since the message has no error flag), then, if there are images, one
///   `role: "user"` message carrying them, as tool messages cannot;
/// - OpenAI Responses: one `function_call_output` item — its output the text, or
///   `input_text`/`input_image` parts when there are images;
/// - Anthropic: one `tool_result` content block for the next user message, with `is_error`;
/// - Gemini: parts for the next user turn — a `functionResponse` whose response is
///   `{"output": text}`, or `{"error": text}` for a failure, then one `inlineData` part per
///   image.
///
/// Resource references become a line of text (`[resource: name <uri>]`): each provider
/// resolves its own URIs, not the host's. An embedded resource becomes that line followed by
/// its text (or, for bytes, a line naming their type and size); audio becomes a line naming
/// its type and size. Image types a provider does not take become a line
/// of text too, never a silent drop.
pub fn lower_content(
    provider: Provider,
    call_id: &str,
    tool: &str,
    content: &[ContentBlock],
    is_error: bool,
) -> Vec<Value> {
    match provider {
        Provider::OpenAiChat => openai_chat(call_id, content, is_error),
        Provider::OpenAiResponses => openai_responses(call_id, content, is_error),
        Provider::Anthropic => vec![anthropic(call_id, content, is_error)],
        Provider::Gemini => gemini(call_id, tool, content, is_error),
    }
}

/// The text of the content: text blocks, and a line for each block that is not text.
pub(crate) fn text_of(content: &[ContentBlock], is_error: bool, mention_images: bool) -> String {
    let mut lines = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text } => lines.push(text.clone()),
            ContentBlock::Image { mime_type, .. } if mention_images => {
                lines.push(format!("[image: {mime_type}]"));
            }
            ContentBlock::Image { .. } => {}
            _ => lines.push(resource_line(block)),
        }
    }
    let mut text = lines.join("\n");
    if text.is_empty() {
        // Providers refuse or misread an empty result; say what there is instead.
        text = if images(content).next().is_some() {
            "(The result is the image content that follows.)".to_owned()
        } else {
            "(No output.)".to_owned()
        };
    }
    if is_error {
        format!("Error: {text}")
    } else {
        text
    }
}

/// A block that is neither text nor an image, as a line of text: never a silent drop.
fn resource_line(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Audio { data, mime_type } => {
            format!("[audio: {mime_type}, {} base64 bytes]", data.len())
        }
        ContentBlock::EmbeddedResource {
            uri,
            contents: ResourceContents::Text(text),
            ..
        } => format!("[resource: <{uri}>]\n{text}"),
        ContentBlock::EmbeddedResource {
            uri,
            mime_type,
            contents: ResourceContents::Blob(data),
        } => format!(
            "[resource: <{uri}> ({}, {} base64 bytes)]",
            mime_type.as_deref().unwrap_or("binary"),
            data.len()
        ),
        ContentBlock::ToolReference { name } => format!("[tool: {name}]"),
        ContentBlock::Resource {
            uri,
            mime_type,
            name,
        } => {
            let name = name.as_deref().unwrap_or("resource");
            match mime_type {
                Some(mime) => format!("[resource: {name} <{uri}> ({mime})]"),
                None => format!("[resource: {name} <{uri}>]"),
            }
        }
        _ => String::new(),
    }
}

fn images(content: &[ContentBlock]) -> impl Iterator<Item = (&str, &str)> {
    content.iter().filter_map(|block| match block {
        ContentBlock::Image { data, mime_type } => Some((data.as_str(), mime_type.as_str())),
        _ => None,
    })
}

fn data_url(data: &str, mime_type: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

fn openai_chat(call_id: &str, content: &[ContentBlock], is_error: bool) -> Vec<Value> {
    let mut messages = vec![json!({
        "role": "tool",
        "tool_call_id": call_id,
        "content": text_of(content, is_error, false),
    })];
    let pictures: Vec<Value> = images(content)
        .map(
            |(data, mime)| json!({"type": "image_url", "image_url": {"url": data_url(data, mime)}}),
        )
        .collect();
    if !pictures.is_empty() {
        let mut parts = vec![
            json!({"type": "text", "text": format!("Images returned by tool call {call_id}:")}),
        ];
        parts.extend(pictures);
        messages.push(json!({"role": "user", "content": parts}));
    }
    messages
}

fn openai_responses(call_id: &str, content: &[ContentBlock], is_error: bool) -> Vec<Value> {
    let text = text_of(content, is_error, false);
    let output = if images(content).next().is_none() {
        Value::String(text)
    } else {
        let mut parts = vec![json!({"type": "input_text", "text": text})];
        parts.extend(images(content).map(|(data, mime)| json!({"type": "input_image", "image_url": data_url(data, mime), "detail": "auto"})));
        Value::Array(parts)
    };
    vec![json!({"type": "function_call_output", "call_id": call_id, "output": output})]
}

fn anthropic(call_id: &str, content: &[ContentBlock], is_error: bool) -> Value {
    let mut blocks = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text } => blocks.push(json!({"type": "text", "text": text})),
            ContentBlock::Image { data, mime_type } if ANTHROPIC_IMAGES.contains(&mime_type.as_str()) => blocks.push(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            })),
            ContentBlock::Image { mime_type, .. } => blocks.push(json!({"type": "text", "text": format!("[image: {mime_type}, not a type this provider shows]")})),
            // Anthropic expands a reference into the tool's definition for the next turn.
            ContentBlock::ToolReference { name } => blocks.push(json!({"type": "tool_reference", "tool_name": name})),
            _ => blocks.push(json!({"type": "text", "text": resource_line(block)})),
        }
    }
    json!({"type": "tool_result", "tool_use_id": call_id, "content": blocks, "is_error": is_error})
}

fn gemini(call_id: &str, tool: &str, content: &[ContentBlock], is_error: bool) -> Vec<Value> {
    let text = text_of(content, false, false);
    let response = if is_error {
        json!({"error": text})
    } else {
        json!({"output": text})
    };
    let mut parts =
        vec![json!({"functionResponse": {"id": call_id, "name": tool, "response": response}})];
    parts.extend(
        images(content).map(|(data, mime)| json!({"inlineData": {"mimeType": mime, "data": data}})),
    );
    parts
}
