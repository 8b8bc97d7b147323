//! Tool search's quality on a tool-retrieval set written by `scripts/search_benchmark/sets.py`:
//! every tool registered (its name made a valid tool name, its parameters' names, descriptions
//! and listed values as its input schema), each query searched, and recall@1/5/10, nDCG@10
//! and the mean time of a query printed as one JSON line. Run by `scripts/search-benchmark`.
//!
//! - `search_quality SET.json`: by words.
//! - `search_quality SET.json --texts`: prints, as one JSON array, the texts an embedding model
//!   is given: each tool's (`search::meaning_text`), then each query.
//! - `search_quality SET.json --vectors VECTORS.json`: by meaning and words, with the vectors a
//!   model gave those texts (`{"model": …, "texts": […], "vectors": [[…], …]}`), looked up by an
//!   `Embedder`. The time of a query is the search's: the query's vector is looked up before.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolprism::prelude::*;
use toolprism::search::{EmbedError, Embedder, ToolIndex};
use toolprism::tool::AdvertisedTool;

#[derive(Deserialize)]
struct Set {
    tools: Vec<Tool>,
    queries: Vec<Query>,
}

#[derive(Deserialize)]
struct Tool {
    name: String,
    description: String,
    /// Each parameter's name, description and the values it is limited to.
    parameters: Vec<(String, String, Vec<String>)>,
}

#[derive(Deserialize)]
struct Query {
    text: String,
    relevant: Vec<usize>,
}

#[derive(Deserialize)]
struct Embedded {
    model: String,
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: search_quality SET.json [--texts | --vectors VECTORS.json]")?;
    let set: Set = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let mut taken = HashSet::new();
    let mut position = HashMap::new();
    let mut defs = Vec::new();
    for (at, tool) in set.tools.iter().enumerate() {
        let name = tool_name(&tool.name, &mut taken);
        position.insert(name.clone(), at);
        defs.push(definition(name, tool));
    }
    let registry = Registry::builder().tools(defs).build()?;
    let snapshot = registry.snapshot();
    let index = ToolIndex::new(snapshot.definitions());
    match (args.get(2).map(String::as_str), args.get(3)) {
        (None, _) => {}
        (Some("--texts"), _) => {
            let mut texts = index.meaning_texts();
            texts.extend(set.queries.iter().map(|query| query.text.clone()));
            println!("{}", serde_json::to_string(&texts)?);
            return Ok(());
        }
        (Some("--vectors"), Some(file)) => {
            let vectors: Embedded = serde_json::from_str(&std::fs::read_to_string(file)?)?;
            let engine = format!("toolprism + {}", vectors.model);
            let embedder = table_embedder(vectors);
            let runtime = tokio::runtime::Builder::new_current_thread().build()?;
            let tools = runtime.block_on(embedder.embed(index.meaning_texts()))?;
            let index = index.with_meanings(tools)?;
            let queries = set.queries.iter().map(|query| query.text.clone()).collect();
            let query_vectors = runtime.block_on(embedder.embed(queries))?;
            report(&engine, &set, &position, |at, text| {
                index
                    .search_with_meaning(text, &query_vectors[at], 10)
                    .expect("the model's vectors are of one length")
            });
            return Ok(());
        }
        _ => {
            return Err("usage: search_quality SET.json [--texts | --vectors VECTORS.json]".into());
        }
    }
    report("toolprism", &set, &position, |_, text| {
        index.search(text, 10)
    });
    Ok(())
}

/// An embedding model's vectors, looked up by text; a text it was not given is an error.
fn table_embedder(vectors: Embedded) -> impl Embedder {
    let table: Arc<HashMap<String, Vec<f32>>> =
        Arc::new(vectors.texts.into_iter().zip(vectors.vectors).collect());
    move |texts: Vec<String>| {
        let table = table.clone();
        async move {
            texts
                .iter()
                .map(|text| {
                    table.get(text).cloned().ok_or_else(|| {
                        EmbedError::new(format!("no vector for {text:?}: run --texts again"))
                    })
                })
                .collect()
        }
    }
}

/// Searches every query of `set` with `search` (given the query's place and text) and prints
/// the scores and the mean time of a search.
fn report<'a>(
    engine: &str,
    set: &Set,
    position: &HashMap<String, usize>,
    search: impl Fn(usize, &str) -> Vec<&'a AdvertisedTool>,
) {
    let started = Instant::now();
    let ranked: Vec<Vec<usize>> = set
        .queries
        .iter()
        .enumerate()
        .map(|(at, query)| {
            search(at, &query.text)
                .iter()
                .map(|tool| position[tool.name()])
                .collect()
        })
        .collect();
    let per_query = started.elapsed().as_secs_f64() / count(set.queries.len());
    let [at_1, at_5, at_10, ndcg] = scores(&ranked, &set.queries);
    println!(
        "{}",
        json!({
            "engine": engine,
            "ms": (per_query * 1e6).round() / 1e3,
            "recall@1": at_1,
            "recall@5": at_5,
            "recall@10": at_10,
            "ndcg@10": ndcg,
        })
    );
}

/// Recall at 1, 5 and 10 and nDCG at 10, in percent, as `baselines.py` computes them.
fn scores(ranked: &[Vec<usize>], queries: &[Query]) -> [f64; 4] {
    let mut totals = [0.0; 4];
    for (top, query) in ranked.iter().zip(queries) {
        let relevant: HashSet<usize> = query.relevant.iter().copied().collect();
        for (slot, k) in [1, 5, 10].into_iter().enumerate() {
            let found = top
                .iter()
                .take(k)
                .filter(|at| relevant.contains(at))
                .count();
            totals[slot] += count(found) / count(relevant.len());
        }
        let gain = |rank: usize| 1.0 / count(rank + 2).log2();
        let dcg: f64 = (0..top.len().min(10))
            .filter(|rank| relevant.contains(&top[*rank]))
            .map(gain)
            .sum();
        let ideal: f64 = (0..relevant.len().min(10)).map(gain).sum();
        totals[3] += dcg / ideal;
    }
    totals.map(|total| (total * 10_000.0 / count(queries.len().max(1))).round() / 100.0)
}

fn count(n: usize) -> f64 {
    f64::from(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The tool as a registry holds it: what search reads (name, description, parameters' names,
/// descriptions and listed values), and a body that is never called.
fn definition(name: String, tool: &Tool) -> ToolDef {
    let properties: Map<String, Value> = tool
        .parameters
        .iter()
        .map(|(name, description, values)| {
            let mut parameter = json!({"description": description});
            if !values.is_empty() {
                parameter["enum"] = json!(values);
            }
            (name.clone(), parameter)
        })
        .collect();
    let description = if tool.description.trim().is_empty() {
        tool.name.clone()
    } else {
        tool.description.clone()
    };
    ToolDef::builder(name)
        .description(description)
        .input_schema(json!({"type": "object", "properties": properties}))
        .handler(|_: Value, _: ToolContext| async { Ok::<_, ToolError>(Value::Null) })
        .build()
}

/// `wanted` made a tool name (`[A-Za-z0-9_-]`, at most 64), unique among `taken`.
fn tool_name(wanted: &str, taken: &mut HashSet<String>) -> String {
    let base: String = wanted
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '-' {
                ch
            } else {
                '_'
            }
        })
        .take(58)
        .collect();
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}
