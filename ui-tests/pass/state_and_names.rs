// Host state as a parameter, in a free function and in a toolset method; a name of exactly 64
// characters, the longest every provider accepts.
#![deny(warnings)]

use std::sync::atomic::{AtomicU64, Ordering};

use toolprism::context::State;
use toolprism::prelude::*;

pub struct Hits(AtomicU64);

/// Counts a hit.
#[tool(name = "a234567890123456789012345678901234567890123456789012345678901234")]
fn hit(State(hits): State<Hits>, cx: &ToolContext) -> u64 {
    let _ = cx.call_id();
    hits.0.fetch_add(1, Ordering::Relaxed) + 1
}

pub struct Labels {
    prefix: String,
}

#[toolset]
impl Labels {
    /// Labels a text, counting it as a hit.
    #[tool]
    async fn label(&self, #[arg] text: String, hits: State<Hits>) -> String {
        hits.0.0.fetch_add(1, Ordering::Relaxed);
        format!("{}{text}", self.prefix)
    }
}

fn main() {
    let registry = Registry::builder()
        .state(Hits(AtomicU64::new(0)))
        .tool(Hit)
        .toolset(Labels { prefix: "> ".into() })
        .build()
        .unwrap();
    assert_eq!(registry.snapshot().definitions().len(), 2);
}
