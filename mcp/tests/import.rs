//! `McpClient` importing tools: from a toolprism server, and from a hand-written rmcp server
//! that sends every shape a remote server may send, honest or not.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{registry, temp_dir};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as McpBlock,
    ListToolsResult, MetaObject, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};
use toolprism::context::Progress;
use toolprism::error::codes;
use toolprism::pipeline::DispatchOptions;
use toolprism::prelude::*;
use toolprism::present::ResourceContents as Contents;
use toolprism_mcp::{
    ClientError, ERROR_META_KEY, HttpMode, ImportOptions, MAX_PROGRESS_MESSAGE, McpClient,
    McpServer, NameError, REMOTE_TOOL_ERROR, SERVER_TIMEOUT, SERVER_UNAVAILABLE,
};

fn object(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => panic!("a schema object"),
    }
}

/// What the hand-written servers below offer: tools, nothing else.
fn tools_only() -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
}

fn tool(name: &str, input: Value, output: Option<Value>) -> Tool {
    let mut tool = Tool::new_with_raw(
        name.to_owned(),
        Some("A remote tool.".into()),
        object(input),
    );
    if let Some(output) = output {
        tool = tool.with_raw_output_schema(object(output));
    }
    tool
}

/// A server that sends what real servers send: dotted names, schemas beyond the supported
/// subset, FastMCP wrappers, values contradicting their schemas, errors, silence.
#[derive(Clone)]
struct Remote {
    tools: Vec<Tool>,
}

impl Remote {
    fn new() -> Self {
        let any_object = json!({"type": "object"});
        Self {
            tools: vec![
                tool(
                    "files.read",
                    json!({"type": "object", "properties": {"path": {"$ref": "https://example.com/path.json"}}}),
                    Some(
                        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                    ),
                ),
                tool(
                    "count",
                    json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
                    Some(json!({
                        "type": "object",
                        "properties": {"result": {"type": "integer"}},
                        "required": ["result"],
                        "x-fastmcp-wrap-result": true,
                    })),
                ),
                tool(
                    "liar",
                    any_object.clone(),
                    Some(
                        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
                    ),
                ),
                tool(
                    "silent",
                    any_object.clone(),
                    Some(json!({"type": "object"})),
                ),
                tool("prose", any_object.clone(), None),
                tool(
                    "odd_schema",
                    any_object.clone(),
                    Some(
                        json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "(?=x)"}}}),
                    ),
                ),
                tool("fails", any_object.clone(), None),
                tool("coded", any_object.clone(), None),
                tool("hang", any_object.clone(), None),
                tool("media", any_object, None),
            ],
        }
    }
}

