//! What a remote definition may not carry into the model's context: characters a person
//! reading it cannot see (invisible, bidirectional controls, tag characters, variation
//! selectors), descriptions past the configured size, and a name that looks like a local
//! tool's. A definition that carries any is refused at import, with where.

use rmcp::model::Tool;
use serde_json::Value;
use unicode_normalization::UnicodeNormalization as _;

/// The longest description or title, in bytes, a remote tool may carry (the tool's own, or any
/// in its schemas) unless the host says otherwise ([`ImportOptions::max_description_bytes`]).
///
/// [`ImportOptions::max_description_bytes`]: crate::ImportOptions::max_description_bytes
pub const MAX_REMOTE_DESCRIPTION_BYTES: usize = 16 * 1024;

/// Why a remote tool was not imported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Poisoned {
    /// A character a reader cannot see, at this position.
    #[error(
        "{field} holds {character} (a character nobody reading it sees) at character {position}"
    )]
    HiddenCharacter {
        /// Where, as a JSON Pointer into the tool as listed (`/description`,
        /// `/inputSchema/properties/path/description`).
        field: String,
        /// The character, as `U+XXXX`.
        character: String,
        /// Its position in the text, in characters from 0.
        position: usize,
    },
    /// A description or title past the limit.
    #[error("{field} is {bytes} bytes, more than the {limit} a description may have")]
    TooLong {
        /// Where.
        field: String,
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// A name that reads as a local tool's (after NFKC normalization and the Unicode
    /// confusables' skeleton) without being it.
    #[error("its name `{name}` reads as the local tool `{local}`")]
    Lookalike {
        /// The remote name (its invisible characters escaped).
        name: String,
        /// The local tool it imitates.
        local: String,
    },
}

/// A refused tool: which, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefusedTool {
    /// The name the server listed it under (its hidden characters escaped as `\u{…}`).
    pub remote_name: String,
    /// Why.
    pub reason: Poisoned,
}

/// Whether a reader of the text would not see this character: format characters (zero-width
/// spaces and joiners, bidirectional marks, embeddings, overrides and isolates, the byte-order
/// mark, the soft hyphen, tag characters), variation selectors, controls other than tab and
/// line breaks, and private-use characters.
pub(crate) fn is_hidden(character: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    if matches!(character, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(character),
        GeneralCategory::Format | GeneralCategory::Control | GeneralCategory::PrivateUse
    ) || matches!(character, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// `text` with its hidden characters written as `\u{…}`, for a message.
pub(crate) fn escaped(text: &str) -> String {
    text.chars()
        .map(|character| {
            if is_hidden(character) {
                format!("\\u{{{:04X}}}", u32::from(character))
            } else {
                character.to_string()
            }
        })
        .collect()
}

fn hidden_in(field: &str, text: &str) -> Result<(), Poisoned> {
    match text
        .chars()
        .enumerate()
        .find(|(_, character)| is_hidden(*character))
    {
        Some((position, character)) => Err(Poisoned::HiddenCharacter {
            field: field.to_owned(),
            character: format!("U+{:04X}", u32::from(character)),
            position,
        }),
        None => Ok(()),
    }
}

fn described(field: &str, text: &str, limit: usize) -> Result<(), Poisoned> {
    if text.len() > limit {
        return Err(Poisoned::TooLong {
            field: field.to_owned(),
            bytes: text.len(),
            limit,
        });
    }
    hidden_in(field, text)
}

/// Checks a listed tool: its name, title and description, and every string of its schemas
/// (keys and values; `description` and `title` also for size). The walk holds its own stack:
/// a schema's depth costs no recursion.
pub(crate) fn inspect(tool: &Tool, limit: usize) -> Result<(), Poisoned> {
    hidden_in("/name", &tool.name)?;
    if let Some(title) = &tool.title {
        described("/title", title, limit)?;
    }
    if let Some(title) = tool.annotations.as_ref().and_then(|a| a.title.as_ref()) {
        described("/annotations/title", title, limit)?;
    }
    if let Some(description) = &tool.description {
        described("/description", description, limit)?;
    }
    let input = Value::Object((*tool.input_schema).clone());
    walk("/inputSchema", &input, limit)?;
    if let Some(output) = &tool.output_schema {
        walk("/outputSchema", &Value::Object((**output).clone()), limit)?;
    }
    Ok(())
}

fn walk(root: &str, schema: &Value, limit: usize) -> Result<(), Poisoned> {
    let mut stack: Vec<(String, &Value, bool)> = vec![(root.to_owned(), schema, false)];
    while let Some((path, value, describing)) = stack.pop() {
        match value {
            Value::String(text) if describing => described(&path, text, limit)?,
            Value::String(text) => hidden_in(&path, text)?,
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    stack.push((format!("{path}/{index}"), item, false));
                }
            }
            Value::Object(object) => {
                for (key, item) in object {
                    let at = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
                    hidden_in(&at, key)?;
                    stack.push((at, item, key == "description" || key == "title"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What a name reads as: NFKC, then the skeleton of Unicode's confusables (UTS #39), then
/// lower case, so that `rеad` (a Cyrillic `е`), `Read` and `read_fi1e` read as `read` and
/// `read_file`.
pub(crate) fn reads_as(name: &str) -> String {
    let normal: String = name.nfkc().collect();
    unicode_security::skeleton(&normal)
        .flat_map(char::to_lowercase)
        .collect()
}
