use std::rc::Rc;

use toolprism::prelude::*;

async fn pause() {}

/// Holds an `Rc` across an await.
#[tool]
async fn sticky() -> u8 {
    let held = Rc::new(1);
    pause().await;
    *held
}

fn main() {}
