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

/// A provider's stream reader on arbitrary bytes in arbitrary chunks. The first byte chooses
/// the chunk sizes; the rest is the stream. Findings: a panic, an abort, a hang, memory past
/// the limits; and a stream read differently in chunks than whole.
pub fn read_stream(provider: toolprism::lower::Provider, data: &[u8]) {
    use toolprism::turn::{ReadLimits, StreamReader};

    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    // Small limits, so that memory past them shows.
    let limits = ReadLimits::default()
        .with_max_call_bytes(64 << 10)
        .with_max_line_bytes(256 << 10)
        .with_max_turn_bytes(1 << 20)
        .with_max_calls(64);
    let read = |chunks: &mut dyn Iterator<Item = &[u8]>| {
        let mut reader = StreamReader::with_limits(provider, limits);
        for chunk in chunks {
            reader.feed(chunk)?;
        }
        reader.finish()
    };
    let whole = read(&mut std::iter::once(stream));
    let sizes = [1, 2, 3, 5, 8, 13, 64, 4096];
    let size = sizes[usize::from(seed) % sizes.len()];
    let chunked = read(&mut stream.chunks(size));
    assert_eq!(whole, chunked, "chunks of {size} read differently");
    if let Ok(turn) = whole {
        // What a host does next must not fail either.
        let _ = turn.echo();
        let refusals: Vec<_> = turn
            .calls()
            .iter()
            .map(|call| match call.to_call() {
                Ok(_) => toolprism::ToolOutcome::Failure(toolprism::ToolFailure::new(
                    toolprism::error::FailureError::new(
                        toolprism::error::FailureKind::UnknownTool,
                        "no",
                    ),
                )),
                Err(refused) => refused,
            })
            .collect();
        let _ = turn.next_messages(&refusals).expect("one outcome per call");
    }
}

/// A whole response body from arbitrary bytes.
pub fn read_whole(provider: toolprism::lower::Provider, data: &[u8]) {
    if let Ok(turn) = toolprism::turn::read_response(provider, data) {
        let _ = turn.echo();
    }
}
