//! One tool search over 10,200 tools: the 425 real definitions of `tests/golden/search`, each
//! registered 24 times, renamed `<name>_<n>`, searched with the labeled tasks'
//! words (BM25), by meaning and words (`search_with_meaning`, with vectors of 384 numbers, as
//! all-MiniLM-L6-v2 gives: their numbers do not change the work), and with a regular
//! expression; and building the index, once per snapshot; against one substring scan of every
//! description, measured in the same run.
//!
//! `cargo bench -p toolprism --bench search`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism::search::ToolIndex;

fn registry() -> Registry {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/search/tools.json"
    );
    let corpus: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut tools = Vec::new();
    for copy in 0..24 {
        for tool in &corpus {
            let name = format!("{}_{copy}", tool["name"].as_str().unwrap());
            let name: String = name.chars().take(64).collect();
            tools.push(
                ToolDef::builder(name)
                    .description(tool["description"].as_str().unwrap_or_default())
                    .input_schema(json!({"type": "object"}))
                    .output_schema(json!(true))
                    .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(Value::Null) })
                    .build()
                    .with_advertised_input_schema(tool["inputSchema"].clone()),
            );
        }
    }
    Registry::builder().tools(tools).build().unwrap()
}

fn search(c: &mut Criterion) {
    let registry = registry();
    let snapshot = registry.snapshot();
    assert!(snapshot.definitions().len() >= 10_000);
    let index = ToolIndex::new(snapshot.definitions());
    let queries = [
        "merge this pull request into main",
        "list the pods running in a kubernetes namespace",
        "add a user to an okta group",
        "take a screenshot of the web page in the browser",
        "show the git commit history log",
    ];
    let mut group = c.benchmark_group("search");
    // The baseline: one pass over every description looking for one word, the least any
    // search that reads them all could do.
    group.bench_function("baseline_substring_scan_10000_tools", |b| {
        b.iter(|| {
            black_box(
                snapshot
                    .definitions()
                    .filter(|tool| tool.description().contains(black_box("pull request")))
                    .count(),
            )
        });
    });
    group.bench_function("bm25_10000_tools", |b| {
        let mut at = 0;
        b.iter(|| {
            at = (at + 1) % queries.len();
            black_box(index.search(black_box(queries[at]), 5).len())
        });
    });
    // Vectors of a model's length, from a fixed sequence: the ranking reads each tool's.
    let mut seed = 0x9e37_79b9_u32;
    let mut vector = || -> Vec<f32> {
        (0..384)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                f32::from(u16::try_from(seed >> 16).unwrap()) / 65_536.0 - 0.5
            })
            .collect()
    };
    let vectors = (0..index.len()).map(|_| vector()).collect();
    let by_meaning = index.clone().with_meanings(vectors).unwrap();
    let query_vectors: Vec<Vec<f32>> = queries.iter().map(|_| vector()).collect();
    group.bench_function("meaning_and_bm25_10000_tools", |b| {
        let mut at = 0;
        b.iter(|| {
            at = (at + 1) % queries.len();
            let found =
                by_meaning.search_with_meaning(black_box(queries[at]), &query_vectors[at], 5);
            black_box(found.unwrap().len())
        });
    });
    group.bench_function("regex_10000_tools", |b| {
        b.iter(|| {
            black_box(
                index
                    .search_regex(black_box("pull_request"), 5)
                    .unwrap()
                    .len(),
            )
        });
    });
    // A pattern that matches nothing reads every name and description.
    group.bench_function("regex_no_match_10000_tools", |b| {
        b.iter(|| {
            black_box(
                index
                    .search_regex(black_box("zq_no_such_tool"), 5)
                    .unwrap()
                    .len(),
            )
        });
    });
    group.sample_size(10);
    group.bench_function("index_10000_tools", |b| {
        b.iter(|| black_box(ToolIndex::new(snapshot.definitions()).len()));
    });
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
