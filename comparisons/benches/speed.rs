//! One call, side by side in one run: toolprism's dispatch, rmcp's `ServerHandler::call_tool`
//! (in process, no JSON-RPC: a `RequestContext` whose `Peer` comes from `serve_directly` on an
//! idle in-process pipe) with its router stored and with the router `#[tool_handler]` rebuilds
//! per request, rig's erased dispatch (`ErasedTool::execute`, feature `rig`), and the serde floor
//! (deserialize the arguments, run the body, `to_value` the result: what any framework pays).
//!
//! - `read`: a read-style tool returning 50 lines (the runtime benches' tool);
//! - `add`: `add(a, b)`;
//! - `many`: `add` with 1,000 tools registered.
//!
//! What each side does per call: toolprism validates the arguments against the input schema,
//! deserializes, runs the body, snapshots the value losslessly, validates it against the output
//! schema and renders it (and the read card); rmcp deserializes, runs the body and serializes
//! the result (text and structured content); rig deserializes, runs the body and serializes
//! the output to text.
//!
//! `cargo bench --manifest-path comparisons/Cargo.toml --bench speed`
//! (`--no-default-features` leaves rig, and its `preserve_order`, out of the build).
//!
//! Given `instructions <case> <side> <n>` instead, it runs one side `n` times and nothing
//! else, for `comparisons/instructions.sh` to count under callgrind: on a shared machine
//! instruction counts are stable where timings swing by a third.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestId};
use rmcp::service::{RequestContext, RoleServer, RunningService, serve_directly};
use rmcp::{ErrorData, Peer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolprism::access::Caller;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::{Registry, Surface, ToolCall, ToolContext, ToolDef, ToolError};

/// The runtime benches' read-style tool: its types, body, render and card.
#[path = "../../runtime/benches/read_tool/mod.rs"]
mod read_tool;

use read_tool::{ReadArgs, ReadValue, body as read_body};

/// Tools registered beside `add` in the `many` case.
const MANY: usize = 1_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn add_args() -> Value {
    json!({"a": 20, "b": 22})
}

// ------------------------------------------------------------------------- toolprism

/// `add` with one feature configured (`toolprism_timeout`: a 30 s limit; `toolprism_caller`:
/// the scope `math` required, and a caller holding it), and the options of its calls.
fn configured(side: &str) -> (toolprism::pipeline::Snapshot, DispatchOptions) {
    let add = ToolDef::builder("add")
        .description("Adds two integers.")
        .handler(|args: AddArgs, _: ToolContext| async move { Ok::<_, ToolError>(args.a + args.b) })
        .build();
    let (add, options) = if side == "toolprism_timeout" {
        (
            add.with_timeout(Duration::from_secs(30)),
            DispatchOptions::default(),
        )
    } else {
        let claims = json!({"sub": "ada", "scope": "math files:read"});
        let caller = Caller::from_claims(claims.as_object().cloned().unwrap_or_default());
        (
            add.with_scope("math"),
            DispatchOptions::default().caller(Arc::new(caller)),
        )
    };
    let registry = Registry::builder().tool(add).build().unwrap();
    (registry.snapshot(), options)
}

fn toolprism_registry(extra: usize) -> Registry {
    let add = ToolDef::builder("add")
        .description("Adds two integers.")
        .handler(|args: AddArgs, _: ToolContext| async move { Ok::<_, ToolError>(args.a + args.b) })
        .build();
    let fillers = (0..extra).map(|at| {
        ToolDef::builder(format!("tool_{at}"))
            .description("One of many.")
            .handler(
                |args: AddArgs, _: ToolContext| async move { Ok::<_, ToolError>(args.a + args.b) },
            )
            .build()
    });
    Registry::builder()
        .tool(read_tool::Read)
        .tool(add)
        .tools(fillers)
        .build()
        .unwrap()
}

// ------------------------------------------------------------------------- rmcp

/// The router built once and kept, as rmcp's examples write it.
#[derive(Clone)]
struct Stored {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Stored {
    #[tool(description = "Reads a file.")]
    async fn read(&self, Parameters(args): Parameters<ReadArgs>) -> rmcp::Json<ReadValue> {
        rmcp::Json(read_body(args))
    }

    #[tool(description = "Adds two integers.")]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> rmcp::Json<i64> {
        rmcp::Json(args.a + args.b)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Stored {}

impl Stored {
    fn with_fillers(extra: usize) -> Self {
        let mut tool_router = Self::tool_router();
        let add = tool_router.map.get("add").cloned().expect("add is routed");
        for at in 0..extra {
            let mut route = add.clone();
            route.attr.name = format!("tool_{at}").into();
            tool_router.add_route(route);
        }
        Self { tool_router }
    }
}

/// The same tools as `#[tool_handler]` serves them by default: the router built for every
/// request (the body below is what the macro writes without `router = …`).
#[derive(Clone)]
struct Rebuilt(Stored);

impl ServerHandler for Rebuilt {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tcc = ToolCallContext::new(&self.0, request, context);
        Stored::tool_router().call(tcc).await
    }
}

/// A server's `Peer`, from `serve_directly` on a pipe nobody writes to.
fn peer_of<S: ServerHandler>(
    server: S,
) -> (
    Peer<RoleServer>,
    RunningService<RoleServer, S>,
    tokio::io::DuplexStream,
) {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let running = serve_directly(server, server_io, None);
    (running.peer().clone(), running, client_io)
}

async fn rmcp_call(server: &impl ServerHandler, peer: &Peer<RoleServer>, name: &str, args: &Value) {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map.clone());
    }
    let context = RequestContext::new(RequestId::Number(1), peer.clone());
    let result = server.call_tool(params, context).await.expect("a result");
    black_box(result);
}

