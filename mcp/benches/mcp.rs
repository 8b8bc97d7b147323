//! One `tools/call` and one `tools/list` through toolprism's MCP server and through an rmcp
//! `#[tool_router]` server for the same tools, each driven by the same rmcp client over the
//! same in-process pipe: both pay JSON-RPC framing, so the ratio compares like with like.
//! toolprism validates the arguments and the value against their schemas; rmcp does neither.
//!
//! `cargo bench -p toolprism-mcp --bench mcp`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServerHandler, ServiceExt as _, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::runtime::Runtime;
use toolprism::prelude::{Registry, ToolContext, ToolDef, ToolError};
use toolprism_mcp::McpServer;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The left operand.
    a: i64,
    /// The right operand.
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Clone)]
struct RmcpCalc {
    router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpCalc {
    #[tool(description = "Adds two integers.")]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum {
            sum: args.a + args.b,
        })
    }
}

// The router kept in the server, not rebuilt per request: rmcp at its best.
#[tool_handler(router = self.router)]
impl ServerHandler for RmcpCalc {}

/// rmcp's server with `count` copies of `add`, named `add_0`…
fn rmcp_server(count: usize) -> RmcpCalc {
    let route = RmcpCalc::tool_router()
        .into_iter()
        .next()
        .expect("the router has `add`");
    let mut router = ToolRouter::new();
    for at in 0..count {
        let mut copy = route.clone();
        copy.attr.name = format!("add_{at}").into();
        router.add_route(copy);
    }
    RmcpCalc { router }
}

/// toolprism's registry with `count` copies of `add`.
fn toolprism_server(count: usize) -> McpServer {
    let tools = (0..count).map(|at| {
        ToolDef::builder(format!("add_{at}"))
            .description("Adds two integers.")
            .handler(|args: AddArgs, _: ToolContext| async move {
                Ok::<_, ToolError>(Sum {
                    sum: args.a + args.b,
                })
            })
            .build()
    });
    McpServer::new(Registry::builder().tools(tools).build().unwrap())
}

type Client = RunningService<RoleClient, ()>;

fn connect(runtime: &Runtime, server: impl ServerHandler) -> Client {
    runtime.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_io).await.expect("the client connects")
    })
}

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
