use toolprism::prelude::*;

/// Says its call id.
#[tool]
fn whoami(cx: ToolContext) -> String {
    cx.call_id().to_owned()
}

fn main() {}
