//! The official MCP conformance suite against `McpServer` over streamable HTTP: every tools
//! scenario, at 2025-11-25 and 2026-07-28. `scripts/mcp-conformance` installs the pinned
//! suite and Node.js on first use.
//!
//! The tools are the suite's fixtures, written as toolprism tools: each returns a value, and
//! the content the suite checks is its rendering. Those that talk back to the client (logging,
//! sampling, elicitation) reach it through the `McpPeer` the server attaches to each call.
// Logging and sampling from a tool are what the 2025-11-25 scenarios test; rmcp marks both
// deprecated (SEP-2577 removed them in 2026-07-28).
#![expect(
    deprecated,
    reason = "the 2025-11-25 scenarios test logging and sampling"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientResult, CreateMessageRequestParams, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, LoggingLevel, SamplingMessage, ServerRequest,
};
use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism_mcp::{HttpMode, McpPeer, McpServer};

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

/// The MCP client of this call, or why there is none.
fn client(cx: &ToolContext) -> Result<Arc<McpPeer>, ToolError> {
    cx.extension::<McpPeer>()
        .ok_or_else(|| ToolError::new("this tool needs an MCP client to talk to"))
}

/// Logs three messages to the client, 50 ms apart.
#[tool]
async fn test_tool_with_logging(cx: &ToolContext) -> Result<String, ToolError> {
    let client = client(cx)?;
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
    let request = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
    let reply = client(cx)?.peer().create_message(request).await?;
    Ok(reply
        .message
        .content
        .first()
        .and_then(|content| content.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default())
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
    let Value::Object(schema) = schema else {
        unreachable!("an object literal")
    };
    let requested_schema = ElicitationSchema::from_json_schema(schema)?;
    let request = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    };
    // The generic request: `create_elicitation` is behind an rmcp feature this crate does not
    // otherwise need.
    let reply = client(cx)?
        .peer()
        .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(request)))
        .await?;
    let ClientResult::ElicitResult(answer) = reply else {
        return Err(ToolError::new("the client answered something else"));
    };
    Ok(Answer {
        action: serde_json::to_value(&answer.action)?
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        content: answer.content,
    })
}

fn show_answer(_: &TestElicitationArgs, answer: &Answer) -> String {
    format!(
        "User response: action: {}, content: {}",
        answer.action,
        answer.content.clone().unwrap_or(Value::Null)
    )
}

/// The scenarios about tools, and the versions each applies at (logging, sampling and
/// elicitation from a tool were removed in 2026-07-28).
const SCENARIOS: [(&str, &[&str]); 11] = [
    ("tools-list", &["2025-11-25", "2026-07-28"]),
    ("tools-call-simple-text", &["2025-11-25", "2026-07-28"]),
    ("tools-call-image", &["2025-11-25", "2026-07-28"]),
    ("tools-call-audio", &["2025-11-25", "2026-07-28"]),
    (
        "tools-call-embedded-resource",
        &["2025-11-25", "2026-07-28"],
    ),
    ("tools-call-mixed-content", &["2025-11-25", "2026-07-28"]),
    ("tools-call-error", &["2025-11-25", "2026-07-28"]),
    ("tools-call-with-progress", &["2025-11-25", "2026-07-28"]),
    ("tools-call-with-logging", &["2025-11-25"]),
    ("tools-call-sampling", &["2025-11-25"]),
    ("tools-call-elicitation", &["2025-11-25"]),
];

/// Runs one scenario; `Err` with the suite's output when a check failed.
fn run_scenario(
    url: &str,
    scenario: &str,
    version: &str,
    results: &Path,
) -> Result<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = std::process::Command::new(root.join("scripts/mcp-conformance"))
        .args(["server", "--url", url, "--scenario", scenario])
        .args(["--spec-version", version])
        .env("TOOLPRISM_CONFORMANCE_RESULTS", results)
        .current_dir(results)
        .output()
        .expect("scripts/mcp-conformance runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() && !text.contains("FAILURE") {
        Ok(text)
    } else {
        Err(text)
    }
}

#[test]
fn every_tools_scenario_passes_at_both_protocol_versions() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder()
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
        .build()
        .unwrap();
    let running = runtime
        .block_on(
            McpServer::new(registry).serve_http("127.0.0.1:0".parse().unwrap(), HttpMode::Sessions),
        )
        .unwrap();
    let results = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut passed = 0;
    for (scenario, versions) in SCENARIOS {
        for version in versions {
            match run_scenario(&running.url(), scenario, version, results.path()) {
                Ok(report) => {
                    assert!(
                        report.contains("SUCCESS"),
                        "{scenario} at {version} ran no check:\n{report}"
                    );
                    passed += 1;
                }
                Err(report) => failures.push(format!("{scenario} at {version}:\n{report}")),
            }
        }
    }
    runtime.block_on(running.shutdown()).unwrap();
    assert!(
        failures.is_empty(),
        "{} passed, failed:\n{}",
        passed,
        failures.join("\n")
    );
    assert_eq!(passed, 19);
}
