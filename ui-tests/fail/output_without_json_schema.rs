use toolprism::prelude::*;

#[derive(Serialize)]
struct Value {
    total: u32,
}

/// Counts.
#[tool]
fn count() -> Result<Value, ToolError> {
    Ok(Value { total: 1 })
}

fn main() {}
