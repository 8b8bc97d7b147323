//! Lowering schemas of growing size into each dialect, against a baseline measured in the same
//! run: cloning the schema (the least any rewrite producing a new schema does). Linear lowering
//! keeps the ratio lowering / clone flat as schemas grow, wide or deep (up to the depth limit).
//! Reported as nodes per second.
//!
//! `cargo bench -p toolprism --bench lower`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use toolprism::lower::{gemini, openai_strict};

/// A property with the keywords lowering rewrites: nullable types, folded constraints, an
/// `allOf` to merge, a reference.
fn property(index: usize) -> Value {
    json!({
        "type": ["string", "null"],
        "minLength": 1,
        "description": format!("Property {index}."),
        "allOf": [{"maxLength": 40}, {"pattern": "^[a-z]+$"}]
    })
}

/// `width` properties, each holding a chain `depth` objects deep.
fn schema(width: usize, depth: usize) -> Value {
    let mut properties = Map::new();
    for index in 0..width {
        let mut chain = property(index);
        for level in 0..depth {
            chain = json!({
                "type": "object",
                "properties": {"next": chain, "tag": property(level)},
                "required": ["next"]
            });
        }
        properties.insert(format!("p{index}"), chain);
    }
    json!({
        "type": "object",
        "properties": properties,
        "$defs": {"Shared": {"type": "integer", "exclusiveMinimum": 0}}
    })
}

fn nodes(value: &Value) -> u64 {
    1 + match value {
        Value::Array(items) => items.iter().map(nodes).sum(),
        Value::Object(map) => map.values().map(nodes).sum(),
        _ => 0,
    }
}

fn lower(c: &mut Criterion) {
    let mut group = c.benchmark_group("lower");
    // Depth 1 to 29 chains: the deepest reaches 60 levels of JSON (two per object).
    for (shape, width, depth) in [
        ("wide", 200, 1),
        ("wide", 800, 1),
        ("wide", 3_200, 1),
        ("deep", 4, 29),
        ("deep", 16, 29),
        ("deep", 64, 29),
    ] {
        let schema = schema(width, depth);
        let size = nodes(&schema);
        group.throughput(Throughput::Elements(size));
        let id = format!("{shape} {size} nodes");
        group.bench_with_input(BenchmarkId::new("clone", &id), &schema, |b, schema| {
            b.iter(|| black_box(schema).clone());
        });
        group.bench_with_input(BenchmarkId::new("gemini", &id), &schema, |b, schema| {
            b.iter(|| gemini(black_box(schema)).unwrap());
        });
        group.bench_with_input(
            BenchmarkId::new("openai_strict", &id),
            &schema,
            |b, schema| {
                b.iter(|| openai_strict(black_box(schema)).unwrap());
            },
        );
    }
    group.finish();
}

criterion_group!(benches, lower);
criterion_main!(benches);
