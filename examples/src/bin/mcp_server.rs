//! The coding tools as an MCP server, over stdio (the default) or streamable HTTP.
//!
//! ```text
//! cargo run -p toolprism-examples --bin mcp_server -- [--root DIR] [--http [ADDR]] [--stateless]
//!     [--max-lines N] [--max-bytes N] [--output-dir DIR | --store s3://BUCKET[/PREFIX]]
//!     [--state-key-file FILE] [--demo] [--code-mode] [--allowed-host HOST]...
//!     [--fetch-allow HOST]...
//!     [--issuer URL --resource URL [--scope TOOL=SCOPE]... | --allow-unauthenticated]
//! ```
//!
//! - `--root`: the workspace the file tools are confined to (default: the current directory);
//! - `--http`: serve at `http://ADDR/mcp` (default `127.0.0.1:8765`, loopback only) instead of
//!   stdio; `--stateless` keeps no sessions, for replicas behind a load balancer. An address
//!   beyond loopback needs `--issuer`/`--resource`, or `--allow-unauthenticated`, which lets
//!   anyone who reaches it run every tool;
//! - `--allowed-host`: a `Host` the endpoint answers (`name` or `name:port`), instead of
//!   loopback's and the resource's; against DNS rebinding, not access control;
//! - `--fetch-allow`: a host `web_fetch` may reach although it is loopback or private;
//! - `--max-lines`, `--max-bytes`: bound what the model sees; the rest is retained under
//!   `--output-dir` and readable as a `toolprism://output/…` resource;
//! - `--store s3://BUCKET/PREFIX`: retained output and task records kept in S3 instead, so that
//!   every replica behind a load balancer reads what any other wrote; the bucket is reached as
//!   the usual environment says (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//!   and `AWS_ENDPOINT` with `AWS_ALLOW_HTTP=true` for an S3-compatible server);
//! - `--state-key-file FILE`: the key (the file's bytes, at least 32) that seals the state of
//!   a call waiting for input, the same for every replica so that any of them resumes it;
//! - `--issuer`, `--resource`: over HTTP, an OAuth 2.1 resource server: every request needs a
//!   JWT access token of the issuer for the resource (this endpoint's URL as clients reach
//!   it). The tools that act on the machine need their scopes (`bash` `shell:run`, `write` and
//!   `edit` `files:write`, `web_fetch` `web:fetch`); `--scope read=files:read` makes a tool
//!   need one more (a tool the server lacks is refused at start);
//! - `--code-mode`: adds `run_code`, whose programs call the other tools (each caller is
//!   declared, and reaches, only the tools its scopes allow);
//! - `--demo`: adds `count_to`, which reports progress and returns a bare integer, and
//!   `greet`, which asks the user a form (elicitation) before it answers, as a task for a
//!   client that takes tasks.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolprism::ask::Elicited;
use toolprism::bound::{BoundLimits, FsOutputStore};
use toolprism::prelude::*;
use toolprism_codemode::CodeMode;
use toolprism_examples::tools::web::FetchPolicy;
use toolprism_examples::tools::{Workspace, register_all};
use toolprism_mcp::{
    Authorization, DEFAULT_HTTP_ADDR, DEFAULT_REQUEST_STATE_TTL, DEFAULT_TASK_TTL, HttpMode,
    McpServer, ObjectOutputStore, ObjectTaskStore, OutputResources,
};

/// Counts from 1 to `to`, reporting progress at each step; returns `to`.
#[tool]
async fn count_to(
    #[arg(description = "Where to stop, at most 100.")] to: u8,
    cx: &ToolContext,
) -> Result<u8, ToolError> {
    if to > 100 {
        return Err(ToolError::new("count to 100 at most").with_code("TOO_FAR"));
    }
    for step in 1..=to {
        cx.progress(f64::from(step), Some(f64::from(to)), &format!("at {step}"));
        tokio::task::yield_now().await;
    }
    Ok(to)
}

/// What `greet` asks the user.
#[derive(Deserialize, JsonSchema)]
struct Visitor {
    /// Your name.
    name: String,
    /// How many times to be greeted, 1 to 3.
    #[schemars(range(min = 1, max = 3))]
    times: u8,
}

/// Asks the user who they are (a form, answered by the MCP client), and greets them; a task
/// for a client that takes tasks.
#[tool(task = "optional")]
async fn greet(cx: &ToolContext) -> Result<String, ToolError> {
    match cx.elicit::<Visitor>("visitor", "Who is there?").await? {
        Elicited::Accepted(Visitor { name, times }) => {
            Ok(vec![format!("Hello, {name}!"); usize::from(times)].join(" "))
        }
        Elicited::Declined | Elicited::Cancelled => Ok("Nobody is there.".to_owned()),
    }
}

