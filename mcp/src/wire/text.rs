//! Text a peer sent, quoted back into an error or a message: bounded and printable.

/// Text a peer sent (an unknown name, a URI, an error code), quoted back bounded and printable.
pub(crate) fn quoted_for_error(name: &str) -> String {
    let printable = name
        .chars()
        .map(|ch| if ch.is_control() { '?' } else { ch });
    format!("`{}`", cut(printable, 128))
}

/// The first `max` characters of `chars`, the cut (if any) marked with `…`.
pub(crate) fn cut(mut chars: impl Iterator<Item = char>, max: usize) -> String {
    let mut kept: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        kept.push('…');
    }
    kept
}
