use toolprism::prelude::*;

/// Not a function.
#[tool]
struct Thing;

fn main() {}
