//! A call the model got wrong: its error names the failing path, what was expected there and
//! what was given; the host's repair hook mends it, within its attempts, and the log keeps the
//! original beside each repair. Shown on a call recorded from a real model
//! (`../shared/wire-transcripts-2`, read in place) whose argument misses its enum.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolprism::lower::Provider;
use toolprism::prelude::*;
use toolprism::session::{LogOptions, SessionEvent, SessionLog};
use toolprism::turn::{RepairRequest, RunOptions, read_response, run_calls};

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SpaceType {
    Entryway,
    LivingRoom,
    Garage,
}

#[derive(Deserialize, JsonSchema)]
struct Space {
    space_type: SpaceType,
    space_name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Level {
    level_type: String,
    level_name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Floor {
    spaces: Vec<Space>,
    level: Level,
}

/// Inserts a level of a building, with its spaces.
#[tool]
fn insert_level_with_spaces(floor: Floor) -> usize {
    let named = floor
        .spaces
        .iter()
        .filter(|space| {
            !space.space_name.is_empty()
                && matches!(
                    space.space_type,
                    SpaceType::Entryway | SpaceType::LivingRoom | SpaceType::Garage
                )
        })
        .count();
    named + usize::from(!floor.level.level_name.is_empty() && !floor.level.level_type.is_empty())
}

/// The recorded turn: Gemini (through `OpenRouter`) calls the tool with `"living-room"`, a
/// space type the schema does not have.
fn recorded_turn() -> toolprism::turn::AssistantTurn {
    let path = toolprism_tests::wire_transcripts()
        .with_file_name("wire-transcripts-2")
        .join("openai-chat__nonstream__openrouter-gemini-nested-array-args.json");
    let body = std::fs::read(path).unwrap();
    read_response(Provider::OpenAiChat, &body).unwrap()
}

fn registry() -> Registry {
    Registry::builder()
        .tool(InsertLevelWithSpaces)
        .build()
        .unwrap()
}

/// Mends what models get wrong about enums: `-` for `_`.
fn underscores(arguments: &Value) -> Value {
    match arguments {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), underscores(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(underscores).collect()),
        Value::String(text) => Value::String(text.replace('-', "_")),
        other => other.clone(),
    }
}

#[tokio::test]
async fn the_error_names_the_path_what_was_expected_and_what_was_given() {
    let outcomes = run_calls(
        &registry().snapshot(),
        &recorded_turn(),
        &RunOptions::default(),
    )
    .await
    .unwrap();
    let error = outcomes[0].error().unwrap();
    assert_eq!(error.code(), Some("INVALID_TOOL_INPUT"));
    assert!(
        error.message.contains("at `/spaces/1/space_type`"),
        "{}",
        error.message
    );
    assert!(
        error
            .message
            .contains(r#"expected: {"enum":["entryway","living_room","garage"]"#)
            || error
                .message
                .contains(r#""enum":["entryway","living_room","garage"]"#),
        "{}",
        error.message
    );
    assert!(
        error.message.contains(r#"given: "living-room""#),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_repair_hook_mends_the_recorded_call_and_the_log_keeps_both() {
    let dir = toolprism_tests::TempDir::new("repair-log");
    let path = dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    let asked = Arc::new(AtomicU32::new(0));
    let seen = asked.clone();
    let hook = move |request: RepairRequest| {
        seen.fetch_add(1, Ordering::SeqCst);
        let toolprism::turn::Arguments::Json(arguments) = &request.arguments else {
            panic!("JSON arguments")
        };
        assert!(request.error.message.contains("/spaces/1/space_type"));
        let mended = underscores(arguments);
        async move { Some(mended) }
    };
    let options = RunOptions::default().log(log).repair(hook, 2);
    let outcomes = run_calls(&registry().snapshot(), &recorded_turn(), &options)
        .await
        .unwrap();
    assert_eq!(outcomes[0].value().unwrap(), &json!(4));
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    let events = SessionLog::read(&path).unwrap().events;
    let calls: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            SessionEvent::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "the original, then the repair");
    assert_eq!(calls[0].id, calls[1].id);
    assert_eq!(calls[0].repair, None);
    assert_eq!(
        calls[0].args.as_ref().unwrap()["spaces"][1]["space_type"],
        "living-room"
    );
    assert_eq!(calls[1].repair, Some(1));
    assert_eq!(
        calls[1].args.as_ref().unwrap()["spaces"][1]["space_type"],
        "living_room"
    );
    let results: Vec<bool> = events
        .iter()
        .filter_map(|event| match event {
            SessionEvent::ToolResult(result) => Some(result.is_error),
            _ => None,
        })
        .collect();
    assert_eq!(results, vec![true, false]);
}

#[tokio::test]
async fn repair_is_bounded_in_attempts_and_a_hook_may_decline() {
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    // Gives arguments that are still wrong, every time.
    let stubborn = move |request: RepairRequest| {
        counted.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.attempt, counted.load(Ordering::SeqCst));
        async { Some(json!({"spaces": "none"})) }
    };
    let options = RunOptions::default().repair(stubborn, 3);
    let outcomes = run_calls(&registry().snapshot(), &recorded_turn(), &options)
        .await
        .unwrap();
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    let error = outcomes[0].error().unwrap();
    assert!(
        error.message.contains("given: \"none\""),
        "the last attempt's error: {}",
        error.message
    );

    let declines = |_: RepairRequest| async { None };
    let options = RunOptions::default().repair(declines, 3);
    let outcomes = run_calls(&registry().snapshot(), &recorded_turn(), &options)
        .await
        .unwrap();
    assert!(outcomes[0].error().unwrap().message.contains("living-room"));
}
