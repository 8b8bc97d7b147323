use toolprism::prelude::*;

/// Adds.
#[tool(name)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
