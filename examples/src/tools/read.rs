//! `read`: a text file with line numbers, or an image.
//!
//! The value holds the lines read (up to `limit`, 2,000 by default) with their numbers, and
//! the file's total line count; the text shows them the way models are used to, with a hint
//! to continue from the next offset. Images (PNG, JPEG, GIF, WebP) come back as image content.
//!
//! To adapt: this file uses `Workspace` (path confinement: copy `workspace.rs` along).
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `fs`), `base64`.

use std::fmt::Write as _;

use base64::Engine as _;
use toolprism::context::State;
use toolprism::prelude::*;
use toolprism::present::{Card, ReadCard, shorten_with};

use super::workspace::Workspace;

// Failure codes this tool sets, for a host or a test to match on.
/// The path is a directory.
pub const IS_A_DIRECTORY: &str = "IS_A_DIRECTORY";
/// The file is not UTF-8 text.
pub const NOT_TEXT: &str = "NOT_TEXT";
/// The offset is past the end of the file.
pub const OFFSET_PAST_END: &str = "OFFSET_PAST_END";
/// The file is over the size limit.
pub const TOO_LARGE: &str = "TOO_LARGE";

/// The most lines one read returns.
pub const MAX_LINES: u64 = 2_000;
/// Lines longer than this are cut in the text (the value keeps them whole).
pub const MAX_LINE_CHARS: usize = 2_000;
/// The largest image returned inline.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The first line to read, 1-based (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to read (default and most 2000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<u64>,
}

/// One numbered line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// The line, without its line ending.
    pub text: String,
}

/// The value of `read`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReadValue {
    /// Lines of a text file.
    Text {
        /// The file, relative to the workspace.
        path: String,
        /// The first line read.
        offset: u64,
        /// The lines read.
        lines: Vec<Line>,
        /// Lines in the file.
        total_lines: u64,
    },
    /// An image.
    Image {
        /// The file, relative to the workspace.
        path: String,
        /// Its media type.
        mime_type: String,
        /// Its bytes, base64.
        data: String,
    },
}

/// Reads a file of the workspace. Text comes back with line numbers (at most 2000 lines
/// per call: use `offset` to continue); images come back as images.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Read file",
    read_only,
    open_world = false,
    examples = [r#"{"path": "src/lib.rs"}"#, r#"{"path": "README.md", "offset": 40, "limit": 20}"#]
)]
pub async fn read(
    args: ReadArgs,
    State(workspace): State<Workspace>,
) -> Result<ReadValue, ToolError> {
    let path = workspace.resolve_existing(&args.path)?;
    let shown = workspace.display(&path);
    let metadata = tokio::fs::metadata(&path).await?;
    if metadata.is_dir() {
        return Err(
            ToolError::new(format!("`{shown}` is a directory; use glob to list it"))
                .with_code(IS_A_DIRECTORY),
        );
    }
    let bytes = tokio::fs::read(&path).await?;
    if let Some(mime_type) = image_type(&bytes) {
        if metadata.len() > MAX_IMAGE_BYTES {
            return Err(ToolError::new(format!(
                "`{shown}` is an image of {} bytes, over the {MAX_IMAGE_BYTES}-byte limit",
                metadata.len()
            ))
            .with_code(TOO_LARGE));
        }
        return Ok(ReadValue::Image {
            path: shown,
            mime_type: mime_type.to_owned(),
            data: base64::engine::general_purpose::STANDARD.encode(&bytes),
        });
    }
    if bytes.iter().take(8_192).any(|&b| b == 0) {
        return Err(ToolError::new(format!("`{shown}` is a binary file")).with_code(NOT_TEXT));
    }
    let text = String::from_utf8(bytes).map_err(|error| {
        ToolError::new(format!("`{shown}` is not UTF-8 text: {error}")).with_code(NOT_TEXT)
    })?;
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(MAX_LINES).clamp(1, MAX_LINES);
    let mut total_lines = 0;
    let mut lines = Vec::new();
    for (number, line) in (1..).zip(text.lines()) {
        total_lines = number;
        if number >= offset && number < offset + limit {
            lines.push(Line {
                number,
                text: line.to_owned(),
            });
        }
    }
    if offset > total_lines.max(1) {
        return Err(ToolError::new(format!(
            "offset {offset} is past the end of `{shown}`, which has {total_lines} lines"
        ))
        .with_code(OFFSET_PAST_END));
    }
    Ok(ReadValue::Text {
        path: shown,
        offset,
        lines,
        total_lines,
    })
}

fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
    match value {
        ReadValue::Image {
            mime_type, data, ..
        } => vec![
            ContentBlock::text("Image read successfully"),
            ContentBlock::image(data.clone(), mime_type.clone()),
        ],
        ReadValue::Text {
            path,
            lines,
            total_lines,
            ..
        } => {
            let mut text = format!("<path>{path}</path>\n<type>file</type>\n<content>\n");
            for line in lines {
                let shown = shorten_with(&line.text, MAX_LINE_CHARS, "… (line cut)");
                let _ = writeln!(text, "{}: {shown}", line.number);
            }
            text.push_str("</content>\n");
            match (lines.first(), lines.last()) {
                (Some(first), Some(last)) if last.number < *total_lines => {
                    let _ = write!(
                        text,
                        "(Showing lines {}-{} of {total_lines}. Use offset={} to continue.)",
                        first.number,
                        last.number,
                        last.number + 1
                    );
                }
                _ => {
                    let _ = write!(text, "(End of file - total {total_lines} lines)");
                }
            }
            vec![ContentBlock::text(text)]
        }
    }
}

fn card(_args: &ReadArgs, value: &ReadValue) -> Option<Card> {
    match value {
        ReadValue::Text {
            path,
            lines,
            total_lines,
            ..
        } => Some(Card::Read(ReadCard {
            path: path.clone(),
            first_line: lines.first().map_or(0, |line| line.number),
            last_line: lines.last().map_or(0, |line| line.number),
            total_lines: *total_lines,
        })),
        ReadValue::Image { .. } => None,
    }
}

/// The media type of an image, by its first bytes.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}
