use toolprism::prelude::*;

/// Reads a file.
#[tool(read_only, resource = "file:{path")]
fn read(#[arg] path: String) -> String {
    path
}

/// Writes a file.
#[tool(resource = "file:path}")]
fn write(#[arg] path: String) -> String {
    path
}

/// Touches everything, named as if it touched one thing.
#[tool(resource = "file:everything")]
fn touch(#[arg] path: String) -> String {
    path
}

fn main() {}
