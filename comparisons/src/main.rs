//! The same four tools, written with toolprism, with rmcp (the official Rust MCP SDK) and with
//! rig, called with the same arguments; prints what each framework lets through, as a Markdown
//! table. rmcp is driven through a real client and server over an in-process duplex pipe; rig
//! through its erased dispatch boundary (`ErasedTool::execute`), the one its agents use.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};
use toolprism::prelude::{Registry, Surface, ToolCall, ToolContext, ToolDef, ToolError};

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    #[schemars(range(max = 100))]
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Reading {
    value: f64,
}

/// Says (in its schema) that `count` is an integer, and serializes it as a string.
#[derive(JsonSchema)]
struct Liar {
    count: u32,
}

impl Serialize for Liar {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        json!({"count": self.count.to_string()}).serialize(serializer)
    }
}

// ------------------------------------------------------------------------- rmcp

#[derive(Clone)]
struct RmcpTools {
    #[allow(
        dead_code,
        reason = "the router rmcp's examples keep; `#[tool_handler]` may build its own"
    )]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpTools {
    #[tool(description = "Adds two integers.")]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> rmcp::Json<i64> {
        rmcp::Json(args.a + args.b)
    }

    #[tool(description = "Reads a sensor.")]
    async fn read_sensor(&self) -> rmcp::Json<Reading> {
        rmcp::Json(Reading { value: f64::NAN })
    }

    #[tool(description = "Counts.")]
    async fn count(&self) -> rmcp::Json<Liar> {
        rmcp::Json(Liar { count: 3 })
    }

    #[tool(description = "Adds, returning a plain integer.")]
    async fn add_plain(&self, Parameters(args): Parameters<AddArgs>) -> String {
        (args.a + args.b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for RmcpTools {}

/// What one call returned: whether it was an error, and the structured value.
fn describe(is_error: bool, value: Option<&Value>, text: &str) -> String {
    let text = text.replace('\n', " ");
    match (is_error, value) {
        (true, _) => format!("error: {}…", text.chars().take(70).collect::<String>()),
        (false, Some(value)) => format!("success, value `{value}`"),
        (false, None) => format!(
            "success, text `{}`",
            text.chars().take(40).collect::<String>()
        ),
    }
}

/// What an MCP client (rmcp's) sees of `server`'s tools.
async fn mcp_results(
    server: impl ServerHandler,
    calls: &[(&str, Value)],
) -> (Vec<String>, Vec<(String, bool)>) {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(async move {
        server.serve(server_io).await?.waiting().await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    });
    let client = ().serve(client_io).await.expect("client connects");
    let listed = client.list_all_tools().await.expect("tools/list");
    let schemas = listed
        .iter()
        .map(|tool| (tool.name.to_string(), tool.output_schema.is_some()))
        .collect();
    let mut results = Vec::new();
    for (name, args) in calls {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map.clone());
        }
        let shown = match client.call_tool(params).await {
            Ok(result) => {
                let text = result
                    .content
                    .iter()
                    .find_map(|block| block.as_text().map(|t| t.text.clone()))
                    .unwrap_or_default();
                describe(
                    result.is_error.unwrap_or(false),
                    result.structured_content.as_ref(),
                    &text,
                )
            }
            Err(error) => format!(
                "error: {}",
                error.to_string().chars().take(60).collect::<String>()
            ),
        };
        results.push(shown);
    }
    let _ = client.cancel().await;
    server.abort();
    (results, schemas)
}

// ------------------------------------------------------------------------- rig

/// rig tools are types; one per tool, each with the same body as the others'.
macro_rules! rig_tool {
    ($ty:ident, $name:literal, $args:ty, $output:ty, |$a:ident| $body:expr) => {
        struct $ty;
        impl rig_core::tool::PortableTool for $ty {
            const NAME: &'static str = $name;
            type Args = $args;
            type Output = $output;
            type Error = std::convert::Infallible;
            fn description(&self) -> String {
                $name.to_owned()
            }
            fn parameters(&self) -> Value {
                serde_json::to_value(schemars::schema_for!($args)).unwrap()
            }
            async fn call(&self, $a: $args) -> Result<$output, Self::Error> {
                Ok($body)
            }
        }
    };
}

rig_tool!(RigAdd, "add", AddArgs, i64, |args| args.a + args.b);
rig_tool!(RigSensor, "read_sensor", Value, Reading, |_args| Reading {
    value: f64::NAN
});
rig_tool!(RigCount, "count", Value, Liar, |_args| Liar { count: 3 });

