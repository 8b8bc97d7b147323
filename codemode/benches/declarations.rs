//! What the model reads of the tools, in tokens (o200k, `tiktoken-rs`): `run_code`'s TypeScript
//! declarations against the JSON definitions a provider would get for the same tools instead
//! (Anthropic's, input schemas only; OpenAI Responses' with output schemas, as the declarations
//! have the values' types too). For the coding tools, and for 50 and 500 generated tools.
//!
//! `cargo bench -p toolprism-codemode --bench declarations`
//!
//! Not criterion: it counts, it does not time.

use serde::{Deserialize, Serialize};
use toolprism::lower::{Provider, ToolOptions, lower_tools};
use toolprism::prelude::*;
use toolprism_examples::tools::{Workspace, register_all};

/// A generated tool's arguments: a typical mix of a path, a filter and options.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "read only for its schema")]
struct GeneratedArgs {
    /// The record to look at, as a path from the workspace root.
    path: String,
    /// Only entries whose name matches this pattern.
    pattern: Option<String>,
    /// At most this many entries, 1 to 500.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
    /// How to order them.
    order: Order,
}

/// How entries are ordered.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    /// By name.
    Name,
    /// Newest first.
    Newest,
}

/// A generated tool's value.
#[derive(Serialize, JsonSchema)]
struct GeneratedValue {
    /// The entries found.
    entries: Vec<Entry>,
    /// Whether more were left out past `limit`.
    truncated: bool,
}

/// One entry.
#[derive(Serialize, JsonSchema)]
struct Entry {
    /// Its name.
    name: String,
    /// Its size in bytes.
    size: u64,
}

fn generated(count: usize) -> Registry {
    let tools = (0..count).map(|at| {
        ToolDef::builder(format!("list_records_{at}"))
            .description(format!(
                "Lists the records of collection {at} under a path, filtered and ordered."
            ))
            .handler(|_: GeneratedArgs, _: ToolContext| async move {
                Ok::<_, ToolError>(GeneratedValue {
                    entries: Vec::new(),
                    truncated: false,
                })
            })
            .build()
    });
    Registry::builder().tools(tools).build().unwrap()
}

fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    let tokens = |text: &str| bpe.encode_with_special_tokens(text).len();
    let workspace = tempfile::tempdir().unwrap();
    let coding = register_all(
        Registry::builder(),
        &Workspace::new(workspace.path()).unwrap(),
    )
    .build()
    .unwrap();
    println!(
        "{:<18} {:>6} {:>14} {:>16} {:>20}",
        "tools", "count", "TypeScript", "JSON (inputs)", "JSON (with outputs)"
    );
    for (name, registry) in [
        ("coding tools", coding),
        ("generated", generated(50)),
        ("generated", generated(500)),
    ] {
        let snapshot = registry.snapshot();
        let declared = toolprism_codemode::declarations(snapshot.definitions());
        let json = |provider, options| {
            let lowered = lower_tools(provider, snapshot.definitions(), options).unwrap();
            serde_json::to_string(&lowered).unwrap()
        };
        let inputs = json(Provider::Anthropic, ToolOptions::default());
        let outputs = json(
            Provider::OpenAiResponses,
            ToolOptions::default().with_output_schemas(),
        );
        let (declared, inputs, outputs) = (tokens(&declared), tokens(&inputs), tokens(&outputs));
        #[allow(clippy::cast_precision_loss, reason = "token counts")]
        let ratio = |of: usize| declared as f64 / of as f64;
        println!(
            "{name:<18} {:>6} {declared:>14} {inputs:>9} ({:.2}×) {outputs:>13} ({:.2}×)",
            snapshot.definitions().len(),
            ratio(inputs),
            ratio(outputs),
        );
    }
}
