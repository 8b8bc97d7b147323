//! What a call does to the world, as its tool declares it: whether it only reads, and which
//! resource it touches. A host orders calls by it ([`run_calls`](crate::turn::run_calls)): two
//! calls may overlap unless one of them writes what the other touches.
//!
//! A tool names the resource a call touches with a template over its arguments,
//! `#[tool(resource = "file:{path}")]` (or [`ToolDef::with_resource`](crate::ToolDef::with_resource)):
//! `{path}` is the argument `path` (a string as it is, anything else as its JSON text),
//! `{{` and `}}` are braces. A call whose arguments lack a named argument touches everything.
//!
//! ```
//! use serde_json::json;
//! use toolprism::effects::{Effect, ResourceTemplate};
//!
//! let template = ResourceTemplate::parse("file:{path}").unwrap();
//! let write_a = Effect::write(template.resource(&json!({"path": "a.txt"})));
//! let read_b = Effect::read(template.resource(&json!({"path": "b.txt"})));
//! let read_a = Effect::read(template.resource(&json!({"path": "a.txt"})));
//! assert!(!write_a.conflicts(&read_b)); // different files
//! assert!(write_a.conflicts(&read_a)); // the same file: the model's order is kept
//! assert!(Effect::write(None).conflicts(&read_b)); // a write that names nothing is a barrier
//! assert!(!Effect::read(None).conflicts(&read_a)); // reads never wait on reads
//! ```

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// The longest resource template, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 256;
/// The longest resource a call names, in bytes; a longer one touches everything (it is not
/// held, and ordering by it stays safe).
pub const MAX_RESOURCE_BYTES: usize = 4_096;

/// Whether a call only reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// It changes nothing (the tool is read-only).
    Read,
    /// It may change something (the tool is not read-only, or says nothing).
    Write,
}

/// What one call does: its access, and the resource it touches (`None`: everything).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    access: Access,
    resource: Option<String>,
}

impl Effect {
    /// A read of `resource` (`None`: of anything).
    pub fn read(resource: Option<String>) -> Self {
        Self {
            access: Access::Read,
            resource,
        }
    }

    /// A write to `resource` (`None`: to anything, a barrier).
    pub fn write(resource: Option<String>) -> Self {
        Self {
            access: Access::Write,
            resource,
        }
    }

    /// Its access.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The resource it touches; `None` for everything.
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// Whether the two must keep their order: one writes, and what they touch may overlap.
    pub fn conflicts(&self, other: &Self) -> bool {
        let writes = self.access == Access::Write || other.access == Access::Write;
        let overlap = match (&self.resource, &other.resource) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        };
        writes && overlap
    }
}

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Argument(String),
}

/// A resource named from a call's arguments: `file:{path}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceTemplate {
    text: String,
    pieces: Vec<Piece>,
}

/// Why a resource template is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the resource template `{template}` {problem}")]
pub struct TemplateError {
    template: String,
    problem: String,
}

impl ResourceTemplate {
    /// Reads a template: text, `{argument}` (a name of letters, digits and `_`), `{{`, `}}`.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let refuse = |problem: &str| TemplateError {
            template: crate::text::printable(text, 80),
            problem: problem.to_owned(),
        };
        if text.len() > MAX_TEMPLATE_BYTES {
            return Err(refuse(&format!(
                "is longer than {MAX_TEMPLATE_BYTES} bytes"
            )));
        }
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(char) = chars.next() {
            match (char, chars.peek()) {
                ('{', Some('{')) | ('}', Some('}')) => {
                    chars.next();
                    literal.push(char);
                }
                ('{', _) => {
                    let mut closed = false;
                    let name: String = chars
                        .by_ref()
                        .take_while(|c| {
                            closed = *c == '}';
                            !closed
                        })
                        .collect();
                    let valid = closed
                        && !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if !valid {
                        return Err(refuse(
                            "names an argument that is not letters, digits and `_` between `{` and `}`",
                        ));
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Argument(name));
                }
                ('}', _) => return Err(refuse("has a `}` that closes nothing (`}}` is a brace)")),
                _ => literal.push(char),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        if !pieces
            .iter()
            .any(|piece| matches!(piece, Piece::Argument(_)))
        {
            return Err(refuse(
                "names no argument: every call would touch the same resource",
            ));
        }
        Ok(Self {
            text: text.to_owned(),
            pieces,
        })
    }

    /// The arguments it names, in order.
    pub fn arguments(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Argument(name) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// The resource a call with `arguments` touches; `None` (everything) when an argument it
    /// names is missing, or the resource would be longer than [`MAX_RESOURCE_BYTES`].
    pub fn resource(&self, arguments: &Value) -> Option<String> {
        let mut resource = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => resource.push_str(text),
                Piece::Argument(name) => match arguments.get(name)? {
                    Value::String(text) => resource.push_str(text),
                    other => resource.push_str(&other.to_string()),
                },
            }
            if resource.len() > MAX_RESOURCE_BYTES {
                return None;
            }
        }
        Some(resource)
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for ResourceTemplate {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.text)
    }
}

impl Serialize for ResourceTemplate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}
