//! `tools serve --http` traced: the agent's trace continued over streamable HTTP, and what
//! the server holds exported when it is asked to stop (`SIGTERM`), to `scripts/otel-sink`.

mod otlp;

use std::process::Stdio;
use std::time::Duration;

use toolprism_mcp::{ImportOptions, McpClient};

use otlp::{
    agent_turn, exporting_to, find, received_when, runtime, sink, traced_as_agent, workspace,
};

#[test]
fn tools_serve_over_http_continues_the_trace_and_exports_as_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(dir.path());
    let sink = sink(dir.path());
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_tools"));
    serve
        .current_dir(&workspace)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    exporting_to(&sink, &mut serve);
    // A metric interval far longer than the test: what it shows was exported as it stopped.
    serve.env("OTEL_METRIC_EXPORT_INTERVAL", "600000");
    let runtime = runtime();
    let mut server = traced_as_agent(&runtime, &sink, async move {
        use tokio::io::AsyncBufReadExt as _;
        let mut server = serve.spawn().unwrap();
        let mut line = String::new();
        tokio::io::BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .await
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .expect(&line)
            .to_owned();
        let client = McpClient::connect_http(&url, ImportOptions::default())
            .await
            .unwrap();
        agent_turn(client).await;
        server
    });

    // Asked to stop as an orchestrator asks, it ends its requests and exports.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(30), server.wait()).await })
        .expect("the server stops when asked")
        .unwrap();
    assert!(status.success(), "{status:?}");

    let (spans, metrics) = received_when(&sink, |spans, metrics| {
        find(spans, "toolprism-tools", "tools/call read").len() == 2
            && metrics
                .iter()
                .any(|(service, _)| service == "toolprism-tools")
    });
    let clients = find(&spans, "agent-test", "tools/call read");
    let servers = find(&spans, "toolprism-tools", "tools/call read");
    assert_eq!((clients.len(), servers.len()), (2, 2), "{spans:#?}");
    for server in servers {
        let client = clients.iter().find(|client| client.id == server.parent);
        let client = client.unwrap_or_else(|| panic!("no client span over {server:#?}"));
        assert_eq!(server.trace, client.trace);
        assert_eq!(server.kind, "SPAN_KIND_SERVER");
        assert_eq!(server.attributes["network.transport"], "tcp");
        assert_eq!(
            server.attributes["jsonrpc.request.id"],
            client.attributes["jsonrpc.request.id"]
        );
    }
    assert!(
        metrics
            .iter()
            .any(|(service, name)| service == "toolprism-tools"
                && name == "mcp.server.operation.duration"),
        "{metrics:?}"
    );
}
