use toolprism::prelude::*;

/// Squares.
#[tool]
fn square(x: f64) -> f64 {
    x * x
}

fn main() {}
