//! Examples of toolprism: the binaries in `src/bin/`, the first-party coding tools in
//! [`tools`] (written as templates to copy), and [`terminal`], a card renderer for terminals
//! (`toolprism_cli`'s).

pub use toolprism_cli::terminal;
#[cfg(doctest)]
mod guides;
pub mod tools;
