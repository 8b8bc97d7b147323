//! The MCP conformance suite's fixture server, written as toolprism tools: what
//! `@modelcontextprotocol/conformance` calls when it tests a server, at 2025-11-25 and at
//! 2026-07-28.
//!
//! ```text
//! cargo run -p toolprism-examples --bin mcp_conformance_server -- [--http ADDR]
//! ```
//!
//! It serves at `http://ADDR/mcp` (default `127.0.0.1:8765`; port 0 for any free port) and
//! prints that URL as its first line. Every fixture returns a value and the content the suite
//! checks is its rendering; those that ask the client something (a form, a completion, its
//! roots) ask through their `ToolContext`, which a 2025-11-25 client answers with a live
//! request and a 2026-07-28 client with a retry of the call.
// Logging from a tool is what a 2025-11-25 scenario tests; rmcp marks it deprecated (SEP-2577
// removed it in 2026-07-28).
#![expect(deprecated, reason = "the 2025-11-25 logging scenario")]

mod host;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::ask::{Elicited, InputKind, SamplingRequest};
use toolprism::prelude::*;
use toolprism_mcp::rmcp::model::LoggingLevel;
use toolprism_mcp::{DEFAULT_HTTP_ADDR, HttpMode, McpPeer, McpServer};

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

/// Media, inline.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Media {
    mime_type: String,
    data: String,
}

/// A resource's text.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Document {
    uri: String,
    mime_type: String,
    text: String,
}

fn embedded(document: &Document) -> ContentBlock {
    ContentBlock::EmbeddedResource {
        uri: document.uri.clone(),
        mime_type: Some(document.mime_type.clone()),
        contents: toolprism::present::ResourceContents::Text(document.text.clone()),
    }
}

/// Returns a simple text.
#[tool]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Returns an image.
#[tool(render = show_image)]
fn test_image_content() -> Media {
    Media {
        mime_type: "image/png".into(),
        data: PNG.into(),
    }
}

fn show_image(_: &TestImageContentArgs, media: &Media) -> ContentBlock {
    ContentBlock::image(media.data.clone(), media.mime_type.clone())
}

/// Returns an audio clip.
#[tool(render = play)]
fn test_audio_content() -> Media {
    Media {
        mime_type: "audio/wav".into(),
        data: WAV.into(),
    }
}

fn play(_: &TestAudioContentArgs, media: &Media) -> ContentBlock {
    ContentBlock::Audio {
        data: media.data.clone(),
        mime_type: media.mime_type.clone(),
    }
}

/// Returns an embedded resource.
#[tool(render = embed)]
fn test_embedded_resource() -> Document {
    Document {
        uri: "test://embedded-resource".into(),
        mime_type: "text/plain".into(),
        text: "This is an embedded resource content.".into(),
    }
}

fn embed(_: &TestEmbeddedResourceArgs, document: &Document) -> ContentBlock {
    embedded(document)
}

/// Text, an image and a resource.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Mixed {
    caption: String,
    image: Media,
    document: Document,
}

/// Returns content of several kinds.
#[tool(render = show_mixed)]
fn test_multiple_content_types() -> Mixed {
    Mixed {
        caption: "Multiple content types test:".into(),
        image: Media {
            mime_type: "image/png".into(),
            data: PNG.into(),
        },
        document: Document {
            uri: "test://mixed-content-resource".into(),
            mime_type: "application/json".into(),
            text: r#"{"test":"data","value":123}"#.into(),
        },
    }
}

fn show_mixed(_: &TestMultipleContentTypesArgs, mixed: &Mixed) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text(mixed.caption.clone()),
        ContentBlock::image(mixed.image.data.clone(), mixed.image.mime_type.clone()),
        embedded(&mixed.document),
    ]
}

/// Always fails.
#[tool]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress at 0, 50 and 100 of 100.
#[tool]
async fn test_tool_with_progress(cx: &ToolContext) -> String {
    for done in [0.0, 50.0, 100.0] {
        cx.progress(done, Some(100.0), "working");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Progress reported.".to_owned()
}

/// Logs three messages to the client, 50 ms apart.
#[tool]
async fn test_tool_with_logging(cx: &ToolContext) -> Result<String, ToolError> {
    let client = cx
        .extension::<McpPeer>()
        .ok_or_else(|| ToolError::new("this tool needs an MCP client to log to"))?;
    for message in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        client.log(LoggingLevel::Info, json!(message)).await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok("Logged three messages.".to_owned())
}

/// Asks the client's model.
#[tool(render = quote_model)]
async fn test_sampling(
    #[arg(description = "The prompt for the model.")] prompt: String,
    cx: &ToolContext,
) -> Result<String, ToolError> {
    let sampled = cx
        .sample("reply", &SamplingRequest::user(prompt).max_tokens(100))
        .await?;
    Ok(sampled.text.unwrap_or_default())
}

fn quote_model(_: &TestSamplingArgs, reply: &String) -> String {
    format!("LLM response: {reply}")
}

/// What the user answered.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Answer {
    action: String,
    content: Option<Value>,
}

