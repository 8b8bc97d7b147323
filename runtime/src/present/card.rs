//! Presentation cards: what a UI shows of a call and its result, without knowing the tool.
//!
//! A card is a `card`-tagged union of six kinds. A client switches on the kind only; it never
//! needs a tool's name, so swapping one search backend for another changes nothing in the UI as
//! long as both emit a `search` card. A tool declares its result card through its `meta`
//! projection (a pure function of the arguments and the validated value); a tool that declares
//! none gets the generic card. [`Card::json_schema`] describes every card for non-Rust clients.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::output_schema_for;

use super::content::ContentBlock;
use crate::text::{head, tail};

/// What a UI shows of a tool call or result. Serialized with a `card` tag:
///
/// ```
/// use toolprism::present::{Card, ReadCard};
///
/// let card = Card::Read(ReadCard { path: "src/lib.rs".into(), first_line: 1, last_line: 40, total_lines: 120 });
/// assert_eq!(
///     serde_json::to_value(&card).unwrap(),
///     serde_json::json!({"card": "read", "path": "src/lib.rs", "first_line": 1, "last_line": 40, "total_lines": 120}),
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "card", rename_all = "snake_case")]
#[schemars(
    description = "What a UI shows of a tool call or result. Switch on `card`, never on a tool name."
)]
#[non_exhaustive]
pub enum Card {
    /// Any tool: a title, the raw input, and the output as content blocks.
    Generic(GenericCard),
    /// A command run in a shell.
    Terminal(TerminalCard),
    /// A change to a file.
    Diff(DiffCard),
    /// Part of a file that was read.
    Read(ReadCard),
    /// Matches of a search: paths, with lines where the search was within files.
    Search(SearchCard),
    /// A web page or search result that was fetched.
    Web(WebCard),
}

/// The card of a tool that declares none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GenericCard {
    /// The tool's name.
    pub title: String,
    /// The raw arguments of the call.
    pub input: Value,
    /// What the model saw of the result; absent on a call card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Vec<ContentBlock>>,
    /// Whether the result is a failure.
    #[serde(default)]
    pub is_error: bool,
}

/// A shell command and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalCard {
    /// The command line.
    pub command: String,
    /// The exit code; absent if the process was killed by a signal or timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether the command was stopped for running past its timeout.
    #[serde(default)]
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The end of the output (stdout then stderr), at most [`TerminalCard::MAX_OUTPUT`] bytes.
    pub output_tail: String,
}

impl TerminalCard {
    /// The most output a terminal card carries.
    pub const MAX_OUTPUT: usize = 4 * 1024;
}

/// A change to one file, as a unified diff derived from the content before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffCard {
    /// The file.
    pub path: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// The unified diff, cut at [`DiffCard::MAX_DIFF`] bytes.
    pub diff: String,
    /// Whether `diff` was cut.
    #[serde(default)]
    pub truncated: bool,
}

impl DiffCard {
    /// The most diff text a card carries.
    pub const MAX_DIFF: usize = 8 * 1024;

    /// The card of a change of `path` from `before` to `after` (`None`: the file did not
    /// exist). Pure: the same inputs give the same card, so a session log can replay it.
    ///
    /// ```
    /// use toolprism::present::DiffCard;
    ///
    /// let card = DiffCard::from_change("a.txt", Some("one\ntwo\n"), "one\n2\n");
    /// assert_eq!((card.added, card.removed), (1, 1));
    /// assert!(card.diff.contains("-two\n+2\n"));
    /// ```
    pub fn from_change(path: &str, before: Option<&str>, after: &str) -> Self {
        let before_text = before.unwrap_or_default();
        let diff = similar::TextDiff::from_lines(before_text, after);
        let (mut added, mut removed) = (0_u32, 0_u32);
        for change in diff.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => added = added.saturating_add(1),
                similar::ChangeTag::Delete => removed = removed.saturating_add(1),
                similar::ChangeTag::Equal => {}
            }
        }
        let old_name = if before.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".to_owned()
        };
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header(&old_name, &format!("b/{path}"))
            .to_string();
        let shown = head(&text, Self::MAX_DIFF);
        Self {
            path: path.to_owned(),
            added,
            removed,
            truncated: shown.len() < text.len(),
            diff: shown.to_owned(),
        }
    }
}

