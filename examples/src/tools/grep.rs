//! `grep`: lines matching a regular expression, in files that `.gitignore` does not ignore.
//! Every match (up to an acquisition limit the value reports) stays in the value; the text
//! shows the first page only.
//!
//! To adapt: this file uses `Workspace` and `searchable_files` (copy `workspace.rs` along).
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `rt`), `globset`, `grep-regex`,
//! `grep-searcher`.

use std::fmt::Write as _;

use globset::Glob;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks};
use toolprism::context::State;
use toolprism::prelude::*;
use toolprism::present::{Card, SearchCard, SearchMatch, shorten};

use super::workspace::{Workspace, searchable_files};

// Failure codes this tool sets, for a host or a test to match on.
/// The pattern does not compile.
pub const INVALID_PATTERN: &str = "INVALID_PATTERN";

/// How many matches the text shows.
pub const PAGE: usize = 100;
/// The most matches one search collects; beyond it the value says `truncated`.
pub const MAX_MATCHES: usize = 100_000;
/// Matching lines longer than this are cut in the text.
const MAX_LINE_CHARS: usize = 2_000;

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// The directory or file to search, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files whose name matches this glob, e.g. `*.rs`.
    #[serde(default)]
    pub include: Option<String>,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, relative to the workspace.
    pub path: String,
    /// 1-based line number.
    pub line_number: u64,
    /// The line, without its line ending.
    pub line: String,
}

/// The value of `grep`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepValue {
    /// The matches, by file then line.
    pub matches: Vec<GrepMatch>,
    /// Whether the search stopped at [`MAX_MATCHES`].
    pub truncated: bool,
}

/// Searches file contents for a regular expression, skipping what `.gitignore` ignores and
/// binary files.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Search file contents",
    read_only,
    open_world = false,
    examples = [r#"{"pattern": "fn main"}"#, r#"{"pattern": "TODO|FIXME", "include": "*.rs"}"#]
)]
pub async fn grep(
    args: GrepArgs,
    State(workspace): State<Workspace>,
) -> Result<GrepValue, ToolError> {
    let regex = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|error| {
            ToolError::new(format!("invalid pattern: {error}")).with_code(INVALID_PATTERN)
        })?;
    let include = args
        .include
        .as_deref()
        .map(|glob| Glob::new(glob).map(|glob| glob.compile_matcher()))
        .transpose()
        .map_err(|error| {
            ToolError::new(format!("invalid include glob: {error}")).with_code(INVALID_PATTERN)
        })?;
    let root = workspace.resolve_existing(args.path.as_deref().unwrap_or("."))?;
    let workspace = workspace.clone();
    tokio::task::spawn_blocking(move || {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build();
        let mut found = Vec::new();
        let mut truncated = false;
        for entry in searchable_files(&root) {
            let entry = entry?;
            if include.as_ref().is_some_and(|glob| {
                !entry
                    .path()
                    .file_name()
                    .is_some_and(|name| glob.is_match(name))
            }) {
                continue;
            }
            let path = workspace.display(entry.path());
            // Lossy: a search shows text; invalid UTF-8 in a matching line becomes U+FFFD.
            let sink = sinks::Lossy(|line_number, line: &str| {
                if found.len() == MAX_MATCHES {
                    truncated = true;
                    return Ok(false);
                }
                found.push(GrepMatch {
                    path: path.clone(),
                    line_number,
                    line: line.trim_end_matches(['\n', '\r']).to_owned(),
                });
                Ok(true)
            });
            searcher.search_path(&regex, entry.path(), sink)?;
            if truncated {
                break;
            }
        }
        Ok(GrepValue {
            matches: found,
            truncated,
        })
    })
    .await
    .map_err(|error| ToolError::new(format!("the search stopped: {error}")))?
}

fn render(_args: &GrepArgs, value: &GrepValue) -> String {
    if value.matches.is_empty() {
        return "No matches found".to_owned();
    }
    let total = value.matches.len();
    let mut text = format!(
        "Found {total}{} matches\n",
        if value.truncated { "+" } else { "" }
    );
    let mut current: Option<&str> = None;
    for found in value.matches.iter().take(PAGE) {
        if current != Some(found.path.as_str()) {
            if current.is_some() {
                text.push('\n');
            }
            let _ = writeln!(text, "{}:", found.path);
            current = Some(&found.path);
        }
        let line = shorten(&found.line, MAX_LINE_CHARS);
        let _ = writeln!(text, "  Line {}: {line}", found.line_number);
    }
    if total > PAGE {
        let _ = write!(
            text,
            "\n(Showing {PAGE} of {total} matches. Narrow the pattern or the path to see the rest.)"
        );
    }
    text.trim_end().to_owned()
}

fn card(args: &GrepArgs, value: &GrepValue) -> Card {
    Card::Search(SearchCard {
        query: args.pattern.clone(),
        matches: value
            .matches
            .iter()
            .take(SearchCard::MAX_MATCHES)
            .map(|found| SearchMatch {
                path: found.path.clone(),
                line: Some(found.line_number),
                text: Some(found.line.chars().take(200).collect()),
            })
            .collect(),
        total: value.matches.len() as u64,
    })
}
