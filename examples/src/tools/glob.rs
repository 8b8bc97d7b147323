//! `glob`: files matching a glob pattern, honoring `.gitignore`. Every path stays in the
//! value; the text shows the first page only (a formatting limit belongs in `render`).
//!
//! To adapt: this file uses `Workspace` and `searchable_files` (path confinement and the
//! `.gitignore`-aware walk: copy `workspace.rs` along).
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `rt`), `globset`.

use std::fmt::Write as _;

use globset::GlobBuilder;
use toolprism::context::State;
use toolprism::prelude::*;
use toolprism::present::{Card, SearchCard, SearchMatch};

use super::workspace::{Workspace, searchable_files};

// Failure codes this tool sets, for a host or a test to match on.
/// The pattern does not compile.
pub const INVALID_PATTERN: &str = "INVALID_PATTERN";

/// How many paths the text shows.
pub const PAGE: usize = 100;

/// Arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// The pattern, matched against paths relative to `path`, e.g. `**/*.rs`.
    pub pattern: String,
    /// The directory to search, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

/// The value of `glob`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GlobValue {
    /// Every matching file, relative to the workspace, sorted.
    pub paths: Vec<String>,
}

/// Finds files by glob pattern (like `**/*.rs`), skipping what `.gitignore` ignores.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Find files",
    read_only,
    open_world = false,
    examples = [r#"{"pattern": "**/*.rs"}"#, r#"{"pattern": "*.toml", "path": "crates"}"#]
)]
pub async fn glob(
    args: GlobArgs,
    State(workspace): State<Workspace>,
) -> Result<GlobValue, ToolError> {
    let matcher = GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
        .map_err(|error| {
            ToolError::new(format!("invalid glob: {error}")).with_code(INVALID_PATTERN)
        })?
        .compile_matcher();
    let dir = workspace.resolve_existing(args.path.as_deref().unwrap_or("."))?;
    let workspace = workspace.clone();
    let paths = tokio::task::spawn_blocking(move || {
        let mut paths = Vec::new();
        for entry in searchable_files(&dir) {
            let entry = entry?;
            let relative = entry.path().strip_prefix(&dir).unwrap_or(entry.path());
            if matcher.is_match(relative) {
                paths.push(workspace.display(entry.path()));
            }
        }
        paths.sort();
        Ok::<_, ToolError>(paths)
    })
    .await
    .map_err(|error| ToolError::new(format!("the search stopped: {error}")))??;
    Ok(GlobValue { paths })
}

fn render(_args: &GlobArgs, value: &GlobValue) -> String {
    if value.paths.is_empty() {
        return "No files found".to_owned();
    }
    let mut text = value
        .paths
        .iter()
        .take(PAGE)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    if value.paths.len() > PAGE {
        let _ = write!(
            text,
            "\n\n(Showing {PAGE} of {} files. Use a more specific pattern or path to see the rest.)",
            value.paths.len()
        );
    }
    text
}

fn card(args: &GlobArgs, value: &GlobValue) -> Card {
    Card::Search(SearchCard {
        query: args.pattern.clone(),
        matches: value
            .paths
            .iter()
            .take(SearchCard::MAX_MATCHES)
            .map(|path| SearchMatch {
                path: path.clone(),
                line: None,
                text: None,
            })
            .collect(),
        total: value.paths.len() as u64,
    })
}
