//! Bounding what the model reads: text over the limits is replaced by a head-and-tail preview
//! whose marker says what was left out and where the full text was retained.
//!
//! Only text is measured; images and resource references stay under their producers' limits.
//! Cutting is linear in the text (one `memchr` pass to count lines, and scans of the head and
//! tail regions only), copies nothing but the preview itself, splits on line boundaries where
//! it can and never inside a UTF-8 character. The full text goes to a [`ToolOutputStore`]
//! first ([`FsOutputStore`] by default).

mod store;

pub use store::{
    CleanupReport, FsOutputStore, RetainError, Retained, RetainedOutput, Retention, RetentionRule,
    SWEEP_INTERVAL, ToolOutputStore, fresh_handle, is_valid_handle,
};

use std::io;

use serde_json::Value;

use crate::present::ContentBlock;
use crate::text::{ceil_char_boundary, floor_char_boundary};

/// How much text the model may read of one result, and how big presentation metadata may be.
///
/// ```
/// use toolprism::bound::BoundLimits;
///
/// let limits = BoundLimits::default();
/// assert_eq!((limits.max_lines, limits.max_bytes), (2_000, 50 * 1024));
/// let tight = BoundLimits::new(100, 8 * 1024);
/// assert_eq!(tight.max_lines, 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoundLimits {
    /// Most lines of text (default 2,000; at least [`MIN_LINES`](Self::MIN_LINES)).
    pub max_lines: usize,
    /// Most bytes of text (default 50 KiB; at least [`MIN_BYTES`](Self::MIN_BYTES)).
    pub max_bytes: usize,
    /// Most bytes of serialized presentation metadata (default 16 KiB); larger metadata is
    /// dropped with a warning and the call still succeeds.
    pub max_meta_bytes: usize,
}

impl Default for BoundLimits {
    fn default() -> Self {
        Self {
            max_lines: 2_000,
            max_bytes: 50 * 1024,
            max_meta_bytes: 16 * 1024,
        }
    }
}

impl BoundLimits {
    /// The fewest lines a limit may allow: a head line, the marker, a tail line.
    pub const MIN_LINES: usize = 3;
    /// The fewest bytes a limit may allow: room for the marker and some text.
    pub const MIN_BYTES: usize = 2 * 1024;

    /// Limits of `max_lines` lines and `max_bytes` bytes (raised to the minimums), with the
    /// default metadata limit.
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            max_lines: max_lines.max(Self::MIN_LINES),
            max_bytes: max_bytes.max(Self::MIN_BYTES),
            ..Self::default()
        }
    }

    /// The same limits with another metadata limit.
    #[must_use]
    pub fn with_max_meta_bytes(mut self, max_meta_bytes: usize) -> Self {
        self.max_meta_bytes = max_meta_bytes;
        self
    }

    fn effective(self) -> Self {
        Self {
            max_lines: self.max_lines.max(Self::MIN_LINES),
            max_bytes: self.max_bytes.max(Self::MIN_BYTES),
            max_meta_bytes: self.max_meta_bytes,
        }
    }
}

/// Room kept for the marker line when planning a cut.
const MARKER_RESERVE: usize = 1_024;

/// Where to cut a text that is over the limits: keep `..head_end` and `tail_start..`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// End of the head.
    pub head_end: usize,
    /// Start of the tail.
    pub tail_start: usize,
    /// Lines in the whole text.
    pub total_lines: usize,
    /// Lines wholly or partly left out.
    pub omitted_lines: usize,
    /// The first line (1-based) that is left out, wholly or partly.
    pub first_omitted_line: usize,
}

