//! Loads an OpenAPI document whole and reports what became tools, what was skipped and why,
//! the time and memory it took, and tool search over the result:
//! `cargo run --release -p toolprism-openapi --example load_report -- DOCUMENT [QUERY…]`.

use std::collections::BTreeMap;
use std::time::Instant;

use toolprism::Registry;
use toolprism::search::ToolIndex;
use toolprism_openapi::{Document, OpenApi};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: load_report DOCUMENT [QUERY…]")?;
    let started = Instant::now();
    let document = Document::from_file(path.as_ref())?;
    let parsed = started.elapsed();
    let generated = OpenApi::new(document)
        .base_url("https://api.example.test")
        .build()?;
    let built = started.elapsed();
    let made = generated.tools.len();
    let registry = Registry::builder().tools(generated.tools).build()?;
    let registered = started.elapsed();
    let snapshot = registry.snapshot();
    let index = ToolIndex::new(snapshot.definitions());
    let indexed = started.elapsed();
    println!(
        "operations: {}, tools: {made}, skipped: {}",
        made + generated.skipped.len(),
        generated.skipped.len()
    );
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for skipped in &generated.skipped {
        *reasons.entry(skipped.reason.clone()).or_default() += 1;
    }
    for (reason, count) in &reasons {
        println!("  {count:>5} × {reason}");
    }
    println!(
        "time: read {:.0} ms, tools {:.0} ms, registered {:.0} ms, indexed {:.0} ms",
        parsed.as_secs_f64() * 1e3,
        built.as_secs_f64() * 1e3,
        registered.as_secs_f64() * 1e3,
        indexed.as_secs_f64() * 1e3
    );
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(peak) = status.lines().find(|line| line.starts_with("VmHWM"))
    {
        println!("peak memory: {}", peak.trim_start_matches("VmHWM:").trim());
    }
    for query in args {
        let started = Instant::now();
        let found = index.search(&query, 5);
        let took = started.elapsed();
        let names: Vec<&str> = found.iter().map(|tool| tool.name()).collect();
        println!(
            "search {query:?} ({:.2} ms): {}",
            took.as_secs_f64() * 1e3,
            names.join(", ")
        );
    }
    Ok(())
}
