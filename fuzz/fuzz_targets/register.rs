//! Registration of an arbitrary schema (as input, and as output), then dispatches against it.
//! Findings: a panic, an abort, a hang — registration must refuse, with an error, whatever it
//! cannot bound, and what it accepts must validate within the documented cost.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolprism::prelude::*;

fn tool(input: Value, output: Value) -> ToolDef {
    ToolDef::builder("fuzzed")
        .description("A tool with a fuzzed schema.")
        .input_schema(input)
        .output_schema(output)
        .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
        .build()
}

fuzz_target!(|data: &[u8]| {
    let Some(schema) = common::json(data) else {
        return;
    };
    // As an input schema, with an object around it when it is not one.
    let input = if schema.get("type") == Some(&json!("object")) {
        schema.clone()
    } else {
        json!({"type": "object", "properties": {"x": schema.clone()}})
    };
    let Ok(registry) = Registry::builder()
        .tool(tool(input, schema.clone()))
        .build()
    else {
        return;
    };
    let candidates = [
        json!({}),
        json!({"x": null}),
        json!({"x": 0}),
        json!({"x": "a"}),
        json!({"x": [1, "a", null]}),
        json!({"x": {"a": {"b": [true]}}}),
        json!({"x": schema.clone()}),
    ];
    for args in candidates {
        let outcome = common::block_on(
            registry.dispatch(ToolCall::new("c", "fuzzed", args), Surface::Direct),
        );
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
});
