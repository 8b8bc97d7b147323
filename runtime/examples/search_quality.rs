//! Tool search's quality on a tool-retrieval set written by `scripts/search_benchmark/sets.py`:
//! every tool registered (its name made a valid tool name, its parameters' names and
//! descriptions as its input schema), each query searched, and recall@1/5/10, nDCG@10 and the
//! mean time of a query printed as one JSON line. Run by `scripts/search-benchmark`.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolprism::prelude::*;
use toolprism::search::ToolIndex;

#[derive(Deserialize)]
struct Set {
    tools: Vec<Tool>,
    queries: Vec<Query>,
}

#[derive(Deserialize)]
struct Tool {
    name: String,
    description: String,
    parameters: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Query {
    text: String,
    relevant: Vec<usize>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: search_quality SET.json")?;
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

    let started = Instant::now();
    let ranked: Vec<Vec<usize>> = set
        .queries
        .iter()
        .map(|query| {
            index
                .search(&query.text, 10)
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
            "engine": "toolprism",
            "ms": (per_query * 1e6).round() / 1e3,
            "recall@1": at_1,
            "recall@5": at_5,
            "recall@10": at_10,
            "ndcg@10": ndcg,
        })
    );
    Ok(())
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

/// The tool as a registry holds it: what search reads (name, description, parameters' names
/// and descriptions), and a body that is never called.
fn definition(name: String, tool: &Tool) -> ToolDef {
    let properties: Map<String, Value> = tool
        .parameters
        .iter()
        .map(|(name, description)| (name.clone(), json!({"description": description})))
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
