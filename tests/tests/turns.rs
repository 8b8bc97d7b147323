//! Reading a model's turn back: the 47 responses and streams recorded from the live APIs
//! (read in place from `../shared/wire-transcripts`, never copied), each read to the calls it
//! holds — whole, and streamed in every chunking — plus fixtures of our own for what the
//! recordings lack, the protocol errors and limits, and the next request built from a turn,
//! validated against the providers' own SDK types.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolprism::lower::{Provider, ToolOptions};
use toolprism::prelude::*;
use toolprism::turn::{
    Arguments, AssistantTurn, Caller, Conversation, ReadLimits, RunOptions, StopReason,
    StreamEvent, StreamReader, TurnError, TurnPart, read_response, run_calls,
};
use toolprism_tests::{check_wire, code, text, wire_transcripts};

/// The provider a recording is for, from its file name.
fn provider_of(file: &str) -> Provider {
    let family = file.split("__").next().unwrap();
    match family {
        "anthropic" => Provider::Anthropic,
        "openai-chat" | "gemini-openai-compat" => Provider::OpenAiChat,
        "openai-responses" => Provider::OpenAiResponses,
        "gemini" | "gemini-vertex" => Provider::Gemini,
        other => panic!("no provider for {other}"),
    }
}

fn is_stream(file: &str) -> bool {
    file.contains("__stream__")
}

fn expected() -> BTreeMap<String, Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/turns/transcripts.json");
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn recording(file: &str) -> Vec<u8> {
    fs::read(wire_transcripts().join(file)).unwrap()
}

/// A stream read in chunks of `size` bytes; the events and the turn.
fn read_stream(provider: Provider, bytes: &[u8], size: usize) -> (Vec<StreamEvent>, AssistantTurn) {
    let mut reader = StreamReader::new(provider);
    let mut events = Vec::new();
    for chunk in bytes.chunks(size.max(1)) {
        events.extend(reader.feed(chunk).unwrap());
    }
    let (turn, last) = reader.finish_with_events().unwrap();
    events.extend(last);
    (events, turn)
}

fn read(file: &str) -> AssistantTurn {
    let provider = provider_of(file);
    let bytes = recording(file);
    if is_stream(file) {
        read_stream(provider, &bytes, bytes.len()).1
    } else {
        read_response(provider, &bytes).unwrap()
    }
}

/// What a turn says of its calls and text, in the form the expected table has.
fn summary(turn: &AssistantTurn) -> Value {
    let calls: Vec<Value> = turn
        .calls()
        .iter()
        .map(|call| {
            let (arguments, cut) = match call.arguments() {
                Arguments::Json(value) => (value.clone(), false),
                Arguments::CutOff { .. } => (Value::Null, true),
                other => panic!("{}: unexpected arguments {other:?}", call.name()),
            };
            let program = match call.caller() {
                Caller::Program { id } => json!(id),
                _ => Value::Null,
            };
            json!({"id": call.provider_id(), "name": call.name(), "arguments": arguments, "cut": cut, "program": program})
        })
        .collect();
    json!({"calls": calls, "text": turn.text()})
}

#[test]
fn every_recording_reads_to_the_calls_it_holds() {
    let expected = expected();
    assert_eq!(expected.len(), 47);
    let mut calls = 0;
    for (file, want) in &expected {
        let turn = read(file);
        let got = summary(&turn);
        assert_eq!(got["calls"], want["calls"], "{file}");
        assert_eq!(got["text"], want["text"], "{file}");
        let kept = turn
            .parts()
            .iter()
            .filter(|part| matches!(part, TurnPart::Kept(_)))
            .count();
        assert!(
            kept >= usize::try_from(want["server_side"].as_u64().unwrap()).unwrap(),
            "{file}: {kept} kept parts, {} server-side uses",
            want["server_side"]
        );
        calls += turn.calls().len();
    }
    assert_eq!(calls, 63, "62 complete calls and one cut off");
}

