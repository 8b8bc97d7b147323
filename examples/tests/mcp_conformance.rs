//! The official MCP conformance suite against the `mcp_conformance_server` example over
//! streamable HTTP: every server scenario of each protocol revision (`--requirements`), the
//! ones it does not score (extensions, pending) included. `scripts/mcp-conformance` installs
//! the pinned suite and Node.js on first use.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The server, stopped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the example on a free loopback port; its URL.
fn start() -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp_conformance_server"))
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("the example prints its URL");
    (Server(child), line.trim().to_owned())
}

/// Runs every scenario of `revision`; the suite's report, and whether it passed (it fails a
/// run only for a scenario it scores).
fn run_requirements(url: &str, revision: &str) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(root.join("scripts/mcp-conformance"))
        .args(["server", "--url", url, "--requirements", revision])
        .current_dir(results.path())
        .output()
        .expect("scripts/mcp-conformance runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// The lines of a report's summary, one per scenario (`✓ name: 3 passed, 0 failed`), colours
/// removed; the not-scored list below them names scenarios again, without counts.
fn summary_lines(report: &str) -> Vec<String> {
    let summary = report.split("=== SUMMARY ===").nth(1).unwrap_or_default();
    summary
        .lines()
        .map(without_colours)
        .filter(|line| {
            let line = line.trim_start();
            (line.starts_with("✓ ") || line.starts_with("✗ ")) && line.contains(" passed, ")
        })
        .collect()
}

/// The scenarios a report's summary marks failed (`✗ name: …`).
fn failed_scenarios(report: &str) -> Vec<String> {
    summary_lines(report)
        .into_iter()
        .filter_map(|line| {
            let (name, _) = line.trim_start().strip_prefix("✗ ")?.split_once(": ")?;
            Some(name.to_owned())
        })
        .collect()
}

/// A line without its ANSI colour sequences (`ESC [ … m`).
fn without_colours(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            plain.push(c);
        }
    }
    plain
}

/// Runs every scenario of `revision` and asserts that each passed: the ones the suite scores
/// (which decide its exit status) and the ones it does not (extensions such as tasks, and
/// pending ones), read from its summary.
fn every_scenario_passes(revision: &str) {
    let (_server, url) = start();
    let (passed, report) = run_requirements(&url, revision);
    assert_eq!(failed_scenarios(&report), Vec::<String>::new(), "{report}");
    // Every scenario the run announced is in its summary: none was left out.
    let announced: usize = report
        .split_once(" scenarios) against")
        .and_then(|(before, _)| before.rsplit('(').next()?.parse().ok())
        .expect("the run says how many scenarios it runs");
    assert!(announced >= 30, "{report}");
    assert_eq!(summary_lines(&report).len(), announced, "{report}");
    assert!(passed, "{report}");
}

#[test]
fn every_scenario_of_2025_11_25_passes() {
    every_scenario_passes("2025-11-25");
}

#[test]
fn every_scenario_of_2026_07_28_passes_the_tasks_extension_included() {
    every_scenario_passes("2026-07-28");
}
