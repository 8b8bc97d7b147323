use toolprism::prelude::*;

/// Reads a file.
#[tool(examples = [r#"{"path": "a.txt"}"#, r#"{"path": 'b.txt'}"#, r#"["a.txt"]"#])]
fn read(#[arg] path: String) -> String {
    path
}

fn main() {}
