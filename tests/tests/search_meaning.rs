//! Tool search by meaning: the host's embedding model's vectors blended with BM25, the tools
//! embedded once per snapshot, a model that fails, panics or returns what is not one finite
//! vector per text leaving the search by words, and a caller told only of what it may call.
//!
//! The model here knows a few meanings by hand (a word of a meaning's list sets its number), so
//! that what each test expects follows from the ranking alone; a real model's figures are in
//! `docs/performance.md` (`scripts/search-benchmark`).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::access::Caller;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;
use toolprism::search::{EmbedError, Embedder, ToolSearch};
use toolprism::tool::IntoToolDef;

/// Finds movies by genre and cast.
#[tool]
fn find_movies(#[arg] genre: String) -> Vec<String> {
    vec![genre]
}

/// Lists the movies showing at a theater.
#[tool]
fn list_showings(#[arg] theater: String) -> Vec<String> {
    vec![theater]
}

/// Reads a file.
#[tool]
fn read_file(#[arg] path: String) -> String {
    path
}

/// Gets the weather forecast for a city.
#[tool]
fn get_weather(#[arg] city: String) -> String {
    city
}

/// Executes a shell command line.
#[tool(scopes = ["shell:run"])]
fn shell(#[arg] line: String) -> String {
    line
}

/// The meanings the model below knows, each by its words.
const MEANINGS: [&[&str]; 4] = [
    &["movie", "film", "comedy", "cinema"],
    &["file", "document", "read"],
    &["weather", "forecast", "rain"],
    &["shell", "command", "execute", "run"],
];

/// One number per meaning, 1 where the text has one of its words, and a last one every text
/// shares, so that no vector is zero.
fn vector_of(text: &str) -> Vec<f32> {
    let text = text.to_lowercase();
    let mut vector: Vec<f32> = MEANINGS
        .iter()
        .map(|words| f32::from(u8::from(words.iter().any(|word| text.contains(word)))))
        .collect();
    vector.push(0.25);
    vector
}

/// The model, recording each batch of texts it is given.
fn model(asked: Arc<Mutex<Vec<Vec<String>>>>) -> impl Embedder {
    move |texts: Vec<String>| {
        asked.lock().unwrap().push(texts.clone());
        async move { Ok(texts.iter().map(|text| vector_of(text)).collect()) }
    }
}

fn registry(search: ToolSearch) -> Registry {
    Registry::builder()
        .tool(FindMovies)
        .tool(ListShowings)
        .tool(ReadFile)
        .tool(GetWeather)
        .tool(Shell)
        .tool(search.tool())
        .build()
        .unwrap()
}

