//! Reading a streamed turn, against parsing the same events' JSON with `serde_json::from_slice`
//! in the same run:
//!
//! - `stream/<provider>/reader`: a stream of text deltas and a call whose arguments arrive in
//!   many small deltas, fed to a `StreamReader` in 4 KiB chunks (SSE framing included);
//! - `stream/<provider>/from_slice`: `serde_json::from_slice::<Value>` of each of its events'
//!   data, nothing else. Quote `reader / from_slice`.
//! - `linear/<n>MB`: one Anthropic call whose `n` MB of arguments arrive in 1-byte deltas,
//!   generated as they are fed (so only the reader holds them). Quote the time per MB of
//!   `10MB` over `1MB`.
//!
//! `cargo bench -p toolprism --bench turn`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolprism::lower::Provider;
use toolprism::turn::{ReadLimits, StreamReader};

/// The events of a turn: some text, then one call with `pieces` argument deltas.
fn events(provider: Provider, pieces: usize) -> Vec<Value> {
    let text = ["Let me ", "look that ", "up for you."];
    let argument_pieces: Vec<String> = (0..pieces)
        .map(|at| {
            if at == 0 {
                "{\"query\": \"".to_owned()
            } else if at + 1 == pieces {
                "done\"}".to_owned()
            } else {
                format!("word{at} ")
            }
        })
        .collect();
    let mut events = Vec::new();
    match provider {
        Provider::Anthropic => {
            events.push(json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}));
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            for piece in text {
                events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}));
            }
            events.push(json!({"type": "content_block_stop", "index": 0}));
            events.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}}));
            for piece in &argument_pieces {
                events.push(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}}));
            }
            events.push(json!({"type": "content_block_stop", "index": 1}));
            events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 99}}));
            events.push(json!({"type": "message_stop"}));
        }
        Provider::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "obfuscation": "abc"});
            for piece in text {
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
            events.push(chunk(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "search", "arguments": ""}}]}), Value::Null));
            for piece in &argument_pieces {
                events.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
            events.push(chunk(json!({}), json!("tool_calls")));
        }
        Provider::OpenAiResponses => {
            events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}));
            for piece in text {
                events.push(json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "content_index": 0, "delta": piece}));
            }
            events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text.concat(), "annotations": []}]}}));
            events.push(json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search", "arguments": ""}}));
            for piece in &argument_pieces {
                events.push(json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_1", "delta": piece}));
            }
            events.push(json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search", "arguments": argument_pieces.concat(), "status": "completed"}}));
            events.push(json!({"type": "response.completed", "response": {"status": "completed"}}));
        }
        Provider::Gemini => {
            let chunk = |parts: Value, finish: Option<&str>| json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}], "modelVersion": "m"});
            for piece in text {
                events.push(chunk(json!([{"text": piece}]), None));
            }
            events.push(chunk(
                json!([{"functionCall": {"name": "search", "willContinue": true}}]),
                None,
            ));
            for (at, piece) in argument_pieces.iter().enumerate() {
                let last = at + 1 == argument_pieces.len();
                events.push(chunk(json!([{"functionCall": {"partialArgs": [{"jsonPath": "$.query", "stringValue": piece, "willContinue": !last}], "willContinue": true}}]), None));
            }
            events.push(chunk(json!([{"functionCall": {}}]), Some("STOP")));
        }
        _ => unreachable!(),
    }
    events
}

fn stream(c: &mut Criterion) {
    for (name, provider) in [
        ("anthropic", Provider::Anthropic),
        ("openai_chat", Provider::OpenAiChat),
        ("openai_responses", Provider::OpenAiResponses),
        ("gemini", Provider::Gemini),
    ] {
        let events = events(provider, 400);
        let datas: Vec<Vec<u8>> = events
            .iter()
            .map(|event| event.to_string().into_bytes())
            .collect();
        let mut body = Vec::new();
        for data in &datas {
            body.extend_from_slice(b"data: ");
            body.extend_from_slice(data);
            body.extend_from_slice(b"\n\n");
        }
        let mut group = c.benchmark_group(format!("stream/{name}"));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function("reader", |b| {
            b.iter(|| {
                let mut reader = StreamReader::new(provider);
                let mut events = Vec::new();
                for chunk in body.chunks(4096) {
                    reader.feed_into(black_box(chunk), &mut events).unwrap();
                    events.clear();
                }
                black_box(reader.finish().unwrap())
            });
        });
        group.bench_function("from_slice", |b| {
            b.iter(|| {
                for data in &datas {
                    black_box(serde_json::from_slice::<Value>(black_box(data)).unwrap());
                }
            });
        });
        group.finish();
    }
}

/// One Anthropic call whose `bytes` of arguments arrive one byte a delta, generated while fed.
fn one_byte_deltas(bytes: usize) -> usize {
    let limits = ReadLimits::default().with_max_call_bytes(bytes + 16);
    let mut reader = StreamReader::with_limits(Provider::Anthropic, limits);
    let mut events = Vec::new();
    reader
        .feed_into(b"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write\",\"input\":{}}}\n\n", &mut events)
        .unwrap();
    let mut buffer = Vec::with_capacity(64 * 1024);
    let feed = |buffer: &mut Vec<u8>, reader: &mut StreamReader, events: &mut Vec<_>| {
        reader.feed_into(buffer, events).unwrap();
        buffer.clear();
        events.clear();
    };
    let piece = |text: &str, buffer: &mut Vec<u8>| {
        buffer.extend_from_slice(b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"");
        buffer.extend_from_slice(text.as_bytes());
        buffer.extend_from_slice(b"\"}}\n\n");
    };
    piece("{\\\"text\\\": \\\"", &mut buffer);
    for at in 0..bytes {
        let letter = [b'a' + u8::try_from(at % 26).unwrap_or(0)];
        piece(std::str::from_utf8(&letter).unwrap_or("a"), &mut buffer);
        if buffer.len() > 60 * 1024 {
            feed(&mut buffer, &mut reader, &mut events);
        }
    }
    piece("\\\"}", &mut buffer);
    buffer.extend_from_slice(b"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
    feed(&mut buffer, &mut reader, &mut events);
    let turn = reader.finish().unwrap();
    turn.calls()[0]
        .arguments()
        .json()
        .and_then(|arguments| arguments["text"].as_str())
        .map_or(0, str::len)
}

fn linear(c: &mut Criterion) {
    let mut group = c.benchmark_group("linear");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for megabytes in [1, 10] {
        let bytes = megabytes << 20;
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(format!("{megabytes}MB"), |b| {
            b.iter(|| assert_eq!(one_byte_deltas(black_box(bytes)), bytes));
        });
    }
    group.finish();
}

criterion_group!(benches, stream, linear);
criterion_main!(benches);
