//! The servers both benches drive: toolprism's and an rmcp `#[tool_router]` server with the
//! same tools, and an rmcp client connected to either over an in-process pipe.
#![allow(dead_code, reason = "each bench uses part of it")]

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServerHandler, ServiceExt as _, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;
use toolprism::prelude::{Registry, ToolContext, ToolDef, ToolError};
use toolprism_mcp::McpServer;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AddArgs {
    /// The left operand.
    a: i64,
    /// The right operand.
    b: i64,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct Sum {
    pub(crate) sum: i64,
}

#[derive(Clone)]
pub(crate) struct RmcpCalc {
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
pub(crate) fn rmcp_server(count: usize) -> RmcpCalc {
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
pub(crate) fn toolprism_server(count: usize) -> McpServer {
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

pub(crate) type Client = RunningService<RoleClient, ()>;

pub(crate) fn connect(runtime: &Runtime, server: impl ServerHandler) -> Client {
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