#[expect(
    clippy::struct_excessive_bools,
    reason = "each is a flag of the command line"
)]
struct Options {
    root: PathBuf,
    http: Option<SocketAddr>,
    stateless: bool,
    limits: BoundLimits,
    output_dir: Option<PathBuf>,
    /// `s3://BUCKET[/PREFIX]`.
    store: Option<String>,
    state_key_file: Option<PathBuf>,
    demo: bool,
    code_mode: bool,
    issuer: Option<String>,
    resource: Option<String>,
    /// (tool, scope) pairs.
    scopes: Vec<(String, String)>,
    allowed_hosts: Vec<String>,
    fetch_allow: Vec<String>,
    allow_unauthenticated: bool,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        root: std::env::current_dir().map_err(|error| error.to_string())?,
        http: None,
        stateless: false,
        limits: BoundLimits::default(),
        output_dir: None,
        store: None,
        state_key_file: None,
        demo: false,
        code_mode: false,
        issuer: None,
        resource: None,
        scopes: Vec::new(),
        allowed_hosts: Vec::new(),
        fetch_allow: Vec::new(),
        allow_unauthenticated: false,
    };
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--root" => options.root = PathBuf::from(value("--root")?),
            "--http" => {
                options.http = Some(match args.peek() {
                    Some(addr) if !addr.starts_with("--") => {
                        let addr = args.next().unwrap_or_default();
                        addr.parse()
                            .map_err(|error| format!("--http {addr}: {error}"))?
                    }
                    _ => DEFAULT_HTTP_ADDR,
                });
            }
            "--stateless" => options.stateless = true,
            "--max-lines" => {
                options.limits.max_lines = value("--max-lines")?
                    .parse()
                    .map_err(|e| format!("--max-lines: {e}"))?;
            }
            "--max-bytes" => {
                options.limits.max_bytes = value("--max-bytes")?
                    .parse()
                    .map_err(|e| format!("--max-bytes: {e}"))?;
            }
            "--output-dir" => options.output_dir = Some(PathBuf::from(value("--output-dir")?)),
            "--store" => options.store = Some(value("--store")?),
            "--state-key-file" => {
                options.state_key_file = Some(PathBuf::from(value("--state-key-file")?));
            }
            "--demo" => options.demo = true,
            "--code-mode" => options.code_mode = true,
            "--issuer" => options.issuer = Some(value("--issuer")?),
            "--resource" => options.resource = Some(value("--resource")?),
            "--scope" => {
                let pair = value("--scope")?;
                let (tool, scope) = pair
                    .split_once('=')
                    .ok_or(format!("--scope {pair}: expected TOOL=SCOPE"))?;
                options.scopes.push((tool.to_owned(), scope.to_owned()));
            }
            "--allowed-host" => options.allowed_hosts.push(value("--allowed-host")?),
            "--fetch-allow" => options.fetch_allow.push(value("--fetch-allow")?),
            "--allow-unauthenticated" => options.allow_unauthenticated = true,
            other => return Err(format!("unknown argument `{other}` (see --help)")),
        }
    }
    Ok(options)
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: mcp_server [OPTIONS]

The coding tools as an MCP server, over stdio (the default) or streamable HTTP.

Options:
  --root DIR                  the workspace the file tools are confined to (default: .)
  --http [ADDR]               serve at http://ADDR/mcp (default 127.0.0.1:8765) instead of stdio
  --stateless                 keep no sessions (replicas behind a load balancer)
  --max-lines N, --max-bytes N
                              bound what the model sees; the rest is retained
  --output-dir DIR            where retained output is kept
  --store s3://BUCKET[/PREFIX]
                              retained output and tasks in S3 (AWS_* environment)
  --state-key-file FILE       the key sealing calls that wait for input (>= 32 bytes)
  --demo                      add count_to and greet
  --code-mode                 add run_code (programs calling the tools)
  --issuer URL --resource URL
                              an OAuth 2.1 resource server: JWTs of URL for the resource
  --scope TOOL=SCOPE          TOOL needs SCOPE too (bash, write, edit, web_fetch need theirs)
  --allowed-host HOST         a Host header the endpoint answers (not access control)
  --fetch-allow HOST          a loopback or private host web_fetch may reach
  --allow-unauthenticated     serve beyond loopback without authorization: anyone who
                              reaches the address may run every tool
  -h, --help                  print this
