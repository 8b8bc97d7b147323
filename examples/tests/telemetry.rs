//! One trace across two processes, exported to a real OTLP receiver: this test (an agent's
//! turn, calling a tool it imported over MCP) and the `mcp_server` example over stdio
//! (answering it), both exporting over OTLP/HTTP to `scripts/otel-sink` on loopback. The
//! spans, their parent links across the processes, their attributes and the metrics are read
//! back from what the receiver got.

mod otlp;

use toolprism_mcp::{ImportOptions, McpClient};

use otlp::{
    agent_turn, exporting_to, find, one, received_when, runtime, sink, traced_as_agent, workspace,
};

#[test]
fn one_trace_follows_a_call_from_the_agent_into_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(dir.path());
    let sink = sink(dir.path());
    traced_as_agent(&runtime(), &sink, async {
        let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp_server"));
        server.arg("--root").arg(&workspace);
        exporting_to(&sink, &mut server);
        // Its stdin closed, the server ends its session and exports what it holds.
        agent_turn(
            McpClient::connect_stdio(server, ImportOptions::default())
                .await
                .unwrap(),
        )
        .await;
    });

    let (spans, metrics) = received_when(&sink, |spans, metrics| {
        find(spans, "toolprism-mcp-server", "tools/call read").len() == 2
            && metrics.iter().any(|(service, name)| {
                service == "toolprism-mcp-server" && name == "mcp.server.operation.duration"
            })
    });

    let servers = linked_across_processes(&spans);
    let executions = find(&spans, "agent-test", "execute_tool read");
    let server_executions = find(&spans, "toolprism-mcp-server", "execute_tool read");
    assert_eq!(server_executions.len(), 2, "{spans:#?}");
    for server in &servers {
        // The tool's own span in the server's process, inside the request.
        let inside = server_executions.iter().find(|e| e.parent == server.id);
        assert!(inside.is_some(), "no execute_tool under {server:#?}");
    }

    // The missing file: a failure on both sides, with the tool's code as `error.type`.
    let failed: Vec<_> = server_executions.iter().filter(|e| e.error).collect();
    assert_eq!(failed.len(), 1, "{server_executions:#?}");
    let code = failed[0].attributes["error.type"].as_str().unwrap();
    assert!(!code.is_empty());
    let failed_server = servers.iter().find(|s| s.id == failed[0].parent).unwrap();
    assert!(failed_server.error);
    assert_eq!(failed_server.attributes["error.type"], "tool_error");
    assert_eq!(executions.iter().filter(|e| e.error).count(), 1);

    // Nothing a call carries is recorded unless asked: no arguments, no results, no content.
    for span in &spans {
        assert!(!span.attributes.contains_key("gen_ai.tool.call.arguments"));
        assert!(!span.attributes.contains_key("gen_ai.tool.call.result"));
        let all = serde_json::to_string(&span.attributes).unwrap();
        assert!(!all.contains("secret"), "{span:#?}");
    }

    // The metrics of both sides.
    for (service, name) in [
        ("agent-test", "gen_ai.client.operation.duration"),
        ("agent-test", "mcp.client.operation.duration"),
        ("toolprism-mcp-server", "gen_ai.client.operation.duration"),
        ("toolprism-mcp-server", "mcp.server.operation.duration"),
    ] {
        assert!(
            metrics.iter().any(|(s, n)| s == service && n == name),
            "{service} {name} in {metrics:?}"
        );
    }
}

/// The agent's turn, the tool's span inside it, the MCP request inside that, and the other
/// process's request span the child of this one, in the same trace: the server's request spans.
fn linked_across_processes(spans: &[otlp::Span]) -> Vec<&otlp::Span> {
    let turn = one(spans, "agent-test", "agent turn");
    let executions = find(spans, "agent-test", "execute_tool read");
    let clients = find(spans, "agent-test", "tools/call read");
    let servers = find(spans, "toolprism-mcp-server", "tools/call read");
    assert_eq!(
        (executions.len(), clients.len(), servers.len()),
        (2, 2, 2),
        "{spans:#?}"
    );
    for execution in &executions {
        assert_eq!(execution.parent, turn.id);
        assert_eq!(execution.trace, turn.trace);
        assert_eq!(execution.kind, "SPAN_KIND_INTERNAL");
        assert_eq!(
            execution.attributes["gen_ai.operation.name"],
            "execute_tool"
        );
        assert_eq!(execution.attributes["gen_ai.tool.name"], "read");
        assert_eq!(execution.attributes["gen_ai.tool.type"], "function");
    }
    for client in &clients {
        let execution = executions.iter().find(|e| e.id == client.parent).unwrap();
        assert_eq!(client.kind, "SPAN_KIND_CLIENT");
        assert_eq!(client.trace, execution.trace);
        assert_eq!(client.attributes["mcp.method.name"], "tools/call");
        assert_eq!(client.attributes["gen_ai.tool.name"], "read");
        let server = servers.iter().find(|s| s.parent == client.id);
        let server = server.unwrap_or_else(|| panic!("no server span under {client:#?}"));
        assert_eq!(server.trace, turn.trace);
        assert_eq!(server.kind, "SPAN_KIND_SERVER");
        assert_eq!(server.attributes["mcp.method.name"], "tools/call");
        assert_eq!(server.attributes["network.transport"], "pipe");
        assert_eq!(server.attributes["mcp.protocol.version"], "2026-07-28");
        assert_eq!(
            server.attributes["jsonrpc.request.id"],
            client.attributes["jsonrpc.request.id"]
        );
    }
    servers
}