async fn search(registry: &Registry, query: &str, options: DispatchOptions) -> Vec<String> {
    let call = ToolCall::new("c", "tool_search", json!({"query": query, "limit": 3}));
    let snapshot = registry.snapshot();
    let outcome = snapshot.dispatch_with(call, Surface::Direct, options).await;
    assert!(!outcome.is_error(), "{:?}", outcome.error());
    outcome.value().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_tool_that_shares_no_word_with_the_query_is_found_by_its_meaning() {
    let by_words = registry(ToolSearch::new());
    let asked = Arc::default();
    let by_meaning = registry(ToolSearch::new().embedder(model(asked)));
    let query = "a comedy film with Jim Carrey";
    assert!(
        search(&by_words, query, DispatchOptions::default())
            .await
            .is_empty()
    );
    let found = search(&by_meaning, query, DispatchOptions::default()).await;
    // Both movie tools are as close in meaning; neither shares a word, so the snapshot's order.
    assert_eq!(found[..2], ["find_movies", "list_showings"]);
    // As close in meaning, the one sharing the query's words goes first.
    let found = search(
        &by_meaning,
        "films showing at a theater",
        DispatchOptions::default(),
    )
    .await;
    assert_eq!(found[..2], ["list_showings", "find_movies"]);
    // Words still count where the meaning is unknown to the model.
    let found = search(&by_meaning, "city", DispatchOptions::default()).await;
    assert_eq!(found[0], "get_weather");
}

#[tokio::test]
async fn tools_are_embedded_once_per_snapshot_and_a_new_one_only_for_what_changed() {
    let asked: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let registry = Registry::builder()
        .tool(FindMovies)
        .tool(ReadFile)
        .tool(ToolSearch::new().embedder(model(asked.clone())).tool())
        .build()
        .unwrap();
    search(&registry, "a film", DispatchOptions::default()).await;
    search(&registry, "a document", DispatchOptions::default()).await;
    // A regular expression asks the model nothing.
    let call = ToolCall::new("c", "tool_search", json!({"query": "fi.e", "regex": true}));
    let outcome = registry.dispatch(call, Surface::Direct).await;
    assert_eq!(outcome.value().unwrap()["tools"][0]["name"], "read_file");
    registry.register(GetWeather.into_tool_def()).unwrap();
    let found = search(&registry, "will it rain", DispatchOptions::default()).await;
    assert_eq!(found[0], "get_weather");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [
            vec![
                "find movies: Finds movies by genre and cast.".to_owned(),
                "read file: Reads a file.".to_owned(),
            ],
            vec!["a film".to_owned()],
            vec!["a document".to_owned()],
            vec!["get weather: Gets the weather forecast for a city.".to_owned()],
            vec!["will it rain".to_owned()],
        ]
    );
}

/// A model that embeds the tools as `model` does (they come in one batch of several), and
/// answers a query with `query`.
fn answering_queries(
    query: impl Fn() -> Result<Vec<Vec<f32>>, EmbedError> + Send + Sync + 'static,
) -> impl Embedder {
    move |texts: Vec<String>| {
        let answer = if texts.len() > 1 {
            Ok(texts.iter().map(|text| vector_of(text)).collect())
        } else {
            query()
        };
        async move { answer }
    }
}

fn with(embedder: impl Embedder) -> Registry {
    registry(ToolSearch::new().embedder(embedder))
}

#[tokio::test]
async fn a_model_that_fails_or_returns_what_is_not_a_vector_per_text_leaves_the_search_by_words() {
    let nan = || Ok(vec![vec![f32::NAN, 0.0, 0.0, 0.0, 1.0]]);
    let short = || Ok(vec![vec![1.0, 0.0]]);
    let two = || Ok(vec![vector_of("film"), vector_of("film")]);
    let none = || Ok(vec![]);
    let failed = || Err(EmbedError::new("the model is down"));
    let panics = || panic!("the model's client broke");
    let models = [
        ("nan", with(answering_queries(nan))),
        ("short", with(answering_queries(short))),
        ("two", with(answering_queries(two))),
        ("none", with(answering_queries(none))),
        ("failed", with(answering_queries(failed))),
        ("panics", with(answering_queries(panics))),
    ];
    for (name, registry) in models {
        // By words: the file tool alone shares a word, and the film tools are not found.
        let found = search(&registry, "a film file", DispatchOptions::default()).await;
        assert_eq!(found, ["read_file"], "{name}");
    }
    // The tools' vectors are checked too: one of another length, and the search is by words.
    let uneven = |texts: Vec<String>| async move {
        Ok::<_, EmbedError>(
            texts
                .iter()
                .enumerate()
                .map(|(at, _)| vec![1.0; 1 + at % 2])
                .collect(),
        )
    };
    let registry = with(uneven);
    assert_eq!(
        search(&registry, "a film file", DispatchOptions::default()).await,
        ["read_file"]
    );
    // A model whose answer panics, for the tools: this search and the next on the snapshot go
    // by words.
    let panicking = |_: Vec<String>| async move {
        panic!("the model's answer broke");
        #[allow(unreachable_code)]
        Ok::<Vec<Vec<f32>>, EmbedError>(Vec::new())
    };
    let registry = with(panicking);
    for _ in 0..2 {
        assert_eq!(
            search(&registry, "a film file", DispatchOptions::default()).await,
            ["read_file"]
        );
    }
}

