//! Cutting a line for display, by characters: what a `render` or a terminal shows of a line
//! too long to show whole.

/// `text` cut to `max` characters, marked with `…` when cut.
///
/// ```
/// use toolprism::present::shorten;
///
/// assert_eq!(shorten("héllo wörld", 5), "héllo…");
/// assert_eq!(shorten("short", 5), "short");
/// ```
pub fn shorten(text: &str, max: usize) -> String {
    shorten_with(text, max, "…")
}

/// `text` cut to `max` characters, followed by `marker` when cut.
///
/// ```
/// use toolprism::present::shorten_with;
///
/// assert_eq!(shorten_with("a long line", 6, " (cut)"), "a long (cut)");
/// ```
pub fn shorten_with(text: &str, max: usize, marker: &str) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}{marker}", &text[..cut]),
        None => text.to_owned(),
    }
}
