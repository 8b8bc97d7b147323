//! Shared by the fuzz targets: a runtime, and the independent reading of a schema.

// Each target uses part of this.
#![allow(dead_code)]

use serde_json::Value;

/// Runs a future to completion on a fresh single-threaded runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// A validator compiled by the test, not the pipeline (formats checked, as documented).
pub fn independent(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
        .ok()
}

/// The input as JSON: text when it parses, else nothing.
pub fn json(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}
