//! Many tasks dispatching on a multi-threaded runtime while tools are registered, removed and
//! swapped: every outcome belongs to its own call, and to the version of the tool the snapshot
//! it was dispatched through advertised.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolprism::Snapshot;
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism_tests::code;

/// Tools `t0`…`t{TOOLS-1}` exist in some version at any time.
const TOOLS: usize = 4;
/// Dispatching tasks, and calls each makes.
const TASKS: usize = 8;
const CALLS_PER_TASK: usize = 400;
/// Swaps the registrar makes.
const SWAPS: usize = 600;

/// Version `generation` of tool `t{index}`: echoes the call's nonce with its own generation.
fn version(index: usize, generation: usize) -> ToolDef {
    ToolDef::builder(format!("t{index}"))
        .description(format!("generation {generation}"))
        .input_schema(json!({
            "type": "object",
            "properties": {"nonce": {"type": "integer"}},
            "required": ["nonce"],
            "additionalProperties": false
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"nonce": {"type": "integer"}, "generation": {"const": generation}},
            "required": ["nonce", "generation"]
        }))
        .handler(move |args: Value, cx: ToolContext| async move {
            // Yield once, so that calls interleave with registrations mid-flight.
            tokio::task::yield_now().await;
            Ok::<_, ToolError>(json!({
                "nonce": args["nonce"],
                "generation": generation,
                "call": cx.call_id(),
            }))
        })
        .build()
}

/// The generation a snapshot advertises for a tool, if it has the tool.
fn advertised(snapshot: &Snapshot, name: &str) -> Option<usize> {
    let description = snapshot.definition(name)?.description();
    description.strip_prefix("generation ")?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outcomes_match_their_calls_while_tools_change() {
    let builder = (0..TOOLS).fold(Registry::builder(), |builder, index| {
        builder.tool(version(index, 0))
    });
    let registry = builder.build().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let checked = Arc::new(AtomicUsize::new(0));

    let registrar = {
        let registry = registry.clone();
        let done = done.clone();
        tokio::spawn(async move {
            for swap in 1..=SWAPS {
                let index = swap % TOOLS;
                registry.remove(&format!("t{index}"));
                tokio::task::yield_now().await;
                registry.register(version(index, swap)).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        })
    };

    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let registry = registry.clone();
            let checked = checked.clone();
            tokio::spawn(async move {
                for call in 0..CALLS_PER_TASK {
                    let nonce = task * CALLS_PER_TASK + call;
                    let name = format!("t{}", nonce % TOOLS);
                    let id = format!("call-{nonce}");
                    let snapshot = registry.snapshot();
                    let generation = advertised(&snapshot, &name);
                    let outcome = snapshot
                        .dispatch(
                            ToolCall::new(id.as_str(), name.as_str(), json!({"nonce": nonce})),
                            Surface::Direct,
                        )
                        .await;
                    match generation {
                        // The snapshot advertised the tool: the version it advertised answers.
                        Some(generation) => {
                            let value = outcome.value().expect("an advertised tool succeeds");
                            assert_eq!(value["nonce"], json!(nonce));
                            assert_eq!(value["call"], json!(id));
                            assert_eq!(value["generation"], json!(generation));
                        }
                        // Caught between a removal and its re-registration.
                        None => assert_eq!(code(&outcome), Some(codes::UNKNOWN_TOOL)),
                    }
                    checked.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    for task in tasks {
        task.await.expect("a dispatching task panicked");
    }
    registrar.await.expect("the registrar panicked");
    assert!(done.load(Ordering::SeqCst));
    assert_eq!(checked.load(Ordering::Relaxed), TASKS * CALLS_PER_TASK);
    // Every tool ended in a version of its own.
    let snapshot = registry.snapshot();
    for index in 0..TOOLS {
        assert!(advertised(&snapshot, &format!("t{index}")).is_some());
    }
}
