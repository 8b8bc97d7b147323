//! Asking for input from a body: the answerer a host gives a dispatch answers; without one the
//! call fails with its own code; every answer is checked against what was asked before the body
//! sees it.

use std::sync::Mutex;

use serde_json::{Value, json};
use toolprism::BoxFuture;
use toolprism::ask::{
    Answerer, AskError, Elicited, InputKind, InputRequest, MAX_KEY_BYTES, MAX_ROOTS,
    SamplingRequest,
};
use toolprism::error::codes;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;

/// Answers with what it was given, and keeps what it was asked.
struct Scripted {
    answer: Result<Value, AskError>,
    asked: Mutex<Vec<(String, Value)>>,
}

impl Scripted {
    fn new(answer: Result<Value, AskError>) -> Self {
        Self {
            answer,
            asked: Mutex::new(Vec::new()),
        }
    }
}

impl Answerer for Scripted {
    fn can_answer(&self, _kind: InputKind) -> bool {
        true
    }

    fn answer<'a>(
        &'a self,
        key: &'a str,
        request: &'a InputRequest,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        self.asked
            .lock()
            .unwrap()
            .push((key.to_owned(), request.to_json()));
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

/// A shipping address, as a form.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Address {
    /// The street and number.
    street: String,
    /// How many parcels.
    parcels: u32,
    /// A note for the driver.
    note: Option<String>,
}

/// Asks for an address and says what came back.
#[tool]
async fn ship(cx: &ToolContext) -> Result<String, ToolError> {
    Ok(match cx.elicit::<Address>("address", "Where to?").await? {
        Elicited::Accepted(address) => format!("{} × {}", address.parcels, address.street),
        Elicited::Declined => "declined".to_owned(),
        Elicited::Cancelled => "cancelled".to_owned(),
    })
}

/// A form that cannot be flat.
#[derive(Deserialize, JsonSchema)]
struct Parcel {
    #[expect(dead_code, reason = "only its schema matters")]
    inner: Address,
}

/// Asks for a form no client can show.
#[tool]
async fn nested(cx: &ToolContext) -> Result<String, ToolError> {
    cx.elicit::<Parcel>("nested", "Fill this in").await?;
    Ok("asked".to_owned())
}

/// Asks with a key of any length.
#[tool]
async fn keyed(#[arg] key: String, cx: &ToolContext) -> Result<String, ToolError> {
    cx.roots(&key).await?;
    Ok("asked".to_owned())
}

/// Asks the client's model.
#[tool]
async fn complete(cx: &ToolContext) -> Result<String, ToolError> {
    let sampled = cx
        .sample("reply", &SamplingRequest::user("Hello?").max_tokens(10))
        .await?;
    Ok(format!(
        "{}: {}",
        sampled.model,
        sampled.text.unwrap_or_default()
    ))
}

/// Counts the client's roots.
#[tool]
async fn count_roots(cx: &ToolContext) -> Result<usize, ToolError> {
    Ok(cx.roots("roots").await?.len())
}

fn registry() -> Registry {
    Registry::builder()
        .tool(Ship)
        .tool(Nested)
        .tool(Keyed)
        .tool(Complete)
        .tool(CountRoots)
        .build()
        .unwrap()
}

async fn run(registry: &Registry, tool: &str, args: Value, answerer: Scripted) -> ToolOutcome {
    registry
        .snapshot()
        .dispatch_with(
            ToolCall::new("c1", tool, args),
            Surface::Direct,
            DispatchOptions::default().answerer(answerer),
        )
        .await
}

fn code(outcome: &ToolOutcome) -> Option<&str> {
    outcome.error().and_then(|error| error.code())
}

#[tokio::test]
async fn an_accepted_form_is_checked_and_read_into_its_type() {
    let registry = registry();
    let answerer = Scripted::new(Ok(json!({
        "action": "accept",
        "content": {"street": "1 Rue de Rivoli", "parcels": 2},
    })));
    let outcome = run(&registry, "ship", json!({}), answerer).await;
    assert_eq!(outcome.value().unwrap(), &json!("2 × 1 Rue de Rivoli"));
}