// ------------------------------------------------------------------------- rig

#[cfg(feature = "rig")]
mod rig {
    use super::{AddArgs, ReadArgs, ReadValue, read_body};
    use rig_core::tool::{ErasedTool, PortableTool, ToolContext};
    use serde_json::Value;
    use std::hint::black_box;

    pub(super) struct Read;
    impl PortableTool for Read {
        const NAME: &'static str = "read";
        type Args = ReadArgs;
        type Output = ReadValue;
        type Error = std::convert::Infallible;
        fn description(&self) -> String {
            "Reads a file.".to_owned()
        }
        fn parameters(&self) -> Value {
            serde_json::to_value(schemars::schema_for!(ReadArgs)).unwrap()
        }
        async fn call(&self, args: ReadArgs) -> Result<ReadValue, Self::Error> {
            Ok(read_body(args))
        }
    }

    pub(super) struct Add;
    impl PortableTool for Add {
        const NAME: &'static str = "add";
        type Args = AddArgs;
        type Output = i64;
        type Error = std::convert::Infallible;
        fn description(&self) -> String {
            "Adds two integers.".to_owned()
        }
        fn parameters(&self) -> Value {
            serde_json::to_value(schemars::schema_for!(AddArgs)).unwrap()
        }
        async fn call(&self, args: AddArgs) -> Result<i64, Self::Error> {
            Ok(args.a + args.b)
        }
    }

    pub(super) async fn call(tool: &dyn ErasedTool, args: &Value) {
        let result = tool
            .execute(args.to_string(), &mut ToolContext::new())
            .await;
        black_box(result);
    }
}

// ------------------------------------------------------------------------- the runs

/// What any framework pays: deserialize the arguments, run the body, `to_value` the result.
fn serde_floor(name: &str, args: &Value) {
    if name == "read" {
        let parsed: ReadArgs = serde_json::from_value(black_box(args.clone())).unwrap();
        black_box(serde_json::to_value(read_body(parsed)).unwrap());
    } else {
        let parsed: AddArgs = serde_json::from_value(black_box(args.clone())).unwrap();
        black_box(serde_json::to_value(parsed.a + parsed.b).unwrap());
    }
}

