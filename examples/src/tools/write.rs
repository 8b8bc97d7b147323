//! `write`: creates or overwrites a file. The value keeps the content the file had before, so
//! the diff card is derived from the arguments and the value alone.
//!
//! To adapt: this file uses `Workspace` (path confinement: copy `workspace.rs` along, or take a
//! state of your own).
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `fs`).

use toolprism::context::State;
use toolprism::prelude::*;
use toolprism::present::{Card, DiffCard};

use super::workspace::Workspace;

// Failure codes this tool sets, for a host or a test to match on.
/// The file is not UTF-8 text.
pub const NOT_TEXT: &str = "NOT_TEXT";

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file, relative to the workspace root. Missing directories are created.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// Whether the file was new.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// The file did not exist.
    Create,
    /// The file existed and was replaced.
    Overwrite,
}

/// The value of `write`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WriteValue {
    /// The file, relative to the workspace.
    pub path: String,
    /// Whether it was created or overwritten.
    pub operation: Operation,
    /// Its content before, when it existed.
    pub before: Option<String>,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes a file of the workspace, creating it (and its directories) or replacing it.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Write file",
    destructive,
    idempotent,
    open_world = false,
    scopes = ["files:write"],
    examples = [r##"{"path": "notes/plan.md", "content": "# Plan\n"}"##]
)]
pub async fn write(
    args: WriteArgs,
    State(workspace): State<Workspace>,
) -> Result<WriteValue, ToolError> {
    let path = workspace.resolve_writable(&args.path)?;
    let shown = workspace.display(&path);
    let before = match tokio::fs::read(&path).await {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
            ToolError::new(format!("`{shown}` holds binary data; not overwriting it"))
                .with_code(NOT_TEXT)
        })?),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error.into()),
    };
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await?;
    }
    tokio::fs::write(&path, &args.content).await?;
    Ok(WriteValue {
        path: shown,
        operation: if before.is_some() {
            Operation::Overwrite
        } else {
            Operation::Create
        },
        before,
        bytes: args.content.len() as u64,
    })
}

fn render(_args: &WriteArgs, value: &WriteValue) -> String {
    match value.operation {
        Operation::Create => format!("Created file successfully: {}", value.path),
        Operation::Overwrite => format!("Wrote file successfully: {}", value.path),
    }
}

fn card(args: &WriteArgs, value: &WriteValue) -> Card {
    Card::Diff(DiffCard::from_change(
        &value.path,
        value.before.as_deref(),
        &args.content,
    ))
}
