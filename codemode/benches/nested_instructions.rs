//! Runs one path of the nested-call benchmark for counting instructions under
//! `valgrind --tool=callgrind`: counts do not depend on what else the machine is doing, so
//! their ratios tell two versions of the code apart where timings on a shared machine cannot.
//!
//! - `rust <n>`: `n` dispatches of `add` on the nested surface, from Rust;
//! - `program <n>`: one program making `n` awaited `add` calls;
//! - `javascript <n>`: the same program calling a JavaScript `async` function instead.
//!
//! `scripts/codemode-instructions.sh` runs each for two counts and prints the cost of one call.
//! By hand: `cargo bench -p toolprism-codemode --bench nested_instructions -- <path> <n>`.

use serde_json::json;
use toolprism::prelude::*;
use toolprism_codemode::CodeMode;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    let path = args.next().unwrap_or_else(|| "program".to_owned());
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(100);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = Registry::builder().tool(Add).build().unwrap();
    CodeMode::new().register(&registry).unwrap();
    let snapshot = registry.snapshot();
    let program = |callee: &str, prelude: &str| {
        format!(
            "{prelude}let sum = 0;\nfor (let i = 0; i < {calls}; i++) sum += await {callee}({{a: i, b: 1}});\nreturn sum;"
        )
    };
    let code = match path.as_str() {
        "rust" => {
            for _ in 0..calls {
                let call = ToolCall::new("n", "add", json!({"a": 1, "b": 2}));
                let outcome = runtime.block_on(snapshot.dispatch(call, Surface::Nested));
                assert!(!outcome.is_error());
            }
            std::process::exit(0);
        }
        "program" => program("tools.add", ""),
        "javascript" => program("add", "const add = async ({a, b}) => a + b;\n"),
        other => panic!("unknown path `{other}`"),
    };
    let call = ToolCall::new("run", "run_code", json!({ "code": code }));
    let outcome = runtime.block_on(snapshot.dispatch(call, Surface::Direct));
    assert!(!outcome.is_error(), "{:?}", outcome.error());
    // No teardown, which would make glibc consolidate its heap in one run and not the other.
    std::process::exit(0);
}
