//! The TypeScript that Code Mode shows the model, checked by TypeScript's own compiler
//! (`tsc --noEmit --strict`, installed by `scripts/typescript` on first use): the
//! declarations of the coding tools, of schemars' tricky shapes, and of schemas a remote
//! server might send, and a program using them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism::tool::Presented;
use toolprism_codemode::{CodeMode, declarations};
use toolprism_examples::tools::{self, Workspace};
use toolprism_tests::TempDir;

/// How a shape is drawn.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
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

/// A tree: recursive.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
    /// A pair, as a tuple.
    span: Option<(u32, String)>,
}

/// Free-form labels, a nested enum, a flattened map.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Tagging {
    labels: BTreeMap<String, u32>,
    shapes: Vec<Shape>,
    #[serde(flatten)]
    extra: BTreeMap<String, Value>,
}

/// A tool whose schemas came from elsewhere (an MCP server, say), name and all.
fn remote(name: &str, input: Value, output: Value) -> ToolDef {
    ToolDef::builder(name)
        .description("A remote tool. */ This must not end the comment.")
        .input_schema(input)
        .output_schema(output)
        .presented_handler(|_: Value, _: ToolContext| async {
            Ok::<_, ToolError>(Presented::new(json!(null), vec![]))
        })
        .build()
}

fn registry(dir: &TempDir) -> Registry {
    let workspace = Workspace::new(dir.path()).unwrap();
    let tree = ToolDef::builder("plant")
        .description("Plants a tree.")
        .handler(|tree: Tree, _: ToolContext| async { Ok::<_, ToolError>(tree) })
        .build();
    let labels = ToolDef::builder("label")
        .description("Labels things.")
        .handler(|tagging: Tagging, _: ToolContext| async { Ok::<_, ToolError>(tagging) })
        .build();
    let builder = tools::register_all(Registry::builder(), &workspace)
        .tool(tree)
        .tool(labels)
        .tool(remote(
            "files-search-v2",
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1},
                    "mode": {"enum": ["fast", "deep", 3, null]},
                    "range": {"type": "array", "items": [{"type": "integer"}, {"type": "integer"}], "additionalItems": false},
                    "where": {"if": {"type": "string"}, "then": {"minLength": 2}},
                    "not-an-identifier": {"const": "yes"},
                    "meta": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            json!({
                "type": "object",
                "properties": {
                    "hits": {"type": "array", "items": {"$ref": "#/definitions/hit"}},
                    "next": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "never": false,
                    "either": {"oneOf": [{"type": "number"}, {"type": "object", "properties": {"n": {"type": "number"}}}]},
                    "both": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object", "properties": {"b": {"type": "string"}}}]},
                    "map": {"$ref": "#/definitions/Map"}
                },
                "definitions": {
                    "hit": {"type": "object", "properties": {"path": {"type": "string"}, "error": {"$ref": "#/definitions/Error"}}, "required": ["path"]},
                    // Named as TypeScript's own types are: declared under other names.
                    "Error": {"type": "string"},
                    "Map": {"type": "object", "properties": {"found": {"$ref": "#/definitions/AggregateError"}}},
                    "AggregateError": {"type": "array", "items": {"$ref": "#/definitions/Map"}}
                }
            }),
        ))
        .tool(remote("9lives", json!({"type": "object"}), json!(true)))
        .tool(remote("plant_", json!({"type": "object"}), json!({"type": ["string", "integer"]})));
    let registry = builder.build().unwrap();
    CodeMode::new().register(&registry).unwrap();
    registry
}

/// A program using the declarations as a model would: each value's fields, typed.
const USAGE: &str = r#"
async function program(): Promise<unknown> {
    const file = await tools.read({ path: "notes.txt", offset: 1 });
    if (file.kind === "text") {
        const first: string = file.lines[0].text;
        const count: number = file.total_lines;
        console.log(first, count);
    }
    const found = await tools.grep({ pattern: "TODO" });
    const paths: string[] = found.matches.map((m) => m.path);
    const tree = await tools.plant({ label: "root", children: [], span: [1, "a"] });
    const label: string = tree.children.length > 0 ? tree.children[0].label : tree.label;
    const hits = await tools["files-search-v2"]({ query: "x", mode: "fast" });
    const path: string | undefined = hits.hits?.[0]?.path;
    // @ts-expect-error: `query` is required.
    await tools["files-search-v2"]({ mode: "deep" });
    // @ts-expect-error: a number is not a string.
    await tools.read({ path: 7 });
    return { paths, label, path };
}
declare const console: { log(...values: unknown[]): void };
"#;

#[test]
fn declarations_type_check_under_tsc_strict() {
    let dir = TempDir::new("code-mode-types");
    let registry = registry(&dir);
    let snapshot = registry.snapshot();
    let text = declarations(
        snapshot
            .definitions()
            .filter(|tool| tool.name() != "run_code"),
    );
    // What the model is shown is exactly what is checked here.
    let description = snapshot.definition("run_code").unwrap().description();
    assert!(description.contains(&text), "{description}");
    for expected in [
        "read(args: ReadArgs): Promise<ReadValue>;",
        "\"files-search-v2\"(args: FilesSearchV2Args): Promise<FilesSearchV2Value>;",
        "\"9lives\"(args: T9livesArgs)",
        // `{"type": "object"}` is `9lives`'s arguments' type, declared once; a name taken is
        // not taken again.
        "plant_(args: T9livesArgs): Promise<PlantValue2>;",
        "type Line = {",
        "type Error2 = string;",
        "map?: Map2;",
        "This must not end the comment.",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(!text.contains("*/ This"), "{text}");

    std::fs::write(dir.path().join("tools.d.ts"), &text).unwrap();
    std::fs::write(dir.path().join("usage.ts"), USAGE).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/typescript");
    let output = Command::new(script)
        .current_dir(dir.path())
        .args([
            "--noEmit",
            "--strict",
            "--target",
            "es2022",
            "--lib",
            "es2022",
            "tools.d.ts",
            "usage.ts",
        ])
        .output()
        .expect("scripts/typescript runs");
    assert!(
        output.status.success(),
        "tsc refused the declarations:\n{}{}\n--- tools.d.ts\n{text}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
