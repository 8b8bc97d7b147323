use toolprism::prelude::*;

// 65 characters: one more than every provider accepts.
/// Adds.
#[tool(name = "a2345678901234567890123456789012345678901234567890123456789012345")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
