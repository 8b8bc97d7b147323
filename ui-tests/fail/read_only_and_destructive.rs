use toolprism::prelude::*;

/// Deletes a file, and says it changes nothing.
#[tool(read_only, destructive)]
fn delete(#[arg] path: String) -> String {
    path
}

fn main() {}
