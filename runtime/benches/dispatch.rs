//! The full dispatch pipeline against the same work done by hand, in one run.
//!
//! Both sides deserialize the arguments from an owned `Value`, run the same body that builds a
//! 50-line read-style value, turn it into JSON and render it. The pipeline adds: input schema
//! validation, lossless snapshotting, output schema validation, freezing, rendering from the
//! frozen value (deserialized back), and the meta projection.
//!
//! The second group runs the same call with three pass-through wrappers and two keeping
//! post-execute policies against the bare pipeline; the third takes snapshots of registries of
//! 10, 100 and 1,000 tools, and lists their definitions.
//!
//! `cargo bench -p toolprism --bench dispatch`; the ratios to quote are
//! `pipeline / by_hand` and `with_stages / bare`.

mod read_tool;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use toolprism::prelude::*;

use read_tool::{args, bare, by_hand, pipeline, staged};

fn dispatch(c: &mut Criterion) {
    let snapshot = bare();
    let args = args();
    let mut group = c.benchmark_group("dispatch_read_50_lines");
    group.bench_function("by_hand", |b| b.iter(|| by_hand(&args)));
    group.bench_function("pipeline", |b| b.iter(|| pipeline(&snapshot, &args)));
    group.finish();
}

fn stages(c: &mut Criterion) {
    let (bare, staged) = (bare(), staged());
    let args = args();
    let mut group = c.benchmark_group("dispatch_stages");
    group.bench_function("bare", |b| b.iter(|| pipeline(&bare, &args)));
    group.bench_function("with_stages", |b| b.iter(|| pipeline(&staged, &args)));
    group.finish();
}

fn snapshots(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    for count in [10, 100, 1_000] {
        let tools = (0..count).map(|at| {
            ToolDef::builder(format!("tool_{at}"))
                .description("One of many.")
                .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
                .build()
        });
        let registry = Registry::builder().tools(tools).build().unwrap();
        group.bench_function(format!("take/{count}"), |b| {
            b.iter(|| black_box(registry.snapshot()));
        });
        let snapshot = registry.snapshot();
        group.bench_function(format!("list_definitions/{count}"), |b| {
            b.iter(|| {
                black_box(
                    snapshot
                        .definitions()
                        .map(|d| d.name().len())
                        .sum::<usize>(),
                )
            });
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch, stages, snapshots);
criterion_main!(benches);
