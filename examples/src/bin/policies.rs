//! A redaction policy and an audit wrapper.
//!
//! The redaction policy replaces the *value*: the key is gone for programs (nested calls) as
//! well as for the model. Replacing only the content would hide it from the model while any
//! program dispatching the tool still read it.
//!
//! Run it with `cargo run -p toolprism-examples --bin policies`.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::json;
use toolprism::pipeline::{ExecuteCall, Executed, Next, PostDecision};
use toolprism::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
struct Account {
    user: String,
    email: String,
    /// An API key: never to leave the host unredacted.
    api_key: String,
}

/// Looks up an account.
#[tool(render = render_account)]
fn lookup_account(#[arg(description = "The user name.")] user: String) -> Account {
    Account {
        email: format!("{user}@example.com"),
        api_key: format!("sk-live-{}", user.len() * 7919),
        user,
    }
}

fn render_account(_args: &LookupAccountArgs, account: &Account) -> String {
    format!(
        "{} <{}>, key {}",
        account.user, account.email, account.api_key
    )
}

/// Replaces every `api_key` in a value by a marker. Replacing the value (not the content)
/// means the tool's own render shows the marker, and programs read it too.
fn redact_keys(_call: &ExecuteCall, outcome: &ToolOutcome) -> PostDecision {
    let Some(value) = outcome.value() else {
        return PostDecision::keep();
    };
    match value.get("api_key") {
        Some(key) if key != "[redacted]" => {
            let mut redacted = value.as_value().clone();
            redacted["api_key"] = json!("[redacted]");
            PostDecision::replace_value(redacted).with_context("An API key was redacted.")
        }
        _ => PostDecision::keep(),
    }
}

/// One audit record per call: who, what, how long, how it ended.
#[derive(Debug, Serialize)]
struct AuditRecord {
    call_id: String,
    tool: String,
    surface: Surface,
    micros: u128,
    error_code: Option<String>,
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: policies

A redaction policy and an audit wrapper around one tool, called directly and as a program
would; prints each outcome and the audit line.
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    let audit_log: Arc<Mutex<Vec<AuditRecord>>> = Arc::default();
    let log = audit_log.clone();
    let audit = move |call: ExecuteCall, next: Next| {
        let log = log.clone();
        async move {
            let started = Instant::now();
            let outcome = next.run().await;
            log.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(AuditRecord {
                    call_id: call.id().to_owned(),
                    tool: call.name().to_owned(),
                    surface: call.surface(),
                    micros: started.elapsed().as_micros(),
                    error_code: outcome.error().and_then(|e| e.code()).map(str::to_owned),
                });
            // Passed through as is: the pipeline recognizes its own result and does not
            // validate or render it a second time.
            Executed::from(outcome)
        }
    };

    let registry = Registry::builder()
        .tool(LookupAccount)
        .wrap(audit)
        .post_execute(redact_keys)
        .build()?;

    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    for (id, surface) in [("c1", Surface::Direct), ("c2", Surface::Nested)] {
        let call = ToolCall::new(id, "lookup_account", json!({"user": "ada"}));
        let outcome = runtime.block_on(registry.dispatch(call, surface));
        println!("{}", json!({"surface": surface, "outcome": outcome}));
    }
    for record in audit_log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
    {
        println!("audit: {}", serde_json::to_string(record)?);
    }
    Ok(())
}
