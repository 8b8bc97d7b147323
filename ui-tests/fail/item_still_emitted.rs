use toolprism::prelude::*;

// The attribute is wrong, yet `add` and `Add` still exist: the only error is the attribute's.
/// Adds.
#[tool(bogus)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let _sum: i64 = add(1, 2);
    let _registry = Registry::builder().tool(Add);
}