/// A range of lines read from a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadCard {
    /// The file.
    pub path: String,
    /// The first line shown, 1-based.
    pub first_line: u64,
    /// The last line shown (0 when none was).
    pub last_line: u64,
    /// Lines in the file.
    pub total_lines: u64,
}

/// Matches of a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchCard {
    /// What was searched for (a pattern, a glob, a query).
    pub query: String,
    /// The first matches, at most [`SearchCard::MAX_MATCHES`].
    pub matches: Vec<SearchMatch>,
    /// How many matches there are in all.
    pub total: u64,
}

impl SearchCard {
    /// The most matches a card carries.
    pub const MAX_MATCHES: usize = 50;
}

/// One match of a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchMatch {
    /// The file (or URL) that matched.
    pub path: String,
    /// The line number, when the match is within a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The matching text, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A fetched web page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WebCard {
    /// The URL.
    pub url: String,
    /// The page title, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The beginning of the text, at most [`WebCard::MAX_EXCERPT`] bytes.
    pub excerpt: String,
}

impl WebCard {
    /// The most text an excerpt carries.
    pub const MAX_EXCERPT: usize = 1024;
}

impl Card {
    /// The JSON Schema (draft 2020-12) of every card, for clients in other languages.
    pub fn json_schema() -> Value {
        let mut schema = output_schema_for::<Self>();
        // A document of its own, read by code generators, which name the root type by it.
        if let Value::Object(map) = &mut schema {
            map.insert("title".to_owned(), "Card".into());
        }
        schema
    }

    /// The kind, as serialized in the `card` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Generic(_) => "generic",
            Self::Terminal(_) => "terminal",
            Self::Diff(_) => "diff",
            Self::Read(_) => "read",
            Self::Search(_) => "search",
            Self::Web(_) => "web",
        }
    }
}

/// The card of a call before its result: generic, titled with the tool's name. Pure.
pub fn present_call(name: &str, args: &Value) -> Card {
    Card::Generic(GenericCard {
        title: name.to_owned(),
        input: args.clone(),
        output: None,
        is_error: false,
    })
}

/// The card of a result: the card in its metadata, if the tool declared one, else the generic
/// card (title: the tool's name; input: the raw arguments; output: the content). Pure: a
/// function of what the session log stores, so replay shows what was shown live.
pub fn present_result(
    name: &str,
    args: &Value,
    content: &[ContentBlock],
    is_error: bool,
    meta: Option<&Value>,
) -> Card {
    if !is_error && let Some(card) = meta.and_then(|meta| Card::deserialize(meta).ok()) {
        return card;
    }
    Card::Generic(GenericCard {
        title: name.to_owned(),
        input: args.clone(),
        output: Some(content.to_vec()),
        is_error,
    })
}

/// Whether `meta` claims to be a card (has a `card` key) but is not a valid one.
pub(crate) fn is_invalid_card(meta: &Value) -> bool {
    meta.get("card").is_some() && Card::deserialize(meta).is_err()
}

impl TerminalCard {
    /// The card of a command, keeping the end of its output.
    pub fn new(
        command: &str,
        exit_code: Option<i32>,
        timed_out: bool,
        duration_ms: u64,
        output: &str,
    ) -> Self {
        Self {
            command: command.to_owned(),
            exit_code,
            timed_out,
            duration_ms,
            output_tail: tail(output, Self::MAX_OUTPUT).to_owned(),
        }
    }
}

impl WebCard {
    /// The card of a page, keeping the beginning of its text.
    pub fn new(url: &str, title: Option<&str>, text: &str) -> Self {
        Self {
            url: url.to_owned(),
            title: title.map(str::to_owned),
            excerpt: head(text, Self::MAX_EXCERPT).to_owned(),
        }
    }
}
