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

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism::{ExecuteCall, Executed, Next, PostDecision};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File to read.
    path: String,
    /// First line, 1-based.
    offset: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Line {
    number: u32,
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadValue {
    path: String,
    offset: u32,
    lines: Vec<Line>,
    total_lines: u32,
}

const SOURCE: &str = include_str!("../src/dispatch.rs");

fn body(args: ReadArgs) -> ReadValue {
    let offset = args.offset.unwrap_or(1);
    let lines = SOURCE
        .lines()
        .skip(offset as usize - 1)
        .take(50)
        .zip(offset..)
        .map(|(text, number)| Line {
            number,
            text: text.to_owned(),
        })
        .collect();
    ReadValue {
        path: args.path,
        offset,
        lines,
        total_lines: 200,
    }
}

fn render(_args: &ReadArgs, value: &ReadValue) -> String {
    let mut text = String::with_capacity(4096);
    for line in &value.lines {
        text.push_str(&line.number.to_string());
        text.push_str(": ");
        text.push_str(&line.text);
        text.push('\n');
    }
    text
}

fn meta(args: &ReadArgs, value: &ReadValue) -> Value {
    json!({"card": "read", "path": args.path, "lines": value.lines.len()})
}

/// Reads a file.
#[tool(render = render, meta = meta)]
fn read(args: ReadArgs) -> ReadValue {
    body(args)
}

/// Polls a future that never waits to completion, with no executor overhead to measure.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

fn dispatch(c: &mut Criterion) {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let snapshot = registry.snapshot();
    let args = json!({"path": "src/dispatch.rs", "offset": 3});

    let mut group = c.benchmark_group("dispatch_read_50_lines");
    group.bench_function("by_hand", |b| {
        b.iter(|| {
            let parsed: ReadArgs = serde_json::from_value(black_box(args.clone())).unwrap();
            let value = body(parsed);
            let json = serde_json::to_value(&value).unwrap();
            let parsed: ReadArgs = serde_json::from_value(args.clone()).unwrap();
            let text = render(&parsed, &value);
            let meta = meta(&parsed, &value);
            black_box((json, text, meta))
        });
    });
    group.bench_function("pipeline", |b| {
        b.iter(|| {
            let call = ToolCall::new("call_1", "read", black_box(args.clone()));
            black_box(block_on(snapshot.dispatch(call, Surface::Direct)))
        });
    });
    group.finish();
}

fn stages(c: &mut Criterion) {
    let bare = Registry::builder().tool(Read).build().unwrap().snapshot();
    let pass = |_call: ExecuteCall, next: Next| async move { Executed::from(next.run().await) };
    let keep = |_call: &ExecuteCall, _outcome: &ToolOutcome| PostDecision::keep();
    let staged = Registry::builder()
        .tool(Read)
        .wrap(pass)
        .wrap(pass)
        .wrap(pass)
        .post_execute(keep)
        .post_execute(keep)
        .build()
        .unwrap()
        .snapshot();
    let args = json!({"path": "src/dispatch.rs", "offset": 3});

    let mut group = c.benchmark_group("dispatch_stages");
    for (name, snapshot) in [("bare", &bare), ("with_stages", &staged)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let call = ToolCall::new("call_1", "read", black_box(args.clone()));
                black_box(block_on(snapshot.dispatch(call, Surface::Direct)))
            });
        });
    }
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
