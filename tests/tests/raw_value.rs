//! `serde_json::value::RawValue` in a tool's arguments and value, as a crate that turns on
//! `serde_json`'s `raw_value` feature may write them: read and snapshotted as the JSON they hold,
//! never as `serde_json`'s private wrapper around it, and never rounded.

use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism_tests::{code, text};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Passed {
    label: String,
    payload: Box<RawValue>,
}

/// Passes JSON through untouched.
#[tool(render = show)]
fn pass(args: Passed) -> Passed {
    args
}

/// `render` reads the value back from its JSON, raw text included.
fn show(_args: &Passed, value: &Passed) -> String {
    format!("{}: {}", value.label, value.payload.get())
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Made {
    #[schemars(with = "u32")]
    payload: Box<RawValue>,
}

/// Returns the JSON text it is given, as raw JSON.
#[tool]
fn make(#[arg] text: String) -> Result<Made, ToolError> {
    let payload = RawValue::from_string(text).map_err(|error| ToolError::new(error.to_string()))?;
    Ok(Made { payload })
}

async fn call(tool: &str, args: Value) -> ToolOutcome {
    let registry = Registry::builder().tool(Pass).tool(Make).build().unwrap();
    registry
        .dispatch(ToolCall::new("c1", tool, args), Surface::Direct)
        .await
}

fn value(outcome: &ToolOutcome) -> Option<&Value> {
    outcome.value().map(|value| &**value)
}

fn problem(outcome: &ToolOutcome) -> String {
    outcome.error().map(ToString::to_string).unwrap_or_default()
}

#[tokio::test]
async fn a_raw_value_is_read_snapshotted_and_rendered_as_the_json_it_holds() {
    let payload = json!({"a": [1, -2, 2.5, "three", null], "b": {"c": true}});
    let args = json!({"label": "x", "payload": payload});
    let outcome = call("pass", args.clone()).await;
    assert_eq!(value(&outcome), Some(&args), "{}", problem(&outcome));
    assert_eq!(text(&outcome), format!("x: {payload}"));
}

#[tokio::test]
async fn digits_quotes_and_escapes_inside_strings_are_text_not_numbers() {
    let payload = json!({
        "s": "123456789012345678901234567890 \"q\\\" 1e999",
        "n": i64::MIN,
        "u": u64::MAX,
        "f": 1.5e300,
    });
    let args = json!({"label": "x", "payload": payload});
    let outcome = call("pass", args.clone()).await;
    assert_eq!(value(&outcome), Some(&args), "{}", problem(&outcome));
}

#[tokio::test]
async fn a_raw_value_the_schema_refuses_is_judged_by_the_validator() {
    let outcome = call("make", json!({"text": r#""forty-two""#})).await;
    assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
    assert!(
        problem(&outcome).contains("/payload"),
        "{}",
        problem(&outcome)
    );
}

#[tokio::test]
async fn a_raw_value_the_schema_accepts_is_published_as_parsed() {
    let outcome = call("make", json!({"text": " 42 "})).await;
    let expected = json!({"payload": 42});
    assert_eq!(value(&outcome), Some(&expected), "{}", problem(&outcome));
}

#[tokio::test]
async fn a_raw_integer_beyond_64_bits_is_refused_not_rounded() {
    let wide = [
        "123456789012345678901234567890",
        "[1, -99999999999999999999]",
    ];
    for raw in wide {
        let outcome = call("make", json!({"text": raw})).await;
        assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT), "{raw}");
        let problem = problem(&outcome);
        assert!(problem.contains("outside what JSON numbers"), "{problem}");
        assert!(problem.contains("/payload"), "{problem}");
    }
}

#[tokio::test]
async fn a_raw_value_nesting_past_the_limit_is_refused() {
    // Past the limit by one level, and past `serde_json`'s own parser's.
    for levels in [64, 10_000] {
        let deep = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        let outcome = call("make", json!({"text": deep})).await;
        assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
        let problem = problem(&outcome);
        assert!(problem.contains("deeper than 64"), "{levels}: {problem}");
    }
}
