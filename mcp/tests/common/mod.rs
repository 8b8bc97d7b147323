//! What the MCP tests share: a registry of tools of every shape, a recording rmcp client, and
//! connections over an in-process pipe at either protocol generation.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use tokio::sync::mpsc;
use toolprism::bound::{BoundLimits, FsOutputStore};
use toolprism::prelude::*;
use toolprism::present::{Card, GenericCard};
use toolprism_mcp::{McpServer, OutputResources};

/// The weather somewhere.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Weather {
    pub city: String,
    pub celsius: i32,
}

/// Looks up the weather in a city.
#[tool(render = render_weather, presentation_meta = weather_card)]
pub fn lookup(#[arg(description = "The city.")] city: String) -> Weather {
    Weather {
        celsius: i32::try_from(city.len()).unwrap_or(0),
        city,
    }
}

fn render_weather(_args: &LookupArgs, value: &Weather) -> String {
    format!("{}: {} °C", value.city, value.celsius)
}

fn weather_card(_args: &LookupArgs, value: &Weather) -> Card {
    Card::Generic(GenericCard {
        title: format!("Weather in {}", value.city),
        input: serde_json::json!({"city": value.city}),
        output: None,
        is_error: false,
    })
}

/// One hit of a search.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    pub line: u32,
    pub text: String,
}

/// Searches: a list of hits, a value that is not an object.
#[tool]
pub fn search(#[arg(description = "What to find.")] needle: String, count: u32) -> Vec<Hit> {
    (1..=count.min(1000))
        .map(|line| Hit {
            line,
            text: format!("{needle} at {line}"),
        })
        .collect()
}

/// Counts to `to`, reporting progress.
#[tool]
pub async fn count_to(#[arg] to: u8, cx: &ToolContext) -> u8 {
    for step in 1..=to {
        cx.progress(f64::from(step), Some(f64::from(to)), &format!("at {step}"));
        tokio::task::yield_now().await;
    }
    to
}

/// Always fails.
#[tool]
pub fn broken() -> Result<String, ToolError> {
    Err(ToolError::new("the disk is on fire").with_code("ON_FIRE"))
}

/// Sleeps for `millis` milliseconds.
#[tool]
pub async fn sleep(#[arg] millis: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    millis
}

/// Prints `lines` numbered lines.
#[tool]
pub fn print_lines(#[arg] lines: u32) -> String {
    (1..=lines.min(100_000))
        .map(|n| format!("line {n}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The test registry: bounded at 50 lines, spilled output in `dir`, named by resource URIs.
pub fn registry(dir: &std::path::Path) -> Registry {
    Registry::builder()
        .tool(Lookup)
        .tool(Search)
        .tool(CountTo)
        .tool(Broken)
        .tool(Sleep)
        .tool(PrintLines)
        .limits(BoundLimits::new(50, 16 * 1024))
        .output_store(OutputResources::new(FsOutputStore::new(dir)))
        .build()
        .expect("the test tools register")
}

/// What a client heard outside its requests.
#[derive(Debug)]
pub enum Heard {
    Progress(ProgressNotificationParam),
    ToolListChanged,
}

/// An rmcp client that records notifications.
pub struct Recorder {
    pub heard: mpsc::UnboundedSender<Heard>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolprism-test-client", "0"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.heard.send(Heard::Progress(params));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.heard.send(Heard::ToolListChanged);
    }
}

/// Which protocol generation a test client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// 2025-11-25: `initialize`, sessions.
    Legacy,
    /// 2026-07-28: `server/discover`, self-contained requests.
    Current,
}

pub fn lifecycle(generation: Generation) -> ClientLifecycleMode {
    match generation {
        Generation::Legacy => ClientLifecycleMode::Initialize,
        Generation::Current => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// Serves `server` over an in-process pipe and connects a recording rmcp client to it.
pub async fn connect(
    server: McpServer,
    generation: Generation,
) -> (Client, mpsc::UnboundedReceiver<Heard>) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (heard, hear) = mpsc::unbounded_channel();
    let client = Recorder { heard }
        .serve_with_lifecycle(client_io, lifecycle(generation))
        .await
        .expect("the client connects");
    (client, hear)
}

/// Waits (at most 10 s) for the first notification `pick` accepts.
pub async fn hear<T>(
    hear: &mut mpsc::UnboundedReceiver<Heard>,
    mut pick: impl FnMut(Heard) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let heard = hear.recv().await.expect("the client is still listening");
            if let Some(found) = pick(heard) {
                return found;
            }
        }
    })
    .await
    .expect("the notification arrived within 10 s")
}

/// The resource URI a bounding marker names.
pub fn marker_uri(text: &str) -> String {
    let start = text
        .find("toolprism://output/")
        .expect("the marker names a resource");
    text[start..]
        .chars()
        .take_while(|ch| !ch.is_whitespace() && *ch != ';')
        .collect()
}

/// A temporary directory for retained output.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

pub type Shared<T> = Arc<Mutex<T>>;
