//! Wrappers, pre- and post-execute policies, snapshots: what keeps the canonical value
//! trustworthy when other code stands between the body and the result.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::error::codes;
use toolprism::pipeline::{
    Approval, ApprovalRequest, ExecuteCall, Executed, Next, PostDecision, PreDecision,
};
use toolprism::prelude::*;
use toolprism::{Snapshot, ToolFailure};
use toolprism_tests::{code, text};

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("call_1", name, args)
}

/// Counts how often a tool's body and its render ran.
#[derive(Clone, Default)]
struct Counts {
    bodies: Arc<AtomicUsize>,
    renders: Arc<AtomicUsize>,
}

impl Counts {
    fn bodies(&self) -> usize {
        self.bodies.load(Ordering::SeqCst)
    }
    fn renders(&self) -> usize {
        self.renders.load(Ordering::SeqCst)
    }
}

/// `profile`: `{"name": "<who>", "secret": "s3cret-<who>"}`, rendered as "profile of <name>",
/// with metadata naming the card.
fn profile(counts: &Counts) -> ToolDef {
    named_profile("profile", counts)
}

fn named_profile(name: &str, counts: &Counts) -> ToolDef {
    let bodies = counts.bodies.clone();
    let renders = counts.renders.clone();
    ToolDef::builder(name)
        .description("Looks up a profile.")
        .input_schema(json!({
            "type": "object",
            "properties": {"who": {"type": "string"}},
            "required": ["who"]
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "secret": {"type": "string"}},
            "required": ["name", "secret"],
            "additionalProperties": false
        }))
        .handler(move |args: Value, _cx: ToolContext| {
            bodies.fetch_add(1, Ordering::SeqCst);
            async move {
                let who = args["who"].as_str().unwrap_or_default().to_owned();
                Ok::<_, ToolError>(json!({"name": who, "secret": format!("s3cret-{who}")}))
            }
        })
        .render(move |_args: &Value, value: &Value| {
            renders.fetch_add(1, Ordering::SeqCst);
            format!("profile of {}", value["name"].as_str().unwrap_or("?"))
        })
        .presentation_meta(|_args: &Value, value: &Value| json!({"title": value["name"]}))
        .build()
}

// ---------------------------------------------------------------- wrappers

#[tokio::test]
async fn a_wrapper_success_is_normalized_under_the_tool() {
    let counts = Counts::default();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .wrap(|_call: ExecuteCall, _next: Next| async {
            Executed::Value(json!({"name": "from wrapper", "secret": "x"}))
        })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(counts.bodies(), 0);
    assert_eq!(outcome.value().unwrap()["name"], "from wrapper");
    // The model's text and the card are the tool's projections of the wrapper's value.
    assert_eq!(text(&outcome), "profile of from wrapper");
    assert_eq!(outcome.meta().unwrap()["title"], "from wrapper");
    assert_eq!(counts.renders(), 1);
}

#[tokio::test]
async fn an_invalid_wrapper_value_fails() {
    let counts = Counts::default();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .wrap(|_call: ExecuteCall, _next: Next| async { Executed::Value(json!({"name": 42})) })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(outcome.value().is_none());
    assert_eq!(counts.renders(), 0);
}

#[tokio::test]
async fn a_result_cached_from_another_call_is_normalized_again() {
    let counts = Counts::default();
    let other = Counts::default();
    let cache: Arc<Mutex<Option<ToolOutcome>>> = Arc::default();
    let cached = cache.clone();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .tool(named_profile("profile_copy", &other))
        .tool(
            ToolDef::builder("count")
                .description("Counts.")
                .handler(|_: Value, _: ToolContext| async { Ok::<_, ToolError>(7) }),
        )
        .wrap(move |_call: ExecuteCall, next: Next| {
            let cached = cached.clone();
            async move {
                let hit = cached.lock().unwrap().clone();
                if let Some(outcome) = hit {
                    return Executed::Outcome(outcome);
                }
                let outcome = next.run().await;
                *cached.lock().unwrap() = Some(outcome.clone());
                Executed::Outcome(outcome)
            }
        })
        .build()
        .unwrap();

    let first = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!((counts.bodies(), counts.renders()), (1, 1));

    // Same tool, another call: the cached outcome comes from another dispatch, so its value is
    // validated and rendered again rather than trusted.
    let second = registry
        .dispatch(call("profile", json!({"who": "bob"})), Surface::Direct)
        .await;
    assert_eq!((counts.bodies(), counts.renders()), (1, 2));
    assert_eq!(second.value(), first.value());

    // Another tool with the same declaration renders it with its own render.
    let copy = registry
        .dispatch(call("profile_copy", json!({"who": "bob"})), Surface::Direct)
        .await;
    assert_eq!((other.bodies(), other.renders()), (0, 1));
    assert_eq!(text(&copy), "profile of ada");

    // A tool whose output schema the cached value breaks gets a failure, not the value.
    let count = registry
        .dispatch(call("count", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&count), Some(codes::INVALID_TOOL_OUTPUT));
}

