use toolprism::prelude::*;

// Every problem is reported in one pass: two unknown options, a duplicate, a bad name.
/// Adds.
#[tool(colour = "red", render = a, size(3), render = b, name = "not valid")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
