//! Cutting text for display, by characters: shared by the tools' renders and the terminal
//! (the functions live in `toolprism_cli::terminal`, which shows cards the same way).

pub use toolprism_cli::terminal::{shorten, shorten_with};
