//! A turn's calls run in the order their tools' effects need: for any turn, the outcome of
//! `run_calls` is the outcome of running the calls one by one in the model's order, whenever
//! the tools' declared effects are true; and a write races a read when a tool lies about them.
//! Retries: only for idempotent tools, only when the host asks.

#![allow(clippy::unused_async)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::{Value, json};
use toolprism::context::State;
use toolprism::effects::ResourceTemplate;
use toolprism::lower::Provider;
use toolprism::prelude::*;
use toolprism::tool::IntoToolDef as _;
use toolprism::turn::{AssistantTurn, Retry, RunOptions, read_response, run_calls};

/// The world the tools act on: numbered slots.
#[derive(Default)]
struct Slots(Mutex<BTreeMap<String, i64>>);

impl Slots {
    fn get(&self, key: &str) -> i64 {
        self.0.lock().unwrap().get(key).copied().unwrap_or(0)
    }

    fn set(&self, key: &str, value: i64) {
        self.0.lock().unwrap().insert(key.to_owned(), value);
    }

    fn keys(&self) -> Vec<String> {
        self.0.lock().unwrap().keys().cloned().collect()
    }
}

/// Gives way to the other calls `times` times: where a call that is not alone would be
/// overtaken.
async fn give_way(times: u8) {
    for _ in 0..times {
        tokio::task::yield_now().await;
    }
}

/// Reads a slot.
#[tool(read_only, resource = "slot:{key}")]
async fn get(#[arg] key: String, #[arg] spin: u8, State(slots): State<Slots>) -> i64 {
    give_way(spin).await;
    slots.get(&key)
}

/// Adds to a slot, reading it first: the old value.
#[tool(resource = "slot:{key}")]
async fn add(
    #[arg] key: String,
    #[arg] by: i64,
    #[arg] spin: u8,
    State(slots): State<Slots>,
) -> i64 {
    let old = slots.get(&key);
    give_way(spin).await;
    slots.set(&key, old + by);
    old
}

/// The sum of every slot, read one by one.
#[tool(read_only)]
async fn total(#[arg] spin: u8, State(slots): State<Slots>) -> i64 {
    let mut sum = 0;
    for key in slots.keys() {
        sum += slots.get(&key);
        give_way(spin).await;
    }
    sum
}

/// Doubles every slot, one by one.
#[tool]
async fn double_all(#[arg] spin: u8, State(slots): State<Slots>) -> usize {
    let keys = slots.keys();
    for key in &keys {
        let old = slots.get(key);
        give_way(spin).await;
        slots.set(key, old * 2);
    }
    keys.len()
}

fn registry(slots: Arc<Slots>) -> Registry {
    Registry::builder()
        .state_shared(slots)
        .tool(Get)
        .tool(Add)
        .tool(Total)
        .tool(DoubleAll)
        .build()
        .unwrap()
}

