//! A tool definition's fingerprint: what a person approved, or a host pinned, is named by it,
//! so a definition that changed since is seen to have changed.

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::{AdvertisedTool, ToolAbout, ToolDef};
use crate::depth::TooDeep;
use crate::value::canonical_json;

/// SHA-256 of a definition's canonical form ([`ToolDef::definition_json`]), written
/// `sha256:` and 64 lowercase hex digits. Two definitions have the same fingerprint exactly
/// when their name, title, description, input and output schemas and hints are equal as
/// JSON, whatever the order of their keys.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::tool::IntoToolDef;
///
/// /// Deletes a file.
/// #[tool(destructive)]
/// fn delete(#[arg] path: String) {}
///
/// let before = Delete.into_tool_def().fingerprint();
/// let after = Delete.into_tool_def().with_title("Delete a file").fingerprint();
/// assert!(before.as_str().starts_with("sha256:"));
/// assert_ne!(before, after);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// The fingerprint of a definition's canonical form (refused if it nests too deep to hash
    /// without recursion past the limit).
    pub fn of_definition(definition: &Value) -> Result<Self, TooDeep> {
        let text = canonical_json(definition)?;
        let digest = Sha256::digest(text.as_bytes());
        let mut hex = String::with_capacity(7 + 64);
        hex.push_str("sha256:");
        for byte in digest {
            let _ = write!(hex, "{byte:02x}");
        }
        Ok(Self(hex))
    }

    /// The text, `sha256:…`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl ToolDef {
    /// The definition every surface serves, as one JSON object: `name`, `title`,
    /// `description`, `input_schema` (the advertised one), `output_schema`, and `hints`
    /// (those said). What a [`Fingerprint`] covers, and what a diff between two definitions
    /// compares.
    pub fn definition_json(&self) -> Value {
        definition_json(Served {
            name: &self.name,
            about: &self.about,
            description: &self.description,
            input_schema: self
                .advertised_input_schema
                .as_ref()
                .unwrap_or(&self.input_schema),
            output_schema: &self.output_schema,
        })
    }

    /// This definition's [`Fingerprint`]: the same as the registered tool's
    /// ([`AdvertisedTool::fingerprint`]).
    pub fn fingerprint(&self) -> Fingerprint {
        fingerprint(&self.definition_json())
    }
}

impl AdvertisedTool {
    /// The definition a snapshot serves, as one JSON object ([`ToolDef::definition_json`]).
    pub fn definition_json(&self) -> Value {
        definition_json(Served {
            name: self.name(),
            about: self.about(),
            description: self.description(),
            input_schema: self.input_schema(),
            output_schema: self.output_schema(),
        })
    }

    /// The [`Fingerprint`] of the definition a snapshot serves.
    pub fn fingerprint(&self) -> Fingerprint {
        fingerprint(&self.definition_json())
    }
}

/// What a fingerprint covers of a definition.
struct Served<'a> {
    name: &'a str,
    about: &'a ToolAbout,
    description: &'a str,
    input_schema: &'a Value,
    output_schema: &'a Value,
}

fn definition_json(served: Served<'_>) -> Value {
    let hints = served.about.hints;
    let mut said = Map::new();
    for (name, hint) in [
        ("read_only", hints.read_only),
        ("destructive", hints.destructive),
        ("idempotent", hints.idempotent),
        ("open_world", hints.open_world),
    ] {
        if let Some(hint) = hint {
            said.insert(name.to_owned(), Value::Bool(hint));
        }
    }
    json!({
        "name": served.name,
        "title": served.about.title,
        "description": served.description,
        "input_schema": served.input_schema,
        "output_schema": served.output_schema,
        "hints": said,
    })
}

/// A registered tool's schemas are within the depth limit (registration checks); an
/// unregistered definition past it gets the fingerprint `sha256:too-deep`, never a hash.
fn fingerprint(definition: &Value) -> Fingerprint {
    Fingerprint::of_definition(definition)
        .unwrap_or_else(|_| Fingerprint("sha256:too-deep".to_owned()))
}