#[tokio::test]
async fn a_pass_through_is_not_normalized_twice() {
    let counts = Counts::default();
    let pass = |_call: ExecuteCall, next: Next| async move { Executed::from(next.run().await) };
    let registry = Registry::builder()
        .tool(profile(&counts))
        .wrap(pass)
        .wrap(pass)
        .wrap(pass)
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert!(!outcome.is_error());
    assert_eq!((counts.bodies(), counts.renders()), (1, 1));
}

#[tokio::test]
async fn wrappers_run_in_registration_order_and_may_call_next_any_number_of_times() {
    let counts = Counts::default();
    let order: Arc<Mutex<Vec<String>>> = Arc::default();
    let layer = |label: &'static str, times: usize| {
        let order = order.clone();
        move |_call: ExecuteCall, next: Next| {
            let order = order.clone();
            async move {
                order.lock().unwrap().push(format!("{label} in"));
                let mut last = None;
                for _ in 0..times {
                    last = Some(next.run().await);
                }
                order.lock().unwrap().push(format!("{label} out"));
                match last {
                    Some(outcome) => Executed::from(outcome),
                    None => Executed::from(ToolError::new("skipped").with_code("SKIPPED")),
                }
            }
        }
    };
    let registry = Registry::builder()
        .tool(profile(&counts))
        .wrap(layer("outer", 1))
        .wrap(layer("retry", 2))
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert!(!outcome.is_error());
    assert_eq!(
        counts.bodies(),
        2,
        "the retrying wrapper ran the body twice"
    );
    assert_eq!(
        *order.lock().unwrap(),
        ["outer in", "retry in", "retry out", "outer out"]
    );

    let skipping = Registry::builder()
        .tool(profile(&counts))
        .wrap(layer("skip", 0))
        .build()
        .unwrap();
    let outcome = skipping
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some("SKIPPED"));
    assert_eq!(
        counts.bodies(),
        2,
        "a wrapper that never calls next never runs the body"
    );
}

#[tokio::test]
async fn a_panicking_wrapper_is_contained() {
    let counts = Counts::default();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .wrap(|_call: ExecuteCall, _next: Next| async {
            panic!("wrapper exploded");
        })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::POLICY_FAILED));
    assert!(text(&outcome).contains("wrapper exploded"));
}

// ---------------------------------------------------------------- pre-execute

#[tokio::test]
async fn a_denied_call_never_runs_the_body() {
    let counts = Counts::default();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .pre_execute(|call: &ExecuteCall| {
            if call.args()["who"] == "root" {
                PreDecision::deny("profiles of root are private")
            } else {
                PreDecision::Allow
            }
        })
        .build()
        .unwrap();
    let denied = registry
        .dispatch(call("profile", json!({"who": "root"})), Surface::Direct)
        .await;
    assert_eq!(code(&denied), Some(codes::DENIED_BY_POLICY));
    assert!(text(&denied).contains("profiles of root are private"));
    assert_eq!(counts.bodies(), 0);
    let allowed = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert!(!allowed.is_error());
    assert_eq!(counts.bodies(), 1);
}

