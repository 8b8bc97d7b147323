use toolprism::prelude::*;

/// Counts.
#[tool(render = render_count)]
fn count() -> u32 {
    1
}

fn render_count(value: &u32) -> Vec<ContentBlock> {
    vec![ContentBlock::text(value.to_string())]
}

fn main() {}
