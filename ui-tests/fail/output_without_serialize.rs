use toolprism::prelude::*;

#[derive(JsonSchema)]
struct Value {
    total: u32,
}

/// Counts.
#[tool]
fn count() -> Value {
    Value { total: 1 }
}

fn main() {}