#[tokio::test]
async fn pre_execute_policies_judge_valid_arguments_only() {
    let counts = Counts::default();
    let consulted = Arc::new(AtomicUsize::new(0));
    let seen = consulted.clone();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .pre_execute(move |_call: &ExecuteCall| {
            seen.fetch_add(1, Ordering::SeqCst);
            PreDecision::Allow
        })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": 5})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
    assert_eq!(consulted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn ask_goes_to_the_approver() {
    let counts = Counts::default();
    let questions: Arc<Mutex<Vec<String>>> = Arc::default();
    let asked = questions.clone();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .pre_execute(|call: &ExecuteCall| {
            PreDecision::ask(format!("Look up {}?", call.args()["who"]))
        })
        .approver(move |request: ApprovalRequest| {
            asked.lock().unwrap().push(request.question.clone());
            async move {
                // An approver is async: a prompt, a button, a remote service.
                tokio::time::sleep(Duration::from_millis(1)).await;
                if request.call.args()["who"] == "ada" {
                    Approval::Approved
                } else {
                    Approval::Refused {
                        reason: Some("not today".into()),
                    }
                }
            }
        })
        .build()
        .unwrap();
    let approved = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert!(!approved.is_error());
    let refused = registry
        .dispatch(call("profile", json!({"who": "eve"})), Surface::Direct)
        .await;
    assert_eq!(code(&refused), Some(codes::REFUSED_BY_APPROVER));
    assert!(text(&refused).contains("not today"));
    assert_eq!(counts.bodies(), 1);
    assert_eq!(
        *questions.lock().unwrap(),
        ["Look up \"ada\"?", "Look up \"eve\"?"]
    );

    // With no approver, asking is refusing.
    let unattended = Registry::builder()
        .tool(profile(&counts))
        .pre_execute(|_: &ExecuteCall| PreDecision::ask("May I?"))
        .build()
        .unwrap();
    let outcome = unattended
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::REFUSED_BY_APPROVER));
    assert_eq!(counts.bodies(), 1);
}

// ---------------------------------------------------------------- post-execute

fn registry_with_post(
    counts: &Counts,
    policy: impl Fn(&ExecuteCall, &ToolOutcome) -> PostDecision + Send + Sync + 'static,
) -> Registry {
    Registry::builder()
        .tool(profile(counts))
        .post_execute(policy)
        .build()
        .unwrap()
}

#[tokio::test]
async fn keep_leaves_the_outcome() {
    let counts = Counts::default();
    let plain = Registry::builder().tool(profile(&counts)).build().unwrap();
    let kept = registry_with_post(&counts, |_, _| PostDecision::keep());
    let args = json!({"who": "ada"});
    let expected = plain
        .dispatch(call("profile", args.clone()), Surface::Direct)
        .await;
    let outcome = kept.dispatch(call("profile", args), Surface::Direct).await;
    assert_eq!(outcome, expected);
}

#[tokio::test]
async fn replacing_content_keeps_value_and_meta_and_hides_nothing_from_programs() {
    let counts = Counts::default();
    let registry = registry_with_post(&counts, |_, _| {
        PostDecision::replace_content(vec![ContentBlock::text("[profile hidden]")])
    });
    let direct = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(text(&direct), "[profile hidden]");
    assert_eq!(direct.meta().unwrap()["title"], "ada");
    // Not a confidentiality mechanism: the value, which programs read, still has the secret.
    let nested = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Nested)
        .await;
    assert_eq!(text(&nested), "[profile hidden]");
    assert_eq!(nested.value().unwrap()["secret"], "s3cret-ada");
}

#[tokio::test]
async fn replacing_content_with_bytes_a_provider_would_refuse_withholds_the_result() {
    let counts = Counts::default();
    let registry = registry_with_post(&counts, |_, _| {
        PostDecision::replace_content(vec![
            ContentBlock::text("a badge:"),
            ContentBlock::image("data:image/png;base64,iVBORw==", "image/png"),
        ])
    });
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code(), Some(codes::POLICY_FAILED));
    assert!(
        error.message.contains("a policy replaced its content, and its content block 1 is an image whose data is not standard base64 with padding (at byte 4 of 30)"),
        "{}",
        error.message
    );
    assert!(outcome.value().is_none());
}

#[tokio::test]
async fn replacing_the_value_revalidates_and_reprojects() {
    let counts = Counts::default();
    let registry = registry_with_post(&counts, |_, outcome| match outcome.value() {
        Some(value) => PostDecision::replace_value(json!({
            "name": value["name"].as_str().unwrap_or_default().to_uppercase(),
            "secret": "[redacted]",
        })),
        None => PostDecision::keep(),
    });
    for surface in [Surface::Direct, Surface::Nested] {
        let outcome = registry
            .dispatch(call("profile", json!({"who": "ada"})), surface)
            .await;
        assert_eq!(
            outcome.value().unwrap(),
            &json!({"name": "ADA", "secret": "[redacted]"})
        );
        assert_eq!(text(&outcome), "profile of ADA");
    }
    let direct = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(direct.meta().unwrap()["title"], "ADA");

    let invalid = registry_with_post(&counts, |_, _| PostDecision::replace_value(json!([1, 2])));
    let outcome = invalid
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(outcome.value().is_none());
}

