//! Registration of an arbitrary schema (as input, and as output), then dispatches against it,
//! lowers it and indexes it for search.
//! Findings: a panic, an abort, a hang — registration must refuse, with an error, whatever it
//! cannot bound, and what it accepts must validate within the documented cost; and a body that
//! ran on arguments its input schema refuses (the schema's plan, where it has one, accepts
//! arguments without the validator: this is its differential check against an independent one).

#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolprism::prelude::*;

/// The arguments the body last ran on.
static SEEN: Mutex<Option<Value>> = Mutex::new(None);

fn tool(input: Value, output: Value) -> ToolDef {
    ToolDef::builder("fuzzed")
        .description("A tool with a fuzzed schema.")
        .input_schema(input)
        .output_schema(output)
        .handler(|args: Value, _cx: ToolContext| async move {
            *SEEN.lock().unwrap() = Some(args.clone());
            Ok::<_, ToolError>(args)
        })
        .build()
}

fuzz_target!(|data: &[u8]| {
    let Some(schema) = common::json(data) else {
        return;
    };
    index_as_advertised(&schema);
    // As an input schema, with an object around it when it is not one.
    let input = if schema.get("type") == Some(&json!("object")) {
        schema.clone()
    } else {
        json!({"type": "object", "properties": {"x": schema.clone()}})
    };
    let Ok(registry) = Registry::builder()
        .tool(tool(input.clone(), schema.clone()))
        .build()
    else {
        return;
    };
    let input_validator = common::independent(&input);
    let candidates = [
        json!({}),
        json!({"x": null}),
        json!({"x": 0}),
        json!({"x": "a"}),
        json!({"x": [1, "a", null]}),
        json!({"x": {"a": {"b": [true]}}}),
        json!({"x": schema.clone()}),
        json!({"x": -1, "a": 1}),
        json!({"x": 1.5}),
        json!({"x": u64::MAX}),
        json!({"x": {"a": 1, "b": "a"}}),
    ];
    for args in candidates {
        let outcome = common::block_on(
            registry.dispatch(ToolCall::new("c", "fuzzed", args), Surface::Direct),
        );
        if let (Some(seen), Some(validator)) = (SEEN.lock().unwrap().take(), &input_validator) {
            assert!(
                validator.is_valid(&seen),
                "the body ran on {seen}, which {input} refuses"
            );
        }
        if let Some(value) = outcome.value() {
            // Success means the value passed the output schema.
            let validator = common::independent(&schema);
            if let Some(validator) = validator {
                assert!(
                    validator.is_valid(value),
                    "{value} is not valid under {schema}"
                );
            }
        }
    }
    // Lowering what registered never panics either.
    let snapshot = registry.snapshot();
    for provider in [
        toolprism::lower::Provider::Gemini,
        toolprism::lower::Provider::OpenAiChat,
        toolprism::lower::Provider::Anthropic,
    ] {
        for options in [
            toolprism::lower::ToolOptions::default(),
            toolprism::lower::ToolOptions::default()
                .strict()
                .with_output_schemas(),
        ] {
            let _ = toolprism::lower::lower_tools(provider, snapshot.definitions(), options);
        }
    }
    // Nor does indexing it for search, which reads the schema's listed values.
    let index = toolprism::search::ToolIndex::new(snapshot.definitions());
    let _ = index.search("a x fuzzed", 5);
});

/// Indexes `schema` for search as a remote server may advertise it: unchecked, whether or not
/// registration would accept it.
fn index_as_advertised(schema: &Value) {
    let advertised =
        tool(json!({"type": "object"}), json!(true)).with_advertised_input_schema(schema.clone());
    if let Ok(imported) = Registry::builder().tool(advertised).build() {
        let snapshot = imported.snapshot();
        let index = toolprism::search::ToolIndex::new(snapshot.definitions());
        let _ = index.search("a x fuzzed", 5);
    }
}
