use toolprism::prelude::*;

#[derive(JsonSchema)]
struct Point {
    x: i64,
}

#[derive(Deserialize)]
struct Size {
    w: i64,
}

/// Places.
#[tool]
fn place(#[arg(description = "Where.")] at: Point, size: Size, count: u32) -> u32 {
    let _ = (at.x, size.w);
    count
}

fn main() {}