fn speed(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let (read, add) = (read_tool::args(), add_args());

    let toolprism = toolprism_registry(0).snapshot();
    let toolprism_many = toolprism_registry(MANY).snapshot();
    let stored = Stored::with_fillers(0);
    let stored_many = Stored::with_fillers(MANY);
    let (stored_peer, _running, _pipe) = peer_of(stored.clone());
    let rebuilt = Rebuilt(Stored::with_fillers(0));
    let (rebuilt_peer, _running_rebuilt, _pipe_rebuilt) = peer_of(rebuilt.clone());

    for (case, name, args) in [("read", "read", &read), ("add", "add", &add)] {
        let mut group = c.benchmark_group(case);
        group.bench_function("serde_floor", |b| b.iter(|| serde_floor(name, args)));
        group.bench_function("toolprism", |b| {
            b.iter(|| {
                let call = ToolCall::new("c", name, black_box(args.clone()));
                black_box(runtime.block_on(toolprism.dispatch(call, Surface::Direct)))
            });
        });
        group.bench_function("rmcp_stored", |b| {
            b.iter(|| runtime.block_on(rmcp_call(&stored, &stored_peer, name, args)));
        });
        group.bench_function("rmcp_rebuilt", |b| {
            b.iter(|| runtime.block_on(rmcp_call(&rebuilt, &rebuilt_peer, name, args)));
        });
        #[cfg(feature = "rig")]
        group.bench_function("rig", |b| {
            let tool: &dyn rig_core::tool::ErasedTool = if name == "read" {
                &rig::Read
            } else {
                &rig::Add
            };
            b.iter(|| runtime.block_on(rig::call(tool, args)));
        });
        group.finish();
    }

    let mut group = c.benchmark_group("many");
    group.bench_function("toolprism", |b| {
        b.iter(|| {
            let call = ToolCall::new("c", "add", black_box(add.clone()));
            black_box(runtime.block_on(toolprism_many.dispatch(call, Surface::Direct)))
        });
    });
    let (many_peer, _running_many, _pipe_many) = peer_of(stored_many.clone());
    group.bench_function("rmcp_stored", |b| {
        b.iter(|| runtime.block_on(rmcp_call(&stored_many, &many_peer, "add", &add)));
    });
    group.finish();
}

/// One side of one case, `iterations` times, without criterion (for callgrind).
fn count_instructions(case: &str, side: &str, iterations: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let (name, args, extra) = match case {
        "read" => ("read", read_tool::args(), 0),
        "add" => ("add", add_args(), 0),
        "many" => ("add", add_args(), MANY),
        other => panic!("unknown case `{other}`: read, add or many"),
    };
    match side {
        "serde_floor" => {
            for _ in 0..iterations {
                serde_floor(name, &args);
            }
        }
        "toolprism" => {
            let snapshot = toolprism_registry(extra).snapshot();
            for _ in 0..iterations {
                let call = ToolCall::new("c", name, black_box(args.clone()));
                black_box(runtime.block_on(snapshot.dispatch(call, Surface::Direct)));
            }
        }
        // What a configured feature adds to the same call: a time limit on the tool; a caller
        // (authenticated claims) whose scope the tool requires.
        "toolprism_timeout" | "toolprism_caller" => {
            let (snapshot, options) = configured(side);
            for _ in 0..iterations {
                let call = ToolCall::new("c", name, black_box(args.clone()));
                let dispatch = snapshot.dispatch_with(call, Surface::Direct, options.clone());
                black_box(runtime.block_on(dispatch));
            }
        }
        "rmcp_stored" => {
            let stored = Stored::with_fillers(extra);
            let (peer, _running, _pipe) = peer_of(stored.clone());
            for _ in 0..iterations {
                runtime.block_on(rmcp_call(&stored, &peer, name, &args));
            }
        }
        other => panic!(
            "unknown side `{other}`: serde_floor, toolprism, toolprism_timeout, toolprism_caller or rmcp_stored"
        ),
    }
}

criterion_group!(benches, speed);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, case, side, iterations] = args.as_slice()
        && mode == "instructions"
    {
        let iterations = iterations.parse().expect("a number of iterations");
        count_instructions(case, side, iterations);
        // No teardown: freeing the setup (1,000 tools) makes glibc consolidate its heap, which
        // the run with no iterations would pay and the measured run not, or the other way round.
        std::process::exit(0);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
