//! Examples of toolprism: the binaries in `src/bin/`, the first-party coding tools in
//! [`tools`] (written as templates to copy), and [`terminal`], a card renderer for terminals
//! (`toolprism_cli`'s).

pub use toolprism_cli::terminal;
#[cfg(doctest)]
mod guides;
pub mod tools;

/// Prints `usage` and ends the process (status 0) when the command line asks for help
/// (`--help` or `-h`): every binary here calls it first.
pub fn help_if_asked(usage: &str) {
    if std::env::args()
        .skip(1)
        .any(|arg| arg == "--help" || arg == "-h")
    {
        println!("{}", usage.trim_end());
        std::process::exit(0);
    }
}