impl ServerHandler for Remote {
    fn get_info(&self) -> ServerConfig {
        tools_only()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let result = match &*request.name {
            "files.read" => {
                let mut result =
                    CallToolResult::structured(json!({"text": format!("read {}", args["path"])}));
                result.content = vec![McpBlock::text("the file's text")];
                result
            }
            "count" => CallToolResult::structured(json!({"result": args["n"]})),
            "liar" => CallToolResult::structured(json!({"n": "not a number"})),
            "silent" => CallToolResult::success(vec![McpBlock::text("{\"looks\": \"like json\"}")]),
            "prose" => CallToolResult::success(vec![
                McpBlock::text("{\"a\": 1}"),
                McpBlock::text("and more"),
            ]),
            "odd_schema" => CallToolResult::structured(json!({"s": "anything"})),
            "fails" => CallToolResult::error(vec![McpBlock::text("quota exceeded")]),
            // A failure carrying whatever error code the arguments say, as a toolprism server
            // would send its own.
            "coded" => {
                let mut result = CallToolResult::error(vec![McpBlock::text("it broke")]);
                let error = json!({"name": "ToolError", "code": args["code"]});
                result.meta = Some(MetaObject(
                    [(ERROR_META_KEY.to_owned(), error)].into_iter().collect(),
                ));
                result
            }
            "hang" => {
                std::future::pending::<()>().await;
                unreachable!()
            }
            "media" => CallToolResult::success(vec![
                McpBlock::image("aGVsbG8=", "image/png"),
                McpBlock::audio("d2F2", "audio/wav"),
                McpBlock::resource(ResourceContents::text("inline text", "file:///a.txt")),
                McpBlock::resource_link(rmcp::model::Resource::new("file:///b.txt", "b.txt")),
            ]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(CallToolResponse::Complete(result))
    }
}

async fn connect_remote(server: impl ServerHandler, options: ImportOptions) -> McpClient {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    McpClient::connect(client_io, options)
        .await
        .expect("connects")
}

fn empty_registry() -> Registry {
    Registry::builder().build().unwrap()
}

async fn run(registry: &Registry, name: &str, args: Value) -> ToolOutcome {
    registry
        .dispatch(ToolCall::new("c1", name, args), Surface::Direct)
        .await
}

#[tokio::test]
async fn remote_tools_keep_their_wire_names_and_their_schemas_are_enforced_where_supported() {
    let client = connect_remote(Remote::new(), ImportOptions::default().prefix("r_")).await;
    let registry = empty_registry();
    let imported = client.import_into(&registry).await.unwrap();
    let names: Vec<_> = imported
        .iter()
        .map(|tool| tool.local_name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "r_files_read",
            "r_count",
            "r_liar",
            "r_silent",
            "r_prose",
            "r_odd_schema",
            "r_fails",
            "r_coded",
            "r_hang",
            "r_media"
        ]
    );
    assert_eq!(imported[0].remote_name, "files.read");

    // A remote `$ref` is never fetched: the schema is advertised as it is, validated by the
    // server, and the call goes out under the remote name.
    assert!(!imported[0].input_validated);
    let snapshot = registry.snapshot();
    let advertised = snapshot.definition("r_files_read").unwrap();
    assert_eq!(
        advertised.input_schema()["properties"]["path"]["$ref"],
        "https://example.com/path.json"
    );
    let outcome = run(&registry, "r_files_read", json!({"path": "a.txt"})).await;
    assert_eq!(outcome.value().unwrap(), &json!({"text": "read \"a.txt\""}));
    // The server's content, not a rendering made here.
    assert_eq!(outcome.content(), [ContentBlock::text("the file's text")]);

    // Validated locally before anything is sent.
    assert!(imported[1].input_validated);
    let outcome = run(&registry, "r_count", json!({"n": "three"})).await;
    assert_eq!(
        outcome.error().unwrap().code(),
        Some(codes::INVALID_TOOL_INPUT)
    );

    // FastMCP's wrapper is unwrapped and what it wraps is validated.
    assert!(imported[1].output_validated);
    let outcome = run(&registry, "r_count", json!({"n": 3})).await;
    assert_eq!(outcome.value().unwrap(), &json!(3));
}

#[tokio::test]
async fn a_value_contradicting_its_schema_or_missing_is_an_invalid_output() {
    let client = connect_remote(Remote::new(), ImportOptions::default()).await;
    let registry = empty_registry();
    client.import_into(&registry).await.unwrap();
    for tool in ["liar", "silent"] {
        let outcome = run(&registry, tool, json!({})).await;
        assert_eq!(
            outcome.error().unwrap().code(),
            Some(codes::INVALID_TOOL_OUTPUT),
            "{tool}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn without_a_usable_schema_the_value_is_structured_content_or_else_the_text() {
    let client = connect_remote(Remote::new(), ImportOptions::default()).await;
    let registry = empty_registry();
    let imported = client.import_into(&registry).await.unwrap();
    // No JSON is guessed out of prose.
    let outcome = run(&registry, "prose", json!({})).await;
    assert_eq!(outcome.value().unwrap(), &json!("{\"a\": 1}\nand more"));
    // A schema beyond the supported subset: the value untyped, still the server's.
    let odd = imported
        .iter()
        .find(|tool| tool.remote_name == "odd_schema")
        .unwrap();
    assert!(!odd.output_validated);
    let outcome = run(&registry, "odd_schema", json!({})).await;
    assert_eq!(outcome.value().unwrap(), &json!({"s": "anything"}));
}

#[tokio::test]
async fn remote_errors_timeouts_and_dead_servers_are_failures_with_codes() {
    let options = ImportOptions::default().call_timeout(Duration::from_millis(300));
    let client = connect_remote(Remote::new(), options).await;
    let registry = empty_registry();
    client.import_into(&registry).await.unwrap();

    let outcome = run(&registry, "fails", json!({})).await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code(), Some(REMOTE_TOOL_ERROR));
    assert_eq!(error.message, "quota exceeded");

    let outcome = run(&registry, "hang", json!({})).await;
    assert_eq!(outcome.error().unwrap().code(), Some(SERVER_TIMEOUT));

    client.close().await;
    let outcome = run(&registry, "prose", json!({})).await;
    assert_eq!(
        outcome.error().unwrap().code(),
        Some(SERVER_UNAVAILABLE),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_servers_error_code_is_kept_only_when_it_is_one() {
    let client = connect_remote(Remote::new(), ImportOptions::default()).await;
    let registry = empty_registry();
    client.import_into(&registry).await.unwrap();
    for code in ["NO_MATCH", "quota.exceeded-2", &"C".repeat(64)] {
        let outcome = run(&registry, "coded", json!({"code": code})).await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code(), Some(code));
        assert_eq!(error.message, "it broke");
    }
    // Too long, empty, an escape sequence a host would print, not a string: the failure keeps
    // the server's text and says what became of its code, bounded and printable.
    let long = "X".repeat(100_000);
    for (code, shown) in [
        (json!(long), format!("`{}…`", "X".repeat(128))),
        (json!(""), "``".to_owned()),
        (json!("RED\u{1b}[31m"), "`RED?[31m`".to_owned()),
        (json!("SPACE D"), "`SPACE D`".to_owned()),
        (json!(42), "it is not a string".to_owned()),
    ] {
        let outcome = run(&registry, "coded", json!({"code": code})).await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code(), Some(REMOTE_TOOL_ERROR));
        assert!(
            error
                .message
                .starts_with("it broke\n(The server's error code was not kept: ")
        );
        assert!(error.message.contains(&shown), "{}", error.message);
        assert!(error.message.len() < 400, "{}", error.message);
    }
}

#[tokio::test]
async fn remote_content_of_every_kind_stays_the_servers() {
    let client = connect_remote(Remote::new(), ImportOptions::default()).await;
    let registry = empty_registry();
    client.import_into(&registry).await.unwrap();
    let outcome = run(&registry, "media", json!({})).await;
    assert_eq!(
        outcome.content(),
        [
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::Audio {
                data: "d2F2".into(),
                mime_type: "audio/wav".into()
            },
            ContentBlock::EmbeddedResource {
                uri: "file:///a.txt".into(),
                mime_type: Some("text/plain".into()),
                contents: Contents::Text("inline text".into()),
            },
            ContentBlock::Resource {
                uri: "file:///b.txt".into(),
                mime_type: None,
                name: Some("b.txt".into()),
            },
        ]
    );
}

#[tokio::test]
async fn names_that_collide_are_refused_and_nothing_is_registered() {
    let mut remote = Remote::new();
    remote
        .tools
        .push(tool("files_read", json!({"type": "object"}), None));
    let client = connect_remote(remote, ImportOptions::default()).await;
    let registry = empty_registry();
    match client.import_into(&registry).await {
        Err(ClientError::Name(NameError::Collision { remote, local, .. })) => {
            assert_eq!(remote, "files_read");
            assert_eq!(local, "files_read");
        }
        other => panic!("expected a collision, got {other:?}"),
    }
    assert_eq!(registry.snapshot().definitions().len(), 0);

    // A name the registry already has is refused too.
    let client = connect_remote(Remote::new(), ImportOptions::default()).await;
    let taken = Registry::builder()
        .tool(
            ToolDef::builder("count")
                .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(json!(0)) })
                .build(),
        )
        .build()
        .unwrap();
    let error = client.import_into(&taken).await.unwrap_err();
    assert!(
        error.to_string().contains("a tool in the registry"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_listing_without_end_is_refused() {
    let remote = Remote {
        tools: (0..=toolprism_mcp::MAX_IMPORTED_TOOLS)
            .map(|at| tool(&format!("t{at}"), json!({"type": "object"}), None))
            .collect(),
    };
    let client = connect_remote(remote, ImportOptions::default()).await;
    let registry = empty_registry();
    let error = client.import_into(&registry).await.unwrap_err();
    assert!(matches!(error, ClientError::TooManyTools), "{error}");
    assert_eq!(registry.snapshot().definitions().len(), 0);
}

/// A server that lists one tool per page, each described at length, without end.
#[derive(Clone)]
struct Verbose;

impl ServerHandler for Verbose {
    fn get_info(&self) -> ServerConfig {
        tools_only()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let page: usize = request
            .and_then(|request| request.cursor)
            .map_or(0, |cursor| cursor.parse().unwrap());
        let mut tool = tool(&format!("t{page}"), json!({"type": "object"}), None);
        tool.description = Some("a".repeat(4 << 20).into());
        let mut result = ListToolsResult::with_all_items(vec![tool]);
        result.next_cursor = Some((page + 1).to_string());
        Ok(result)
    }
}

#[tokio::test]
async fn a_listing_larger_than_the_limit_is_refused() {
    let client = connect_remote(Verbose, ImportOptions::default()).await;
    let registry = empty_registry();
    let error = client.import_into(&registry).await.unwrap_err();
    assert!(matches!(error, ClientError::ListingTooLarge), "{error}");
    assert!(
        error
            .to_string()
            .contains(&toolprism_mcp::MAX_LISTING_BYTES.to_string()),
        "{error}"
    );
    assert_eq!(registry.snapshot().definitions().len(), 0);
}

/// A server whose `report` tool sends progress (the last message far too long to show) before
/// it answers, and whose `wait` tool waits for the client to cancel it, then says so.
#[derive(Clone, Default)]
struct Reporting {
    cancelled: Arc<tokio::sync::Notify>,
}

impl ServerHandler for Reporting {
    fn get_info(&self) -> ServerConfig {
        tools_only()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let any = json!({"type": "object"});
        Ok(ListToolsResult::with_all_items(vec![
            tool("report", any.clone(), None),
            tool("wait", any, None),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "wait" {
            context.ct.cancelled().await;
            self.cancelled.notify_one();
            return Err(ErrorData::internal_error("cancelled", None));
        }
        let token = context
            .meta
            .get_progress_token()
            .expect("rmcp sends a token");
        let long = "x".repeat(100_000);
        for (done, message) in [(1.0, "one"), (2.0, long.as_str())] {
            let mut report = ProgressNotificationParam::new(token.clone(), done);
            report.total = Some(2.0);
            report.message = Some(message.to_owned());
            context.peer.notify_progress(report).await.unwrap();
        }
        // A report for a call nobody is waiting on goes nowhere.
        let stray = ProgressToken(rmcp::model::NumberOrString::String("stray".into()));
        context
            .peer
            .notify_progress(ProgressNotificationParam::new(stray, 9.0))
            .await
            .unwrap();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            McpBlock::text("reported"),
        ])))
    }
}

/// What a remote tool reports reaches the local call's progress sink (the message bounded),
/// and a call given up locally is cancelled on the server.
#[tokio::test]
async fn a_remote_tools_progress_reaches_the_local_call_and_a_dropped_call_is_cancelled() {
    let server = Reporting::default();
    let cancelled = server.cancelled.clone();
    let options = ImportOptions::default().call_timeout(Duration::from_millis(300));
    let client = connect_remote(server, options).await;
    let registry = empty_registry();
    client.import_into(&registry).await.unwrap();

    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reports.clone();
    let options = DispatchOptions::default().progress(move |progress: &Progress| {
        sink.lock().unwrap().push(progress.clone());
    });
    let call = ToolCall::new("c1", "report", json!({}));
    let outcome = registry
        .snapshot()
        .dispatch_with(call, Surface::Direct, options)
        .await;
    assert_eq!(outcome.content(), [ContentBlock::text("reported")]);
    // Notifications and the result travel one pipe, in order: every report came first.
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert_eq!((reports[0].done, reports[0].total), (1.0, Some(2.0)));
    assert_eq!(reports[0].message.as_deref(), Some("one"));
    let cut = reports[1].message.as_deref().unwrap();
    assert_eq!(cut.chars().count(), MAX_PROGRESS_MESSAGE + 1);
    assert!(cut.ends_with('…'), "the cut is marked");

    let outcome = run(&registry, "wait", json!({})).await;
    assert_eq!(outcome.error().unwrap().code(), Some(SERVER_TIMEOUT));
    tokio::time::timeout(Duration::from_secs(10), cancelled.notified())
        .await
        .expect("the server hears the call was cancelled");
}

/// A server whose `poke` tool announces a change to its list without making one, and whose
/// `grow` tool adds a tool and announces that.
#[derive(Clone, Default)]
struct Announcing {
    grown: Arc<std::sync::atomic::AtomicBool>,
    listings: Arc<std::sync::atomic::AtomicUsize>,
}

impl ServerHandler for Announcing {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.listings
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let any = json!({"type": "object"});
        let mut tools = vec![
            tool("poke", any.clone(), None),
            tool("grow", any.clone(), None),
        ];
        if self.grown.load(std::sync::atomic::Ordering::SeqCst) {
            tools.push(tool("grown", any, None));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "grow" {
            self.grown.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        context.peer.notify_tool_list_changed().await.unwrap();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![])))
    }
}