#[test]
fn a_stream_reads_the_same_whatever_its_chunks() {
    for (file, _) in expected().iter().filter(|(file, _)| is_stream(file)) {
        let provider = provider_of(file);
        let bytes = recording(file);
        let whole = summary(&read_stream(provider, &bytes, bytes.len()).1);
        for size in [1, 2, 3, 7, 64, 1000] {
            let (_, turn) = read_stream(provider, &bytes, size);
            assert_eq!(summary(&turn), whole, "{file} in chunks of {size}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The same calls, parts and echo whatever the byte boundaries.
    #[test]
    fn the_same_turn_at_any_byte_boundaries(file_index in 0usize..32, cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..40)) {
        let streams: Vec<String> = expected().into_keys().filter(|file| is_stream(file)).collect();
        let file = &streams[file_index % streams.len()];
        let provider = provider_of(file);
        let bytes = recording(file);
        let whole = read_stream(provider, &bytes, bytes.len()).1;
        let mut at: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut reader = StreamReader::new(provider);
        let mut start = 0;
        for end in at.into_iter().chain([bytes.len()]) {
            reader.feed(&bytes[start..end]).unwrap();
            start = end;
        }
        let turn = reader.finish().unwrap();
        prop_assert_eq!(turn.echo(), whole.echo());
        prop_assert_eq!(turn, whole);
    }
}

#[test]
fn a_streamed_call_ends_only_when_its_provider_says_so() {
    for (file, want) in expected().iter().filter(|(file, _)| is_stream(file)) {
        let provider = provider_of(file);
        let bytes = recording(file);
        let (events, turn) = read_stream(provider, &bytes, 5);
        let ended: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::CallEnded(call) => Some(call.id()),
                _ => None,
            })
            .collect();
        let complete: Vec<&str> = turn
            .calls()
            .iter()
            .filter(|call| matches!(call.arguments(), Arguments::Json(_)))
            .map(toolprism::turn::ReadCall::id)
            .collect();
        assert_eq!(
            ended, complete,
            "{file}: every complete call ends once, in order"
        );
        // What a UI was shown of the arguments is what was read.
        for (index, call) in turn.calls().iter().enumerate() {
            let streamed: String = events
                .iter()
                .filter_map(|event| match event {
                    StreamEvent::ArgumentsDelta { index: at, delta } if *at == index => {
                        Some(delta.as_str())
                    }
                    _ => None,
                })
                .collect();
            if !streamed.is_empty()
                && let Arguments::Json(value) = call.arguments()
            {
                assert_eq!(
                    &serde_json::from_str::<Value>(&streamed).unwrap(),
                    value,
                    "{file}"
                );
            }
        }
        let started = events
            .iter()
            .filter(|event| matches!(event, StreamEvent::CallStarted { .. }))
            .count();
        // Gemini reports a call's start when its part arrives, before a server-side answer
        // later in the stream can say the server ran it.
        let server_ran =
            usize::from(file == "gemini__stream__server-side-mcp-call-response-text.sse");
        assert_eq!(
            started,
            want["calls"].as_array().unwrap().len() + server_ran,
            "{file}"
        );
    }
}

