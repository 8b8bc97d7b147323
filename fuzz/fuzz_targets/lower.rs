//! Lowering arbitrary schemas into each provider's dialect. Findings: a panic, an abort, a hang,
//! an output deeper than the limit.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use toolprism::depth::check_depth;
use toolprism::lower::{gemini, object_root, openai_strict, plain};

fuzz_target!(|data: &[u8]| {
    let Some(schema) = common::json(data) else {
        return;
    };
    let root = object_root(&schema);
    for lowered in [gemini(&root), openai_strict(&root), plain(&root)] {
        if let Ok(lowered) = lowered {
            assert!(check_depth(&lowered).is_ok() || check_depth(&schema).is_err());
        }
    }
    let _ = (gemini(&schema), openai_strict(&schema), plain(&schema));
});