/// An OpenAI Chat turn making `calls` (name, arguments), in order.
fn turn_of(calls: &[(String, Value)]) -> AssistantTurn {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(at, (name, arguments))| {
            json!({"id": format!("call_{at}"), "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}}]});
    read_response(Provider::OpenAiChat, body.to_string().as_bytes()).unwrap()
}

fn a_call() -> impl Strategy<Value = (String, Value)> {
    let key = prop::sample::select(vec!["a", "b", "c"]);
    let spin = 0u8..4;
    prop_oneof![
        (key.clone(), spin.clone())
            .prop_map(|(key, spin)| ("get".to_owned(), json!({"key": key, "spin": spin}))),
        (key, -5i64..5, spin.clone()).prop_map(|(key, by, spin)| {
            (
                "add".to_owned(),
                json!({"key": key, "by": by, "spin": spin}),
            )
        }),
        spin.clone()
            .prop_map(|spin| ("total".to_owned(), json!({"spin": spin}))),
        spin.prop_map(|spin| ("double_all".to_owned(), json!({"spin": spin}))),
    ]
}

/// Each outcome's value (or error code), and the slots at the end.
type Observed = (Vec<Value>, BTreeMap<String, i64>);

fn observe(outcomes: &[ToolOutcome], slots: &Slots) -> Observed {
    let values = outcomes
        .iter()
        .map(|outcome| match outcome.value() {
            Some(value) => Value::clone(value),
            None => json!(outcome.error().and_then(|error| error.code())),
        })
        .collect();
    (values, slots.0.lock().unwrap().clone())
}

fn seeded() -> Arc<Slots> {
    let slots = Slots::default();
    for (key, value) in [("a", 1), ("b", 10), ("c", 100)] {
        slots.set(key, value);
    }
    Arc::new(slots)
}

async fn one_by_one(calls: &[(String, Value)]) -> Observed {
    let slots = seeded();
    let registry = registry(slots.clone());
    let mut outcomes = Vec::new();
    for (at, (name, arguments)) in calls.iter().enumerate() {
        let call = ToolCall::new(format!("call_{at}"), name.as_str(), arguments.clone());
        outcomes.push(registry.dispatch(call, Surface::Direct).await);
    }
    observe(&outcomes, &slots)
}

async fn scheduled(calls: &[(String, Value)], max_concurrent: usize) -> Observed {
    let slots = seeded();
    let registry = registry(slots.clone());
    let options = RunOptions::default().max_concurrent(max_concurrent);
    let outcomes = run_calls(&registry.snapshot(), &turn_of(calls), &options)
        .await
        .unwrap();
    observe(&outcomes, &slots)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_turn_runs_as_if_one_by_one_in_order(
        calls in prop::collection::vec(a_call(), 0..24),
        max_concurrent in 1usize..10,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let expected = runtime.block_on(one_by_one(&calls));
        let got = runtime.block_on(scheduled(&calls, max_concurrent));
        prop_assert_eq!(got, expected);
    }
}

/// Adds to a slot, and says (falsely) that it changes nothing.
#[tool(read_only)]
async fn add_claiming_read_only(
    #[arg] key: String,
    #[arg] by: i64,
    #[arg] spin: u8,
    State(slots): State<Slots>,
) -> i64 {
    let old = slots.get(&key);
    give_way(spin).await;
    slots.set(&key, old + by);
    old
}

#[tokio::test]
async fn a_write_and_a_read_of_the_same_slot_race_only_when_the_tool_lies() {
    let calls = |adder: &str| {
        vec![
            (adder.to_owned(), json!({"key": "a", "by": 5, "spin": 3})),
            ("get".to_owned(), json!({"key": "a", "spin": 0})),
        ]
    };
    let truthful = scheduled(&calls("add"), 8).await;
    assert_eq!(
        truthful.0,
        vec![json!(1), json!(6)],
        "the read waits for the write"
    );

    let slots = seeded();
    let lying = Registry::builder()
        .state_shared(slots.clone())
        .tool(Get)
        .tool(AddClaimingReadOnly)
        .build()
        .unwrap();
    let outcomes = run_calls(
        &lying.snapshot(),
        &turn_of(&calls("add_claiming_read_only")),
        &RunOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        observe(&outcomes, &slots).0,
        vec![json!(1), json!(1)],
        "a tool that claims to read overlaps the read, which sees the old value"
    );
}

#[tokio::test]
async fn writes_to_different_resources_overlap_and_a_barrier_holds_everything() {
    // Two adds on different slots, each giving way: they overlap (both read before either
    // writes would be a race on one slot, but they are on two).
    let calls = vec![
        ("add".to_owned(), json!({"key": "a", "by": 1, "spin": 2})),
        ("add".to_owned(), json!({"key": "b", "by": 1, "spin": 2})),
        ("double_all".to_owned(), json!({"spin": 1})),
        ("total".to_owned(), json!({"spin": 1})),
    ];
    let (values, slots) = scheduled(&calls, 8).await;
    assert_eq!(
        values,
        vec![json!(1), json!(10), json!(3), json!(4 + 22 + 200)]
    );
    assert_eq!(slots["a"], 4);
}

/// Counts its calls; fails with a timeout on the first two.
#[derive(Default)]
struct Flaky(AtomicUsize);

/// Looks a thing up, flakily.
#[tool(read_only, idempotent)]
async fn lookup(State(flaky): State<Flaky>) -> Result<usize, ToolError> {
    flaky_attempt(&flaky)
}

/// Notifies someone, flakily.
#[tool]
async fn notify(State(flaky): State<Flaky>) -> Result<usize, ToolError> {
    flaky_attempt(&flaky)
}

fn flaky_attempt(flaky: &Flaky) -> Result<usize, ToolError> {
    let attempt = flaky.0.fetch_add(1, Ordering::SeqCst) + 1;
    if attempt <= 2 {
        Err(ToolError::new("the upstream timed out").with_code("TOOL_TIMEOUT"))
    } else {
        Ok(attempt)
    }
}

#[tokio::test]
async fn only_idempotent_calls_are_retried_and_only_when_the_host_asks() {
    let run = |tool: &'static str, retry: Option<Retry>| async move {
        let flaky = Arc::new(Flaky::default());
        let registry = Registry::builder()
            .state_shared(flaky.clone())
            .tool(Lookup)
            .tool(Notify)
            .build()
            .unwrap();
        let mut options = RunOptions::default();
        if let Some(retry) = retry {
            options = options.retry(retry);
        }
        let outcomes = run_calls(
            &registry.snapshot(),
            &turn_of(&[(tool.to_owned(), json!({}))]),
            &options,
        )
        .await
        .unwrap();
        (
            outcomes[0].value().map(|value| Value::clone(value)),
            flaky.0.load(Ordering::SeqCst),
        )
    };
    let transient = || Retry::new(3).when(|error| error.code() == Some("TOOL_TIMEOUT"));
    assert_eq!(run("lookup", Some(transient())).await, (Some(json!(3)), 3));
    assert_eq!(
        run("lookup", None).await,
        (None, 1),
        "not unless the host asks"
    );
    assert_eq!(
        run("notify", Some(transient())).await,
        (None, 1),
        "not a tool that is not idempotent"
    );
    assert_eq!(
        run("lookup", Some(Retry::new(1).when(|_| true))).await,
        (None, 2),
        "at most the attempts asked"
    );
}

#[test]
fn a_resource_must_name_arguments_the_tool_has() {
    /// Reads.
    #[tool(read_only)]
    fn peek(#[arg] path: String) -> String {
        path
    }
    let template = ResourceTemplate::parse("file:{pth}").unwrap();
    let error = Registry::builder()
        .tool(Peek.into_tool_def().with_resource(template))
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("names `pth`, which is not one of its arguments"),
        "{error}"
    );
    for bad in ["file:{path", "file:path}", "file", "{pa th}", "{}"] {
        assert!(ResourceTemplate::parse(bad).is_err(), "{bad}");
    }
    let braces = ResourceTemplate::parse("{{x}}:{path}").unwrap();
    assert_eq!(
        braces.resource(&json!({"path": 7})).as_deref(),
        Some("{x}:7")
    );
    assert_eq!(
        braces.resource(&json!({})),
        None,
        "a missing argument touches everything"
    );
}