#[test]
fn a_call_cut_off_by_max_tokens_is_never_dispatched() {
    let turn = read("anthropic__stream__truncated-max-tokens.sse");
    assert_eq!(turn.stop_reason(), StopReason::MaxTokens);
    let call = &turn.calls()[0];
    let Arguments::CutOff { received, why } = call.arguments() else {
        panic!("{:?}", call.arguments());
    };
    assert!(received.starts_with(r#"{"filename": "taxes.txt""#));
    assert_eq!(why, "max_tokens");
    let refused = call.to_call().unwrap_err();
    assert_eq!(code(&refused), Some("INVALID_TOOL_INPUT"));
    assert!(text(&refused).contains("cut off"), "{}", text(&refused));
}

#[test]
fn what_the_provider_needs_echoed_is_kept_in_place() {
    // Anthropic thinking: its signature, byte for byte, before the text and the call.
    let turn = read("anthropic__nonstream__thinking-text-call.json");
    let echo = &turn.echo()[0]["content"];
    assert_eq!(echo[0]["type"], "thinking");
    assert!(
        echo[0]["signature"]
            .as_str()
            .unwrap()
            .starts_with("EqEECkYICxgCKkAo")
    );
    assert_eq!(echo[2]["type"], "tool_use");
    // Responses: the reasoning item with the encrypted content of its `done` event.
    let bytes = recording("openai-responses__stream__reasoning-summary-then-call.sse");
    let done_content = String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|line| line.contains("\"response.output_item.done\""))
        .find_map(|line| {
            let event: Value = serde_json::from_str(line.trim_start_matches("data: ")).ok()?;
            event["item"]["encrypted_content"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap();
    let turn = read("openai-responses__stream__reasoning-summary-then-call.sse");
    let echo = turn.echo();
    assert_eq!(echo[0]["type"], "reasoning");
    assert_eq!(echo[0]["encrypted_content"], done_content.as_str());
    assert_eq!(echo[1]["type"], "function_call");
    // Gemini: the signature on the part that carried it, and on no other.
    let turn = read("gemini__nonstream__parallel-3-calls-signature-on-first.json");
    let parts = &turn.echo()[0]["parts"];
    assert!(
        parts[0]["thoughtSignature"]
            .as_str()
            .unwrap()
            .starts_with("Es8FCswFAXLI2nxF")
    );
    assert!(
        parts[1].get("thoughtSignature").is_none() && parts[2].get("thoughtSignature").is_none()
    );
    // Vertex partialArgs: echoed as the whole call, signature on its start's part.
    let turn = read("gemini-vertex__stream__partialargs-2-calls.sse");
    let parts = &turn.echo()[0]["parts"];
    assert_eq!(
        parts[0]["functionCall"],
        json!({"name": "getWeather", "args": {"location": "Boston"}})
    );
    assert!(parts[0]["thoughtSignature"].is_string());
    assert_eq!(
        parts[1]["functionCall"],
        json!({"name": "getWeather", "args": {"location": "San Francisco"}})
    );
    // Anthropic's programmatic call: the container is kept for the next request.
    let turn = read("anthropic__stream__programmatic-call-input-in-block-start.sse");
    assert_eq!(turn.container(), Some("container_011CWHPPTDTn1XufeRB9uHeH"));
    // A server-side tool search and its result are echoed, not dispatched.
    let turn = read("anthropic__stream__server-tool-search-then-client-call.sse");
    let kinds: Vec<&str> = turn
        .parts()
        .iter()
        .filter_map(|part| match part {
            TurnPart::Kept(kept) => Some(kept.kind()),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["server_tool_use", "tool_search_tool_result"]);
    assert_eq!(turn.calls().len(), 1);
}

#[test]
fn a_gemini_call_the_server_answered_is_not_a_client_call() {
    let turn = read("gemini__stream__server-side-mcp-call-response-text.sse");
    assert!(turn.calls().is_empty());
    let kinds: Vec<&str> = turn
        .parts()
        .iter()
        .filter_map(|part| match part {
            TurnPart::Kept(kept) => Some(kept.kind()),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["functionCall", "functionResponse"]);
}

#[test]
fn ids_are_the_providers_or_stable_ones_of_our_own() {
    // Gemini: none on the wire; positional ids, never sent back.
    let turn = read("gemini__nonstream__parallel-3-calls-signature-on-first.json");
    let ids: Vec<&str> = turn
        .calls()
        .iter()
        .map(toolprism::turn::ReadCall::id)
        .collect();
    assert_eq!(ids, ["gemini_call_0", "gemini_call_1", "gemini_call_2"]);
    let outcomes: Vec<ToolOutcome> = turn
        .calls()
        .iter()
        .map(|_| failure("no such tool"))
        .collect();
    let results = turn.results(&outcomes).unwrap();
    let response = &results[0]["parts"][1]["functionResponse"];
    assert_eq!(response["name"], "generate_topic");
    assert!(response.get("id").is_none());
    // Vertex sent one: it goes back.
    let turn = read("gemini-vertex__nonstream__call-with-id-and-signature.json");
    let results = turn.results(&[failure("no")]).unwrap();
    assert_eq!(results[0]["parts"][0]["functionResponse"]["id"], "vcyiitct");
    // Gemini's OpenAI-compatible endpoint sends "": one of ours, in the echo and the result.
    let turn = read("gemini-openai-compat__nonstream__empty-id-noargs.json");
    let id = turn.calls()[0].id().to_owned();
    assert_eq!(id, "toolprism_call_0");
    let next = turn.next_messages(&[failure("no")]).unwrap();
    assert_eq!(next[0]["tool_calls"][0]["id"], id.as_str());
    assert_eq!(next[1]["tool_call_id"], id.as_str());
    // Responses: answered by `call_id`, not the item's id.
    let turn = read("openai-responses__nonstream__parallel-2-calls.json");
    assert_eq!(turn.calls()[0].id(), "call_LWVp74L5HaH2KNvgVz9PJsrj");
}

fn failure(message: &str) -> ToolOutcome {
    toolprism::ToolOutcome::Failure(toolprism::ToolFailure::new(
        toolprism::error::FailureError::new(toolprism::error::FailureKind::UnknownTool, message),
    ))
}

// ---------------------------------------------------------------- fixtures of our own

fn sse(events: &[Value]) -> String {
    events.iter().fold(String::new(), |mut stream, event| {
        let _ = write!(stream, "data: {event}\n\n");
        stream
    })
}

fn anthropic_block_events(index: usize, block: Value, deltas: &[Value]) -> Vec<Value> {
    let mut events =
        vec![json!({"type": "content_block_start", "index": index, "content_block": block})];
    events.extend(
        deltas
            .iter()
            .map(|delta| json!({"type": "content_block_delta", "index": index, "delta": delta})),
    );
    events.push(json!({"type": "content_block_stop", "index": index}));
    events
}

fn json_delta(text: &str) -> Value {
    json!({"type": "input_json_delta", "partial_json": text})
}

#[test]
fn anthropic_parallel_streamed_calls_after_a_thinking_block() {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "stop_reason": null}}),
    ];
    events.extend(anthropic_block_events(
        0,
        json!({"type": "thinking", "thinking": "", "signature": ""}),
        &[
            json!({"type": "thinking_delta", "thinking": "Two cities, "}),
            json!({"type": "thinking_delta", "thinking": "two calls."}),
            json!({"type": "signature_delta", "signature": "SIG-abc=="}),
        ],
    ));
    events.extend(anthropic_block_events(
        1,
        json!({"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {}}),
        &[
            json_delta(""),
            json_delta("{\"city\": \"Os"),
            json_delta("lo\"}"),
        ],
    ));
    events.extend(anthropic_block_events(
        2,
        json!({"type": "tool_use", "id": "toolu_b", "name": "weather", "input": {}}),
        &[json_delta("{\"city\": \"Lima\"}")],
    ));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}));
    events.push(json!({"type": "message_stop"}));
    let stream = sse(&events);
    let (events, turn) = read_stream(Provider::Anthropic, stream.as_bytes(), 3);
    let ended: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::CallEnded(call) => Some(call.id()),
            _ => None,
        })
        .collect();
    assert_eq!(ended, ["toolu_a", "toolu_b"]);
    assert_eq!(
        turn.calls()[0].arguments().json(),
        Some(&json!({"city": "Oslo"}))
    );
    assert_eq!(
        turn.calls()[1].arguments().json(),
        Some(&json!({"city": "Lima"}))
    );
    let echo = &turn.echo()[0]["content"];
    assert_eq!(
        echo[0],
        json!({"type": "thinking", "thinking": "Two cities, two calls.", "signature": "SIG-abc=="})
    );
    assert_eq!(echo[1]["input"], json!({"city": "Oslo"}));
    assert_eq!(turn.stop_reason(), StopReason::ToolUse);
}

