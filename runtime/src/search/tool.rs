//! The `tool_search` tool a registry exposes beside (or instead of) its deferred tools: the
//! index of the call's snapshot, built once per snapshot, searched by words (and by meaning
//! when the host gave it an [`Embedder`]) or by a regular expression.

use std::any::Any;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use futures_util::future::{Shared, WeakShared};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meaning::{
    EMBED_RETRY, EMBED_TIMEOUT, Embedder, Meanings, Quantized, checked, embed_all,
};
use super::{MAX_QUERY_CHARS, ToolIndex};
use crate::BoxFuture;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::present::ContentBlock;
use crate::tool::{AdvertisedTool, Callers, ToolDef, ToolTable};

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
/// parameters' names, descriptions and listed values), or a regular expression over names and
/// descriptions — Anthropic's two variants. It finds tools the model may call (not those only programs may);
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
///
/// With an [`Embedder`] it also searches by meaning ([`ToolIndex::search_with_meaning`]), and
/// then returns `limit` tools whatever the query, the closest first. The tools are embedded at
/// a snapshot's first search (only the texts the previous snapshot lacked; calls that start
/// while that runs await it, so the model is asked once, and it stops only when every call
/// awaiting it is dropped), the query at each search. If the
/// model fails or panics, takes longer than [`EMBED_TIMEOUT`](super::EMBED_TIMEOUT) a call, or
/// returns what is not one finite vector per text of one length, the search is by words and a
/// warning says why; after the tools could not be embedded, a snapshot's searches go by words for
/// [`EMBED_RETRY`](super::EMBED_RETRY) (or [`embed_retry`](Self::embed_retry)) before the
/// model is asked again.
#[derive(Clone)]
pub struct ToolSearch {
    name: String,
    embedder: Option<Arc<dyn Embedder>>,
    embed_timeout: Duration,
    embed_retry: Duration,
}

impl fmt::Debug for ToolSearch {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ToolSearch")
            .field("name", &self.name)
            .field("embedder", &self.embedder.is_some())
            .field("embed_timeout", &self.embed_timeout)
            .field("embed_retry", &self.embed_retry)
            .finish()
    }
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self::new()
    }
}

/// What a `tool_search` tool keeps between calls.
#[derive(Default)]
struct Kept {
    /// The index of the snapshot it was built from, known by a weak reference: while it is
    /// held, the allocation of that snapshot's tools cannot be reused by another's, so a
    /// pointer that matches is that snapshot.
    index: Option<(Weak<dyn Any + Send + Sync>, Arc<ToolIndex>)>,
    /// The vectors of the kept snapshot's tools by their texts, so that the next embeds only
    /// what changed.
    vectors: HashMap<String, Quantized>,
    /// When embedding a snapshot's tools last failed, and which snapshot's.
    failed: Option<(Weak<dyn Any + Send + Sync>, Instant)>,
    /// The embedding of a snapshot's tools under way, and which snapshot's: calls on it that
    /// start while it runs await it too, so that however many search at once the model is
    /// asked once. Held weakly: the calls awaiting it hold it, and when every one of them is
    /// dropped, so is it (the next call starts another).
    embedding: Option<(Weak<dyn Any + Send + Sync>, WeakShared<Embedding>)>,
}

/// The index with its snapshot's vectors, as the embedding of its tools gives it (or without
/// them, if the model failed).
type Embedding = BoxFuture<'static, Arc<ToolIndex>>;

/// Whether `weak` still names `tools`.
fn is(weak: &Weak<dyn Any + Send + Sync>, tools: &Arc<dyn Any + Send + Sync>) -> bool {
    weak.upgrade()
        .is_some_and(|table| Arc::ptr_eq(&table, tools))
}

impl ToolSearch {
    /// The tool, named `tool_search`, searching by words.
    pub fn new() -> Self {
        Self {
            name: DEFAULT_NAME.to_owned(),
            embedder: None,
            embed_timeout: EMBED_TIMEOUT,
            embed_retry: EMBED_RETRY,
        }
    }

