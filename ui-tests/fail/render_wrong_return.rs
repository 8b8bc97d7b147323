use toolprism::prelude::*;

/// Counts.
#[tool(render = render_count)]
fn count() -> u32 {
    1
}

fn render_count(_args: &CountArgs, value: &u32) -> u32 {
    *value
}

fn main() {}
