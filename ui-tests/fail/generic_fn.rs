use toolprism::prelude::*;

/// Echoes.
#[tool]
fn echo<T: Serialize + JsonSchema>(#[arg] value: T) -> T {
    value
}

fn main() {}
