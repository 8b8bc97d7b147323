//! Dispatch from arbitrary bytes: a tool name and raw arguments (or arguments as JSON), against
//! tools with non-trivial schemas. Findings: a panic, an abort, a hang; and a body that ran on
//! arguments its schema refuses, or did not run on arguments its schema accepts.

#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolprism::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// The file.
    path: String,
    /// Lines to change.
    #[serde(default)]
    edits: Vec<LineEdit>,
    /// At most this many.
    limit: Option<u8>,
    mode: Mode,
}

#[derive(Deserialize, JsonSchema)]
struct LineEdit {
    line: u32,
    #[schemars(length(min = 1, max = 20), regex(pattern = r"^[a-z ]+$"))]
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Mode {
    Fast,
    Careful { retries: i8 },
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct EditValue {
    path: String,
    changed: usize,
    ratio: f64,
}

/// Edits a file (on paper).
#[tool(render = render_edit)]
fn edit(args: EditArgs) -> EditValue {
    let limit = usize::from(args.limit.unwrap_or(u8::MAX));
    let changed = args
        .edits
        .iter()
        .take(limit)
        .filter(|edit| edit.line > 0 && !edit.text.is_empty())
        .count();
    let retries = match args.mode {
        Mode::Fast => 0,
        Mode::Careful { retries } => i32::from(retries),
    };
    EditValue {
        path: args.path,
        changed,
        ratio: f64::from(retries) / 3.0,
    }
}

fn render_edit(args: &EditArgs, value: &EditValue) -> String {
    format!(
        "{}: {} of {} changed",
        value.path,
        value.changed,
        args.edits.len()
    )
}

/// What the dynamic tools saw, to check against their schemas.
static SEEN: Mutex<Vec<(&'static str, Value)>> = Mutex::new(Vec::new());

fn recording(name: &'static str, schema: Value) -> ToolDef {
    ToolDef::builder(name)
        .description("Records its arguments.")
        .input_schema(schema)
        .output_schema(json!(true))
        .handler(move |args: Value, _cx: ToolContext| {
            SEEN.lock().unwrap().push((name, args.clone()));
            async move { Ok::<_, ToolError>(args) }
        })
        .build()
}

fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "tree",
            json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"],
                "$defs": {"Node": {"type": "object", "properties": {
                    "value": {"type": "integer", "minimum": -5, "maximum": 5},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "maxItems": 3}
                }, "required": ["value"], "additionalProperties": false}}}),
        ),
        (
            "choice",
            json!({"oneOf": [
                {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x+$"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": ["number", "null"], "multipleOf": 0.5}, "c": {"enum": [1, "1", null]}}}
            ]}),
        ),
        (
            "loose",
            json!({"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": true, "default": []},
                "when": {"type": "string", "format": "date-time"}}}),
        ),
    ]
}

struct Fixture {
    registry: Registry,
    validators: Vec<(&'static str, jsonschema::Validator)>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let schemas = schemas();
        let registry = schemas
            .iter()
            .fold(Registry::builder().tool(Edit), |builder, (name, schema)| {
                builder.tool(recording(name, schema.clone()))
            })
            .build()
            .expect("the fixture registers");
        let validators = schemas
            .iter()
            .map(|(name, schema)| (*name, common::independent(schema).expect("compiles")))
            .collect();
        Fixture {
            registry,
            validators,
        }
    })
}

const NAMES: [&str; 5] = ["edit", "tree", "choice", "loose", "missing"];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let fixture = fixture();
    let name = NAMES[usize::from(selector) % NAMES.len()];
    let call = if selector & 0x80 == 0 {
        ToolCall::from_raw_args("fuzz", name, String::from_utf8_lossy(rest).into_owned())
    } else {
        match common::json(rest) {
            Some(args) => ToolCall::new("fuzz", name, args),
            None => return,
        }
    };
    let args: Option<Value> = common::json(rest);
    SEEN.lock().unwrap().clear();
    let outcome = common::block_on(fixture.registry.dispatch(call, Surface::Direct));
    let seen = std::mem::take(&mut *SEEN.lock().unwrap());
    if let Some((_, validator)) = fixture.validators.iter().find(|(tool, _)| *tool == name) {
        // The body never sees arguments its schema refuses…
        for (_, received) in &seen {
            assert!(validator.is_valid(received), "{name} ran on {received}");
        }
        // …and always runs on arguments its schema accepts.
        if let Some(args) = &args
            && toolprism::depth::check_depth(args).is_ok()
            && validator.is_valid(args)
        {
            assert_eq!(
                seen.len(),
                1,
                "{name} did not run on valid {args}: {outcome:?}"
            );
        }
    }
    // Whatever happened, the model reads something bounded.
    let text: usize = outcome
        .content()
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(str::len)
        .sum();
    assert!(text <= 64 * 1024, "{text} bytes of text");
});
