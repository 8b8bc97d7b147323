//! Finding a tool among many: an index of a snapshot's tools, searched with BM25 over their
//! names, titles, descriptions and parameters, or with a regular expression; and the
//! `tool_search` tool a registry exposes beside (or instead of) its deferred tools.
//!
//! Model accuracy in choosing tools drops past a few dozen, so a host with hundreds defers
//! most ([`ToolDef::with_defer_loading`](crate::ToolDef::with_defer_loading)) and lets the
//! model search: the tools it finds are offered on the next turn, and every deferred tool
//! stays dispatchable all along.

use std::any::Any;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::present::ContentBlock;
use crate::tool::{AdvertisedTool, Callers, ToolDef, ToolTable};

/// BM25's term-frequency saturation.
const K1: f64 = 1.5;
/// BM25's length normalization.
const B: f64 = 0.75;
/// A word of a query no tool has is read as the index's words that share the longest start
/// with it, if that start is at least this many letters…
pub const MIN_SHARED_PREFIX: usize = 4;
/// …and at least this share of the shorter word's letters (`labeled` → `label`,
/// `informaton` → `information`, not `atlanta` → `atlassian`).
pub const MIN_SHARED_SHARE: f64 = 0.75;
/// The most words a word of a query no tool has is read as (the first in sorted order of
/// those found).
pub const MAX_VARIANTS: usize = 3;
/// What a word read for a word of the query no tool has weighs, against a word of the query.
pub const VARIANT_WEIGHT: f64 = 0.5;
/// How far before where a query word would go in the index's sorted words its variants are
/// looked for (and twice as far on from there).
const MAX_VARIANT_SCAN: usize = 32;
/// The longest regular expression a search takes, as Anthropic's regex tool search does.
pub const MAX_PATTERN_CHARS: usize = 200;
/// The most distinct words of a query a BM25 search reads.
pub const MAX_QUERY_WORDS: usize = 64;
/// The longest query the `tool_search` tool takes, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// What a compiled pattern may take, so that no pattern costs more than a few milliseconds.
const MAX_PATTERN_SIZE: usize = 1 << 20;

