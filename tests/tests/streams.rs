//! Every recorded stream of both transcript sets read as real servers send it, and cut at every
//! byte: a cut stream never offers a call to run that the whole stream does not, and nothing
//! panics. The recordings are read in place (`../shared/wire-transcripts*`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolprism::lower::Provider;
use toolprism::turn::{Arguments, AssistantTurn, StopReason, StreamReader};
use toolprism_tests::wire_transcripts;

/// The recorded streams, with the provider each speaks.
fn recordings() -> Vec<(PathBuf, Provider)> {
    let first = wire_transcripts();
    let second = first.with_file_name("wire-transcripts-2");
    let mut found = Vec::new();
    for dir in [first, second] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "sse") {
                let name = path.file_name().unwrap().to_str().unwrap().to_owned();
                found.push((path, provider_of(&name)));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(found.len() >= 40, "{} recordings", found.len());
    found
}

fn provider_of(name: &str) -> Provider {
    match name.split("__").next().unwrap() {
        "openai-chat" | "gemini-openai-compat" => Provider::OpenAiChat,
        "openai-responses" => Provider::OpenAiResponses,
        "anthropic" => Provider::Anthropic,
        "gemini" | "gemini-vertex" => Provider::Gemini,
        other => panic!("no provider for {other}"),
    }
}

/// The calls of a turn that would run: complete, their arguments JSON.
fn dispatchable(turn: &AssistantTurn) -> Vec<(String, Value)> {
    turn.calls()
        .iter()
        .filter_map(|call| match call.arguments() {
            Arguments::Json(value) => Some((call.name().to_owned(), value.clone())),
            _ => None,
        })
        .collect()
}

fn read_whole(
    path: &Path,
    provider: Provider,
) -> Result<AssistantTurn, toolprism::turn::TurnError> {
    let mut reader = StreamReader::new(provider);
    reader.feed(&std::fs::read(path).unwrap())?;
    reader.finish()
}

#[test]
fn a_stream_cut_at_any_byte_runs_nothing_the_whole_stream_would_not() {
    for (path, provider) in recordings() {
        let bytes = std::fs::read(&path).unwrap();
        let whole = read_whole(&path, provider)
            .map(|turn| dispatchable(&turn))
            .unwrap_or_default();
        // Fed a byte at a time, forked and ended after each: the stream as if it were cut there.
        let mut reader = StreamReader::new(provider);
        let mut spent = false;
        for (at, byte) in bytes.iter().enumerate() {
            if !spent && reader.feed(std::slice::from_ref(byte)).is_err() {
                spent = true;
            }
            if spent {
                continue;
            }
            if let Ok(cut) = reader.fork().finish() {
                for call in dispatchable(&cut) {
                    assert!(
                        whole.contains(&call),
                        "{}: cut after byte {at} offers {call:?}, which the whole stream does not",
                        path.display()
                    );
                }
                if at + 1 < bytes.len() && cut.stop_reason() == StopReason::Interrupted {
                    assert!(dispatchable(&cut).is_empty(), "{}", path.display());
                }
            }
        }
    }
}

fn recorded(name: &str) -> PathBuf {
    wire_transcripts()
        .with_file_name("wire-transcripts-2")
        .join(name)
}

#[test]
fn what_openai_compatible_servers_and_vertex_send_is_read() {
    // Mistral sends a call without `index`, and its finish in the same chunk.
    let turn = read_whole(
        &recorded("openai-chat__stream__mistral-call-and-finish-in-one-chunk.sse"),
        Provider::OpenAiChat,
    )
    .unwrap();
    assert_eq!(
        dispatchable(&turn),
        [("weather".to_owned(), json!({"location": "San Francisco"}))]
    );
    assert_eq!(turn.calls()[0].id(), "gSIMJiOkT");
    // Vertex sends a short call whole in one event: named, its `partialArgs`, no `willContinue`.
    let turn = read_whole(
        &recorded("gemini-vertex__stream__partialargs-whole-call-one-event.sse"),
        Provider::Gemini,
    )
    .unwrap();
    assert_eq!(
        dispatchable(&turn),
        [(
            "customDivide".to_owned(),
            json!({"denominator": 2, "numerator": 100})
        )]
    );
    // Every other stream of the second set reads too, as its provider's.
    for (path, provider) in recordings() {
        let name = path.file_name().unwrap().to_str().unwrap();
        let read = read_whole(&path, provider);
        if name.contains("error-event") {
            continue;
        }
        let turn = read.unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_ne!(turn.stop_reason(), StopReason::Interrupted, "{name}");
    }
}

#[test]
fn deltas_without_index_continue_the_call_in_progress_or_start_one_with_a_new_id() {
    let chunk = |calls: Value, finish: Option<&str>| {
        let body = json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": finish}]});
        format!("data: {body}\n\n")
    };
    let stream = [
        chunk(
            json!([{"id": "a", "function": {"name": "add", "arguments": "{\"a\":"}}]),
            None,
        ),
        chunk(json!([{"function": {"arguments": " 1}"}}]), None),
        chunk(
            json!([{"id": "b", "function": {"name": "now", "arguments": "{}"}}]),
            None,
        ),
        chunk(json!([]), Some("tool_calls")),
    ]
    .concat();
    let mut reader = StreamReader::new(Provider::OpenAiChat);
    reader.feed(stream.as_bytes()).unwrap();
    let turn = reader.finish().unwrap();
    assert_eq!(
        dispatchable(&turn),
        [
            ("add".to_owned(), json!({"a": 1})),
            ("now".to_owned(), json!({}))
        ]
    );
    // A delta with neither `index` nor an id, before any call: refused, not guessed.
    let mut reader = StreamReader::new(Provider::OpenAiChat);
    let orphan = chunk(json!([{"function": {"arguments": "{}"}}]), None);
    assert!(reader.feed(orphan.as_bytes()).is_err());
}
