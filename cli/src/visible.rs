//! Text from tools, servers and session logs made safe to show: every character a terminal
//! obeys instead of printing, or that reorders what is shown, is written out as an escape.
//!
//! A tool's output is data: a file's bytes, a command's output, a remote server's text, a log
//! someone sent. Printed as it is, an escape sequence in it clears the screen, rewrites lines
//! already shown, sets the window title or the clipboard (OSC 52), and a bidirectional override
//! makes text read backwards (CVE-2021-42574). The command line shows what a call did, so
//! nothing a call returns may change how that is shown.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is shown as an escape rather than passed on: the control characters (C0, DEL
/// and C1, which include ESC, carriage return and the one-character CSI) other than newline
/// and tab, and the bidirectional controls.
///
/// ```
/// use toolprism_cli::visible::is_hidden;
///
/// assert!(is_hidden('\x1b') && is_hidden('\r') && is_hidden('\u{9b}') && is_hidden('\u{202e}'));
/// assert!(!is_hidden('\n') && !is_hidden('\t') && !is_hidden('é') && !is_hidden('א'));
/// ```
pub fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// The explicit bidirectional formatting characters: marks, embeddings, overrides and
/// isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// `text` with every [hidden](is_hidden) character written as `\u{…}`; borrowed when there is
/// none.
///
/// ```
/// use toolprism_cli::visible::visible;
///
/// assert_eq!(visible("\x1b[2Jgone"), "\\u{1b}[2Jgone");
/// assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
/// assert_eq!(visible("two\nlines\tand é ✓"), "two\nlines\tand é ✓");
/// ```
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, write_rust_escape)
}

/// JSON text as `serde_json` writes it (which escapes C0 controls) with the other
/// [hidden](is_hidden) characters — in strings, the only place they can be — written as JSON
/// `\uXXXX` escapes: the same JSON value, shown safely.
///
/// ```
/// use serde_json::{Value, json};
/// use toolprism_cli::visible::visible_json;
///
/// let value = json!({"text": "\u{9b}31m\u{202e}fed"});
/// let shown = visible_json(&value.to_string()).into_owned();
/// assert_eq!(shown, r#"{"text":"\u009b31m\u202efed"}"#);
/// assert_eq!(serde_json::from_str::<Value>(&shown).unwrap(), value);
/// ```
pub fn visible_json(json: &str) -> Cow<'_, str> {
    // Every hidden character is in the basic plane: one `\uXXXX` each.
    escaped(json, |out, c| {
        let _ = write!(out, "\\u{:04x}", u32::from(c));
    })
}

/// Pushes `c`, as an escape when it is [hidden](is_hidden).
pub(crate) fn push_visible(out: &mut String, c: char) {
    if is_hidden(c) {
        write_rust_escape(out, c);
    } else {
        out.push(c);
    }
}

/// `c` as `\u{…}`.
fn write_rust_escape(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
}

/// `text` with each [hidden](is_hidden) character written by `escape`, or borrowed when there
/// is none.
fn escaped(text: &str, escape: fn(&mut String, char)) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            escape(&mut shown, c);
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_terminal_would_obey_is_shown_as_escapes() {
        let hostile = "a\x1b]52;c;ZXZpbA==\x07b\x1b[2Jc\rd\u{9b}31me\u{7f}f\0g";
        let shown = visible(hostile);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert_eq!(
            shown,
            "a\\u{1b}]52;c;ZXZpbA==\\u{7}b\\u{1b}[2Jc\\u{d}d\\u{9b}31me\\u{7f}f\\u{0}g"
        );
    }

    #[test]
    fn text_is_never_reordered() {
        for control in [
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
        ] {
            let text = format!("x{control}y");
            let shown = visible(&text);
            assert_eq!(shown, format!("x\\u{{{:x}}}y", u32::from(control)));
        }
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for text in [
            "",
            "plain",
            "two\nlines\tand tabs",
            "é ✓ 漢字 👍 \u{5d0}",
            "\u{200b}zero width",
        ] {
            assert!(
                matches!(visible(text), Cow::Borrowed(shown) if shown == text),
                "{text:?}"
            );
        }
    }
}
