//! Runs one path of the dispatch benchmark a given number of times, for counting
//! instructions under `valgrind --tool=callgrind`: counts do not depend on what else the
//! machine is doing, so their ratios are stable where timings on a shared machine are not.
//!
//! `scripts/instructions.sh` runs it for each path and prints the ratios.
//! By hand: `cargo bench -p toolprism --bench instructions -- <by_hand|pipeline|read_back|staged> <n>`.

mod read_tool;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    let path = args.next().unwrap_or_else(|| "pipeline".to_owned());
    let iterations: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1_000);
    let call_args = read_tool::args();
    let (bare, staged) = (read_tool::bare(), read_tool::staged());
    let read_back = read_tool::read_back_only();
    for _ in 0..iterations {
        match path.as_str() {
            "by_hand" => read_tool::by_hand(&call_args),
            "pipeline" => read_tool::pipeline(&bare, &call_args),
            "read_back" => read_tool::pipeline(&read_back, &call_args),
            "staged" => read_tool::pipeline(&staged, &call_args),
            other => panic!("unknown path `{other}`"),
        }
    }
    // No teardown, which would make glibc consolidate its heap in one run and not the other.
    std::process::exit(0);
}