async fn rig_results(calls: &[(&str, Value)]) -> Vec<String> {
    use rig_core::tool::{ErasedTool, ToolContext};
    let mut results = Vec::new();
    for (name, args) in calls {
        let tool: &dyn ErasedTool = match *name {
            "add" => &RigAdd,
            "read_sensor" => &RigSensor,
            _ => &RigCount,
        };
        let result = tool
            .execute(args.to_string(), &mut ToolContext::new())
            .await;
        let output = result.output();
        let text = output.as_text().map(str::to_owned).unwrap_or_default();
        results.push(describe(result.is_error(), output.as_json(), &text));
    }
    results
}

// ------------------------------------------------------------------------- toolprism

fn toolprism_registry() -> Registry {
    let add = ToolDef::builder("add")
        .description("Adds two integers.")
        .handler(
            |args: AddArgs, _: ToolContext| async move { Ok::<_, ToolError>(args.a + args.b) },
        );
    let sensor = ToolDef::builder("read_sensor")
        .description("Reads a sensor.")
        .handler(|_: Value, _: ToolContext| async {
            Ok::<_, ToolError>(Reading { value: f64::NAN })
        });
    let count = ToolDef::builder("count")
        .description("Counts.")
        .handler(|_: Value, _: ToolContext| async { Ok::<_, ToolError>(Liar { count: 3 }) });
    let add_plain = ToolDef::builder("add_plain")
        .description("Adds, returning a plain integer.")
        .handler(
            |args: AddArgs, _: ToolContext| async move { Ok::<_, ToolError>(args.a + args.b) },
        );
    Registry::builder()
        .tool(add)
        .tool(sensor)
        .tool(count)
        .tool(add_plain)
        .build()
        .unwrap()
}

async fn toolprism_results(calls: &[(&str, Value)]) -> (Vec<String>, Vec<(String, bool)>) {
    let registry = toolprism_registry();
    let schemas = registry
        .snapshot()
        .definitions()
        .map(|d| (d.name().to_owned(), d.output_schema() != &json!(true)))
        .collect();
    let mut results = Vec::new();
    for (name, args) in calls {
        let outcome = registry
            .dispatch(ToolCall::new("c", *name, args.clone()), Surface::Direct)
            .await;
        let text: String = outcome
            .content()
            .iter()
            .filter_map(|b| b.as_text())
            .collect();
        let value = outcome.value().map(|v| v.as_value().clone());
        results.push(describe(outcome.is_error(), value.as_ref(), &text));
    }
    (results, schemas)
}

#[tokio::main]
async fn main() {
    let calls = [
        ("add", json!({"a": 1, "b": 2})),
        ("add", json!({"a": 1, "b": 2, "c": 3})),
        ("add", json!({"a": "one", "b": 2})),
        ("add", json!({"a": 1000, "b": 2})),
        ("read_sensor", json!({})),
        ("count", json!({})),
    ];
    let labels = [
        "valid arguments",
        "an unknown argument `c`",
        "a string where the schema says integer",
        "`a` above the schema's maximum of 100",
        "a value holding NaN",
        "a value that breaks its own output schema",
    ];
    let (ours, our_schemas) = toolprism_results(&calls).await;
    let rmcp_tools = RmcpTools {
        tool_router: RmcpTools::tool_router(),
    };
    let (theirs, their_schemas) = mcp_results(rmcp_tools, &calls).await;
    let served = toolprism_mcp::McpServer::new(toolprism_registry());
    let (ours_served, served_schemas) = mcp_results(served, &calls).await;
    let rig = rig_results(&calls).await;
    println!(
        "| call | toolprism (this repository) | toolprism-mcp, as an MCP client sees it | rmcp 3.11.0, as an MCP client sees it | rig-core 0.44.0 |"
    );
    println!("|---|---|---|---|---|");
    for ((((label, ours), served), theirs), rig) in labels
        .iter()
        .zip(&ours)
        .zip(&ours_served)
        .zip(&theirs)
        .zip(&rig)
    {
        println!("| {label} | {ours} | {served} | {theirs} | {rig} |");
    }
    let schema_of = |schemas: &[(String, bool)], name: &str| {
        schemas
            .iter()
            .find(|(n, _)| n == name)
            .is_some_and(|(_, has)| *has)
    };
    println!(
        "| output schema advertised for a tool returning a plain integer | {} | {} | {} | {} |",
        schema_of(&our_schemas, "add_plain"),
        schema_of(&served_schemas, "add_plain"),
        schema_of(&their_schemas, "add_plain"),
        "no such field",
    );
}
