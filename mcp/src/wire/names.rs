//! Remote tool names made provider-safe.
//!
//! MCP allows tool names of up to 128 characters with `.` and `/`; every model provider takes
//! `^[a-zA-Z0-9_-]{1,64}$` only. An imported tool is advertised under a safe name and called
//! on the wire under its own. The mapping is deterministic (the same remote name gives the
//! same local name in every process), so prompts that name a tool stay valid across restarts.

use std::fmt::Write as _;

use toolprism::tool::{MAX_TOOL_NAME_LEN, is_valid_tool_name};

/// Why a remote name has no local name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name (with the prefix) is empty.
    #[error("a tool name cannot be empty")]
    Empty,
    /// Two remote names, or a remote name and a tool already in the registry, map to the same
    /// local name.
    #[error(
        "remote tool `{remote}` would be advertised as `{local}`, which {taken_by} already is; import the server under a prefix, or leave one of them out"
    )]
    Collision {
        /// The remote name.
        remote: String,
        /// The local name both map to.
        local: String,
        /// What has it already: another remote tool, or the registry.
        taken_by: String,
    },
}

/// The provider-safe form of `prefix` + `name`: each character outside `[a-zA-Z0-9_-]`
/// becomes `_`, and a name longer than 64 characters keeps its first 55 and a hash of the
/// whole, so two long names that differ late stay distinct.
///
/// ```
/// use toolprism_mcp::provider_safe_name;
///
/// assert_eq!(provider_safe_name("", "files.read").unwrap(), "files_read");
/// assert_eq!(provider_safe_name("gh_", "repo/list").unwrap(), "gh_repo_list");
/// let long = "a".repeat(128);
/// let safe = provider_safe_name("", &long).unwrap();
/// assert_eq!(safe.len(), 64);
/// assert_ne!(safe, provider_safe_name("", &format!("{}b", "a".repeat(127))).unwrap());
/// ```
pub fn provider_safe_name(prefix: &str, name: &str) -> Result<String, NameError> {
    let full = format!("{prefix}{name}");
    if full.is_empty() {
        return Err(NameError::Empty);
    }
    if is_valid_tool_name(&full) {
        return Ok(full);
    }
    let mut safe: String = full
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' {
                ch
            } else {
                '_'
            }
        })
        .collect();
    if safe.len() > MAX_TOOL_NAME_LEN {
        // Only ASCII is left, so any byte index is a character boundary.
        safe.truncate(MAX_TOOL_NAME_LEN - 9);
        let _ = write!(safe, "_{:08x}", fnv1a(full.as_bytes()));
    }
    Ok(safe)
}

/// FNV-1a, 32 bits: stable across processes, platforms and Rust versions.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}
