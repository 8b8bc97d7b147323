use toolprism::prelude::*;

/// Adds.
#[tool(meta = card)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn card(_args: &AddArgs, _value: &i64) -> Option<Card> {
    None
}

fn main() {}
