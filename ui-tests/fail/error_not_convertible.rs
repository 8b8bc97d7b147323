use toolprism::prelude::*;

#[derive(Debug)]
struct Oops;

/// Fails.
#[tool]
fn fails() -> Result<u8, Oops> {
    Err(Oops)
}

fn main() {}
