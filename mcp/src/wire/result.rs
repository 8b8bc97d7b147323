//! A tool result on the wire: toolprism's `_meta` keys, and an outcome as MCP's
//! `CallToolResult` (the server writes it, the client reads the same keys back).

use rmcp::model::{CallToolResult, MetaObject};
use serde_json::{Map, Value, json};
use toolprism::{OutcomeParts, ToolOutcome};

use crate::wire::content::into_mcp;
use crate::wire::schema::WRAP_PROPERTY;

/// The `_meta` key of a success's card: what a UI shows, from the tool's `presentation_meta`.
pub const CARD_META_KEY: &str = "toolprism.dev/card";
/// The `_meta` key of a failure's `{name, code}`.
pub const ERROR_META_KEY: &str = "toolprism.dev/error";

/// An outcome as an MCP tool result. The value is moved, not copied: it is the largest part.
pub(crate) fn to_result(outcome: ToolOutcome, wrapped: bool) -> CallToolResult {
    let OutcomeParts {
        result,
        content,
        meta,
        additional_contexts,
        ..
    } = outcome.into_parts();
    let content = content
        .into_iter()
        .map(into_mcp)
        .chain(
            additional_contexts
                .into_iter()
                .map(|context| rmcp::model::ContentBlock::text(context.text)),
        )
        .collect();
    match result {
        Ok(value) => {
            let value = value.into_value();
            let structured = if wrapped {
                Value::Object(Map::from_iter([(WRAP_PROPERTY.to_owned(), value)]))
            } else {
                value
            };
            // Not `CallToolResult::structured`, which prints the value into a text block of its
            // own: the content is the rendered one.
            let mut result = CallToolResult::success(content);
            result.structured_content = Some(structured);
            result.meta =
                meta.map(|card| MetaObject(Map::from_iter([(CARD_META_KEY.to_owned(), card)])));
            result
        }
        Err(error) => {
            let mut result = CallToolResult::error(content);
            result.meta = error.info.map(|info| {
                MetaObject(Map::from_iter([(
                    ERROR_META_KEY.to_owned(),
                    json!({"name": info.name, "code": info.code}),
                )]))
            });
            result
        }
    }
}
