use toolprism::prelude::*;

#[derive(JsonSchema)]
struct Args {
    path: String,
}

/// Reads.
#[tool]
fn read(args: Args) -> String {
    args.path
}

fn main() {}
