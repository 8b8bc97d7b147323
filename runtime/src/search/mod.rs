//! Finding a tool among many: an index of a snapshot's tools, searched with BM25 over their
//! names, titles, descriptions and parameters (and by meaning, with the host's embedding
//! model), or with a regular expression; and the `tool_search` tool a registry exposes beside
//! (or instead of) its deferred tools.
//!
//! Model accuracy in choosing tools drops past a few dozen, so a host with hundreds defers
//! most ([`ToolDef::with_defer_loading`](crate::ToolDef::with_defer_loading)) and lets the
//! model search: the tools it finds are offered on the next turn, and every deferred tool
//! stays dispatchable all along.

mod meaning;
mod text;
mod tool;

use std::collections::HashMap;

use regex::RegexBuilder;
use serde_json::Value;

use meaning::Meanings;
pub use meaning::{
    EMBED_BATCH, EMBED_RETRY, EMBED_TIMEOUT, EmbedError, Embedder, MAX_DIMENSIONS, MEANING_WEIGHT,
    meaning_text,
};
pub use text::words;
pub use tool::{DEFAULT_NAME, FoundTool, ToolSearch, ToolSearchArgs, ToolSearchValue};

use crate::tool::AdvertisedTool;

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

/// A count as a float (counts here stay far below what a `u32` holds).
fn as_f64(count: usize) -> f64 {
    f64::from(u32::try_from(count).unwrap_or(u32::MAX))
}

/// How many letters two words share at their start.
fn shared_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// The most values of one parameter's fixed list a tool is searched by: past it (every
/// country's code, say) the list would outweigh the tool's own words.
pub const MAX_LISTED_VALUES: usize = 32;
/// The longest listed value read, in bytes: a listed value is a word or a few.
pub const MAX_LISTED_VALUE_BYTES: usize = 64;
/// How many schemas of one parameter are read looking for its listed values, `$ref`s and
/// branches included, so that cycles end.
const MAX_LISTED_SCHEMAS: usize = 64;
/// The same two limits for all of a tool's parameters together: however many parameters
/// refer to the same long list, indexing a tool costs at most this much.
const MAX_LISTED_VALUES_A_TOOL: usize = 256;
const MAX_LISTED_SCHEMAS_A_TOOL: usize = 4_096;

/// What a tool is searched by: its name (twice: a name says most), title, description, and
/// each parameter's name, description and listed values ([`listed_values`]).
fn searchable_text(tool: &AdvertisedTool) -> String {
    let mut text = format!("{0} {0}", tool.name());
    if let Some(title) = &tool.about().title {
        text.push(' ');
        text.push_str(title);
    }
    text.push(' ');
    text.push_str(tool.description());
    let schema = tool.input_schema();
    let mut left = Left {
        values: MAX_LISTED_VALUES_A_TOOL,
        schemas: MAX_LISTED_SCHEMAS_A_TOOL,
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, parameter) in properties {
            text.push(' ');
            text.push_str(name);
            if let Some(description) = parameter.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(description);
            }
            for value in listed_values(parameter, schema, &mut left) {
                text.push(' ');
                text.push_str(value);
            }
        }
    }
    text
}

/// What a tool's parameters may still have read of their listed values.
struct Left {
    values: usize,
    schemas: usize,
}

/// The strings a parameter is limited to (its `enum` or `const`, or those of the branches of
/// its `oneOf`, `anyOf` or `allOf`), or its array's items are, through the schema's own
/// `$ref`s: words a request often names ("in fahrenheit" for `unit: "celsius" |
/// "fahrenheit"`). Each distinct, of at most [`MAX_LISTED_VALUE_BYTES`]; at most
/// [`MAX_LISTED_VALUES`] of them, the first that many entries of each `enum` read, from at most
/// 64 schemas; and no more than what the tool has `left`.
fn listed_values<'a>(parameter: &'a Value, root: &'a Value, left: &mut Left) -> Vec<&'a str> {
    let most = MAX_LISTED_VALUES.min(left.values);
    let mut found: Vec<&str> = Vec::new();
    let mut to_read = vec![parameter];
    let mut read = 0;
    while let Some(schema) = to_read.pop() {
        if read == MAX_LISTED_SCHEMAS || left.schemas == 0 || found.len() == most {
            break;
        }
        read += 1;
        left.schemas -= 1;
        let Some(schema) = schema.as_object() else {
            continue;
        };
        let listed = schema
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_LISTED_VALUES);
        for value in listed.chain(schema.get("const")).filter_map(Value::as_str) {
            if found.len() == most {
                break;
            }
            if value.len() <= MAX_LISTED_VALUE_BYTES && !found.contains(&value) {
                found.push(value);
            }
        }
        let referred = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| root.pointer(reference.strip_prefix('#')?));
        let branches = ["oneOf", "anyOf", "allOf"]
            .into_iter()
            .filter_map(|key| schema.get(key).and_then(Value::as_array))
            .flatten();
        // Read first to last: pushed in reverse.
        let next: Vec<&Value> = referred
            .into_iter()
            .chain(branches)
            .chain(schema.get("items"))
            .take(MAX_LISTED_SCHEMAS)
            .collect();
        to_read.extend(next.into_iter().rev());
    }
    left.values -= found.len();
    found
}