fn caller(subject: &str, scopes: &str) -> Arc<Caller> {
    let claims = json!({"sub": subject, "client_id": subject, "scope": scopes});
    Arc::new(Caller::from_claims(claims.as_object().unwrap().clone()))
}

#[tokio::test]
async fn a_caller_is_told_by_meaning_only_of_what_it_may_call() {
    let registry = registry(ToolSearch::new().embedder(model(Arc::default())));
    let query = "execute this command";
    let mallory = DispatchOptions::default().caller(caller("mallory", ""));
    let found = search(&registry, query, mallory).await;
    assert!(!found.contains(&"shell".to_owned()), "{found:?}");
    assert_eq!(
        found.len(),
        3,
        "the next tools by meaning fill the limit: {found:?}"
    );
    let alice = DispatchOptions::default().caller(caller("alice", "shell:run"));
    assert_eq!(search(&registry, query, alice).await[0], "shell");
}

/// A tool with only a name and a description.
fn numbered(n: usize) -> ToolDef {
    ToolDef::builder(format!("tool_{n}"))
        .description(format!("Tool number {n}."))
        .input_schema(json!({"type": "object"}))
        .handler(|_: Value, _: ToolContext| async { Ok::<_, ToolError>(Value::Null) })
        .build()
}

#[tokio::test]
async fn the_tools_go_to_the_model_in_batches_and_after_a_failure_it_is_asked_at_the_next_snapshot()
{
    let asked: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let failing = Arc::new(AtomicBool::new(true));
    let embedder = {
        let (asked, failing) = (asked.clone(), failing.clone());
        move |texts: Vec<String>| {
            asked.lock().unwrap().push(texts.clone());
            let failing = failing.load(Ordering::SeqCst);
            async move {
                if failing {
                    return Err(EmbedError::new("the model is down"));
                }
                Ok(texts.iter().map(|text| vector_of(text)).collect())
            }
        }
    };
    let registry = Registry::builder()
        .tools((0..70).map(numbered))
        .tool(FindMovies)
        .tool(ToolSearch::new().embedder(embedder).tool())
        .build()
        .unwrap();
    let sizes = || -> Vec<usize> {
        asked
            .lock()
            .unwrap()
            .drain(..)
            .map(|texts| texts.len())
            .collect()
    };
    // The first batch fails: the search is by words, and the rest is not asked for.
    let found = search(&registry, "movies", DispatchOptions::default()).await;
    assert_eq!(found, ["find_movies"]);
    assert_eq!(sizes(), [64]);
    // The model is up again, but this snapshot's searches stay by words for a while.
    failing.store(false, Ordering::SeqCst);
    assert!(
        search(&registry, "a film", DispatchOptions::default())
            .await
            .is_empty()
    );
    assert_eq!(sizes(), Vec::<usize>::new());
    // A new snapshot asks again: 72 tools in two batches, then the query.
    registry.register(GetWeather.into_tool_def()).unwrap();
    let found = search(&registry, "a film", DispatchOptions::default()).await;
    assert_eq!(found[0], "find_movies");
    assert_eq!(sizes(), [64, 8, 1]);
}

#[tokio::test]
async fn a_model_that_does_not_answer_in_time_leaves_the_search_by_words() {
    let silent = |_: Vec<String>| std::future::pending::<Result<Vec<Vec<f32>>, EmbedError>>();
    let registry = registry(
        ToolSearch::new()
            .embedder(silent)
            .embed_timeout(Duration::from_millis(20)),
    );
    let found = search(&registry, "a film file", DispatchOptions::default()).await;
    assert_eq!(found, ["read_file"]);
}

