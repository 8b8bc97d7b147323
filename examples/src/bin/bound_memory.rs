//! Bounds one large text the way the pipeline does (count lines, plan the cut, retain the
//! full text, build the preview) so its peak memory can be measured against the text size:
//!
//! ```sh
//! cargo build --release -p toolprism-examples --bin bound_memory
//! /usr/bin/time -v target/release/bound_memory 100   # "Maximum resident set size"
//! ```

use std::fmt::Write as _;
use std::time::Instant;

use toolprism::bound::{BoundLimits, FsOutputStore, Retention, plan_cut, preview};

/// What `--help` prints.
const USAGE: &str = "\
Usage: bound_memory [MEGABYTES]

Bounds one text of MEGABYTES (default 100) as the pipeline does, so that its peak memory can
be measured: /usr/bin/time -v target/release/bound_memory 100
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    let megabytes: usize = std::env::args().nth(1).map_or(Ok(100), |arg| arg.parse())?;
    let mut text = String::with_capacity(megabytes * 1_000_000 + 200);
    let mut n = 0_u64;
    while text.len() < megabytes * 1_000_000 {
        n += 1;
        let _ = writeln!(text, "{n:>8} | log line with a little text in it | état ✓");
    }

    let dir = std::env::temp_dir().join(format!("toolprism-bound-memory-{}", std::process::id()));
    let store = FsOutputStore::new(&dir);
    let limits = BoundLimits::default();
    let started = Instant::now();
    let cut = plan_cut(&text, &limits).ok_or("the text is within the limits")?;
    let retained = store.retain_now("call_1", &[&text], &Retention::default())?;
    let shown = preview(&text, &cut, &retained, &limits);
    let elapsed = started.elapsed();

    println!(
        "text: {} bytes, {} lines; preview: {} bytes; bounded in {elapsed:?}",
        text.len(),
        cut.total_lines,
        shown.len()
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
