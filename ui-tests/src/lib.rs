//! trybuild cases for the toolprism macros live in `pass/` and `fail/`.
