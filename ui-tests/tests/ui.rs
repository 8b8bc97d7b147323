//! Compile-pass and compile-fail cases of `#[tool]` and `#[toolset]`.
//!
//! The `.stderr` snapshots are tied to the toolchain; regenerate them with
//! `TRYBUILD=overwrite cargo test -p toolprism-ui-tests` and read the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("pass/*.rs");
    cases.compile_fail("fail/*.rs");
}
