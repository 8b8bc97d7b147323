//! The lock file: a registry's definitions as every surface serves them, each with its
//! fingerprint, written so that a later build can be compared with it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::depth::check_depth;
use crate::pipeline::Snapshot;
use crate::tool::Fingerprint;

/// The lock format this crate writes and reads.
pub const LOCK_FORMAT_VERSION: u64 = 1;

/// The largest lock file read, in bytes.
pub const MAX_LOCK_BYTES: usize = 64 * 1024 * 1024;

/// A registry's definitions, locked: each tool's canonical definition
/// ([`ToolDef::definition_json`](crate::ToolDef::definition_json)) and its [`Fingerprint`],
/// by name.
///
/// ```
/// use toolprism::integrity::Lock;
/// use toolprism::prelude::*;
///
/// /// Adds.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::builder().tool(Add).build().unwrap();
/// let lock = Lock::of(&registry.snapshot());
/// let text = lock.to_json();
/// assert_eq!(Lock::from_json(&text).unwrap(), lock);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    /// [`LOCK_FORMAT_VERSION`].
    pub toolprism_lock: u64,
    /// The tools, by name.
    pub tools: BTreeMap<String, LockedTool>,
}

/// One tool of a [`Lock`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockedTool {
    /// The fingerprint of `definition`.
    pub fingerprint: Fingerprint,
    /// The definition as served: `name`, `title`, `description`, `input_schema`,
    /// `output_schema`, `hints`.
    pub definition: Value,
}

/// Why a lock file was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Larger than [`MAX_LOCK_BYTES`].
    #[error("the lock file is larger than {MAX_LOCK_BYTES} bytes")]
    TooLarge,
    /// Not a lock of this format.
    #[error("the lock file is not a toolprism lock: {0}")]
    Invalid(String),
    /// A version this crate does not read.
    #[error("the lock file is of format {0}, and this version reads format {LOCK_FORMAT_VERSION}")]
    Version(u64),
    /// A tool's definition does not have the fingerprint written beside it: the file was
    /// edited by hand, or damaged.
    #[error(
        "the lock's entry for `{tool}` does not match its fingerprint: it was edited or damaged; write it again"
    )]
    Tampered {
        /// The tool.
        tool: String,
    },
}

impl Lock {
    /// The lock of every tool `snapshot` serves.
    pub fn of(snapshot: &Snapshot) -> Self {
        let tools = snapshot
            .definitions()
            .map(|tool| {
                let definition = tool.definition_json();
                let locked = LockedTool {
                    fingerprint: tool.fingerprint(),
                    definition,
                };
                (tool.name().to_owned(), locked)
            })
            .collect();
        Self {
            toolprism_lock: LOCK_FORMAT_VERSION,
            tools,
        }
    }

    /// The lock as the file holds it: JSON, indented, keys in a stable order, ending with a
    /// newline, so that a change to one tool is a change to its lines only.
    pub fn to_json(&self) -> String {
        // A lock's values came from registered definitions, which serialize.
        let mut text =
            serde_json::to_string_pretty(&sorted(&serde_json::to_value(self).unwrap_or_default()))
                .unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a lock file's text: at most [`MAX_LOCK_BYTES`], 64 levels deep, of this format,
    /// and each entry matching its fingerprint.
    pub fn from_json(text: &str) -> Result<Self, LockError> {
        if text.len() > MAX_LOCK_BYTES {
            return Err(LockError::TooLarge);
        }
        // serde_json stops at 128 levels; the depth limit is checked before anything else.
        let value: Value =
            serde_json::from_str(text).map_err(|error| LockError::Invalid(error.to_string()))?;
        check_depth(&value).map_err(|error| LockError::Invalid(format!("it nests {error}")))?;
        let version = value.get("toolprism_lock").and_then(Value::as_u64);
        match version {
            Some(LOCK_FORMAT_VERSION) => {}
            Some(other) => return Err(LockError::Version(other)),
            None => return Err(LockError::Invalid("no `toolprism_lock` version".to_owned())),
        }
        let lock: Self =
            serde_json::from_value(value).map_err(|error| LockError::Invalid(error.to_string()))?;
        for (name, tool) in &lock.tools {
            if Fingerprint::of_definition(&tool.definition).ok().as_ref() != Some(&tool.fingerprint)
            {
                return Err(LockError::Tampered { tool: name.clone() });
            }
        }
        Ok(lock)
    }
}

/// `value` with every object's keys in byte order, whatever order the map keeps.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|key| (key.clone(), sorted(&object[key])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
