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