/// An index of tools, built once per snapshot.
#[derive(Clone, Debug, Default)]
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
    /// Each tool's vector from the host's embedding model, if it gave them.
    meanings: Option<Meanings>,
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
        let ranked: Vec<(u32, f64)> = self.word_scores(query).into_iter().collect();
        self.best(ranked, limit)
    }

    /// Each tool's BM25 score for `query`, for the tools that share a word with it (or a
    /// variant of one).
    fn word_scores(&self, query: &str) -> HashMap<u32, f64> {
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
        scores
    }

    /// The `limit` best-scored tools, best first; ties in the snapshot's order, so that a
    /// search repeats exactly.
    fn best(&self, mut ranked: Vec<(u32, f64)>, limit: usize) -> Vec<&AdvertisedTool> {
        let order = |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if limit < ranked.len() {
            ranked.select_nth_unstable_by(limit, order);
            ranked.truncate(limit);
        }
        ranked.sort_unstable_by(order);
        ranked
            .into_iter()
            .map(|(at, _)| &self.tools[at as usize])
            .collect()
    }

    /// What of each tool, in order, an embedding model is given for
    /// [`with_meanings`](Self::with_meanings): [`meaning_text`].
    pub fn meaning_texts(&self) -> Vec<String> {
        self.tools.iter().map(meaning_text).collect()
    }

    /// The index with each tool's vector from an embedding model, given its
    /// [`meaning_texts`](Self::meaning_texts), for
    /// [`search_with_meaning`](Self::search_with_meaning). Refused unless they are one vector
    /// per tool, all of one length from 1 to [`MAX_DIMENSIONS`], every number finite.
    pub fn with_meanings(self, vectors: Vec<Vec<f32>>) -> Result<Self, EmbedError> {
        let vectors = meaning::checked(vectors, self.tools.len())?;
        Ok(self.with_quantized(Meanings::of(&vectors)?))
    }

    /// The index with these vectors, one per tool.
    fn with_quantized(mut self, meanings: Meanings) -> Self {
        self.meanings = Some(meanings);
        self
    }

    /// Whether it holds the tools' vectors.
    pub fn has_meanings(&self) -> bool {
        self.meanings.is_some()
    }

    /// The `limit` tools that best match `query`, best first, by meaning and by words: each
    /// tool's score is [`MEANING_WEIGHT`] times the cosine of its vector with `vector` (the
    /// query's, from the model that gave the tools') plus the rest times its BM25 score over the
    /// best tool's. Every tool is ranked, so a tool that shares no word with the query is found
    /// by its meaning. Refused if the index holds no vectors, or if `vector` is not of their
    /// length or holds a number that is not finite.
    ///
    /// ```
    /// use toolprism::prelude::*;
    /// use toolprism::search::ToolIndex;
    ///
    /// /// Finds movies by genre and cast.
    /// #[tool]
    /// fn find_movies(#[arg] genre: String) -> Vec<String> { vec![genre] }
    /// /// Reads a file.
    /// #[tool]
    /// fn read_file(#[arg] path: String) -> String { path }
    ///
    /// // A model's vectors: here by hand, the first number for films, the second for files.
    /// let registry = Registry::builder().tool(FindMovies).tool(ReadFile).build().unwrap();
    /// let index = ToolIndex::new(registry.snapshot().definitions())
    ///     .with_meanings(vec![vec![1.0, 0.0], vec![0.0, 1.0]])
    ///     .unwrap();
    /// assert!(index.search("a comedy film", 5).is_empty(), "no word shared");
    /// let found = index.search_with_meaning("a comedy film", &[0.9, 0.1], 5).unwrap();
    /// assert_eq!(found[0].name(), "find_movies");
    /// ```
    pub fn search_with_meaning(
        &self,
        query: &str,
        vector: &[f32],
        limit: usize,
    ) -> Result<Vec<&AdvertisedTool>, EmbedError> {
        let Some(meanings) = &self.meanings else {
            return Err(EmbedError::new("the index holds no vectors"));
        };
        if self.tools.is_empty() {
            return Ok(Vec::new());
        }
        let vector = meanings.query(vector)?;
        let words = self.word_scores(query);
        let best_words = words.values().copied().fold(0.0, f64::max);
        let mut by_words = vec![0.0; self.tools.len()];
        for (at, score) in words {
            by_words[at as usize] = score / best_words;
        }
        let ranked = meanings
            .closeness(&vector)
            .zip(by_words)
            .zip(0..)
            .map(|((closeness, by_words), at)| {
                (
                    at,
                    MEANING_WEIGHT * closeness + (1.0 - MEANING_WEIGHT) * by_words,
                )
            })
            .collect();
        Ok(self.best(ranked, limit))
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
