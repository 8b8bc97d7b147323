use toolprism::prelude::*;

/// Shouts.
#[tool]
fn shout(#[arg] text: &str, times: usize) -> String {
    text.to_uppercase().repeat(times)
}

fn main() {}
