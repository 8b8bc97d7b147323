//! Runs a program the way a model's `run_code` call would, against your tools, and prints what
//! the model would read and the value a program gets:
//!
//! ```text
//! echo 'const a = await tools.order_total({items: [{price_cents: 250, quantity: 2}]}); return a;' | cargo run
//! ```
//!
//! Replace the tools with your own. `run_code`'s description (printed with `--declarations`)
//! declares them to the model in TypeScript; each call from a program is a nested dispatch that
//! returns the tool's validated value.

use std::io::Read as _;
use std::time::Duration;

use toolprism::prelude::*;
use toolprism_codemode::{CodeMode, Limits};

/// One line of an order.
#[derive(Deserialize, JsonSchema)]
struct Item {
    /// The unit price, in cents.
    price_cents: u64,
    /// How many.
    quantity: u32,
}

/// An order's total.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Total {
    /// The sum of the lines, in cents.
    total_cents: u64,
    /// How many items in all.
    items: u64,
}

/// Adds up an order.
#[tool]
fn order_total(#[arg(description = "The order's lines.")] items: Vec<Item>) -> Result<Total, ToolError> {
    let mut total = Total { total_cents: 0, items: 0 };
    for item in &items {
        let line = item.price_cents.checked_mul(u64::from(item.quantity));
        total.total_cents = line
            .and_then(|line| total.total_cents.checked_add(line))
            .ok_or_else(|| ToolError::new("the total is too large").with_code("OVERFLOW"))?;
        total.items += u64::from(item.quantity);
    }
    Ok(total)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder().tool(OrderTotal).build()?;
    // Registered last: it declares the tools registered before it.
    let limits = Limits::default().wall_time(Duration::from_secs(10)).tool_calls(100);
    CodeMode::new().limits(limits).register(&registry)?;

    if std::env::args().nth(1).as_deref() == Some("--declarations") {
        let snapshot = registry.snapshot();
        println!("{}", snapshot.definition("run_code").map(|tool| tool.description()).unwrap_or_default());
        return Ok(());
    }

    let mut code = String::new();
    std::io::stdin().read_to_string(&mut code)?;
    let call = ToolCall::new("run_1", "run_code", serde_json::json!({ "code": code }));
    let outcome = registry.dispatch(call, Surface::Direct).await;
    for block in outcome.content() {
        if let Some(text) = block.as_text() {
            println!("model sees:\n{text}");
        }
    }
    match (outcome.value(), outcome.error()) {
        (Some(value), _) => println!("value: {}", value.as_value()),
        (None, Some(error)) => println!("error: {} ({})", error.message, error.code().unwrap_or("no code")),
        (None, None) => {}
    }
    Ok(())
}