#[tokio::test]
async fn the_form_asked_is_the_types_schema_made_flat() {
    let registry = registry();
    let answerer = std::sync::Arc::new(Scripted::new(Ok(json!({"action": "decline"}))));
    let outcome = registry
        .snapshot()
        .dispatch_with(
            ToolCall::new("c1", "ship", json!({})),
            Surface::Direct,
            DispatchOptions::default().shared_answerer(answerer.clone()),
        )
        .await;
    assert_eq!(outcome.value().unwrap(), &json!("declined"));
    let asked = answerer.asked.lock().unwrap();
    let (key, request) = &asked[0];
    assert_eq!(key, "address");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Where to?");
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    // The optional note is a plain string: a form leaves it out rather than sending null.
    assert_eq!(schema["properties"]["note"]["type"], "string");
    assert_eq!(schema["required"], json!(["street", "parcels"]));
    assert!(schema.get("$schema").is_none() && schema.get("$defs").is_none());
    // What MCP's form schemas do not carry is left out; a number's range stays.
    assert!(schema["properties"]["parcels"].get("format").is_none());
    assert_eq!(schema["properties"]["parcels"]["minimum"], 0);
}

#[tokio::test]
async fn content_that_breaks_the_forms_schema_never_reaches_the_body() {
    let registry = registry();
    let answerer = Scripted::new(Ok(json!({
        "action": "accept",
        "content": {"street": "1 Rue de Rivoli", "parcels": -3},
    })));
    let outcome = run(&registry, "ship", json!({}), answerer).await;
    assert_eq!(code(&outcome), Some(codes::INVALID_INPUT_ANSWER));
    let message = &outcome.error().unwrap().message;
    assert!(
        message.contains("`address`") && message.contains("parcels"),
        "{message}"
    );
}

#[tokio::test]
async fn an_answer_without_an_action_is_refused() {
    let registry = registry();
    let answerer = Scripted::new(Ok(json!(12345)));
    let outcome = run(&registry, "ship", json!({}), answerer).await;
    assert_eq!(code(&outcome), Some(codes::INVALID_INPUT_ANSWER));
}

#[tokio::test]
async fn a_declined_or_cancelled_form_is_said_so() {
    let registry = registry();
    for (action, said) in [("decline", "declined"), ("cancel", "cancelled")] {
        let answerer = Scripted::new(Ok(json!({ "action": action })));
        let outcome = run(&registry, "ship", json!({}), answerer).await;
        assert_eq!(outcome.value().unwrap(), &json!(said));
    }
}

#[tokio::test]
async fn without_an_answerer_asking_fails_with_its_own_code() {
    let registry = registry();
    let outcome = registry
        .dispatch(ToolCall::new("c1", "ship", json!({})), Surface::Direct)
        .await;
    assert_eq!(code(&outcome), Some(codes::INPUT_UNAVAILABLE));
    let message = &outcome.error().unwrap().message;
    assert!(message.contains("elicitation/create"), "{message}");
}

#[tokio::test]
async fn an_answerer_that_cannot_answer_a_kind_makes_it_unavailable() {
    let registry = registry();
    let answerer = Scripted::new(Err(AskError::Unavailable("no terminal".into())));
    let outcome = run(&registry, "ship", json!({}), answerer).await;
    assert_eq!(code(&outcome), Some(codes::INPUT_UNAVAILABLE));
    assert!(outcome.error().unwrap().message.contains("no terminal"));
}

