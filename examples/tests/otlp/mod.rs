//! What the tracing tests share: the OTLP receiver of `scripts/otel-sink` (the official
//! `opentelemetry-proto` bindings) on loopback, what it received read back as spans and
//! metrics, and an agent's turn calling tools imported over MCP inside its own root span.
//! One process installs one meter: each test exporting metrics is a test binary of its own.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses a part of it"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolprism::{Registry, ToolCall};
use toolprism_mcp::McpClient;
use toolprism_otel::Telemetry;
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// The receiver, stopped when dropped.
pub struct Sink {
    pub child: Child,
    pub out: PathBuf,
    pub url: String,
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the receiver; the first run installs it (minutes at most).
pub fn sink(dir: &Path) -> Sink {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = dir.join("received.jsonl");
    let port_file = dir.join("port");
    let child = Command::new(root.join("scripts/otel-sink"))
        .arg("--out")
        .arg(&out)
        .arg("--port-file")
        .arg(&port_file)
        .stdin(Stdio::piped())
        .spawn()
        .expect("scripts/otel-sink starts");
    let mut sink = Sink {
        child,
        out,
        url: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(600);
    while !port_file.exists() {
        assert!(
            Instant::now() < deadline,
            "the OTLP receiver never listened"
        );
        assert!(
            sink.child.try_wait().unwrap().is_none(),
            "the OTLP receiver exited"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let port = std::fs::read_to_string(&port_file).unwrap();
    sink.url = format!("http://127.0.0.1:{}", port.trim());
    sink
}

/// One exported span, as the receiver decoded it.
#[derive(Debug, Clone)]
pub struct Span {
    pub service: String,
    pub name: String,
    pub kind: String,
    pub trace: String,
    pub id: String,
    pub parent: String,
    pub attributes: HashMap<String, Value>,
    pub error: bool,
}

/// Every span the receiver got, and the names of the metrics, per service.
pub fn received(out: &Path) -> (Vec<Span>, Vec<(String, String)>) {
    let text = std::fs::read_to_string(out).unwrap_or_default();
    let mut spans = Vec::new();
    let mut metrics = Vec::new();
    for line in text.lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        let (list, scoped, items) = match request["signal"].as_str() {
            Some("traces") => ("resourceSpans", "scopeSpans", "spans"),
            Some("metrics") => ("resourceMetrics", "scopeMetrics", "metrics"),
            _ => continue,
        };
        for resource in request["body"][list].as_array().into_iter().flatten() {
            let service = attributes(&resource["resource"]["attributes"])["service.name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            for scope in resource[scoped].as_array().into_iter().flatten() {
                for item in scope[items].as_array().into_iter().flatten() {
                    let name = item["name"].as_str().unwrap_or_default().to_owned();
                    if items == "metrics" {
                        metrics.push((service.clone(), name));
                        continue;
                    }
                    spans.push(Span {
                        service: service.clone(),
                        name,
                        kind: item["kind"].as_str().unwrap_or_default().to_owned(),
                        trace: item["traceId"].as_str().unwrap_or_default().to_owned(),
                        id: item["spanId"].as_str().unwrap_or_default().to_owned(),
                        parent: item["parentSpanId"].as_str().unwrap_or_default().to_owned(),
                        attributes: attributes(&item["attributes"]),
                        error: item["status"]["code"] == "STATUS_CODE_ERROR",
                    });
                }
            }
        }
    }
    (spans, metrics)
}

/// OTLP's `[{key, value: {stringValue | intValue | …}}]` as a map of plain values.
pub fn attributes(list: &Value) -> HashMap<String, Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|attribute| {
            let key = attribute["key"].as_str()?.to_owned();
            let value = attribute["value"].as_object()?.values().next()?.clone();
            Some((key, value))
        })
        .collect()
}

pub fn find<'a>(spans: &'a [Span], service: &str, name: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|span| span.service == service && span.name == name)
        .collect()
}

pub fn one<'a>(spans: &'a [Span], service: &str, name: &str) -> &'a Span {
    let found = find(spans, service, name);
    assert_eq!(found.len(), 1, "{service} `{name}` in {spans:#?}");
    found[0]
}

/// The environment that has a server export to `sink`, quickly.
pub fn exporting_to(sink: &Sink, command: &mut tokio::process::Command) {
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &sink.url)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_TRACES_SAMPLER")
        .env_remove(toolprism_otel::CAPTURE_CONTENT_ENV);
}

/// The agent's side: a turn calling `read` (and a file that is not there) through the tools
/// it imported from `client`, inside its own root span; then the client closed.
pub async fn agent_turn(client: McpClient) {
    let registry = Registry::builder().build().unwrap();
    client.import_into(&registry).await.unwrap();
    let turn = tracing::info_span!("agent_turn", otel.name = "agent turn");
    async {
        let read = ToolCall::new("call_1", "read", json!({"path": "notes.txt"}));
        let outcome = registry.dispatch(read, toolprism::Surface::Direct).await;
        assert!(!outcome.is_error(), "{outcome:?}");
        let missing = ToolCall::new("call_2", "read", json!({"path": "missing.txt"}));
        let outcome = registry.dispatch(missing, toolprism::Surface::Direct).await;
        assert!(outcome.is_error(), "{outcome:?}");
    }
    .instrument(turn)
    .await;
    client.close().await;
}

/// Runs `turn` on `runtime` as a process whose spans go to `sink` as "agent-test"; exported
/// on return.
pub fn traced_as_agent<T>(
    runtime: &tokio::runtime::Runtime,
    sink: &Sink,
    turn: impl Future<Output = T>,
) -> T {
    let telemetry = Telemetry::to_endpoint(&sink.url, "agent-test").unwrap();
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let ended = tracing::subscriber::with_default(subscriber, || runtime.block_on(turn));
    drop(telemetry);
    ended
}

/// What the receiver got once `ready` says it has all it waits for (bounded in time).
pub fn received_when(
    sink: &Sink,
    ready: impl Fn(&[Span], &[(String, String)]) -> bool,
) -> (Vec<Span>, Vec<(String, String)>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (spans, metrics) = received(&sink.out);
        if ready(&spans, &metrics) || Instant::now() > deadline {
            return (spans, metrics);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub fn workspace(dir: &Path) -> PathBuf {
    let workspace = dir.join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("notes.txt"), "a secret line\n").unwrap();
    workspace
}
