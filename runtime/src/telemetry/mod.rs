//! What a dispatch tells a host's tracing and metrics, in the names of the OpenTelemetry
//! semantic conventions for generative AI (and, in `toolprism-mcp`, for MCP).
//!
//! Spans and events go through [`tracing`], so no host is forced onto OpenTelemetry; with
//! `tracing-opentelemetry` they become OpenTelemetry spans as they are:
//!
//! | Span | Fields |
//! |---|---|
//! | `execute_tool {tool}` (kind internal) | `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` = `function`, `toolprism.surface`; on failure `error.type` (the [failure code](crate::error::FailureKind::code)) and status error |
//!
//! Its events: `toolprism.policy` (a policy denied, blocked, replaced or asked), `toolprism.wrapper`
//! (a wrapper ran), `toolprism.spill` (an oversized output was retained), `toolprism.invalid_output`
//! (a value broke the output schema).
//!
//! Nothing a call carries is recorded by default: no arguments, no results, no tokens.
//! [`record_content`] opts in to `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`,
//! each cut to a bounded size.
//!
//! With the `otel` feature, [`install_meter`] also records metrics on an OpenTelemetry meter
//! (see [`metrics`]); without it (or before it), no dispatch reads the clock for them.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The size [`record_content`] keeps when asked for a default.
pub const DEFAULT_CONTENT_BYTES: usize = 4 * 1024;

/// The fewest bytes [`record_content`] keeps: room for a cut's mark and a little before it.
pub const MIN_CONTENT_BYTES: usize = 16;

/// The most bytes of arguments or of a result a span ever records.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;

/// 0: content is not recorded; else the most bytes of each kept.
static CONTENT_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Records each call's arguments and result as JSON on its `execute_tool` span, each cut to
/// `max_bytes` (from [`MIN_CONTENT_BYTES`] to [`MAX_CONTENT_BYTES`]), and a failure's message
/// as its status; `None` stops recording (the default). For the whole process, as the GenAI
/// conventions' `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is (which
/// `toolprism_otel::Telemetry::from_env` reads): what a tool reads and returns may be private,
/// and a trace backend is rarely the place for it.
pub fn record_content(max_bytes: Option<usize>) {
    let bytes = max_bytes.map_or(0, |bytes| bytes.clamp(MIN_CONTENT_BYTES, MAX_CONTENT_BYTES));
    CONTENT_BYTES.store(bytes, Ordering::Relaxed);
}

/// The bytes of content a span keeps, when it keeps any.
pub(crate) fn content_limit() -> Option<usize> {
    match CONTENT_BYTES.load(Ordering::Relaxed) {
        0 => None,
        bytes => Some(bytes),
    }
}

/// `value` as compact JSON within `limit` bytes, the cut (if any) marked `…`; serializing
/// stops at the limit, so a value of megabytes is not written out whole to be cut.
pub(crate) fn bounded_json(value: &serde_json::Value, limit: usize) -> String {
    let whole = crate::text::json_prefix(value, limit);
    if whole.len() <= limit {
        return whole;
    }
    // Cut: room left for the mark.
    crate::text::json_prefix(value, limit.saturating_sub('…'.len_utf8()))
}

/// `text` within `limit` bytes, the cut (if any) marked `…`.
pub(crate) fn bounded_text(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    crate::text::truncate(text, limit.saturating_sub('…'.len_utf8()))
}

#[cfg(feature = "otel")]
pub mod metrics;

#[cfg(feature = "otel")]
pub use metrics::{install_meter, meter};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_value_is_written_no_further_than_its_room() {
        let value = serde_json::json!(["x".repeat(1_000_000)]);
        let cut = bounded_json(&value, 100);
        assert!(cut.len() <= 100, "{}", cut.len());
        assert!(cut.starts_with(r#"["xxx"#) && cut.ends_with('…'));
        let exact = serde_json::json!("abc");
        assert_eq!(bounded_json(&exact, 5), r#""abc""#);
        assert_eq!(bounded_json(&exact, 4), "\"…");
    }

    #[test]
    fn content_is_cut_at_a_character_boundary_and_marked() {
        let value = serde_json::json!({"text": "ééééé"});
        let full = bounded_json(&value, 1000);
        assert_eq!(full, r#"{"text":"ééééé"}"#);
        let cut = bounded_json(&value, 14);
        assert!(cut.len() <= 14, "{cut}");
        assert!(cut.ends_with('…'), "{cut}");
        assert!(full.starts_with(cut.trim_end_matches('…')));
    }
}
