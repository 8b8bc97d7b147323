use toolprism::prelude::*;

#[tool]
fn count() -> u32 {
    1
}

fn main() {}