/// A server announcing a change it did not make changes nothing here: the re-listing is
/// compared with the last one imported, and only a real change reaches the registry.
#[tokio::test]
async fn an_announced_change_that_changes_nothing_is_not_imported() {
    let server = Announcing::default();
    let listings = server.listings.clone();
    let client = connect_remote(server, ImportOptions::default()).await;
    let registry = empty_registry();
    client.import_into(&registry).await.unwrap();
    let before = registry.snapshot().generation();

    run(&registry, "poke", json!({})).await;
    // The unchanged list is listed again before anything changes.
    tokio::time::timeout(Duration::from_secs(10), async {
        while listings.load(std::sync::atomic::Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the poke is followed by a listing within 10 s");
    run(&registry, "grow", json!({})).await;
    // Re-imports run one after the other: once the second is in, the first is done.
    tokio::time::timeout(Duration::from_secs(10), async {
        while registry.snapshot().definition("grown").is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the grown list is imported within 10 s");
    assert_eq!(
        registry.snapshot().generation(),
        before + 1,
        "only the real change reached the registry"
    );
}

/// A re-import after a list change is one change of the local registry: no snapshot sees the
/// server's tools half removed, and a server listening to this registry hears of it once.
#[tokio::test]
async fn a_list_change_is_imported_as_one_change() {
    let dir = temp_dir();
    let served = registry(dir.path());
    let running = McpServer::new(served.clone())
        .serve_http("127.0.0.1:0".parse().unwrap(), HttpMode::Sessions)
        .await
        .unwrap();
    let client = McpClient::connect_http(&running.url(), ImportOptions::default().prefix("up_"))
        .await
        .unwrap();
    let local = empty_registry();
    let imported = client.import_into(&local).await.unwrap().len();
    let changes = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = changes.clone();
    let _listener = local.on_change(move |generation| {
        seen.lock().unwrap().push(generation);
    });
    let before = local.snapshot().generation();

    served
        .register(
            ToolDef::builder("late")
                .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(json!(1)) })
                .build(),
        )
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while local.snapshot().definition("up_late").is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the new tool is imported within 10 s");

    assert_eq!(*changes.lock().unwrap(), [before + 1], "one change");
    assert_eq!(local.snapshot().definitions().len(), imported + 1);
    client.close().await;
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_toolprism_server_imported_over_http_round_trips_values_and_follows_list_changes() {
    let dir = temp_dir();
    let served = registry(dir.path());
    for mode in [HttpMode::Sessions, HttpMode::Stateless] {
        let running = McpServer::new(served.clone())
            .serve_http("127.0.0.1:0".parse().unwrap(), mode)
            .await
            .unwrap();
        let client =
            McpClient::connect_http(&running.url(), ImportOptions::default().prefix("up_"))
                .await
                .unwrap();
        let local = empty_registry();
        let imported = client.import_into(&local).await.unwrap();
        assert_eq!(imported.len(), served.snapshot().definitions().len());
        assert!(
            imported
                .iter()
                .all(|tool| tool.input_validated && tool.output_validated)
        );

        let outcome = run(&local, "up_lookup", json!({"city": "Oslo"})).await;
        assert_eq!(
            outcome.value().unwrap(),
            &json!({"city": "Oslo", "celsius": 4})
        );
        assert_eq!(outcome.content(), [ContentBlock::text("Oslo: 4 °C")]);
        let outcome = run(&local, "up_search", json!({"needle": "n", "count": 1})).await;
        assert_eq!(
            outcome.value().unwrap(),
            &json!([{"line": 1, "text": "n at 1"}])
        );
        let outcome = run(&local, "up_broken", json!({})).await;
        assert_eq!(outcome.error().unwrap().code(), Some("ON_FIRE"));

        if mode == HttpMode::Sessions {
            let name = format!("late_{}", local.snapshot().generation());
            served
                .register(
                    ToolDef::builder(name.clone())
                        .handler(|_: Value, _cx: ToolContext| async {
                            Ok::<_, ToolError>(json!(1))
                        })
                        .build(),
                )
                .unwrap();
            let wanted = format!("up_{name}");
            tokio::time::timeout(Duration::from_secs(10), async {
                while local.snapshot().definition(&wanted).is_none() {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
            .await
            .expect("the new tool is imported within 10 s");
            let outcome = run(&local, &wanted, json!({})).await;
            assert_eq!(outcome.value().unwrap(), &json!(1));
        }
        client.close().await;
        running.shutdown().await.unwrap();
    }
}
