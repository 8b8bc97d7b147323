//! Lowering to provider wire formats: every content kind for every provider, every schema
//! dialect on schemas schemars makes from tricky types, golden files, and the check against
//! the providers' own SDK types (Python: `openai`, `anthropic`, `google-genai`, through
//! `scripts/check-wire`; Rust: `async-openai`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use toolprism::Snapshot;
use toolprism::lower::{Provider, ToolOptions, lower_content, lower_tools};
use toolprism::prelude::*;
use toolprism::present::ResourceContents;
use toolprism::tool::AdvertisedTool;

// ---------------------------------------------------------------- tricky types

/// How a shape is drawn.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        radius: f64,
    },
    /// A rectangle.
    Rect { width: f64, height: f64 },
    /// A dot.
    Dot,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Mode {
    Fast,
    Careful,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Placement {
    /// Where, if anywhere.
    anchor: Option<String>,
}

/// Draws a shape.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct DrawArgs {
    /// What to draw.
    shape: Shape,
    /// How many times (a `u64`).
    count: Option<u64>,
    /// Opacity, 0–255 (a `u8`).
    alpha: u8,
    /// How carefully.
    mode: Mode,
    #[serde(flatten)]
    placement: Placement,
    /// Several shapes at once.
    more: Vec<Shape>,
}

#[derive(Serialize, JsonSchema)]
struct Drawing {
    strokes: u64,
    ratio: Option<f32>,
}

/// A tree: recursive.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// Free-form labels: a map.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct LabelArgs {
    labels: BTreeMap<String, u32>,
}

fn snapshot() -> Snapshot {
    let draw = ToolDef::builder("draw")
        .description("Draws shapes.")
        .handler(|_: DrawArgs, _: ToolContext| async {
            Ok::<_, ToolError>(Drawing {
                strokes: 1,
                ratio: None,
            })
        });
    let plant = ToolDef::builder("plant")
        .description("Plants a tree.")
        .handler(|_: Tree, _: ToolContext| async { Ok::<_, ToolError>(()) });
    let label = ToolDef::builder("label")
        .description("Labels things.")
        .handler(|_: LabelArgs, _: ToolContext| async { Ok::<_, ToolError>(vec![String::new()]) });
    Registry::builder()
        .tool(draw)
        .tool(plant)
        .tool(label)
        .build()
        .unwrap()
        .snapshot()
}

fn definitions<'a>(snapshot: &'a Snapshot, names: &[&str]) -> Vec<&'a AdvertisedTool> {
    names
        .iter()
        .map(|name| snapshot.definition(name).unwrap())
        .collect()
}

// ---------------------------------------------------------------- golden files

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden/lowering")
}

/// Compares `value` with a golden file; `TOOLPRISM_BLESS=1` rewrites it.
fn assert_golden(name: &str, value: &Value) {
    let path = golden_dir().join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    if std::env::var_os("TOOLPRISM_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        golden == text,
        "{} differs from what was lowered:\n{text}\n(regenerate with TOOLPRISM_BLESS=1 and read the diff)",
        path.display()
    );
}

const ALL: [(Provider, &str); 4] = [
    (Provider::OpenAiChat, "openai_chat"),
    (Provider::OpenAiResponses, "openai_responses"),
    (Provider::Anthropic, "anthropic"),
    (Provider::Gemini, "gemini"),
];

/// The lowered tool definitions, per golden name and SDK type.
fn lowered_tools() -> Vec<(String, &'static str, Value)> {
    let snapshot = snapshot();
    let mut lowered = Vec::new();
    let cases: [(Provider, &str, ToolOptions, &[&str], &str); 7] = [
        (
            Provider::OpenAiChat,
            "openai_chat",
            ToolOptions::default(),
            &["draw", "plant", "label"],
            "openai.chat.tool",
        ),
        (
            Provider::OpenAiChat,
            "openai_chat.strict",
            ToolOptions::default().strict(),
            &["draw", "plant"],
            "openai.chat.tool",
        ),
        (
            Provider::OpenAiResponses,
            "openai_responses.strict",
            ToolOptions::default().strict().with_output_schemas(),
            &["draw", "plant"],
            "openai.responses.tool",
        ),
        (
            Provider::OpenAiResponses,
            "openai_responses",
            ToolOptions::default(),
            &["label"],
            "openai.responses.tool",
        ),
        (
            Provider::Anthropic,
            "anthropic",
            ToolOptions::default(),
            &["draw", "plant", "label"],
            "anthropic.tool",
        ),
        (
            Provider::Anthropic,
            "anthropic.strict",
            ToolOptions::default().strict(),
            &["draw"],
            "anthropic.tool",
        ),
        (
            Provider::Gemini,
            "gemini",
            ToolOptions::default().with_output_schemas(),
            &["draw", "label"],
            "gemini.tool",
        ),
    ];
    for (provider, name, options, tools, sdk_type) in cases {
        let tools = lower_tools(provider, definitions(&snapshot, tools), options).unwrap();
        lowered.push((format!("tools.{name}"), sdk_type, Value::Array(tools)));
    }
    lowered
}

