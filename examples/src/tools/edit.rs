//! `edit`: replaces an exact piece of text in a file. No match, or more than one, is a typed
//! failure that tells the model what to do; the value is the file before and after, from
//! which the diff card is derived.
//!
//! To adapt: this file uses `Workspace` (path confinement: copy `workspace.rs` along, or take a
//! state of your own).
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `fs`).

use std::fmt::Write as _;

use toolprism::context::State;
use toolprism::prelude::*;
use toolprism::present::{Card, DiffCard};

use super::workspace::Workspace;

// Failure codes this tool sets, for a host or a test to match on.
/// `old_string` is empty.
pub const EMPTY_OLD_STRING: &str = "EMPTY_OLD_STRING";
/// `old_string` is in the file more than once.
pub const MULTIPLE_MATCHES: &str = "MULTIPLE_MATCHES";
/// The file is not UTF-8 text.
pub const NOT_TEXT: &str = "NOT_TEXT";
/// `old_string` and `new_string` are the same.
pub const NO_CHANGE: &str = "NO_CHANGE";
/// `old_string` is not in the file.
pub const NO_MATCH: &str = "NO_MATCH";

/// How many changed lines the text shows of each side.
const PREVIEW_LINES: usize = 6;

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace, including whitespace and indentation.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// The value of `edit`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditValue {
    /// The file, relative to the workspace.
    pub path: String,
    /// The file before the edit.
    pub before: String,
    /// The file after the edit.
    pub after: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
}

/// Replaces `old_string` by `new_string` in a file. `old_string` must occur exactly once
/// unless `replace_all` is set; copy it exactly from the file.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Edit file",
    destructive,
    open_world = false,
    scopes = ["files:write"],
    examples = [r#"{"path": "src/lib.rs", "old_string": "fn old()", "new_string": "fn new()"}"#]
)]
pub async fn edit(
    args: EditArgs,
    State(workspace): State<Workspace>,
) -> Result<EditValue, ToolError> {
    if args.old_string.is_empty() {
        return Err(
            ToolError::new("`old_string` is empty; to create a file, use write")
                .with_code(EMPTY_OLD_STRING),
        );
    }
    if args.old_string == args.new_string {
        return Err(
            ToolError::new("`old_string` and `new_string` are the same; nothing to do")
                .with_code(NO_CHANGE),
        );
    }
    let path = workspace.resolve_existing(&args.path)?;
    let shown = workspace.display(&path);
    let before = String::from_utf8(tokio::fs::read(&path).await?)
        .map_err(|_| ToolError::new(format!("`{shown}` is not UTF-8 text")).with_code(NOT_TEXT))?;
    let found = before.matches(&args.old_string).count();
    match found {
        0 => {
            return Err(ToolError::new(format!(
                "`old_string` was not found in `{shown}`. Read the file and copy the text exactly, including whitespace and indentation."
            ))
            .with_code(NO_MATCH));
        }
        1 => {}
        _ if args.replace_all => {}
        _ => {
            return Err(ToolError::new(format!(
                "`old_string` occurs {found} times in `{shown}`. Include more surrounding lines to make it unique, or set `replace_all`."
            ))
            .with_code(MULTIPLE_MATCHES));
        }
    }
    let after = before.replace(&args.old_string, &args.new_string);
    tokio::fs::write(&path, &after).await?;
    Ok(EditValue {
        path: shown,
        before,
        after,
        replacements: found as u64,
    })
}

fn render(args: &EditArgs, value: &EditValue) -> String {
    let mut text = format!(
        "Edited file successfully: {}\nReplacements: {}\n```diff\n",
        value.path, value.replacements
    );
    for line in args.old_string.lines().take(PREVIEW_LINES) {
        let _ = writeln!(text, "-{line}");
    }
    for line in args.new_string.lines().take(PREVIEW_LINES) {
        let _ = writeln!(text, "+{line}");
    }
    text.push_str("```");
    text
}

fn card(_args: &EditArgs, value: &EditValue) -> Card {
    Card::Diff(DiffCard::from_change(
        &value.path,
        Some(&value.before),
        &value.after,
    ))
}
