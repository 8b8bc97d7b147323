//! Integration tests of toolprism live in `tests/`.