fn chat_chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[test]
fn openai_text_with_calls_several_in_one_chunk_and_malformed_arguments() {
    let stream = sse(&[
        chat_chunk(json!({"role": "assistant", "content": "Checking "}), None),
        chat_chunk(json!({"content": "both."}), None),
        chat_chunk(
            json!({"tool_calls": [
                {"index": 0, "id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}},
                {"index": 1, "id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": "}},
            ]}),
            None,
        ),
        chat_chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "two}"}}]}),
            None,
        ),
        chat_chunk(json!({}), Some("tool_calls")),
    ]) + "data: [DONE]\n\n";
    let (_, turn) = read_stream(Provider::OpenAiChat, stream.as_bytes(), 11);
    assert_eq!(turn.text(), "Checking both.");
    assert_eq!(
        turn.calls()[0].arguments().json(),
        Some(&json!({"a": 1, "b": 2}))
    );
    assert_eq!(
        turn.calls()[1].arguments(),
        &Arguments::NotJson("{\"a\": 1, \"b\": two}".into())
    );

    // Dispatched: the good call runs; the malformed one fails naming the byte, and the
    // session log keeps the text as it was sent.
    let registry = Registry::builder().tool(Add).build().unwrap();
    let dir = toolprism_tests::TempDir::new("turns-malformed");
    let (log, _) = toolprism::session::SessionLog::open(
        dir.path().join("log.jsonl"),
        toolprism::session::LogOptions::default(),
    )
    .unwrap();
    let outcomes = runtime().block_on(run_calls(
        &registry.snapshot(),
        &turn,
        &RunOptions::default().log(log),
    ));
    let outcomes = outcomes.unwrap();
    assert_eq!(outcomes[0].value().unwrap(), &json!(3));
    assert_eq!(code(&outcomes[1]), Some("INVALID_TOOL_INPUT"));
    assert!(
        text(&outcomes[1]).contains("at byte 16"),
        "{}",
        text(&outcomes[1])
    );
    let logged = toolprism::session::SessionLog::read(dir.path().join("log.jsonl")).unwrap();
    let raw = logged.events.iter().find_map(|event| match event {
        toolprism::session::SessionEvent::ToolCall(call) if call.id == "call_b" => {
            call.raw_args.clone()
        }
        _ => None,
    });
    assert_eq!(raw.as_deref(), Some("{\"a\": 1, \"b\": two}"));
}

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn a_stream_cut_before_its_finish_runs_none_of_its_calls() {
    let stream = sse(&[
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]}),
            None,
        ),
        chat_chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{\"a\": \"thr"}}]}),
            None,
        ),
    ]);
    // The stream ends there: no finish reason, no [DONE]. The first call had ended (the second
    // started), but a turn the stream did not finish runs nothing: the provider may have had
    // more to say of it.
    let (events, turn) = read_stream(Provider::OpenAiChat, stream.as_bytes(), 4);
    assert_eq!(turn.stop_reason(), StopReason::Interrupted);
    assert!(
        matches!(turn.calls()[1].arguments(), Arguments::CutOff { received, .. } if received == "{\"a\": \"thr")
    );
    assert!(
        events
            .iter()
            .any(|event| matches!(event, StreamEvent::CallEnded(call) if call.id() == "call_a"))
    );
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, StreamEvent::CallEnded(call) if call.id() == "call_b"))
    );
    let registry = Registry::builder().tool(Add).build().unwrap();
    let outcomes = runtime()
        .block_on(run_calls(
            &registry.snapshot(),
            &turn,
            &RunOptions::default(),
        ))
        .unwrap();
    assert!(
        matches!(turn.calls()[0].arguments(), Arguments::CutOff { received, .. } if received == r#"{"a":2,"b":3}"#)
    );
    for outcome in &outcomes {
        assert_eq!(code(outcome), Some("INVALID_TOOL_INPUT"));
        assert!(text(outcome).contains("cut off"), "{}", text(outcome));
    }
}