";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    // Spans and metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; exported on return.
    let _telemetry = toolprism_otel::Telemetry::init_from_env("toolprism-mcp-server")?;
    let mut options = parse()?;
    let workspace = Workspace::new(&options.root)?;
    let fetch = options
        .fetch_allow
        .iter()
        .fold(FetchPolicy::default(), |policy, host| {
            policy.allow(host.clone())
        });
    let mut builder = register_all(Registry::builder(), &workspace)
        .state(fetch)
        .limits(options.limits);
    let s3 = options.store.as_deref().map(s3_bucket).transpose()?;
    builder = match (&s3, options.output_dir.take()) {
        (Some(_), Some(_)) => return Err("--store and --output-dir are either or".into()),
        (Some((bucket, prefix)), None) => builder.output_store(OutputResources::new(
            ObjectOutputStore::new(bucket.clone(), format!("{prefix}/outputs")),
        )),
        (None, dir) => {
            let store = dir.map_or_else(FsOutputStore::default, FsOutputStore::new);
            refuse_inside(store.dir(), workspace.root())?;
            builder.output_store(OutputResources::new(store))
        }
    };
    if options.demo {
        builder = builder.tool(CountTo).tool(Greet);
    }
    let registry = builder.build()?;
    if options.code_mode {
        CodeMode::new().register(&registry)?;
    }
    let mut server = McpServer::new(registry)
        .with_implementation("toolprism-coding-tools", env!("CARGO_PKG_VERSION"));
    if let Some(file) = &options.state_key_file {
        let key = std::fs::read(file)
            .map_err(|error| format!("--state-key-file {}: {error}", file.display()))?;
        server = server.with_request_state_key(&key, DEFAULT_REQUEST_STATE_TTL)?;
    }
    if let Some((bucket, prefix)) = s3 {
        let tasks = ObjectTaskStore::new(bucket, format!("{prefix}/tasks"));
        server = server.with_task_store(tasks, DEFAULT_TASK_TTL);
    }
    server = authorized(server, &options).await?;
    if !options.allowed_hosts.is_empty() {
        server = server.with_allowed_hosts(options.allowed_hosts.clone());
    }
    if options.allow_unauthenticated {
        server = server.allow_unauthenticated_network_access();
    }
    match options.http {
        None => server.serve_stdio().await?,
        Some(addr) => {
            let mode = if options.stateless {
                HttpMode::Stateless
            } else {
                HttpMode::Sessions
            };
            let running = server.serve_http(addr, mode).await?;
            // Tests and scripts read the address from this line.
            println!("listening on {}", running.url());
            running.wait_for_stop_signal().await?;
        }
    }
    Ok(())
}

/// The server as an OAuth resource server, when `--issuer` and `--resource` say so.
async fn authorized(
    server: McpServer,
    options: &Options,
) -> Result<McpServer, Box<dyn std::error::Error>> {
    match (&options.issuer, &options.resource) {
        (Some(issuer), Some(resource)) => {
            let mut authorization = Authorization::jwt(issuer, resource).await?;
            for (tool, scope) in &options.scopes {
                authorization = authorization.require_scope(tool, scope);
            }
            Ok(server.with_authorization(authorization)?)
        }
        (None, None) if !options.scopes.is_empty() => {
            Err("--scope needs --issuer and --resource".into())
        }
        (None, None) => Ok(server),
        _ => Err("--issuer and --resource go together".into()),
    }
}

/// Refuses an output store inside the workspace: the file tools would read every caller's
/// outputs there, and `write` could rewrite who owns them.
fn refuse_inside(store: &std::path::Path, root: &std::path::Path) -> Result<(), String> {
    let store = std::path::absolute(store).map_err(|error| error.to_string())?;
    // The store may not exist yet: its nearest existing ancestor, resolved, says where it is.
    let mut existing = store.as_path();
    while !existing.exists() {
        existing = existing.parent().unwrap_or(existing);
        if existing.parent().is_none() {
            break;
        }
    }
    let resolved = existing
        .canonicalize()
        .map(|ancestor| ancestor.join(store.strip_prefix(existing).unwrap_or(Path::new(""))))
        .unwrap_or(store.clone());
    if resolved.starts_with(root) {
        return Err(format!(
            "the output store {} is inside the workspace {}: give --output-dir a directory outside it",
            resolved.display(),
            root.display()
        ));
    }
    Ok(())
}

/// The bucket `url` (`s3://BUCKET[/PREFIX]`) names, configured from the environment, and the
/// prefix under which this server keeps its objects.
fn s3_bucket(url: &str) -> Result<(Arc<dyn object_store::ObjectStore>, String), String> {
    let path = url
        .strip_prefix("s3://")
        .ok_or(format!("--store {url}: expected s3://BUCKET[/PREFIX]"))?;
    let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
    let s3 = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .build()
        .map_err(|error| format!("--store {url}: {error}"))?;
    Ok((Arc::new(s3), prefix.trim_matches('/').to_owned()))
}
