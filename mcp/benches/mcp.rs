//! One `tools/call` and one `tools/list` through toolprism's MCP server and through an rmcp
//! `#[tool_router]` server for the same tools, each driven by the same rmcp client over the
//! same in-process pipe: both pay JSON-RPC framing, so the ratio compares like with like.
//! toolprism validates the arguments and the value against their schemas; rmcp does neither.
//!
//! `cargo bench -p toolprism-mcp --bench mcp`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

mod servers;

use servers::{connect, rmcp_server, toolprism_server};

fn tools_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let params = CallToolRequestParams::new("add_0")
        .with_arguments(json!({"a": 2, "b": 3}).as_object().unwrap().clone());
    let clients = [
        ("toolprism", connect(&runtime, toolprism_server(1))),
        ("rmcp", connect(&runtime, rmcp_server(1))),
    ];
    let mut group = c.benchmark_group("tools_call");
    for (name, client) in &clients {
        // Both answer the same, or the comparison means nothing.
        let result = runtime.block_on(client.call_tool(params.clone())).unwrap();
        assert_eq!(result.structured_content, Some(json!({"sum": 5})), "{name}");
        group.bench_function(*name, |b| {
            b.iter(|| runtime.block_on(client.call_tool(params.clone())).unwrap());
        });
    }
    group.finish();
}

fn tools_list(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("tools_list");
    for count in [10, 150, 1_000] {
        let clients = [
            ("toolprism", connect(&runtime, toolprism_server(count))),
            ("rmcp", connect(&runtime, rmcp_server(count))),
        ];
        for (name, client) in &clients {
            let listed = runtime.block_on(client.list_all_tools()).unwrap();
            assert_eq!(listed.len(), count, "{name}");
            group.bench_with_input(BenchmarkId::new(*name, count), &count, |b, _| {
                b.iter(|| runtime.block_on(client.list_all_tools()).unwrap());
            });
        }
    }
    group.finish();
}

criterion_group!(benches, tools_call, tools_list);
criterion_main!(benches);