#[test]
fn no_argument_text_at_all_is_an_empty_object_and_is_echoed_as_one() {
    let stream = sse(&[
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "now", "arguments": ""}}]}),
            None,
        ),
        chat_chunk(json!({}), Some("tool_calls")),
    ]);
    let (_, turn) = read_stream(Provider::OpenAiChat, stream.as_bytes(), 1);
    assert_eq!(turn.calls()[0].arguments().json(), Some(&json!({})));
    assert_eq!(
        turn.echo()[0]["tool_calls"][0]["function"]["arguments"],
        "{}"
    );
}

// ---------------------------------------------------------------- a stream that breaks its protocol

fn protocol_error(provider: Provider, stream: &str) -> TurnError {
    let mut reader = StreamReader::new(provider);
    let fed = reader.feed(stream.as_bytes());
    match fed {
        Err(error) => error,
        Ok(_) => reader.finish().unwrap_err(),
    }
}

#[test]
fn a_stream_that_breaks_its_protocol_is_an_error_naming_the_event() {
    let cases: [(Provider, String, usize, &str); 6] = [
        (
            Provider::Anthropic,
            sse(&[json!({"type": "content_block_delta", "index": 0, "delta": json_delta("{}")})]),
            1,
            "never started",
        ),
        (
            Provider::Anthropic,
            sse(&[
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ]),
            2,
            "a second start for block 0",
        ),
        (
            Provider::Anthropic,
            sse(&[
                json!({"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": ""}}),
            ]),
            1,
            "block 3 starts where block 0 was due",
        ),
        (
            Provider::OpenAiChat,
            sse(&[chat_chunk(
                json!({"tool_calls": [{"index": 2, "id": "c", "function": {"name": "x", "arguments": ""}}]}),
                None,
            )]),
            1,
            "tool call 2 starts before tool call 0",
        ),
        (
            Provider::OpenAiResponses,
            sse(&[
                json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{"}),
            ]),
            1,
            "never started",
        ),
        (
            Provider::Gemini,
            sse(&[
                json!({"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.a", "stringValue": "x"}]}}]}}]}),
            ]),
            1,
            "no call in progress",
        ),
    ];
    for (provider, stream, event, message) in cases {
        match protocol_error(provider, &stream) {
            TurnError::Protocol {
                event: at,
                message: said,
                ..
            } => {
                assert_eq!(at, event, "{provider:?}: {said}");
                assert!(said.contains(message), "{provider:?}: {said}");
            }
            other => panic!("{provider:?}: {other:?}"),
        }
    }
    // An event that is not JSON names the byte where it broke.
    let error = protocol_error(Provider::Anthropic, "data: {\"type\": \"ping\",}\n\n");
    assert!(
        error.to_string().contains("event 1") && error.to_string().contains("byte"),
        "{error}"
    );
}

