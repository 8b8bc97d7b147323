use toolprism::prelude::*;

// `fn string` would generate `struct String`, hiding the prelude's `String` in this module.
/// Makes a string.
#[tool]
fn string(n: u32, suffix: String) -> String {
    format!("{n}{suffix}")
}

fn main() {}
