//! The full dispatch pipeline against the same work done by hand, in one run.
//!
//! Both sides deserialize the arguments from an owned `Value`, run the same body that builds a
//! 50-line read-style value, turn it into JSON and render it. The pipeline adds: input schema
//! validation, lossless snapshotting, output schema validation, freezing, rendering from the
//! frozen value (deserialized back), and the meta projection.
//!
//! `cargo bench -p toolprism --bench dispatch`; the ratio to quote is
//! `pipeline / by_hand`.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::prelude::*;

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

criterion_group!(benches, dispatch);
criterion_main!(benches);
