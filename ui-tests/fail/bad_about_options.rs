use toolprism::prelude::*;

/// Runs a command.
#[tool(timeout = "soon", callers = "everyone", icon(mime_type = "image/png"), read_only = maybe)]
fn run(#[arg] command: String) -> String {
    command
}

fn main() {}
