//! Definition integrity: a registry's definitions locked in a file ([`Lock`]), and each
//! change since classified as breaking or compatible, for callers and for the model
//! ([`compare`]), the way `cargo-semver-checks` classifies an API's. The rules are written
//! down in `docs/integrity.md`.

mod compat;
mod lock;

pub use compat::{Audience, Change, Rule, Severity, compare, compare_definitions};
pub use lock::{LOCK_FORMAT_VERSION, Lock, LockError, LockedTool, MAX_LOCK_BYTES};
