use toolprism::prelude::*;

/// Runs a command, maybe later.
#[tool(task = "sometimes")]
fn run(#[arg] command: String) -> String {
    command
}

fn main() {}