/// The words of a text, for the index and for queries: lower-cased, split at anything that
/// is not a letter or a digit and between the words of `camelCase`, one-letter words
/// dropped, and a plural's `s` taken off, so that `listPullRequests` and "list pull request"
/// meet.
pub fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    let flush = |current: &mut String, words: &mut Vec<String>| {
        if current.chars().count() > 1 {
            words.push(stem(current));
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

/// A count as a float (counts here stay far below what a `u32` holds).
fn as_f64(count: usize) -> f64 {
    f64::from(u32::try_from(count).unwrap_or(u32::MAX))
}

/// How many letters two words share at their start.
fn shared_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
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

/// What a tool is searched by: its name (twice: a name says most), title, description, and
/// each parameter's name and description.
fn searchable_text(tool: &AdvertisedTool) -> String {
    let mut text = format!("{0} {0}", tool.name());
    if let Some(title) = &tool.about().title {
        text.push(' ');
        text.push_str(title);
    }
    text.push(' ');
    text.push_str(tool.description());
    if let Some(properties) = tool
        .input_schema()
        .get("properties")
        .and_then(Value::as_object)
    {
        for (name, schema) in properties {
            text.push(' ');
            text.push_str(name);
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(description);
            }
        }
    }
    text
}

/// An index of tools, built once per snapshot.
#[derive(Debug, Default)]
pub struct ToolIndex {
    /// The tools, in the snapshot's order.
    tools: Vec<AdvertisedTool>,
    /// For each word, the tools that have it and how often.
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Each tool's number of words.
    lengths: Vec<u32>,
    average_length: f64,
    /// The words of `postings`, sorted: a word's closest ones by prefix are its neighbours.
    vocabulary: Vec<String>,
}

impl ToolIndex {
    /// Indexes these tools.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a AdvertisedTool>) -> Self {
        let mut index = Self::default();
        for tool in tools {
            let at = u32::try_from(index.tools.len()).unwrap_or(u32::MAX);
            let words = words(&searchable_text(tool));
            index
                .lengths
                .push(u32::try_from(words.len()).unwrap_or(u32::MAX));
            let mut counts: HashMap<String, u32> = HashMap::new();
            for word in words {
                *counts.entry(word).or_default() += 1;
            }
            for (word, count) in counts {
                index.postings.entry(word).or_default().push((at, count));
            }
            index.tools.push(tool.clone());
        }
        let total: f64 = index.lengths.iter().map(|length| f64::from(*length)).sum();
        index.average_length = total / as_f64(index.tools.len().max(1));
        index.vocabulary = index.postings.keys().cloned().collect();
        index.vocabulary.sort_unstable();
        index
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The `limit` tools that best match `query` by BM25, best first; those that share no word
    /// with it are not returned. A word of the query no tool has counts as the tools' closest
    /// words to it by prefix, at half weight (`labeled` as `label`; see [`MIN_SHARED_PREFIX`]).
    /// Words past the query's first [`MAX_QUERY_WORDS`] distinct ones are not read.
    ///
    /// ```
    /// use toolprism::prelude::*;
    /// use toolprism::search::ToolIndex;
    ///
    /// /// Lists the open pull requests of a repository.
    /// #[tool]
    /// fn list_pull_requests(#[arg] repo: String) -> Vec<String> { vec![repo] }
    /// /// Reads a file.
    /// #[tool]
    /// fn read_file(#[arg] path: String) -> String { path }
    ///
    /// let registry = Registry::builder().tool(ListPullRequests).tool(ReadFile).build().unwrap();
    /// let index = ToolIndex::new(registry.snapshot().definitions());
    /// let found = index.search("which PRs are open?  pull request", 5);
    /// assert_eq!(found[0].name(), "list_pull_requests");
    /// assert_eq!(found.len(), 1);
    /// ```
    pub fn search(&self, query: &str, limit: usize) -> Vec<&AdvertisedTool> {
        let count = as_f64(self.tools.len());
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for (word, weight) in self.query_terms(query) {
            let Some(postings) = self.postings.get(word) else {
                continue;
            };
            let frequency = as_f64(postings.len());
            let idf = ((count - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
            for (at, term_count) in postings {
                let term = f64::from(*term_count);
                let length = f64::from(self.lengths[*at as usize]);
                let norm = K1 * (1.0 - B + B * length / self.average_length.max(1.0));
                *scores.entry(*at).or_default() += weight * idf * term * (K1 + 1.0) / (term + norm);
            }
        }
        let mut ranked: Vec<(u32, f64)> = scores.into_iter().collect();
        // Best first; ties in the snapshot's order, so a search repeats exactly.
        ranked.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(limit)
            .map(|(at, _)| &self.tools[at as usize])
            .collect()
    }

    /// The words a query is ranked by, each once, with its weight: the query's own first
    /// [`MAX_QUERY_WORDS`] distinct words the index has, and for each it lacks, its
    /// [`variants`](Self::variants) at [`VARIANT_WEIGHT`].
    fn query_terms(&self, query: &str) -> Vec<(&str, f64)> {
        let mut distinct = Vec::new();
        for word in words(query) {
            if distinct.len() == MAX_QUERY_WORDS {
                break;
            }
            if !distinct.contains(&word) {
                distinct.push(word);
            }
        }
        let mut terms: Vec<(&str, f64)> = Vec::new();
        for word in &distinct {
            if let Some((known, _)) = self.postings.get_key_value(word.as_str()) {
                terms.push((known, 1.0));
            }
        }
        for word in &distinct {
            if self.postings.contains_key(word.as_str()) {
                continue;
            }
            for variant in self.variants(word) {
                if !terms.iter().any(|(term, _)| *term == variant) {
                    terms.push((variant, VARIANT_WEIGHT));
                }
            }
        }
        terms
    }

    /// The index's words closest to `word` by prefix (see [`MIN_SHARED_PREFIX`] and the
    /// constants after it): in the sorted vocabulary, the words sharing the longest prefix with
    /// it sit together beside where it would go.
    fn variants(&self, word: &str) -> Vec<&str> {
        if word.chars().count() < MIN_SHARED_PREFIX {
            return Vec::new();
        }
        let at = self
            .vocabulary
            .partition_point(|known| known.as_str() < word);
        let shared = |known: &String| shared_prefix(word, known);
        let longest = [at.checked_sub(1), Some(at)]
            .into_iter()
            .flatten()
            .filter_map(|near| self.vocabulary.get(near))
            .map(shared)
            .max()
            .unwrap_or(0);
        if longest < MIN_SHARED_PREFIX {
            return Vec::new();
        }
        let mut first = at;
        while first > 0
            && at - first < MAX_VARIANT_SCAN
            && shared(&self.vocabulary[first - 1]) == longest
        {
            first -= 1;
        }
        self.vocabulary[first..]
            .iter()
            .take(2 * MAX_VARIANT_SCAN)
            .take_while(|known| shared(known) == longest)
            .filter(|known| {
                let shorter = word.chars().count().min(known.chars().count());
                as_f64(longest) >= MIN_SHARED_SHARE * as_f64(shorter)
            })
            .take(MAX_VARIANTS)
            .map(String::as_str)
            .collect()
    }

    /// The first `limit` tools whose name or description `pattern` matches (the `regex`
    /// crate's syntax: linear whatever the pattern; case-insensitive).
    pub fn search_regex(
        &self,
        pattern: &str,
        limit: usize,
    ) -> Result<Vec<&AdvertisedTool>, String> {
        if pattern.chars().count() > MAX_PATTERN_CHARS {
            return Err(format!(
                "the pattern is longer than {MAX_PATTERN_CHARS} characters"
            ));
        }
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(MAX_PATTERN_SIZE)
            .dfa_size_limit(MAX_PATTERN_SIZE)
            .build()
            .map_err(|error| format!("the pattern is not a regular expression: {error}"))?;
        Ok(self
            .tools
            .iter()
            .filter(|tool| regex.is_match(tool.name()) || regex.is_match(tool.description()))
            .take(limit)
            .collect())
    }
}

/// The arguments of the `tool_search` tool.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchArgs {
    /// What the tool you need does, in a few words; with `regex`, a regular expression matched
    /// against tool names and descriptions.
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    pub query: String,
    /// Read `query` as a regular expression (case-insensitive) instead of words.
    #[serde(default)]
    pub regex: bool,
    /// How many tools to return, 1 to 20 (default 5).
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u8>,
}

/// One tool found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FoundTool {
    /// The tool's name: call it by this name.
    pub name: String,
    /// Its title, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    pub description: String,
    /// Its parameters' names.
    pub parameters: Vec<String>,
}

/// What `tool_search` found, best first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSearchValue {
    /// The tools, best first.
    pub tools: Vec<FoundTool>,
}

