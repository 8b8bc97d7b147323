use toolprism::prelude::*;

/// Returns something.
#[tool]
fn opaque() -> impl Serialize {
    1
}

fn main() {}