    /// Under another name. (OpenAI Responses' client-side tool search answers to
    /// `tool_search` only: under another name it is lowered there as a plain function.)
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Searching by meaning too, with this embedding model's vectors of the tools and queries.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolprism::prelude::*;
    /// use toolprism::search::{EmbedError, ToolSearch};
    ///
    /// /// Finds movies by genre and cast.
    /// #[tool]
    /// fn find_movies(#[arg] genre: String) -> Vec<String> { vec![genre] }
    /// /// Reads a file.
    /// #[tool]
    /// fn read_file(#[arg] path: String) -> String { path }
    ///
    /// // A real model goes here; this one knows two meanings: films, and the rest.
    /// let embedder = |texts: Vec<String>| async move {
    ///     let film = |text: &String| text.contains("movie") || text.contains("film");
    ///     Ok::<_, EmbedError>(texts.iter().map(|text| vec![f32::from(film(text)), 0.5]).collect())
    /// };
    /// let registry = Registry::builder()
    ///     .tool(FindMovies)
    ///     .tool(ReadFile)
    ///     .tool(ToolSearch::new().embedder(embedder).tool())
    ///     .build()
    ///     .unwrap();
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let call = ToolCall::new("c1", "tool_search", json!({"query": "a comedy film", "limit": 1}));
    /// let outcome = registry.dispatch(call, Surface::Direct).await;
    /// assert_eq!(outcome.value().unwrap()["tools"][0]["name"], "find_movies");
    /// # });
    /// ```
    #[must_use]
    pub fn embedder(mut self, embedder: impl Embedder) -> Self {
        self.embedder = Some(Arc::new(embedder));
        self
    }

    /// How long one call of the embedding model may take before the search goes by words
    /// ([`EMBED_TIMEOUT`](super::EMBED_TIMEOUT) unless told).
    #[must_use]
    pub fn embed_timeout(mut self, timeout: Duration) -> Self {
        self.embed_timeout = timeout;
        self
    }

    /// How long, after the tools could not be embedded, a snapshot's searches go by words
    /// before the model is asked again ([`EMBED_RETRY`](super::EMBED_RETRY) unless told).
    #[must_use]
    pub fn embed_retry(mut self, retry: Duration) -> Self {
        self.embed_retry = retry;
        self
    }

