//! Examples of toolprism: the binaries in `src/bin/`, the first-party coding tools in
//! [`tools`] (written as templates to copy), and [`terminal`], a card renderer for terminals.

pub mod terminal;
pub mod text;
pub mod tools;
