//! Small text helpers shared by the modules that build messages.

/// Cuts `text` to at most `max` bytes on a character boundary, marking the cut with `…`.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    let kept = head(text, max);
    if kept.len() == text.len() {
        kept.to_owned()
    } else {
        format!("{kept}…")
    }
}

/// `text` cut like [`truncate`], with control characters (a newline, an ANSI escape, NUL)
/// written as `\u{…}` escapes: for echoing untrusted names back into messages and logs.
pub(crate) fn printable(text: &str, max: usize) -> String {
    let cut = truncate(text, max);
    if !cut.chars().any(char::is_control) {
        return cut;
    }
    cut.chars()
        .map(|ch| {
            if ch.is_control() {
                format!("\\u{{{:x}}}", u32::from(ch))
            } else {
                ch.to_string()
            }
        })
        .collect()
}

/// `value` as compact JSON, cut like [`truncate`] to `max` bytes; serialization stops once
/// past `max`, so a huge value costs no more than a small one.
pub(crate) fn json_prefix(value: &serde_json::Value, max: usize) -> String {
    /// A writer that keeps the first `max + 4` bytes (room for a whole last character), then
    /// fails, which stops the serializer.
    struct Prefix {
        bytes: Vec<u8>,
        max: usize,
    }
    impl std::io::Write for Prefix {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.max + 4 - self.bytes.len();
            if room == 0 {
                return Err(std::io::Error::other("enough"));
            }
            let take = room.min(buf.len());
            self.bytes.extend_from_slice(&buf[..take]);
            Ok(take)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut prefix = Prefix {
        bytes: Vec::new(),
        max,
    };
    let _ = serde_json::to_writer(&mut prefix, value);
    truncate(&String::from_utf8_lossy(&prefix.bytes), max)
}

/// The first `max` bytes of `text`, on a character boundary.
pub(crate) fn head(text: &str, max: usize) -> &str {
    &text[..floor_char_boundary(text, max.min(text.len()))]
}

/// The last `max` bytes of `text`, on a character boundary.
pub(crate) fn tail(text: &str, max: usize) -> &str {
    &text[ceil_char_boundary(text, text.len().saturating_sub(max))..]
}

/// The nearest character boundary at or before `at` (which is at most `text.len()`).
pub(crate) fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The nearest character boundary at or after `at` (which is at most `text.len()`).
pub(crate) fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The byte (from 1) where `serde_json` stopped reading `bytes`: its line and column made one
/// offset, which a model's arguments on one line and a body over many both point at plainly.
pub(crate) fn json_error_byte(bytes: &[u8], error: &serde_json::Error) -> usize {
    let line_start: usize = bytes
        .split(|byte| *byte == b'\n')
        .take(error.line().saturating_sub(1))
        .map(|line| line.len() + 1)
        .sum();
    line_start + error.column()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h…");
        assert_eq!(truncate("héllo", 3), "hé…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(head("héllo", 2), "h");
        assert_eq!(tail("héllo", 5), "éllo");
        assert_eq!(tail("héllo", 4), "llo");
    }
}
