use toolprism::prelude::*;

/// Adds.
#[tool(struct_name = "Add Tool")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