/// Content of every kind, and a failure.
fn contents() -> Vec<(&'static str, Vec<ContentBlock>, bool)> {
    let png = ContentBlock::image_from_bytes(&[0x89, b'P', b'N', b'G', 1, 2, 3], "image/png");
    let resource = ContentBlock::Resource {
        uri: "file:///workspace/report.pdf".into(),
        mime_type: Some("application/pdf".into()),
        name: Some("report.pdf".into()),
    };
    vec![
        ("text", vec![ContentBlock::text("3 files changed")], false),
        ("image", vec![png.clone()], false),
        ("resource", vec![resource.clone()], false),
        (
            "mixed",
            vec![ContentBlock::text("Here:"), png, resource],
            false,
        ),
        (
            "audio_and_embedded",
            vec![
                ContentBlock::Audio {
                    data: "UklGRg==".into(),
                    mime_type: "audio/wav".into(),
                },
                ContentBlock::EmbeddedResource {
                    uri: "file:///workspace/notes.txt".into(),
                    mime_type: Some("text/plain".into()),
                    contents: ResourceContents::Text("first note".into()),
                },
                ContentBlock::EmbeddedResource {
                    uri: "file:///workspace/logo.bin".into(),
                    mime_type: None,
                    contents: ResourceContents::Blob("AAEC".into()),
                },
            ],
            false,
        ),
        (
            "failure",
            vec![ContentBlock::text("no such file: a.txt")],
            true,
        ),
    ]
}

fn result_sdk_type(provider: Provider, index: usize) -> &'static str {
    match provider {
        Provider::OpenAiChat => "openai.chat.message",
        Provider::OpenAiResponses => "openai.responses.input_item",
        Provider::Anthropic => "anthropic.tool_result",
        Provider::Gemini => "gemini.part",
        _ => unreachable!("{index}"),
    }
}

#[test]
fn tool_definitions_match_their_golden_files() {
    for (name, _, value) in lowered_tools() {
        assert_golden(&name, &value);
    }
}

#[test]
fn results_of_every_content_kind_match_their_golden_files() {
    for (provider, name) in ALL {
        let mut all = serde_json::Map::new();
        for (kind, content, is_error) in contents() {
            let lowered = lower_content(provider, "call_7", "read", &content, is_error);
            all.insert(kind.to_owned(), Value::Array(lowered));
        }
        assert_golden(&format!("results.{name}"), &Value::Object(all));
    }
}

// ---------------------------------------------------------------- what each dialect does

#[test]
fn gemini_inlines_references_and_rewrites_nullable_types() {
    let snapshot = snapshot();
    let tools = lower_tools(
        Provider::Gemini,
        definitions(&snapshot, &["draw"]),
        ToolOptions::default(),
    )
    .unwrap();
    let parameters = &tools[0]["functionDeclarations"][0]["parameters"];
    let text = parameters.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert!(!text.contains("\"type\":["), "no type arrays: {text}");
    assert_eq!(parameters["type"], "OBJECT");
    assert_eq!(parameters["properties"]["count"]["type"], "INTEGER");
    assert_eq!(parameters["properties"]["count"]["nullable"], true);
    assert_eq!(
        parameters["properties"]["anchor"]["nullable"], true,
        "flattened field kept"
    );
    assert_eq!(
        parameters["properties"]["mode"]["enum"],
        json!(["Fast", "Careful"])
    );
    let circle = &parameters["properties"]["shape"]["anyOf"][0];
    assert_eq!(circle["properties"]["kind"]["enum"], json!(["circle"]));
    assert_eq!(parameters["properties"]["alpha"]["maximum"], 255);
}

#[test]
fn a_recursive_type_is_an_error_for_gemini_naming_tool_and_keyword() {
    let snapshot = snapshot();
    let error = lower_tools(
        Provider::Gemini,
        definitions(&snapshot, &["plant"]),
        ToolOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        (
            error.tool.as_str(),
            error.role,
            error.source.keyword.as_str()
        ),
        ("plant", "input", "$ref")
    );
    assert!(
        error
            .to_string()
            .starts_with("tool `plant` cannot be sent to Gemini"),
        "{error}"
    );
}

#[test]
fn openai_strict_requires_every_property_and_refuses_maps() {
    let snapshot = snapshot();
    let tools = lower_tools(
        Provider::OpenAiChat,
        definitions(&snapshot, &["draw", "plant"]),
        ToolOptions::default().strict(),
    )
    .unwrap();
    let draw = &tools[0]["function"];
    assert_eq!(draw["strict"], true);
    let parameters = &draw["parameters"];
    assert_eq!(parameters["additionalProperties"], false);
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let properties: Vec<&str> = parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(required, properties, "every property is required");
    assert_eq!(
        parameters["properties"]["count"]["type"],
        json!(["integer", "null"]),
        "optional became nullable"
    );
    assert_eq!(
        parameters["properties"]["anchor"]["type"],
        json!(["string", "null"])
    );
    // Recursion stays a reference, which strict mode resolves.
    assert!(
        tools[1]["function"]["parameters"]
            .to_string()
            .contains("\"$ref\"")
    );

    let error = lower_tools(
        Provider::OpenAiChat,
        definitions(&snapshot, &["label"]),
        ToolOptions::default().strict(),
    )
    .unwrap_err();
    assert_eq!(
        (error.tool.as_str(), error.source.keyword.as_str()),
        ("label", "additionalProperties")
    );
}

