//! Runs `n` MCP requests against one server, for `scripts/mcp-instructions.sh` to count under
//! callgrind: instruction counts are stable on a noisy machine where timings are not.
//!
//! `mcp_instructions <toolprism|rmcp> <call|list10|list150|list1000> <n>`

use rmcp::model::CallToolRequestParams;
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
    let params = CallToolRequestParams::new("add_0")
        .with_arguments(json!({"a": 2, "b": 3}).as_object().unwrap().clone());
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
