//! Examples of toolprism: the binaries in `src/bin/`, and tools written as templates to copy.
