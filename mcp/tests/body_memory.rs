//! The peak heap of decoding the heaviest body the door takes — 4 MiB of small array elements
//! — as rmcp decodes it, and that the door's room for heavy bodies keeps a burst of 16 such
//! requests within a small host's memory.

#![cfg(feature = "http-server")]

use rmcp::model::ClientJsonRpcMessage;
use toolprism_mcp::{MAX_BODY_BYTES, MAX_HEAVY_BODIES};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A small host's memory, for the bound checked here.
const SMALL_HOST: usize = 1 << 30;
/// Requests arriving at once.
const BURST: usize = 16;

#[test]
fn a_burst_of_heavy_bodies_fits_a_small_host() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sum","arguments":{"numbers":["#;
    let tail = "]}}}";
    let elements = (MAX_BODY_BYTES - head.len() - tail.len()) / 2;
    let mut body = String::with_capacity(MAX_BODY_BYTES);
    body.push_str(head);
    for at in 0..elements {
        body.push_str(if at == 0 { "0" } else { ",0" });
    }
    body.push_str(tail);
    assert!(body.len() <= MAX_BODY_BYTES);

    let before = dhat::HeapStats::get();
    let message: ClientJsonRpcMessage = serde_json::from_slice(body.as_bytes()).unwrap();
    let after = dhat::HeapStats::get();
    drop(message);
    let peak = after.max_bytes - before.curr_bytes;
    eprintln!(
        "one 4 MiB body of {elements} elements: {peak} bytes of heap at its peak ({}x its size)",
        peak / body.len()
    );
    // Without the door's room, 16 at once would not fit; with it, at most four are decoded,
    // and the others wait as their bytes.
    assert!(
        BURST * peak > SMALL_HOST,
        "{peak}: the measure is of a heavy body"
    );
    assert!(
        MAX_HEAVY_BODIES * peak + BURST * MAX_BODY_BYTES < SMALL_HOST,
        "{MAX_HEAVY_BODIES} x {peak} bytes + {BURST} bodies waiting"
    );
}
