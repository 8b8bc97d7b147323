//! The `agent` example against a provider that replays streams on loopback: for each
//! provider, a stream recorded from its live API (read in place from the wire transcripts),
//! then a call of the coding tools' `read`, then an answer. The agent must read each turn, run
//! its calls, print their cards, and send requests every one of which validates against the
//! provider's own SDK types.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use toolprism_tests::{check_wire, wire_transcripts};

/// What the loopback provider answers, in turn, and what it was asked.
#[derive(Default)]
struct Replay {
    streams: Mutex<VecDeque<String>>,
    requests: Mutex<Vec<(String, HeaderMap, Value)>>,
}

async fn answer(
    State(replay): State<Arc<Replay>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    replay
        .requests
        .lock()
        .unwrap()
        .push((uri.to_string(), headers, body));
    let stream = replay
        .streams
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_default();
    ([("content-type", "text/event-stream")], stream)
}

fn sse(events: &[Value]) -> String {
    events.iter().fold(String::new(), |mut stream, event| {
        let _ = write!(stream, "data: {event}\n\n");
        stream
    })
}

/// A provider's stream of one call.
fn call_stream(provider: &str, name: &str, args: &Value) -> String {
    let text = args.to_string();
    match provider {
        "openai-chat" => {
            sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_read", "type": "function", "function": {"name": name, "arguments": ""}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ]) + "data: [DONE]\n\n"
        }
        "openai-responses" => sse(&[
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "id": "fc_read", "call_id": "call_read", "name": name, "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_read", "delta": text}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "id": "fc_read", "call_id": "call_read", "name": name, "arguments": text, "status": "completed"}}),
            json!({"type": "response.completed", "response": {"status": "completed"}}),
        ]),
        "anthropic" => sse(&[
            json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "content": [], "stop_reason": null}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_read", "name": name, "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": text}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            json!({"type": "message_stop"}),
        ]),
        _ => sse(&[
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}, "finishReason": "STOP"}]}),
        ]),
    }
}

/// A provider's stream of an answer.
fn text_stream(provider: &str, text: &str) -> String {
    match provider {
        "openai-chat" => {
            sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            ]) + "data: [DONE]\n\n"
        }
        "openai-responses" => sse(&[
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_a", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_a", "content_index": 0, "delta": text}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg_a", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
            json!({"type": "response.completed", "response": {"status": "completed"}}),
        ]),
        "anthropic" => sse(&[
            json!({"type": "message_start", "message": {"id": "msg_3", "type": "message", "role": "assistant", "content": [], "stop_reason": null}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            json!({"type": "message_stop"}),
        ]),
        _ => sse(&[
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}]}),
        ]),
    }
}

/// Per provider: the recorded stream it starts with, the path its requests go to, the header
/// its key goes in, and the SDK type its streamed request bodies are checked against.
const PROVIDERS: [(&str, &str, &str, &str, &str); 4] = [
    (
        "openai-chat",
        "openai-chat__stream__parallel-2-calls.sse",
        "/v1/chat/completions",
        "authorization",
        "openai.chat.stream_request",
    ),
    (
        "openai-responses",
        "openai-responses__stream__reasoning-summary-then-call.sse",
        "/v1/responses",
        "authorization",
        "openai.responses.stream_request",
    ),
    (
        "anthropic",
        "anthropic__stream__server-tool-search-then-client-call.sse",
        "/v1/messages",
        "x-api-key",
        "anthropic.stream_request",
    ),
    (
        "gemini",
        "gemini__stream__call-with-signature.sse",
        "/v1beta/models/a-model:streamGenerateContent?alt=sse",
        "x-goog-api-key",
        "gemini.request",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_runs_a_loop_whose_every_request_the_sdks_accept() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let mut cases = Vec::new();
    for (provider, recording, path, key_header, sdk_type) in PROVIDERS {
        let replay = Arc::new(Replay::default());
        replay.streams.lock().unwrap().extend([
            std::fs::read_to_string(wire_transcripts().join(recording)).unwrap(),
            call_stream(provider, "read", &json!({"path": "notes.txt"})),
            text_stream(provider, "The notes say alpha, then beta."),
        ]);
        let router = axum::Router::new()
            .fallback(answer)
            .with_state(replay.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move { axum::serve(listener, router).await });
        let base = if provider.starts_with("openai") {
            format!("http://{address}/v1")
        } else {
            format!("http://{address}")
        };

        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
            .env("TOOLPRISM_PROVIDER", provider)
            .env("TOOLPRISM_BASE_URL", &base)
            .env("TOOLPRISM_API_KEY", "test-key")
            .env("TOOLPRISM_MODEL", "a-model")
            .args([
                "--root",
                workspace.path().to_str().unwrap(),
                "What do the notes say?",
            ])
            .output()
            .await
            .unwrap();
        server.abort();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{provider}: {stdout}\n{stderr}");
        assert!(stdout.contains("── step 3"), "{provider}: {stdout}");
        assert!(
            stdout.contains("📄 notes.txt"),
            "{provider}: the read card: {stdout}"
        );
        assert!(
            stdout.contains("The notes say alpha, then beta."),
            "{provider}: {stdout}"
        );

        let requests = replay.requests.lock().unwrap();
        assert_eq!(requests.len(), 3, "{provider}");
        for (step, (uri, headers, body)) in requests.iter().enumerate() {
            assert_eq!(uri, path, "{provider}");
            let key = headers.get(key_header).unwrap().to_str().unwrap();
            assert!(key.ends_with("test-key"), "{provider}: {key}");
            cases.push(json!({"name": format!("{provider} request {}", step + 1), "type": sdk_type, "value": body}));
        }
        // The last request carries the results of both earlier turns.
        let last = &requests[2].2;
        let carried = last.to_string();
        assert!(
            carried.contains("alpha"),
            "{provider}: the read result is sent back: {carried}"
        );
    }
    let report = check_wire("agent-requests.json", &cases);
    assert_eq!(report["checked"], cases.len());
    assert_eq!(report["failures"], json!([]), "{report:#}");
}

/// An OpenAI Chat stream of a turn making these calls, `(id, tool, arguments)`.
fn calls_stream(calls: &[(&str, &str, Value)]) -> String {
    let mut events = Vec::new();
    for (index, (id, name, args)) in calls.iter().enumerate() {
        events.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}}]}));
        events.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": {"arguments": args.to_string()}}]}}]}));
    }
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    sse(&events) + "data: [DONE]\n\n"
}

