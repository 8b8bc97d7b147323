//! The official MCP conformance suite against `McpServer` over streamable HTTP: every tools
//! scenario, at 2025-11-25 and 2026-07-28. `scripts/mcp-conformance` installs the pinned
//! suite and Node.js on first use.
//!
//! The tools are the suite's fixtures, written as toolprism tools: each returns a value, and
//! the content the suite checks is its rendering.

use std::path::Path;
use std::time::Duration;

use toolprism::prelude::*;
use toolprism_mcp::{HttpMode, McpServer};

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

/// The scenarios about tools, and the versions each applies at.
const SCENARIOS: [(&str, &[&str]); 8] = [
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
    assert_eq!(passed, 16);
}