#[tokio::test]
async fn a_form_that_cannot_be_flat_is_refused_before_anyone_is_asked() {
    let registry = registry();
    let answerer = std::sync::Arc::new(Scripted::new(Ok(json!({"action": "accept"}))));
    let outcome = registry
        .snapshot()
        .dispatch_with(
            ToolCall::new("c1", "nested", json!({})),
            Surface::Direct,
            DispatchOptions::default().shared_answerer(answerer.clone()),
        )
        .await;
    let message = &outcome.error().expect("refused").message;
    assert!(message.contains("inner"), "{message}");
    assert!(answerer.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_key_is_one_to_64_printable_characters() {
    let registry = registry();
    let roots = || Scripted::new(Ok(json!({"roots": []})));
    let longest = "k".repeat(MAX_KEY_BYTES);
    let outcome = run(&registry, "keyed", json!({ "key": longest }), roots()).await;
    assert_eq!(outcome.value().unwrap(), &json!("asked"));
    for bad in ["k".repeat(MAX_KEY_BYTES + 1), String::new(), "a key".into()] {
        let outcome = run(&registry, "keyed", json!({ "key": bad }), roots()).await;
        assert!(outcome.error().unwrap().message.contains("key"), "{bad:?}");
    }
}

#[tokio::test]
async fn a_completion_is_read_and_one_without_a_model_refused() {
    let registry = registry();
    let answer = json!({
        "role": "assistant",
        "content": {"type": "text", "text": "Hi."},
        "model": "test-model",
        "stopReason": "endTurn",
    });
    let outcome = run(
        &registry,
        "complete",
        json!({}),
        Scripted::new(Ok(answer.clone())),
    )
    .await;
    assert_eq!(outcome.value().unwrap(), &json!("test-model: Hi."));
    let mut anonymous = answer;
    anonymous.as_object_mut().unwrap().remove("model");
    let outcome = run(
        &registry,
        "complete",
        json!({}),
        Scripted::new(Ok(anonymous)),
    )
    .await;
    assert_eq!(code(&outcome), Some(codes::INVALID_INPUT_ANSWER));
}

#[tokio::test]
async fn roots_are_bounded() {
    let registry = registry();
    let roots = |n: usize| {
        let listed: Vec<Value> = (0..n)
            .map(|i| json!({"uri": format!("file:///r{i}")}))
            .collect();
        Scripted::new(Ok(json!({ "roots": listed })))
    };
    let outcome = run(&registry, "count_roots", json!({}), roots(MAX_ROOTS)).await;
    assert_eq!(outcome.value().unwrap(), &json!(MAX_ROOTS));
    let outcome = run(&registry, "count_roots", json!({}), roots(MAX_ROOTS + 1)).await;
    assert_eq!(code(&outcome), Some(codes::INVALID_INPUT_ANSWER));
}

#[tokio::test]
async fn an_answer_nested_past_the_depth_limit_is_refused() {
    let registry = registry();
    let mut deep = json!("bottom");
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let answerer = Scripted::new(Ok(json!({"action": "accept", "content": {"street": deep}})));
    let outcome = run(&registry, "ship", json!({}), answerer).await;
    assert_eq!(code(&outcome), Some(codes::INVALID_INPUT_ANSWER));
}

#[test]
fn a_program_s_calls_ask_the_answerer_the_host_gave_its_run() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let registry = registry();
        toolprism_codemode::CodeMode::new()
            .register(&registry)
            .unwrap();
        let answerer = Scripted::new(Ok(json!({
            "action": "accept",
            "content": {"street": "2 Quai Branly", "parcels": 1},
        })));
        let program = "return await tools.ship({});";
        let outcome = run(&registry, "run_code", json!({ "code": program }), answerer).await;
        assert_eq!(
            outcome.value().unwrap()["result"],
            json!("1 × 2 Quai Branly")
        );
        // Without one, the program's call fails with the code a direct call would.
        let alone = registry
            .dispatch(
                ToolCall::new("c2", "run_code", json!({ "code": program })),
                Surface::Direct,
            )
            .await;
        let message = format!("{:?}", alone.error());
        assert!(message.contains("INPUT_UNAVAILABLE"), "{message}");
    });
}
