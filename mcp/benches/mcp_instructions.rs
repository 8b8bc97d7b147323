//! Runs `n` MCP requests against one server, for `scripts/mcp-instructions.sh` to count under
//! callgrind: instruction counts are stable on a noisy machine where timings are not.
//!
//! `mcp_instructions <toolprism|rmcp> <call|handler|list10|list150|list1000> <n>`
//!
//! `handler` is `call` without JSON-RPC: the server's `call_tool` is called directly, with the
//! request's parameters and context as rmcp's service would build them, so that its count is
//! what each server's own code costs.

use rmcp::model::{CallToolRequestParams, RequestId};
use rmcp::service::RequestContext;
use serde_json::json;

mod servers;

use servers::{Client, connect, rmcp_server, toolprism_server};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [server, op, n] = &args[..] else {
        // `cargo bench` runs every bench target with its own flags: nothing to do then.
        return;
    };
    let n: usize = n.parse().expect("n is a count");
    if op == "handler" {
        return match server.as_str() {
            "toolprism" => call_handler(toolprism_server(1), n),
            _ => call_handler(rmcp_server(1), n),
        };
    }
    let tools = match op.as_str() {
        "call" => 1,
        list => list
            .trim_start_matches("list")
            .parse()
            .expect("list10, list150 or list1000"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client: Client = match server.as_str() {
        "toolprism" => connect(&runtime, toolprism_server(tools)),
        _ => connect(&runtime, rmcp_server(tools)),
    };
    let params = add_params();
    runtime.block_on(async {
        for _ in 0..n {
            if op == "call" {
                client.call_tool(params.clone()).await.unwrap();
            } else {
                client.list_all_tools().await.unwrap();
            }
        }
    });
    // No teardown, which would make glibc consolidate its heap in one run and not the other.
    std::process::exit(0);
}

fn add_params() -> CallToolRequestParams {
    CallToolRequestParams::new("add_0")
        .with_arguments(json!({"a": 2, "b": 3}).as_object().unwrap().clone())
}

/// `n` calls of `server`'s `call_tool`, each with a fresh copy of the parameters and a fresh
/// request context (as rmcp's service makes them per request), on a peer nobody reads.
fn call_handler(server: impl rmcp::ServerHandler + Clone, n: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let params = add_params();
    runtime.block_on(async {
        let (server_io, _client_io) = tokio::io::duplex(1 << 16);
        let running = rmcp::service::serve_directly(server.clone(), server_io, None);
        let peer = running.peer().clone();
        for _ in 0..n {
            let context = RequestContext::new(RequestId::Number(1), peer.clone());
            let response = server.call_tool(params.clone(), context).await;
            std::hint::black_box(response.unwrap());
        }
    });
    std::process::exit(0);
}