#[tokio::test]
async fn block_leaves_no_value() {
    let counts = Counts::default();
    let registry = registry_with_post(&counts, |_, _| {
        PostDecision::block("This profile may not be shown.")
    });
    for surface in [Surface::Direct, Surface::Nested] {
        let outcome = registry
            .dispatch(call("profile", json!({"who": "ada"})), surface)
            .await;
        assert_eq!(code(&outcome), Some(codes::BLOCKED_BY_POLICY));
        assert!(outcome.value().is_none());
        assert_eq!(text(&outcome), "This profile may not be shown.");
        let serialized = serde_json::to_string(&outcome).unwrap();
        assert!(!serialized.contains("s3cret"), "{serialized}");
    }
}

#[tokio::test]
async fn several_policies_run_in_order_each_on_the_previous_result() {
    let counts = Counts::default();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .post_execute(|_: &ExecuteCall, _: &ToolOutcome| {
            PostDecision::replace_value(json!({"name": "first", "secret": "-"}))
                .with_context("first ran")
        })
        .post_execute(|_: &ExecuteCall, outcome: &ToolOutcome| {
            // Sees the first policy's value, and the content projected from it.
            assert_eq!(outcome.value().unwrap()["name"], "first");
            assert_eq!(text(outcome), "profile of first");
            PostDecision::replace_content(vec![ContentBlock::text("second")])
                .with_context("second ran")
        })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(outcome.value().unwrap()["name"], "first");
    assert_eq!(text(&outcome), "second");
    let contexts: Vec<&str> = outcome
        .additional_contexts()
        .iter()
        .map(|context| context.text.as_str())
        .collect();
    assert_eq!(contexts, ["first ran", "second ran"]);
}

#[tokio::test]
async fn a_panicking_post_policy_fails_closed() {
    let counts = Counts::default();
    let registry = registry_with_post(&counts, |_, _| panic!("policy exploded"));
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Nested)
        .await;
    assert_eq!(code(&outcome), Some(codes::POLICY_FAILED));
    assert!(outcome.value().is_none());
}

#[tokio::test]
async fn replacing_the_value_of_a_failure_recovers_it() {
    let counts = Counts::default();
    let registry = Registry::builder()
        .tool(profile(&counts))
        .wrap(|_: ExecuteCall, _: Next| async { Executed::from(ToolError::new("backend down")) })
        .post_execute(|_: &ExecuteCall, outcome: &ToolOutcome| {
            if outcome.is_error() {
                PostDecision::replace_value(json!({"name": "fallback", "secret": ""}))
            } else {
                PostDecision::keep()
            }
        })
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(text(&outcome), "profile of fallback");
}

// ---------------------------------------------------------------- snapshots

/// `version`: returns the version it was built with.
fn versioned(name: &str, version: u64) -> ToolDef {
    ToolDef::builder(name)
        .description("Returns its version.")
        .handler(move |_: Value, _: ToolContext| async move { Ok::<_, ToolError>(version) })
        .build()
}

