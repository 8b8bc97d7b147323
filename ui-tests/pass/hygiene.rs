// Generated code names everything by absolute path: shadowing prelude names, denying every
// warning and renaming the crate change nothing.
#![deny(warnings)]
#![allow(dead_code)]

use ::toolprism as renamed;
use renamed::prelude::{Deserialize, JsonSchema, Registry, Serialize, tool, toolset};

struct Result;
struct Ok;
struct Err;
struct Some;
struct None;
struct Option;
struct Box;
struct Vec;
struct String;
struct Clone;
struct Default;
struct Send;
struct Sync;
struct Arc;
// Our generated code must not resolve through these; the user's own derives (serde's,
// schemars') are not ours to test, so `serde` and `schemars` are left unshadowed.
mod core {}
mod std {}
mod toolprism {}

#[derive(Deserialize, JsonSchema)]
struct Args {
    n: i32,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    n: i32,
}

/// Doubles.
#[tool(crate = "renamed")]
fn double(args: Args) -> Out {
    Out { n: args.n * 2 }
}

/// Fallible, with a fully qualified result.
#[tool(crate = "renamed")]
async fn checked(#[arg] n: i32) -> ::core::result::Result<i32, renamed::ToolError> {
    ::core::result::Result::Ok(n)
}

struct State;

#[toolset(crate = "renamed")]
impl State {
    /// Reads the state.
    #[tool]
    fn peek(&self, #[arg] n: i32) -> i32 {
        n
    }
}

fn main() {
    let _ = Registry::builder()
        .tool(Double)
        .tool(Checked)
        .toolset(State)
        .build();
}