    /// The tool, to register.
    pub fn tool(&self) -> ToolDef {
        let kept: Arc<Mutex<Kept>> = Arc::default();
        let embedder = self.embedder.clone();
        let (timeout, retry) = (self.embed_timeout, self.embed_retry);
        let mut def = ToolDef::builder(self.name.as_str())
            .description(
                "Finds tools by what they do. Call it when none of the tools you have fits the task: \
                 describe the task in a few words, and call the tools it returns by their names.",
            )
            .args::<ToolSearchArgs>()
            .returns::<ToolSearchValue>()
            .handler(move |args: ToolSearchArgs, cx: ToolContext| {
                let kept = kept.clone();
                let model = embedder.clone().map(|embedder| Model {
                    embedder,
                    timeout,
                    retry,
                });
                async move { search_call(&kept, model, &args, &cx).await }
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

/// An embedding model, how long a call of it may take, and how long after it failed to embed
/// the tools it is asked again.
#[derive(Clone)]
struct Model {
    embedder: Arc<dyn Embedder>,
    timeout: Duration,
    retry: Duration,
}

async fn search_call(
    kept: &Arc<Mutex<Kept>>,
    model: Option<Model>,
    args: &ToolSearchArgs,
    cx: &ToolContext,
) -> Result<ToolSearchValue, ToolError> {
    let tools = cx.tools();
    let mut index = snapshot_index(kept, &tools, cx)?;
    let limit = usize::from(args.limit.unwrap_or(5).clamp(1, 20));
    // A caller is told only of the tools it may call: the whole ranking is read, past those
    // it may not.
    let caller = cx.caller();
    let ranked = if caller.is_some() { index.len() } else { limit };
    let found = match model {
        _ if args.regex => index
            .search_regex(&args.query, ranked)
            .map_err(|problem| ToolError::new(problem).with_code("INVALID_PATTERN"))?,
        Some(model) => {
            if !index.has_meanings() {
                index = index_with_meanings(kept, &model, &tools, index).await;
            }
            search_by_meaning(&model, &index, &args.query, ranked).await
        }
        None => index.search(&args.query, ranked),
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

/// The index of the call's snapshot: the one kept if it is that snapshot's, or a new one of its
/// tools the model may call, but this one.
fn snapshot_index(
    kept: &Mutex<Kept>,
    tools: &Arc<dyn Any + Send + Sync>,
    cx: &ToolContext,
) -> Result<Arc<ToolIndex>, ToolError> {
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((weak, index)) = &kept.index
        && is(weak, tools)
    {
        return Ok(index.clone());
    }
    let Some(table) = tools.downcast_ref::<ToolTable>() else {
        return Err(ToolError::new("the tools of this call cannot be searched"));
    };
    let searchable = table
        .tools()
        .iter()
        .map(|tool| &tool.definition)
        .filter(|tool| tool.about().callers.direct() && tool.name() != cx.tool_name());
    let index = Arc::new(ToolIndex::new(searchable));
    kept.index = Some((Arc::downgrade(tools), index.clone()));
    Ok(index)
}

/// The index with its snapshot's vectors: from the embedding of its tools under way, or from
/// one started now.
async fn index_with_meanings(
    kept: &Arc<Mutex<Kept>>,
    model: &Model,
    tools: &Arc<dyn Any + Send + Sync>,
    index: Arc<ToolIndex>,
) -> Arc<ToolIndex> {
    let embedding = {
        let mut kept_now = kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((weak, at)) = &kept_now.failed
            && is(weak, tools)
            && at.elapsed() < model.retry
        {
            return index;
        }
        let under_way = kept_now
            .embedding
            .as_ref()
            .filter(|(weak, _)| is(weak, tools))
            .and_then(|(_, embedding)| embedding.upgrade());
        if let Some(embedding) = under_way {
            embedding
        } else {
            let embedding: Shared<Embedding> =
                embed_tools(Arc::downgrade(kept), model.clone(), tools.clone(), index)
                    .boxed()
                    .shared();
            kept_now.embedding = embedding
                .downgrade()
                .map(|weak_embedding| (Arc::downgrade(tools), weak_embedding));
            embedding
        }
    };
    embedding.await
}

/// The index with its tools' vectors, embedding only the texts the kept snapshot's lacked,
/// and kept for the next call; or, if the model fails, the index as it was, and a warning.
async fn embed_tools(
    kept: Weak<Mutex<Kept>>,
    model: Model,
    tools: Arc<dyn Any + Send + Sync>,
    index: Arc<ToolIndex>,
) -> Arc<ToolIndex> {
    let texts = index.meaning_texts();
    // What is known is taken now: another call may replace it while the model works. What
    // keeps it is held weakly: a tool removed meanwhile is let go of.
    let mut known: HashMap<String, Quantized> = {
        let Some(kept) = kept.upgrade() else {
            return index;
        };
        let kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        texts
            .iter()
            .filter_map(|text| Some((text.clone(), kept.vectors.get(text)?.clone())))
            .collect()
    };
    let mut missing: Vec<String> = texts
        .iter()
        .filter(|text| !known.contains_key(*text))
        .cloned()
        .collect();
    missing.sort_unstable();
    missing.dedup();
    let answer = embed_all(model.embedder.as_ref(), missing.clone(), model.timeout).await;
    let meanings = answer
        .and_then(|vectors| checked(vectors, missing.len()))
        .and_then(|vectors| {
            known.extend(missing.into_iter().zip(vectors));
            let ordered = texts.iter().filter_map(|text| known.get(text));
            Meanings::of(ordered)
        });
    let Some(kept) = kept.upgrade() else {
        return index;
    };
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if kept
        .embedding
        .as_ref()
        .is_some_and(|(weak, _)| is(weak, &tools))
    {
        kept.embedding = None;
    }
    match meanings {
        Ok(meanings) => {
            let with_meanings = Arc::new((*index).clone().with_quantized(meanings));
            // Kept only while this is the kept snapshot: a call that started on an older one
            // does not undo a newer's.
            if kept
                .index
                .as_ref()
                .is_some_and(|(weak, _)| is(weak, &tools))
            {
                kept.index = Some((Arc::downgrade(&tools), with_meanings.clone()));
                kept.vectors = known;
                kept.failed = None;
            }
            with_meanings
        }
        Err(error) => {
            tracing::warn!(%error, "embedding the tools failed: searching by words");
            kept.failed = Some((Arc::downgrade(&tools), Instant::now()));
            index
        }
    }
}

/// The best `limit` tools by meaning and words, or by words alone (and a warning) if the
/// model fails on the query.
async fn search_by_meaning<'a>(
    model: &Model,
    index: &'a ToolIndex,
    query: &str,
    limit: usize,
) -> Vec<&'a AdvertisedTool> {
    if !index.has_meanings() || index.is_empty() {
        return index.search(query, limit);
    }
    let found = embed_all(
        model.embedder.as_ref(),
        vec![query.to_owned()],
        model.timeout,
    )
    .await
    .and_then(|vectors| {
        // `embed_all` answers one vector for one text, or an error.
        let vector = vectors.into_iter().next().unwrap_or_default();
        index.search_with_meaning(query, &vector, limit)
    });
    found.unwrap_or_else(|error| {
        tracing::warn!(%error, "embedding the query failed: searching by words");
        index.search(query, limit)
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
