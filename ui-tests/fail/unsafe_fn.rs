use toolprism::prelude::*;

/// Does something unsafe.
#[tool]
unsafe fn danger() -> u8 {
    1
}

fn main() {}
