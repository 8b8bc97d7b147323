use toolprism::prelude::*;

/// Adds.
#[tool(name = "add", description = "Adds.", name = "plus")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