#[test]
fn limits_are_refused_with_a_clear_error() {
    // Calls per turn.
    let body = json!({"content": [
        {"type": "tool_use", "id": "a", "name": "x", "input": {}},
        {"type": "tool_use", "id": "b", "name": "x", "input": {}},
    ], "stop_reason": "tool_use"});
    let error = toolprism::turn::read_response_with(
        Provider::Anthropic,
        body.to_string().as_bytes(),
        ReadLimits::default().with_max_calls(1),
    )
    .unwrap_err();
    assert_eq!(
        error,
        TurnError::TooLarge {
            what: "the turn's number of calls",
            limit: 1
        }
    );
    // A call's arguments: not held past the limit, and refused to the model.
    let stream = sse(&[
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "id": "c", "type": "function", "function": {"name": "x", "arguments": "{\"a\": \"0123456789"}}]}),
            None,
        ),
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "0123456789\"}"}}]}),
            None,
        ),
        chat_chunk(json!({}), Some("tool_calls")),
    ]);
    let mut reader = StreamReader::with_limits(
        Provider::OpenAiChat,
        ReadLimits::default().with_max_call_bytes(16),
    );
    reader.feed(stream.as_bytes()).unwrap();
    let turn = reader.finish().unwrap();
    assert_eq!(
        turn.calls()[0].arguments(),
        &Arguments::TooLarge {
            bytes: 29,
            limit: 16
        }
    );
    assert!(text(&turn.calls()[0].to_call().unwrap_err()).contains("more than the 16"));
    // A line.
    let mut reader = StreamReader::with_limits(
        Provider::Anthropic,
        ReadLimits::default().with_max_line_bytes(64),
    );
    let error = reader.feed(&[b'd'; 65]).unwrap_err();
    assert_eq!(
        error,
        TurnError::TooLarge {
            what: "a line of the stream",
            limit: 64
        }
    );
    assert_eq!(reader.feed(b"\n").unwrap_err(), TurnError::Finished);
    // A whole response.
    let error = toolprism::turn::read_response_with(
        Provider::Gemini,
        &[b' '; 100],
        ReadLimits::default().with_max_turn_bytes(99),
    )
    .unwrap_err();
    assert!(matches!(
        error,
        TurnError::TooLarge {
            what: "the response",
            ..
        }
    ));
}

