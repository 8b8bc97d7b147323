//! Runs `add(2, 3)` a given number of times under one of the overhead benchmark's setups, for
//! counting instructions under `valgrind --tool=callgrind` (`scripts/otel-instructions.sh`).
//! By hand: `cargo bench -p toolprism-otel --bench otel_instructions -- <setup> <n>`.

mod setups;

use setups::{Setup, call, snapshot};

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    let name = args.next().unwrap_or_else(|| "no_subscriber".to_owned());
    let iterations: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1_000);
    let setup = Setup::ALL
        .into_iter()
        .find(|setup| setup.name() == name)
        .unwrap_or_else(|| panic!("unknown setup `{name}`"));
    let snapshot = snapshot();
    setup.run(true, || {
        for _ in 0..iterations {
            call(&snapshot);
        }
    });
    // No teardown, which would make glibc consolidate its heap in one run and not the other.
    std::process::exit(0);
}