/// The `tool_search` tool: BM25 over the call's snapshot's tools (name, title, description,
/// parameter names and descriptions), or a regular expression over names and descriptions —
/// Anthropic's two variants. It finds tools the model may call (not those only programs may);
/// its content lists them and, for each, a [`ContentBlock::ToolReference`], which Anthropic
/// expands into the tool's definition and [`Conversation`](crate::turn::Conversation) adds to
/// the next request's tools for the other providers. The index is built once per snapshot.
///
/// ```
/// use serde_json::json;
/// use toolprism::prelude::*;
/// use toolprism::search::ToolSearch;
/// use toolprism::tool::IntoToolDef;
///
/// /// Lists the open pull requests of a repository.
/// #[tool]
/// fn list_pull_requests(#[arg] repo: String) -> Vec<String> { vec![repo] }
///
/// let registry = Registry::builder()
///     .tool(ListPullRequests.into_tool_def().with_defer_loading(true))
///     .tool(ToolSearch::new().tool())
///     .build()
///     .unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = ToolCall::new("c1", "tool_search", json!({"query": "open pull requests"}));
/// let outcome = registry.dispatch(call, Surface::Direct).await;
/// assert_eq!(outcome.value().unwrap()["tools"][0]["name"], "list_pull_requests");
/// assert!(outcome.content().contains(&ContentBlock::ToolReference { name: "list_pull_requests".into() }));
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct ToolSearch {
    name: String,
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self::new()
    }
}

/// The index of the snapshot it was built from, known by a weak reference: while it is held,
/// the allocation of that snapshot's tools cannot be reused by another's, so a pointer that
/// matches is that snapshot.
type Cached = Option<(Weak<dyn Any + Send + Sync>, Arc<ToolIndex>)>;