#[test]
fn a_providers_own_error_is_reported_as_its_error() {
    let stream = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    assert_eq!(
        protocol_error(Provider::Anthropic, stream),
        TurnError::Provider {
            message: "Overloaded".into()
        }
    );
    let body = br#"{"error": {"message": "Invalid API key", "type": "invalid_request_error"}}"#;
    assert_eq!(
        read_response(Provider::OpenAiChat, body).unwrap_err(),
        TurnError::Provider {
            message: "Invalid API key".into()
        }
    );
}

// ---------------------------------------------------------------- the next request, by the SDKs' types

/// One tool per name the recordings call, answering with its arguments as text.
fn echo_registry(turns: &[AssistantTurn]) -> Registry {
    let mut names: Vec<&str> = turns
        .iter()
        .flat_map(|turn| turn.calls().iter().map(toolprism::turn::ReadCall::name))
        .collect();
    names.sort_unstable();
    names.dedup();
    let tools = names.into_iter().map(|name| {
        ToolDef::builder(name)
            .description("Says what it was given.")
            .input_schema(json!({"type": "object"}))
            .output_schema(json!({"type": "string"}))
            .handler(|args: Value, _cx: ToolContext| async move {
                Ok::<_, ToolError>(Value::String(args.to_string()))
            })
            .build()
    });
    Registry::builder().tools(tools).build().unwrap()
}

/// The SDK type a whole request body is checked against.
fn request_type(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAiChat => "openai.chat.request",
        Provider::OpenAiResponses => "openai.responses.request",
        Provider::Anthropic => "anthropic.request",
        _ => "gemini.request",
    }
}

#[test]
fn the_next_request_validates_against_the_providers_own_types() {
    let files: Vec<String> = expected().into_keys().collect();
    let turns: Vec<AssistantTurn> = files.iter().map(|file| read(file)).collect();
    let registry = echo_registry(&turns);
    let snapshot = registry.snapshot();
    let runtime = runtime();
    let mut cases = Vec::new();
    for (file, turn) in files.iter().zip(&turns) {
        let outcomes = runtime
            .block_on(run_calls(&snapshot, turn, &RunOptions::default()))
            .unwrap();
        for (call, outcome) in turn.calls().iter().zip(&outcomes) {
            if call.arguments().json().is_some() {
                assert!(!outcome.is_error(), "{file}: {}", text(outcome));
            }
        }
        // The conversation the host keeps: a system prompt, the user's message, the turn and
        // its results, the tools.
        let mut conversation = Conversation::new(turn.provider(), "a-model")
            .with_system("Be brief.")
            .with_tools(&snapshot, ToolOptions::default())
            .unwrap();
        conversation.user("go");
        conversation.push_turn(turn, &outcomes).unwrap();
        let mut request = conversation
            .request("http://127.0.0.1:1", "key", false)
            .body;
        let kind = request_type(turn.provider());
        if file.starts_with("gemini-openai-compat") {
            // Gemini's OpenAI-compatible endpoint wants its thought signature back where it
            // came, in `extra_content`, which is not an OpenAI field: checked here, then left
            // out of the check by OpenAI's types.
            let message = &mut request["messages"][2];
            let extra = message
                .as_object_mut()
                .unwrap()
                .remove("extra_content")
                .unwrap();
            assert!(
                extra["google"]["thought_signature"]
                    .as_str()
                    .unwrap()
                    .starts_with("AVSoXO4AzAXs7GGv")
            );
        }
        cases.push(json!({"name": file, "type": kind, "value": request}));
    }
    // A deliberate mistake must be caught, or the check proves nothing.
    cases.push(json!({"name": "canary", "type": "anthropic.request", "value": {"model": "m", "max_tokens": 1, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "y", "inptu": {}}]}]}}));
    let report = check_wire("turn-cases.json", &cases);
    assert_eq!(report["checked"], cases.len());
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "only the canary may fail: {failures:#?}");
    assert_eq!(failures[0]["name"], "canary");
}
