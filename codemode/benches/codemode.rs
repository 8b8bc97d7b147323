//! Code Mode's costs, each against a baseline measured in the same run:
//!
//! - `nested_call`: one `add` dispatched on the nested surface from Rust (`rust`), against
//!   programs making 0 and 500 awaited `add` calls (`program/0`, `program/500`). A call from
//!   a program costs `(program/500 − program/0) / 500`; quote it over `rust`. The same
//!   program calling a JavaScript `async` function instead (`javascript/500`) is what the
//!   engine itself spends on the call, the object literal and the `await`.
//! - `start`: a run that returns at once (`program/0`, a fresh runtime on an engine thread),
//!   against a direct dispatch of `add` (`direct_add`); back to back, and after a pause
//!   (`start_after_idle/program/0`), as runs a model's turns apart start.
//! - `parallel`: 16 programs of 100 calls each at once (`programs/16`) against one
//!   (`programs/1`), each spawned on a Tokio runtime of 1 and of 2 workers; spread perfectly
//!   over the cores, 16 would take 16 ÷ cores times one.
//!
//! `cargo bench -p toolprism-codemode --bench codemode`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolprism::prelude::*;
use toolprism_codemode::CodeMode;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn registry() -> Registry {
    let registry = Registry::builder().tool(Add).build().unwrap();
    CodeMode::new().register(&registry).unwrap();
    registry
}

fn program(calls: usize) -> String {
    summing(calls, "", "tools.add")
}

/// The same loop over `add` written in JavaScript: what the engine itself spends.
fn javascript_program(calls: usize) -> String {
    summing(calls, "const add = async ({a, b}) => a + b;\n", "add")
}

/// `prelude`, then a loop summing `calls` awaited calls of `callee`.
fn summing(calls: usize, prelude: &str, callee: &str) -> String {
    format!(
        "{prelude}let sum = 0;\nfor (let i = 0; i < {calls}; i++) sum += await {callee}({{a: i, b: 1}});\nreturn sum;"
    )
}

/// Calls a program makes: enough that the time a run takes to start (which moves by more than
/// a call costs) is small beside them.
const CALLS: usize = 500;

fn nested_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = registry();
    let snapshot = registry.snapshot();
    let mut group = c.benchmark_group("nested_call");
    group.bench_function("rust", |b| {
        b.iter(|| {
            let call = ToolCall::new("n", "add", json!({"a": 1, "b": 2}));
            let outcome = runtime.block_on(snapshot.dispatch(call, Surface::Nested));
            black_box(outcome)
        });
    });
    for calls in [0, CALLS] {
        let code = program(calls);
        group.bench_function(format!("program/{calls}"), |b| {
            b.iter(|| {
                let call = ToolCall::new("run", "run_code", json!({ "code": code }));
                let outcome = runtime.block_on(snapshot.dispatch(call, Surface::Direct));
                assert!(!outcome.is_error(), "{:?}", outcome.error());
                black_box(outcome)
            });
        });
    }
    // The same program calling a JavaScript function of the same shape: what the engine's
    // own call, object literal and `await` cost, with no tool behind them.
    let code = javascript_program(CALLS);
    group.bench_function(format!("javascript/{CALLS}"), |b| {
        b.iter(|| {
            let call = ToolCall::new("run", "run_code", json!({ "code": code }));
            let outcome = runtime.block_on(snapshot.dispatch(call, Surface::Direct));
            let value = outcome.value().map(toolprism::FrozenValue::as_value);
            assert_eq!(
                value,
                Some(&json!({"logs": [], "result": CALLS * (CALLS + 1) / 2}))
            );
            black_box(outcome)
        });
    });
    group.finish();

    let mut group = c.benchmark_group("start");
    group.bench_function("direct_add", |b| {
        b.iter(|| {
            let call = ToolCall::new("d", "add", json!({"a": 1, "b": 2}));
            black_box(runtime.block_on(snapshot.dispatch(call, Surface::Direct)))
        });
    });
    group.bench_function("program/0", |b| {
        let code = program(0);
        b.iter(|| {
            let call = ToolCall::new("run", "run_code", json!({ "code": code }));
            black_box(runtime.block_on(snapshot.dispatch(call, Surface::Direct)))
        });
    });
    group.finish();

    // Back to back, each run above also pays for the next one's runtime, made on the engine
    // thread as this one ends, and for freeing its own: on two cores they compete. A model
    // writes a program a turn, seconds apart; this is the start such a run sees, the engine
    // thread idle with its fresh runtime made (a pause of 1 ms before each run, not timed).
    let mut group = c.benchmark_group("start_after_idle");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_millis(500));
    group.bench_function("program/0", |b| {
        let code = program(0);
        b.iter_custom(|iters| {
            let mut timed = std::time::Duration::ZERO;
            for _ in 0..iters {
                std::thread::sleep(std::time::Duration::from_millis(1));
                let call = ToolCall::new("run", "run_code", json!({ "code": code }));
                let started = std::time::Instant::now();
                black_box(runtime.block_on(snapshot.dispatch(call, Surface::Direct)));
                timed += started.elapsed();
            }
            timed
        });
    });
    group.finish();
}

fn parallel(c: &mut Criterion) {
    let registry = registry();
    let snapshot = registry.snapshot();
    let code = program(100);
    let mut group = c.benchmark_group("parallel");
    group.sample_size(20);
    for workers in [1, 2] {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        for programs in [1, 16] {
            group.bench_function(format!("workers/{workers}/programs/{programs}"), |b| {
                b.iter(|| {
                    let runs: Vec<_> = (0..programs)
                        .map(|at| {
                            let call = ToolCall::new(
                                format!("run{at}"),
                                "run_code",
                                json!({ "code": code }),
                            );
                            let snapshot = snapshot.clone();
                            runtime.spawn(
                                async move { snapshot.dispatch(call, Surface::Direct).await },
                            )
                        })
                        .collect();
                    let outcomes = runtime.block_on(futures_util::future::join_all(runs));
                    assert!(
                        outcomes.iter().all(|outcome| outcome
                            .as_ref()
                            .is_ok_and(|outcome| !outcome.is_error()))
                    );
                    black_box(outcomes)
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, nested_call, parallel);
criterion_main!(benches);