#[test]
fn anthropic_strict_keeps_optional_properties_folds_bounds_and_refuses_recursion() {
    let snapshot = snapshot();
    let tools = lower_tools(
        Provider::Anthropic,
        definitions(&snapshot, &["draw"]),
        ToolOptions::default().strict(),
    )
    .unwrap();
    let draw = &tools[0];
    assert_eq!(draw["strict"], true);
    let schema = &draw["input_schema"];
    assert_eq!(schema["additionalProperties"], false);
    let required = schema["required"].as_array().unwrap();
    assert!(required.contains(&json!("alpha")));
    assert!(
        !required.contains(&json!("count")),
        "optional stays optional: {schema:#}"
    );
    // Bounds Anthropic's strict mode refuses are told, not sent.
    let alpha = &schema["properties"]["alpha"];
    assert_eq!(
        (alpha.get("minimum"), alpha.get("maximum")),
        (None, None),
        "{alpha:#}"
    );
    assert!(
        alpha["description"]
            .as_str()
            .unwrap()
            .contains("maximum: 255"),
        "{alpha:#}"
    );
    assert!(!schema.to_string().contains("$ref"), "references inlined");

    let error = lower_tools(
        Provider::Anthropic,
        definitions(&snapshot, &["plant"]),
        ToolOptions::default().strict(),
    )
    .unwrap_err();
    assert_eq!(
        (error.tool.as_str(), error.source.keyword.as_str()),
        ("plant", "$ref")
    );
}

#[test]
fn results_never_carry_the_value() {
    let snapshot = snapshot();
    let outcome = futures_lite_block_on(snapshot.dispatch(
        ToolCall::new(
            "c",
            "draw",
            json!({
                "shape": {"kind": "dot"}, "alpha": 3, "mode": "Fast", "more": [], "count": null
            }),
        ),
        Surface::Direct,
    ));
    for (provider, _) in ALL {
        let lowered = toolprism::lower::lower_outcome(provider, "c", "draw", &outcome);
        let text = serde_json::to_string(&lowered).unwrap();
        assert!(
            text.contains("strokes"),
            "the content (the default render) is what is sent: {text}"
        );
    }
    assert_eq!(
        outcome.content(),
        [ContentBlock::text(r#"{"ratio":null,"strokes":1}"#)]
    );
}

fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

// ---------------------------------------------------------------- the real SDK types

#[test]
fn lowered_json_is_valid_for_the_official_python_sdks() {
    let mut cases = Vec::new();
    for (name, sdk_type, value) in lowered_tools() {
        for (index, tool) in value.as_array().unwrap().iter().enumerate() {
            cases
                .push(json!({"name": format!("{name}[{index}]"), "type": sdk_type, "value": tool}));
        }
    }
    for (provider, provider_name) in ALL {
        for (kind, content, is_error) in contents() {
            for (index, item) in lower_content(provider, "call_7", "read", &content, is_error)
                .into_iter()
                .enumerate()
            {
                let name = format!("results.{provider_name}.{kind}[{index}]");
                cases.push(
                    json!({"name": name, "type": result_sdk_type(provider, index), "value": item}),
                );
            }
        }
    }
    // A deliberate mistake must be caught, or the check proves nothing.
    cases.push(json!({"name": "canary", "type": "anthropic.tool_result", "value": {"type": "tool_result", "tool_use_id": "x", "content": [], "is_eror": true}}));
    let report = toolprism_tests::check_wire("wire-cases.json", &cases);
    assert_eq!(report["checked"], cases.len());
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "only the canary may fail: {failures:#?}");
    assert_eq!(failures[0]["name"], "canary");
}

#[test]
fn openai_wire_json_deserializes_into_async_openai_types() {
    use async_openai::types::chat::{ChatCompletionRequestMessage, ChatCompletionTools};
    use async_openai::types::responses::{InputItem, Tool};

    for (name, _, value) in lowered_tools() {
        for tool in value.as_array().unwrap() {
            if name.starts_with("tools.openai_chat") {
                serde_json::from_value::<ChatCompletionTools>(tool.clone())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            } else if name.starts_with("tools.openai_responses") {
                serde_json::from_value::<Tool>(tool.clone())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
    for (kind, content, is_error) in contents() {
        for message in lower_content(Provider::OpenAiChat, "call_7", "read", &content, is_error) {
            serde_json::from_value::<ChatCompletionRequestMessage>(message.clone())
                .unwrap_or_else(|e| panic!("{kind}: {e}: {message}"));
        }
        for item in lower_content(
            Provider::OpenAiResponses,
            "call_7",
            "read",
            &content,
            is_error,
        ) {
            serde_json::from_value::<InputItem>(item.clone())
                .unwrap_or_else(|e| panic!("{kind}: {e}: {item}"));
        }
    }
}