impl Answer {
    fn of(elicited: Elicited<Value>) -> Self {
        let (action, content) = match elicited {
            Elicited::Accepted(content) => ("accept", Some(content)),
            Elicited::Declined => ("decline", None),
            Elicited::Cancelled => ("cancel", None),
        };
        Self {
            action: action.to_owned(),
            content,
        }
    }
}

/// Asks the user.
#[tool(render = show_answer)]
async fn test_elicitation(
    #[arg(description = "What to ask.")] message: String,
    cx: &ToolContext,
) -> Result<Answer, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    Ok(Answer::of(cx.elicit_with("user", &message, schema).await?))
}

fn show_answer(_: &TestElicitationArgs, answer: &Answer) -> String {
    format!(
        "User response: action: {}, content: {}",
        answer.action,
        answer.content.clone().unwrap_or(Value::Null)
    )
}

/// Asks for a form whose every field has a default (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(cx: &ToolContext) -> Result<Answer, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
        "required": [],
    });
    let message = "Please review and update the form fields with defaults";
    Ok(Answer::of(
        cx.elicit_with("defaults", message, schema).await?,
    ))
}

/// Asks for a form with every kind of choice (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(cx: &ToolContext) -> Result<Answer, ToolError> {
    let titled = |prefix: &str, word: &str| {
        (1..=3)
            .map(|n| {
                let title = ["First", "Second", "Third"][n - 1];
                json!({"const": format!("{prefix}{n}"), "title": format!("{title} {word}")})
            })
            .collect::<Vec<_>>()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                             "oneOf": titled("value", "Option")},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options",
                              "minItems": 1, "maxItems": 3,
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                            "minItems": 1, "maxItems": 3,
                            "items": {"anyOf": titled("value", "Choice")}},
        },
        "required": [],
    });
    Ok(Answer::of(
        cx.elicit_with("choices", "Choose", schema).await?,
    ))
}

/// A name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// A yes or no.
#[derive(Deserialize, JsonSchema)]
struct Confirmation {
    ok: bool,
}

/// A colour.
#[derive(Deserialize, JsonSchema)]
struct Colour {
    color: String,
}

/// The accepted content of a form, or why there is none.
fn accepted<T>(elicited: Elicited<T>) -> Result<T, ToolError> {
    match elicited {
        Elicited::Accepted(content) => Ok(content),
        Elicited::Declined => Err(ToolError::new("the user declined")),
        Elicited::Cancelled => Err(ToolError::new("the user cancelled")),
    }
}

/// Asks the user's name, and greets them.
#[tool]
async fn test_input_required_result_elicitation(cx: &ToolContext) -> Result<String, ToolError> {
    let Name { name } = accepted(cx.elicit("user_name", "What is your name?").await?)?;
    Ok(format!("Hello, {name}!"))
}

/// Asks the client's model a question.
#[tool]
async fn test_input_required_result_sampling(cx: &ToolContext) -> Result<String, ToolError> {
    let request = SamplingRequest::user("What is the capital of France?").max_tokens(100);
    let sampled = cx.sample("sample_request", &request).await?;
    Ok(format!(
        "The model said: {}",
        sampled.text.unwrap_or_default()
    ))
}