impl ToolSearch {
    /// The tool, named `tool_search`.
    pub fn new() -> Self {
        Self {
            name: DEFAULT_NAME.to_owned(),
        }
    }

    /// Under another name. (OpenAI Responses' client-side tool search answers to
    /// `tool_search` only: under another name it is lowered there as a plain function.)
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The tool, to register.
    pub fn tool(&self) -> ToolDef {
        let cache: Arc<Mutex<Cached>> = Arc::default();
        let mut def = ToolDef::builder(self.name.as_str())
            .description(
                "Finds tools by what they do. Call it when none of the tools you have fits the task: \
                 describe the task in a few words, and call the tools it returns by their names.",
            )
            .args::<ToolSearchArgs>()
            .returns::<ToolSearchValue>()
            .handler(move |args: ToolSearchArgs, cx: ToolContext| {
                let cache = cache.clone();
                async move { search_call(&cache, &args, &cx) }
            })
            .render(render)
            .build()
            .read_only(true)
            .open_world(false)
            .with_title("Search tools")
            .with_callers(Callers::Direct);
        def.about.tool_search = true;
        def
    }
}

/// The name [`ToolSearch`] registers under unless told otherwise.
pub const DEFAULT_NAME: &str = "tool_search";

fn search_call(
    cache: &Mutex<Cached>,
    args: &ToolSearchArgs,
    cx: &ToolContext,
) -> Result<ToolSearchValue, ToolError> {
    let tools = cx.tools();
    let index = {
        let mut held = cache.lock().unwrap_or_else(PoisonError::into_inner);
        match held.as_ref() {
            Some((weak, index))
                if weak
                    .upgrade()
                    .is_some_and(|table| Arc::ptr_eq(&table, &tools)) =>
            {
                index.clone()
            }
            _ => {
                let Some(table) = tools.downcast_ref::<ToolTable>() else {
                    return Err(ToolError::new("the tools of this call cannot be searched"));
                };
                let searchable = table
                    .tools()
                    .iter()
                    .map(|tool| &tool.definition)
                    .filter(|tool| tool.about().callers.direct() && tool.name() != cx.tool_name());
                let index = Arc::new(ToolIndex::new(searchable));
                *held = Some((Arc::downgrade(&tools), index.clone()));
                index
            }
        }
    };
    let limit = usize::from(args.limit.unwrap_or(5).clamp(1, 20));
    // A caller is told only of the tools it may call: the whole ranking is read, past those
    // it may not.
    let caller = cx.caller();
    let ranked = if caller.is_some() { index.len() } else { limit };
    let found = if args.regex {
        index
            .search_regex(&args.query, ranked)
            .map_err(|problem| ToolError::new(problem).with_code("INVALID_PATTERN"))?
    } else {
        index.search(&args.query, ranked)
    };
    let rules = cx.extension::<crate::access::ScopeRules>();
    let found = found.into_iter().filter(|tool| {
        caller.as_ref().is_none_or(|caller| {
            crate::access::missing_scopes(
                &tool.about().scopes,
                tool.name(),
                rules.as_deref(),
                caller,
            )
            .is_empty()
        })
    });
    Ok(ToolSearchValue {
        tools: found
            .take(limit)
            .map(|tool| FoundTool {
                name: tool.name().to_owned(),
                title: tool.about().title.clone(),
                description: tool.description().to_owned(),
                parameters: tool
                    .input_schema()
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|properties| properties.keys().cloned().collect())
                    .unwrap_or_default(),
            })
            .collect(),
    })
}

/// The found tools as lines, then a reference to each.
fn render(_args: &ToolSearchArgs, value: &ToolSearchValue) -> Vec<ContentBlock> {
    if value.tools.is_empty() {
        return vec![ContentBlock::text("No tool matches. Try other words.")];
    }
    let mut text = String::from("Tools found (call them by name):");
    for tool in &value.tools {
        let summary = tool.description.lines().next().unwrap_or_default();
        let _ = write!(
            text,
            "\n- {}({}): {}",
            tool.name,
            tool.parameters.join(", "),
            crate::present::shorten(summary, 200)
        );
    }
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(value.tools.iter().map(|tool| ContentBlock::ToolReference {
        name: tool.name.clone(),
    }));
    blocks
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
