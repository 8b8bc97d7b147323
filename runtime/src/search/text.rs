//! How a text is split into the words search reads: lower-cased, at anything that is not a
//! letter or a digit and between the words of `camelCase`, plurals dropped for the index.

/// The words of a text, for the index and for queries: lower-cased, split at anything that
/// is not a letter or a digit and between the words of `camelCase`, one-letter words
/// dropped, and a plural's `s` taken off, so that `listPullRequests` and "list pull request"
/// meet.
pub fn words(text: &str) -> Vec<String> {
    split(text, true)
}

/// The words of a text as [`words`] splits them, plurals kept (for a sentence model to read).
pub(super) fn plain_words(text: &str) -> Vec<String> {
    split(text, false)
}

fn split(text: &str, without_plurals: bool) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    let flush = |current: &mut String, words: &mut Vec<String>| {
        if current.chars().count() > 1 {
            words.push(if without_plurals {
                stem(current)
            } else {
                current.clone()
            });
        }
        current.clear();
    };
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if ch.is_uppercase() && previous_lower {
                flush(&mut current, &mut words);
            }
            previous_lower = ch.is_lowercase() || ch.is_ascii_digit();
            current.extend(ch.to_lowercase());
        } else {
            previous_lower = false;
            flush(&mut current, &mut words);
        }
    }
    flush(&mut current, &mut words);
    words
}

/// A word without its plural ending (`repositories` → `repository`, `issues` → `issue`).
fn stem(word: &str) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..word.len() - 3]);
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_split_cases_and_drop_plurals() {
        assert_eq!(words("listPullRequests"), ["list", "pull", "request"]);
        assert_eq!(
            words("get_repository-issues"),
            ["get", "repository", "issue"]
        );
        assert_eq!(
            words("Search the repositories, a  Git thing"),
            ["search", "the", "repository", "git", "thing"]
        );
        assert_eq!(words("access status"), ["access", "status"]);
    }
}
