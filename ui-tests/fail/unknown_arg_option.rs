use toolprism::prelude::*;

/// Greets.
#[tool]
fn greet(#[arg(desc = "Who.")] name: String) -> String {
    name
}

fn main() {}