/// Lists the client's roots.
#[tool]
async fn test_input_required_result_list_roots(cx: &ToolContext) -> Result<String, ToolError> {
    let roots = cx.roots("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("Roots: {}", uris.join(", ")))
}

/// Asks for a confirmation, carried across the round in the request state.
#[tool]
async fn test_input_required_result_request_state(cx: &ToolContext) -> Result<String, ToolError> {
    let Confirmation { ok } = accepted(cx.elicit("confirm", "Continue?").await?)?;
    Ok(if ok { "state-ok" } else { "state-declined" }.to_owned())
}

/// Asks for a form, a completion and the roots at once.
#[tool]
async fn test_input_required_result_multiple_inputs(cx: &ToolContext) -> Result<String, ToolError> {
    let greeting = SamplingRequest::user("Say hello.").max_tokens(50);
    let (name, said, roots) = futures_util::join!(
        cx.elicit::<Name>("user_name", "What is your name?"),
        cx.sample("greeting", &greeting),
        cx.roots("client_roots"),
    );
    let Name { name } = accepted(name?)?;
    let said = said?.text.unwrap_or_default();
    Ok(format!("{said} {name}, with {} roots", roots?.len()))
}

/// Asks twice, one round after the other.
#[tool]
async fn test_input_required_result_multi_round(cx: &ToolContext) -> Result<String, ToolError> {
    let Name { name } = accepted(cx.elicit("step1", "What is your name?").await?)?;
    let Colour { color } = accepted(cx.elicit("step2", "What is your favourite colour?").await?)?;
    Ok(format!("{name} likes {color}"))
}

/// Asks for a confirmation; a retry whose state was altered is refused.
#[tool]
async fn test_input_required_result_tampered_state(cx: &ToolContext) -> Result<String, ToolError> {
    let Confirmation { ok } = accepted(cx.elicit("confirm", "Continue?").await?)?;
    Ok(format!("confirmed: {ok}"))
}

/// Asks only for what the client declared: a form if it can, a completion otherwise.
#[tool]
async fn test_input_required_result_capabilities(cx: &ToolContext) -> Result<String, ToolError> {
    if cx.can_ask(InputKind::Elicitation) {
        let Name { name } = accepted(cx.elicit("user_name", "What is your name?").await?)?;
        return Ok(format!("Hello, {name}!"));
    }
    let sampled = cx
        .sample(
            "sample_input",
            &SamplingRequest::user("Sample request").max_tokens(50),
        )
        .await?;
    Ok(format!(
        "The model said: {}",
        sampled.text.unwrap_or_default()
    ))
}

/// Needs the client's model, which a client that did not declare sampling cannot lend.
#[tool]
async fn test_missing_capability(cx: &ToolContext) -> Result<String, ToolError> {
    let sampled = cx
        .sample(
            "sample",
            &SamplingRequest::user("Say something.").max_tokens(20),
        )
        .await?;
    Ok(sampled.text.unwrap_or_default())
}

/// Asks the user while the response streams: on 2026-07-28 the question is the result.
#[tool]
async fn test_streaming_elicitation(cx: &ToolContext) -> Result<String, ToolError> {
    let Name { name } = accepted(cx.elicit("user_name", "What is your name?").await?)?;
    Ok(format!("Hello, {name}!"))
}

/// Logs one message, which reaches only a client that asked for logs.
#[tool]
async fn test_logging_tool(cx: &ToolContext) -> Result<String, ToolError> {
    if let Some(client) = cx.extension::<McpPeer>() {
        client.log(LoggingLevel::Info, json!("Tool ran")).await?;
    }
    Ok("Logged, if asked to.".to_owned())
}

/// Echoes a region the client also sends as the `Mcp-Param-Region` header (SEP-2243).
#[tool]
fn test_custom_header(
    #[arg(description = "A region, mirrored in a header.")]
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
) -> String {
    format!("Region: {region}")
}

/// Greets at once: never a task.
#[tool]
fn greet(#[arg(description = "Who to greet.")] name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` (at most 600), as a task for a client that takes tasks.
#[tool(task = "optional")]
async fn slow_compute(
    #[arg(description = "How long to work, in seconds.")] seconds: f64,
    #[arg(description = "A label to return.")] label: Option<String>,
) -> Result<String, ToolError> {
    if !(0.0..=600.0).contains(&seconds) {
        return Err(ToolError::new("work 0 to 600 seconds"));
    }
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    Ok(format!("Computed {}", label.unwrap_or_default()))
}

/// Fails after a second, as a task: only a client that takes tasks may call it.
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("the job failed, as it always does"))
}

/// Breaks (panics) as a task: the task fails instead of completing with an error.
#[tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("the job broke")
}

/// A yes or no, named `confirm`.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

/// Asks before it deletes, as a task: the question waits on the task until answered.
#[tool(task = "optional")]
async fn confirm_delete(
    #[arg(description = "The file to delete.")] filename: String,
    cx: &ToolContext,
) -> Result<String, ToolError> {
    let Confirm { confirm } =
        accepted(cx.elicit("confirm", &format!("Delete {filename}?")).await?)?;
    Ok(if confirm {
        format!("Deleted {filename}")
    } else {
        format!("Kept {filename}")
    })
}

