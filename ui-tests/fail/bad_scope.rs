use toolprism::prelude::*;

/// Writes a file.
#[tool(scopes = ["files write", 7])]
fn write(#[arg] path: String) -> String {
    path
}

fn main() {}