/// The number of lines of `text`: newlines, plus one for a last line without one.
///
/// ```
/// # use toolprism::bound::count_lines;
/// assert_eq!(count_lines(""), 0);
/// assert_eq!(count_lines("a"), 1);
/// assert_eq!(count_lines("a\n"), 1);
/// assert_eq!(count_lines("a\nb"), 2);
/// ```
pub fn count_lines(text: &str) -> usize {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Whether `text` fits the limits, or where to cut it.
pub fn plan_cut(text: &str, limits: &BoundLimits) -> Option<Cut> {
    let limits = limits.effective();
    let bytes = text.as_bytes();
    let total_lines = count_lines(text);
    if bytes.len() <= limits.max_bytes && total_lines <= limits.max_lines {
        return None;
    }
    let line_budget = limits.max_lines - 1;
    let byte_budget = limits.max_bytes - MARKER_RESERVE;
    let head_end = head_cut(text, line_budget / 2, byte_budget / 2);
    let tail_start = tail_cut(
        text,
        line_budget - line_budget / 2,
        byte_budget - byte_budget / 2,
    )
    .max(head_end);
    let head_lines = memchr::memchr_iter(b'\n', &bytes[..head_end]).count();
    let tail_lines = count_lines(&text[tail_start..]);
    Some(Cut {
        head_end,
        tail_start,
        total_lines,
        omitted_lines: total_lines.saturating_sub(head_lines + tail_lines),
        first_omitted_line: head_lines + 1,
    })
}

/// The end of the longest prefix of at most `max_lines` lines and `max_bytes` bytes, on a line
/// boundary if any line fits, else on a character boundary.
fn head_cut(text: &str, max_lines: usize, max_bytes: usize) -> usize {
    if max_lines == 0 {
        return 0;
    }
    let window = &text.as_bytes()[..max_bytes.min(text.len())];
    match memchr::memchr_iter(b'\n', window).take(max_lines).last() {
        Some(newline) => newline + 1,
        None => floor_char_boundary(text, window.len()),
    }
}

/// The start of the longest suffix of at most `max_lines` lines and `max_bytes` bytes, on a
/// line boundary if any line fits, else on a character boundary.
fn tail_cut(text: &str, max_lines: usize, max_bytes: usize) -> usize {
    let bytes = text.as_bytes();
    let earliest = bytes.len() - max_bytes.min(bytes.len());
    if max_lines == 0 {
        return bytes.len();
    }
    // A line starts after each newline; a final newline ends the last line rather than
    // starting an empty one, so it does not count against the budget.
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let mut start = None;
    let mut lines = 0;
    for newline in memchr::memrchr_iter(b'\n', &bytes[earliest.saturating_sub(1)..]) {
        let newline = newline + earliest.saturating_sub(1);
        if ends_with_newline && newline == bytes.len() - 1 {
            continue;
        }
        if newline + 1 < earliest {
            break;
        }
        lines += 1;
        if lines > max_lines {
            break;
        }
        start = Some(newline + 1);
    }
    start.unwrap_or_else(|| ceil_char_boundary(text, earliest))
}

/// The preview of `text` cut at `cut`: the head, one marker line naming what was left out and
/// where the full text is, and the tail. Never longer than the limits the cut was planned for.
pub fn preview(text: &str, cut: &Cut, retained: &RetainedOutput, limits: &BoundLimits) -> String {
    let limits = limits.effective();
    let head = &text[..cut.head_end];
    let omitted_bytes = cut.tail_start - cut.head_end;
    let location: String = retained
        .location
        .chars()
        .map(|ch| if ch.is_control() { '?' } else { ch })
        .collect();
    let marker = format!(
        "... output truncated: {} lines ({omitted_bytes} bytes) omitted. The full output ({} lines, {} bytes) is saved at {location}; read it with an offset to see the rest (the omitted part starts at line {}) ...",
        cut.omitted_lines,
        cut.total_lines,
        text.len(),
        cut.first_omitted_line,
    );
    let opening = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let fixed = head.len() + opening.len() + marker.len() + 1;
    // Should the marker outgrow its reserve (a very long location), the tail gives way.
    let tail_room = limits.max_bytes.saturating_sub(fixed);
    let mut tail_start = cut.tail_start;
    if text.len() - tail_start > tail_room {
        tail_start = ceil_char_boundary(text, text.len() - tail_room);
    }
    let tail = &text[tail_start..];
    let mut preview = String::with_capacity(fixed + tail.len());
    preview.push_str(head);
    preview.push_str(opening);
    preview.push_str(&marker);
    preview.push('\n');
    preview.push_str(tail);
    preview
}

/// Whether the text blocks of some content are together over the limits.
pub(crate) fn is_oversized(content: &[ContentBlock], limits: &BoundLimits) -> bool {
    let limits = limits.effective();
    let blocks = text_blocks(content).count();
    let bytes = text_blocks(content).map(str::len).sum::<usize>() + blocks.saturating_sub(1);
    // A text cannot have more lines than bytes: short texts need no line count.
    bytes > limits.max_bytes
        || (bytes > limits.max_lines
            && text_blocks(content).map(count_lines).sum::<usize>() > limits.max_lines)
}

/// The text blocks of some content, in order.
pub(crate) fn text_blocks(content: &[ContentBlock]) -> impl Iterator<Item = &str> {
    content.iter().filter_map(ContentBlock::as_text)
}

/// The preview of the text blocks `texts` (joined by a newline) once retained.
pub(crate) fn preview_of(
    texts: &[&str],
    retained: &RetainedOutput,
    limits: &BoundLimits,
) -> String {
    // One text block is cut in place; several are joined first (the one copy made here).
    let joined;
    let text = if let [only] = texts {
        *only
    } else {
        joined = texts.join("\n");
        &joined
    };
    match plan_cut(text, limits) {
        Some(cut) => preview(text, &cut, retained, limits),
        None => text.to_owned(),
    }
}

/// Replaces the text blocks of `content` by one block of `text`, where the first one was.
pub(crate) fn replace_text(content: Vec<ContentBlock>, text: String) -> Vec<ContentBlock> {
    let mut text = Some(ContentBlock::text(text));
    content
        .into_iter()
        .filter_map(|block| match block {
            ContentBlock::Text { .. } => text.take(),
            other => Some(other),
        })
        .collect()
}

/// Whether serialized `meta` fits in `max_bytes`. A quick upper bound settles most metadata
/// (every string counted at its worst-case escaped size); only metadata near the limit is
/// measured exactly, by serializing it into a counter that stops at the limit.
pub(crate) fn meta_fits(meta: &Value, max_bytes: usize) -> bool {
    upper_bound(meta, max_bytes).is_some() || json_len_within(meta, max_bytes).is_some()
}

/// How many bytes `value` takes as JSON, if at most `max_bytes`: counted without writing them
/// anywhere, and given up once past the limit, so a huge value costs no more than the limit.
///
/// ```
/// use serde_json::json;
/// use toolprism::bound::json_len_within;
///
/// assert_eq!(json_len_within(&json!({"a": [1, 2]}), 100), Some(11)); // {"a":[1,2]}
/// assert_eq!(json_len_within(&json!({"a": [1, 2]}), 11), Some(11));
/// assert_eq!(json_len_within(&json!({"a": [1, 2]}), 10), None);
/// assert_eq!(json_len_within("x".repeat(1 << 20).as_str(), 1_000), None);
/// ```
pub fn json_len_within<T: serde::Serialize + ?Sized>(value: &T, max_bytes: usize) -> Option<usize> {
    let mut budget = Budget(max_bytes);
    serde_json::to_writer(&mut budget, value).ok()?;
    Some(max_bytes - budget.0)
}

/// A writer that only counts down what is left of its budget, and fails once past it.
struct Budget(usize);

impl io::Write for Budget {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 = self
            .0
            .checked_sub(buf.len())
            .ok_or_else(|| io::Error::other("over budget"))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An upper bound of the serialized size of `value`, if it is within `budget`.
fn upper_bound(value: &Value, budget: usize) -> Option<usize> {
    // A string escapes to at most 6 bytes per byte (`\u001f`), plus its quotes; a number is at
    // most 24 bytes; each member costs its key, a colon and a comma.
    let size = match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(text) => text.len().checked_mul(6)?.checked_add(2)?,
        Value::Array(items) => {
            let mut size = 2 + items.len();
            for item in items {
                size = size.checked_add(upper_bound(item, budget.checked_sub(size)?)?)?;
            }
            size
        }
        Value::Object(map) => {
            let mut size: usize = 2;
            for (key, item) in map {
                size = size.checked_add(key.len().checked_mul(6)?.checked_add(4)?)?;
                size = size.checked_add(upper_bound(item, budget.checked_sub(size)?)?)?;
            }
            size
        }
    };
    (size <= budget).then_some(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_measured_exactly_near_the_limit() {
        let meta = serde_json::json!({"title": "x".repeat(100)});
        let exact = serde_json::to_string(&meta).unwrap().len();
        assert!(meta_fits(&meta, exact));
        assert!(!meta_fits(&meta, exact - 1));
        assert!(meta_fits(&meta, 10_000), "the quick bound settles it");
        let escaped = serde_json::json!(["\u{1}".repeat(1_000)]);
        let exact = serde_json::to_string(&escaped).unwrap().len();
        assert!(meta_fits(&escaped, exact) && !meta_fits(&escaped, exact - 1));
    }

    #[test]
    fn tail_cut_keeps_a_final_newline_with_its_line() {
        let text = "a\nb\nc\n";
        assert_eq!(&text[tail_cut(text, 1, 100)..], "c\n");
        assert_eq!(&text[tail_cut(text, 2, 100)..], "b\nc\n");
        assert_eq!(&text[head_cut(text, 2, 100)..], "c\n");
    }
}
