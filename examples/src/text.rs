//! Cutting text for display, by characters: shared by the tools' renders and the terminal.

/// `text` cut to `max` characters, marked with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    shorten_with(text, max, "…")
}

/// `text` cut to `max` characters, followed by `marker` when cut.
pub fn shorten_with(text: &str, max: usize, marker: &str) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}{marker}", &text[..cut]),
        None => text.to_owned(),
    }
}
