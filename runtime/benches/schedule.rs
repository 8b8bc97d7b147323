//! A turn of 16 reads and 2 writes (8 reads, a write, 8 reads, a write), each call waiting
//! 2 ms as a body waiting on a disk or a network would, run three ways in the same run:
//!
//! - `effect_aware`: the tools' hints as they are (reads read-only, writes not): reads overlap,
//!   each write is a barrier;
//! - `all_parallel`: the same calls, every tool claiming to be read-only (what `run_calls` did
//!   before it read the hints): as fast as it gets, and wrong when a read and a write meet;
//! - `all_sequential`: `max_concurrent(1)`.
//!
//! At most 8 at once. Quote `effect_aware / all_parallel` and `effect_aware / all_sequential`.
//! `cargo bench -p toolprism --bench schedule`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolprism::lower::Provider;
use toolprism::prelude::*;
use toolprism::turn::{AssistantTurn, RunOptions, read_response, run_calls};

const WAIT: Duration = Duration::from_millis(2);

/// A tool that waits, then answers; read-only as `read_only` says.
fn waiting_tool(name: &str, read_only: bool) -> ToolDef {
    ToolDef::builder(name)
        .description("Waits, then answers.")
        .handler(|args: Value, _cx: ToolContext| async move {
            futures_timer::Delay::new(WAIT).await;
            Ok::<_, ToolError>(args)
        })
        .build()
        .read_only(read_only)
}

fn registry(writes_say_read_only: bool) -> Registry {
    Registry::builder()
        .tool(waiting_tool("read", true))
        .tool(waiting_tool("write", writes_say_read_only))
        .build()
        .unwrap()
}

fn turn() -> AssistantTurn {
    let names = (0..18).map(|at| if at == 8 || at == 17 { "write" } else { "read" });
    let calls: Vec<Value> = names
        .enumerate()
        .map(|(at, name)| {
            json!({"id": format!("call_{at}"), "type": "function",
                   "function": {"name": name, "arguments": "{}"}})
        })
        .collect();
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}]});
    read_response(Provider::OpenAiChat, body.to_string().as_bytes()).unwrap()
}

fn schedule(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let turn = turn();
    let truthful = registry(false).snapshot();
    let lying = registry(true).snapshot();
    let mut group = c.benchmark_group("turn_16_reads_2_writes");
    group.sample_size(20);
    let ways = [
        ("effect_aware", &truthful, RunOptions::default()),
        ("all_parallel", &lying, RunOptions::default()),
        (
            "all_sequential",
            &truthful,
            RunOptions::default().max_concurrent(1),
        ),
    ];
    for (name, snapshot, options) in ways {
        group.bench_function(name, |b| {
            b.iter(|| {
                let outcomes = runtime.block_on(run_calls(snapshot, &turn, &options));
                black_box(outcomes.unwrap().len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, schedule);
criterion_main!(benches);