/// Polls `future` once: whether it is still pending.
fn pending<F: Future>(future: &mut Pin<Box<F>>) -> bool {
    let mut context = Context::from_waker(Waker::noop());
    future.as_mut().poll(&mut context).is_pending()
}

#[tokio::test]
async fn calls_that_start_while_the_tools_are_embedded_wait_for_that_one_embedding() {
    let asked: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    // The model answers for the tools only once let through; the sentinel tells whether the
    // model (and what holds it) was let go of at the end.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let sentinel = Arc::new(());
    let embedder = {
        let (asked, gate, sentinel) = (asked.clone(), gate.clone(), sentinel.clone());
        move |texts: Vec<String>| {
            asked.lock().unwrap().push(texts.clone());
            let (gate, _sentinel) = (gate.clone(), sentinel.clone());
            async move {
                if texts.len() > 1 {
                    gate.acquire().await.unwrap().forget();
                }
                Ok(texts.iter().map(|text| vector_of(text)).collect())
            }
        }
    };
    let tool_batches = || {
        asked
            .lock()
            .unwrap()
            .iter()
            .filter(|texts| texts.len() > 1)
            .count()
    };
    let registry = registry(ToolSearch::new().embedder(embedder));
    let options = DispatchOptions::default;
    // Three calls start; the first asks the model, the others wait for its answer.
    let mut first = Box::pin(search(&registry, "a film", options()));
    let mut films = Box::pin(search(&registry, "a film", options()));
    let mut documents = Box::pin(search(&registry, "a document", options()));
    assert!(pending(&mut first) && pending(&mut films) && pending(&mut documents));
    assert_eq!(tool_batches(), 1);
    // One dropped: the embedding goes on for the others.
    drop(first);
    gate.add_permits(1);
    let (films, documents) = tokio::join!(films, documents);
    assert_eq!(
        (films[0].as_str(), documents[0].as_str()),
        ("find_movies", "read_file")
    );
    assert_eq!(tool_batches(), 1);
    // On a new snapshot (two new tools to embed), a call that started the embedding and was
    // dropped alone drops it: the next call starts another.
    registry.register(numbered(1)).unwrap();
    registry.register(numbered(2)).unwrap();
    let mut dropped = Box::pin(search(&registry, "will it rain", options()));
    assert!(pending(&mut dropped));
    drop(dropped);
    assert_eq!(tool_batches(), 2);
    gate.add_permits(1);
    let found = search(&registry, "will it rain", options()).await;
    assert_eq!(found[0], "get_weather");
    assert_eq!(tool_batches(), 3);
    // Nothing holds the model once the registry is gone.
    drop(registry);
    assert_eq!(Arc::strong_count(&sentinel), 1);
}

#[tokio::test]
async fn after_a_failure_the_same_snapshot_asks_the_model_again_once_the_retry_delay_is_past() {
    let failing = Arc::new(AtomicBool::new(true));
    let embedder = {
        let failing = failing.clone();
        move |texts: Vec<String>| {
            let failing = failing.load(Ordering::SeqCst);
            async move {
                if failing {
                    return Err(EmbedError::new("the model is down"));
                }
                Ok(texts.iter().map(|text| vector_of(text)).collect())
            }
        }
    };
    let retry = Duration::from_millis(50);
    let registry = registry(ToolSearch::new().embedder(embedder).embed_retry(retry));
    assert!(
        search(&registry, "a film", DispatchOptions::default())
            .await
            .is_empty()
    );
    failing.store(false, Ordering::SeqCst);
    // Within the delay this snapshot searches by words (unless this machine took longer than
    // the delay to get here, when it asks the model at once); past it, by meaning again.
    search(&registry, "a film", DispatchOptions::default()).await;
    tokio::time::sleep(retry * 2).await;
    let found = search(&registry, "a film", DispatchOptions::default()).await;
    assert_eq!(found[..2], ["find_movies", "list_showings"]);
}
