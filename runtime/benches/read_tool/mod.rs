//! The read-style tool both dispatch benches run, and the same work done by hand.

#![allow(dead_code, reason = "each bench uses part of this module")]

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolprism::Snapshot;
use toolprism::pipeline::{ExecuteCall, Executed, Next, PostDecision};
use toolprism::prelude::*;
use toolprism::present::ReadCard;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// File to read.
    path: String,
    /// First line, 1-based.
    offset: Option<u32>,
}

#[verbatim]
#[derive(JsonSchema)]
pub(crate) struct Line {
    number: u32,
    text: String,
}

/// `#[verbatim]`: `render` and `meta` borrow the value the body returned.
#[verbatim]
#[derive(JsonSchema)]
pub(crate) struct ReadValue {
    path: String,
    offset: u32,
    lines: Vec<Line>,
    total_lines: u32,
}

/// A fixed Rust source file (the pipeline as it was first written), so that the value read is
/// the same whatever the runtime's own files become.
const SOURCE: &str = include_str!("sample.rs.txt");

pub(crate) fn body(args: ReadArgs) -> ReadValue {
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

pub(crate) fn render(_args: &ReadArgs, value: &ReadValue) -> String {
    let mut text = String::with_capacity(4096);
    for line in &value.lines {
        text.push_str(&line.number.to_string());
        text.push_str(": ");
        text.push_str(&line.text);
        text.push('\n');
    }
    text
}

pub(crate) fn meta(args: &ReadArgs, value: &ReadValue) -> Card {
    Card::Read(ReadCard {
        path: args.path.clone(),
        first_line: value.offset.into(),
        last_line: value.lines.last().map_or(0, |line| line.number.into()),
        total_lines: value.total_lines.into(),
    })
}

/// Reads a file.
#[tool(render = render, presentation_meta = meta)]
pub(crate) fn read(args: ReadArgs) -> ReadValue {
    body(args)
}

/// The same value and JSON, in a type that is not `Verbatim`: `render` and `meta` see it
/// deserialized back from its JSON, as they do for any value type.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(transparent)]
pub(crate) struct ReadBackValue(ReadValue);

fn render_read_back(args: &ReadArgs, value: &ReadBackValue) -> String {
    render(args, &value.0)
}

fn meta_read_back(args: &ReadArgs, value: &ReadBackValue) -> Card {
    meta(args, &value.0)
}

/// Reads a file.
#[tool(name = "read", render = render_read_back, presentation_meta = meta_read_back)]
pub(crate) fn read_back(args: ReadArgs) -> ReadBackValue {
    ReadBackValue(body(args))
}

/// Polls a future that never waits to completion, with no executor overhead to measure.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// The arguments every iteration dispatches.
pub(crate) fn args() -> Value {
    serde_json::json!({"path": "src/dispatch.rs", "offset": 3})
}

/// The work of one call, by hand: deserialize the arguments, run the body, `to_value`, render,
/// and build the metadata.
pub(crate) fn by_hand(args: &Value) {
    let parsed: ReadArgs = serde_json::from_value(black_box(args.clone())).unwrap();
    let value = body(parsed);
    let json = serde_json::to_value(&value).unwrap();
    let parsed: ReadArgs = serde_json::from_value(args.clone()).unwrap();
    let text = render(&parsed, &value);
    let meta = serde_json::to_value(meta(&parsed, &value)).unwrap();
    black_box((json, text, meta));
}

/// One call through the whole pipeline.
pub(crate) fn pipeline(snapshot: &Snapshot, args: &Value) {
    let call = ToolCall::new("call_1", "read", black_box(args.clone()));
    black_box(block_on(snapshot.dispatch(call, Surface::Direct)));
}

/// A registry of the read tool alone.
pub(crate) fn bare() -> Snapshot {
    Registry::builder().tool(Read).build().unwrap().snapshot()
}

/// A registry of the read tool whose value is read back for `render` and `meta`.
pub(crate) fn read_back_only() -> Snapshot {
    Registry::builder()
        .tool(ReadBack)
        .build()
        .unwrap()
        .snapshot()
}

/// A registry of the read tool with three pass-through wrappers and two keeping policies.
pub(crate) fn staged() -> Snapshot {
    let pass = |_call: ExecuteCall, next: Next| async move { Executed::from(next.run().await) };
    let keep = |_call: &ExecuteCall, _outcome: &ToolOutcome| PostDecision::keep();
    Registry::builder()
        .tool(Read)
        .wrap(pass)
        .wrap(pass)
        .wrap(pass)
        .post_execute(keep)
        .post_execute(keep)
        .build()
        .unwrap()
        .snapshot()
}