/// Runs the agent against `base` in `workspace` with these arguments.
async fn agent(base: &str, workspace: &std::path::Path, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env("TOOLPRISM_PROVIDER", "openai-chat")
        .env("TOOLPRISM_BASE_URL", base)
        .env("TOOLPRISM_API_KEY", "test-key")
        .env("TOOLPRISM_MODEL", "a-model")
        .arg("--root")
        .arg(workspace)
        .args(args)
        .output()
        .await
        .unwrap()
}

/// The agent stops with a call waiting for a decision and exits; a new process decides it and
/// resumes from the session log. Each call's side effect shows it ran exactly once: the write
/// that ran before the stop is answered from the log (the file a person changed in between
/// stays as they left it), and the approved command runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_stops_for_a_decision_and_a_new_process_resumes_from_the_log() {
    let workspace = tempfile::tempdir().unwrap();
    let session = tempfile::tempdir().unwrap();
    let session_dir = session.path().to_str().unwrap();
    let replay = Arc::new(Replay::default());
    replay.streams.lock().unwrap().extend([
        calls_stream(&[
            (
                "call_write",
                "write",
                json!({"path": "plan.txt", "content": "first\n"}),
            ),
            (
                "call_bash",
                "bash",
                json!({"command": "echo ran >> ran.txt"}),
            ),
        ]),
        text_stream("openai-chat", "The plan is written and the command ran."),
    ]);
    let router = axum::Router::new()
        .fallback(answer)
        .with_state(replay.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let base = format!("http://{address}/v1");

    let first = agent(
        &base,
        workspace.path(),
        &[
            "--session",
            session_dir,
            "--ask",
            "bash",
            "Write the plan, then run it.",
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(
        first.status.code(),
        Some(3),
        "{stdout}\n{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        stdout.contains("⏸ call_bash waits for a decision: Run `bash`"),
        "{stdout}"
    );
    assert!(stdout.contains("--approve call_bash"), "{stdout}");
    let plan = workspace.path().join("plan.txt");
    let ran = workspace.path().join("ran.txt");
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "first\n");
    assert!(!ran.exists(), "the command waits");
    // A person edits the file between the runs: were the write run again, it would undo this.
    std::fs::write(&plan, "edited by hand\n").unwrap();

    let second = agent(
        &base,
        workspace.path(),
        &["--session", session_dir, "--approve", "call_bash"],
    )
    .await;
    server.abort();
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(
        second.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(
        stdout.contains("The plan is written and the command ran."),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "edited by hand\n");
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "ran\n");

    // The model was asked twice in all: once per process. The second request carries both
    // results, the write's as the first process logged it.
    let requests = replay.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].2["messages"].as_array().unwrap();
    let results: Vec<(&str, &str)> = messages
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            (
                message["tool_call_id"].as_str().unwrap(),
                message["content"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(results.len(), 2, "{messages:#?}");
    assert_eq!(results[0].0, "call_write");
    assert!(results[0].1.contains("plan.txt"), "{}", results[0].1);
    assert_eq!(results[1].0, "call_bash");
    // Nothing waits any more: a decision now has nothing to decide.
    let third = agent(
        &base,
        workspace.path(),
        &["--session", session_dir, "--approve", "call_bash"],
    )
    .await;
    assert!(!third.status.success());
    assert!(String::from_utf8_lossy(&third.stderr).contains("no call waits for a decision"));
}
