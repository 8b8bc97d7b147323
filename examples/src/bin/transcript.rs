//! Prints a session log as a readable transcript, replaying it: no tool runs, and what is
//! shown is what the live session showed.
//!
//! `cargo run -p toolprism-examples --bin transcript -- session.jsonl`
//! (the demo writes one: `cargo run -p toolprism-examples --bin demo`).

use toolprism::session::{SessionLog, replay};
use toolprism_examples::terminal;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: transcript <session.jsonl>");
        std::process::exit(2);
    };
    let contents = SessionLog::read(&path)?;
    for problem in &contents.problems {
        println!("! {problem:?}");
    }
    for call in replay(&contents.events) {
        println!("▶ {}", terminal::card(&call.call_card));
        for nested in &call.nested {
            let status = if nested.is_error { "failed" } else { "ok" };
            println!("  ↳ nested {} ({status})", nested.name);
        }
        match &call.result {
            Some(result) => {
                print!("{}", terminal::content(&result.content, 8));
                println!("  {}\n", terminal::card(&result.card).replace('\n', "\n  "));
            }
            None => println!("  (no result: the session ended during this call)\n"),
        }
    }
    Ok(())
}