/// Asks two questions at once, as a task.
#[tool(task = "optional")]
async fn multi_input(cx: &ToolContext) -> Result<String, ToolError> {
    let (name, confirmed) = futures_util::join!(
        cx.elicit::<Name>("name", "What is your name?"),
        cx.elicit::<Confirm>("confirm", "Go on?"),
    );
    let Name { name } = accepted(name?)?;
    let Confirm { confirm } = accepted(confirmed?)?;
    Ok(format!("{name}: {confirm}"))
}

/// Asks the user's name on the request, then runs on as a task.
#[tool]
async fn test_tool_with_task(cx: &ToolContext) -> Result<String, ToolError> {
    let Name { name } = accepted(cx.elicit("user_name", "What is your name?").await?)?;
    cx.detach();
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}, from a task!"))
}

/// The registry served, for the tool that changes it.
static SERVED: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();

/// Says hello; registered and removed by `test_trigger_tool_change`.
#[tool]
fn test_dynamic_tool() -> String {
    "Hello from a tool that comes and goes.".to_owned()
}

/// Adds `test_dynamic_tool`, or removes it if it is there: a change every listener is told of.
#[tool]
fn test_trigger_tool_change() -> Result<String, ToolError> {
    let registry = SERVED
        .get()
        .ok_or_else(|| ToolError::new("the registry is not served yet"))?;
    if registry.remove("test_dynamic_tool") {
        return Ok("Removed test_dynamic_tool.".to_owned());
    }
    registry
        .register(TestDynamicTool)
        .map_err(|error| ToolError::new(error.to_string()))?;
    Ok("Added test_dynamic_tool.".to_owned())
}

/// A tool whose input schema uses JSON Schema 2020-12 throughout, served as written.
fn json_schema_2020_12_tool() -> ToolDef {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    });
    ToolDef::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .input_schema(schema)
        .handler(|args: Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>(format!("Contact: {args}"))
        })
        .build()
}

/// The registry of every fixture, in the order the suite needs: a tool that succeeds with no
/// arguments first.
fn registry() -> Result<Registry, toolprism::RegistrationError> {
    Registry::builder()
        .tool(TestSimpleText)
        .tool(TestImageContent)
        .tool(TestAudioContent)
        .tool(TestEmbeddedResource)
        .tool(TestMultipleContentTypes)
        .tool(TestErrorHandling)
        .tool(TestToolWithProgress)
        .tool(TestToolWithLogging)
        .tool(TestSampling)
        .tool(TestElicitation)
        .tool(TestElicitationSep1034Defaults)
        .tool(TestElicitationSep1330Enums)
        .tool(TestInputRequiredResultElicitation)
        .tool(TestInputRequiredResultSampling)
        .tool(TestInputRequiredResultListRoots)
        .tool(TestInputRequiredResultRequestState)
        .tool(TestInputRequiredResultMultipleInputs)
        .tool(TestInputRequiredResultMultiRound)
        .tool(TestInputRequiredResultTamperedState)
        .tool(TestInputRequiredResultCapabilities)
        .tool(TestMissingCapability)
        .tool(TestStreamingElicitation)
        .tool(TestLoggingTool)
        .tool(TestCustomHeader)
        .tool(json_schema_2020_12_tool())
        .tool(TestTriggerToolChange)
        .tool(Greet)
        .tool(SlowCompute)
        .tool(FailingJob)
        .tool(ProtocolErrorJob)
        .tool(ConfirmDelete)
        .tool(MultiInput)
        .tool(TestToolWithTask)
        .build()
}

fn parse() -> Result<SocketAddr, String> {
    let mut args = std::env::args().skip(1);
    let mut addr = DEFAULT_HTTP_ADDR;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => {
                let value = args.next().ok_or("--http needs an address")?;
                addr = value
                    .parse()
                    .map_err(|error| format!("--http {value}: {error}"))?;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(addr)
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: mcp_conformance_server [--http ADDR]

The MCP conformance suite's fixture server, as toolprism tools: serves at http://ADDR/mcp
(default 127.0.0.1:8765; port 0 for any free port) and prints that URL as its first line.
";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    let addr = parse()?;
    let registry = registry()?;
    SERVED.get_or_init(|| registry.clone());
    let server = McpServer::new(registry)
        .with_implementation("toolprism-conformance", env!("CARGO_PKG_VERSION"))
        .with_handler(host::Fixtures);
    let running = server.serve_http(addr, HttpMode::Sessions).await?;
    println!("{}", running.url());
    running.wait().await?;
    Ok(())
}