#[tokio::test]
async fn a_snapshot_runs_what_it_advertised_whatever_happens_to_the_registry() {
    let registry = Registry::builder()
        .tool(versioned("tool", 1))
        .build()
        .unwrap();
    let before = registry.snapshot();

    assert!(registry.remove("tool"));
    registry.register(versioned("tool", 2)).unwrap();
    registry.register(versioned("added", 3)).unwrap();
    assert!(!registry.remove("never_registered"));

    let old = before
        .dispatch(call("tool", json!({})), Surface::Direct)
        .await;
    assert_eq!(old.value().unwrap(), &json!(1));
    let unseen = before
        .dispatch(call("added", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&unseen), Some(codes::UNKNOWN_TOOL));
    assert_eq!(before.definitions().len(), 1);

    let now = registry.snapshot();
    let new = now.dispatch(call("tool", json!({})), Surface::Direct).await;
    assert_eq!(new.value().unwrap(), &json!(2));
    assert_eq!(now.definitions().len(), 2);

    registry.remove("added");
    let removed = registry
        .dispatch(call("added", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&removed), Some(codes::UNKNOWN_TOOL));
    assert!(
        registry.register(versioned("tool", 9)).is_err(),
        "duplicate names stay refused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn snapshots_are_isolated_under_concurrent_registration() {
    let registry = Registry::builder()
        .tool(versioned("base", 0))
        .build()
        .unwrap();
    let writer_done = Arc::new(AtomicBool::new(false));
    let writer = {
        let registry = registry.clone();
        let writer_done = writer_done.clone();
        tokio::spawn(async move {
            for version in 1..=200 {
                registry
                    .register(versioned(&format!("t{version}"), version))
                    .unwrap();
                if version % 3 == 0 {
                    assert!(registry.remove(&format!("t{}", version - 1)));
                }
                tokio::task::yield_now().await;
            }
            writer_done.store(true, Ordering::SeqCst);
        })
    };
    let readers: Vec<_> = (0..16)
        .map(|_| {
            let registry = registry.clone();
            let writer_done = writer_done.clone();
            tokio::spawn(async move {
                let (mut checked, mut most_seen) = (0, 0);
                // Keep reading until the writer is done, so reads and writes overlap.
                for round in 0.. {
                    if round >= 20 && writer_done.load(Ordering::SeqCst) {
                        break;
                    }
                    let snapshot: Snapshot = registry.snapshot();
                    let names: Vec<String> = snapshot
                        .definitions()
                        .map(|d| d.name().to_owned())
                        .collect();
                    most_seen = most_seen.max(names.len());
                    tokio::task::yield_now().await;
                    // Every tool the snapshot advertised runs through it, whatever the writer
                    // did meanwhile, and is the version it advertised.
                    for name in &names {
                        let outcome = snapshot
                            .dispatch(call(name, json!({})), Surface::Direct)
                            .await;
                        let expected = name.trim_start_matches(['t', 'b', 'a', 's', 'e']);
                        let expected: u64 = expected.parse().unwrap_or(0);
                        assert_eq!(outcome.value().unwrap(), &json!(expected), "{name}");
                        checked += 1;
                    }
                }
                (checked, most_seen)
            })
        })
        .collect();
    writer.await.unwrap();
    for reader in readers {
        let (checked, most_seen) = reader.await.unwrap();
        assert!(checked >= 20, "a reader checked only {checked} dispatches");
        assert!(
            most_seen > 100,
            "a reader never saw the writer's tools: {most_seen}"
        );
    }
    // 200 registered, 66 of them removed again, plus the base tool.
    assert_eq!(registry.snapshot().definitions().len(), 1 + 200 - 66);
}

#[tokio::test]
async fn a_refusing_snapshot_fails_every_call_alone() {
    let counts = Counts::default();
    let registry = Registry::builder().tool(profile(&counts)).build().unwrap();
    let final_step = registry.snapshot().refusing_calls("this is the final step");
    assert_eq!(
        final_step.definitions().len(),
        1,
        "the tools stay advertised"
    );
    let outcome = final_step
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::TOOLS_DISABLED));
    assert!(text(&outcome).contains("final step"));
    assert_eq!(counts.bodies(), 0);
    let fine = registry
        .dispatch(call("profile", json!({"who": "ada"})), Surface::Direct)
        .await;
    assert!(!fine.is_error());
}

// ---------------------------------------------------------------- cancellation

/// Sets a flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn cancellation_is_dropping_the_future() {
    let dropped = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let outcomes = Arc::new(AtomicUsize::new(0));
    let (flag, done, seen) = (dropped.clone(), finished.clone(), outcomes.clone());
    let slow = ToolDef::builder("slow")
        .description("Never finishes in time.")
        .handler(move |_: Value, _: ToolContext| {
            let done = done.clone();
            async move {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                done.store(true, Ordering::SeqCst);
                Ok::<_, ToolError>(())
            }
        })
        .build();
    let registry = Registry::builder()
        .tool(slow)
        .wrap(move |_: ExecuteCall, next: Next| {
            let guard = DropFlag(flag.clone());
            let seen = seen.clone();
            async move {
                let _guard = guard;
                let outcome = next.run().await;
                seen.fetch_add(1, Ordering::SeqCst);
                Executed::from(outcome)
            }
        })
        .post_execute({
            let outcomes = outcomes.clone();
            move |_: &ExecuteCall, _: &ToolOutcome| {
                outcomes.fetch_add(1, Ordering::SeqCst);
                PostDecision::keep()
            }
        })
        .build()
        .unwrap();
    let result = tokio::time::timeout(
        Duration::from_millis(20),
        registry.dispatch(call("slow", json!({})), Surface::Direct),
    )
    .await;
    assert!(result.is_err(), "the call timed out");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the wrapper observed the drop"
    );
    assert!(!finished.load(Ordering::SeqCst));
    assert_eq!(outcomes.load(Ordering::SeqCst), 0, "no outcome, no failure");
}

#[test]
fn failures_can_be_built_by_wrappers_but_carry_no_value() {
    let failure = ToolOutcome::Failure(ToolFailure::new(toolprism::error::FailureError {
        message: "rate limited".into(),
        info: None,
    }));
    assert!(failure.value().is_none());
    assert_eq!(failure.content(), [ContentBlock::text("rate limited")]);
}
