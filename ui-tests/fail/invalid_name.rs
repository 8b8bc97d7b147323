use toolprism::prelude::*;

/// Counts.
#[tool(name = "count things")]
fn count() -> u32 {
    1
}

fn main() {}
