//! One agent turn traced with OpenTelemetry across two processes: what `docs/telemetry.md`
//! shows in a trace viewer.
//!
//! ```text
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 cargo run -p toolprism-examples --bin traced_turn
//! ```
//!
//! The turn (an `invoke_agent` span) reads a file, runs a Code Mode program that searches and
//! reads, calls `glob` in a second process (this binary again, serving the coding tools over
//! MCP on stdio, exporting as `coding-tools-server`), and has a write to `.env` denied by a
//! policy. Each call is an `execute_tool` span; the MCP request is a client span
//! here and a server span there, in the same trace. Nothing is sent without
//! `OTEL_EXPORTER_OTLP_ENDPOINT`.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolprism::pipeline::{ExecuteCall, PreDecision};
use toolprism::{Registry, Surface, ToolCall};
use toolprism_codemode::CodeMode;
use toolprism_examples::tools::{Workspace, grep, read, register_all, write};
use toolprism_mcp::{ImportOptions, McpClient, McpServer};
use toolprism_otel::Telemetry;
use tracing::Instrument as _;

type Failure = Box<dyn std::error::Error>;

const SERVE: &str = "--serve-stdio";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some(SERVE) {
        let root = PathBuf::from(args.next().ok_or("--serve-stdio ROOT")?);
        return serve(&root).await;
    }
    let Some(telemetry) = Telemetry::init_from_env("coding-agent")? else {
        return Err("set OTEL_EXPORTER_OTLP_ENDPOINT to where traces go".into());
    };
    let root = std::env::temp_dir().join(format!("toolprism-traced-turn-{}", std::process::id()));
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(root.join("README.md"), "# demo\n\nTODO: trace a turn\n")?;
    std::fs::write(
        root.join("src/lib.rs"),
        "// TODO: export spans\npub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n",
    )?;
    let turned = turn(&root).await;
    std::fs::remove_dir_all(&root)?;
    drop(telemetry);
    turned
}

/// The second process: the coding tools over MCP on stdio, traced as `coding-tools-server`.
async fn serve(root: &Path) -> Result<(), Failure> {
    let _telemetry = Telemetry::init_from_env("coding-tools-server")?;
    let workspace = Workspace::new(root)?;
    let registry = register_all(Registry::builder(), &workspace).build()?;
    McpServer::new(registry).serve_stdio().await?;
    Ok(())
}

async fn turn(root: &Path) -> Result<(), Failure> {
    let workspace = Workspace::new(root)?;
    let registry = Registry::builder()
        .state(workspace)
        .tool(read::Read)
        .tool(grep::Grep)
        .tool(write::Write)
        .pre_execute(|call: &ExecuteCall| {
            let path = call.args()["path"].as_str().unwrap_or_default();
            if call.name() == "write" && path.to_ascii_lowercase().ends_with(".env") {
                PreDecision::deny("secrets are not written by the agent")
            } else {
                PreDecision::Allow
            }
        })
        .build()?;
    CodeMode::new().register(&registry)?;
    let mut server = tokio::process::Command::new(std::env::current_exe()?);
    server.arg(SERVE).arg(root);
    let remote =
        McpClient::connect_stdio(server, ImportOptions::default().prefix("remote_")).await?;
    // Imported as `remote_glob`, `remote_edit`, …: the server's tools named as this
    // process's own (`read`, `grep`, `write`) are refused as lookalikes.
    remote.import_into(&registry).await?;

    let span = tracing::info_span!(
        "invoke_agent",
        otel.name = "invoke_agent coding-agent",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = "coding-agent",
    );
    let calls = [
        ("call_1", "read", json!({"path": "README.md"})),
        (
            "call_2",
            "run_code",
            json!({"code": "const hits = await tools.grep({pattern: 'TODO'});\n\
                             const first = await tools.read({path: 'src/lib.rs', limit: 2});\n\
                             return {hits, first};"}),
        ),
        ("call_3", "remote_glob", json!({"pattern": "**/*.rs"})),
        (
            "call_4",
            "write",
            json!({"path": ".env", "content": "TOKEN=1"}),
        ),
    ];
    async {
        for (id, name, args) in calls {
            let outcome = registry
                .dispatch(ToolCall::new(id, name, args), Surface::Direct)
                .await;
            let how = outcome
                .error()
                .map_or("ok", |error| error.code().unwrap_or("failed"));
            println!("{name}: {how}");
        }
    }
    .instrument(span)
    .await;
    remote.close().await;
    Ok(())
}
