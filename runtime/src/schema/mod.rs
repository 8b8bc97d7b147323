//! JSON Schemas: generating them from Rust types, checking that a schema is inside the
//! supported subset, compiling it once, and explaining violations in words a model can act on.
//!
//! # The supported subset
//!
//! A schema is accepted when:
//!
//! - it is a JSON object or a boolean;
//! - its `$schema`, if present, is draft 2020-12 or draft-07 (no `$schema` means 2020-12);
//! - every `$ref` is local (starts with `#`): nothing is fetched over the network or from
//!   disk, and `$dynamicRef`, `$recursiveRef` and nested `$id`s are refused;
//! - it is nested at most [`MAX_SCHEMA_DEPTH`] levels deep;
//! - every `pattern` compiles under the `regex` crate's syntax (no look-around or
//!   back-references), which keeps matching linear in the input, whatever a model sends.
//!
//! Input schemas must in addition describe a JSON object (`"type": "object"` at the root),
//! since every provider passes tool arguments as one.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

mod inline;

pub use inline::{InlineError, inline_refs};

use jsonschema::{Draft, PatternOptions, Validator};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::text::truncate;

/// The deepest nesting of a schema that registration accepts.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// At most this many violations are spelled out in one failure message.
const MAX_LISTED_VIOLATIONS: usize = 5;
/// Violations beyond this many are not even counted.
const MAX_COUNTED_VIOLATIONS: usize = 100;
/// Instance values longer than this are not echoed back in messages.
const MAX_ECHOED_STRING: usize = 80;
/// No single violation message grows beyond this many bytes.
const MAX_VIOLATION_MESSAGE: usize = 300;

/// Why a schema was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is neither an object nor a boolean.
    #[error("a schema must be a JSON object or a boolean, found {found}")]
    NotASchema {
        /// The JSON type that was found instead.
        found: &'static str,
    },
    /// `$schema` names a draft other than 2020-12 or draft-07.
    #[error(
        "`$schema` is `{uri}`; supported drafts are 2020-12 (`https://json-schema.org/draft/2020-12/schema`) and draft-07 (`http://json-schema.org/draft-07/schema#`)"
    )]
    UnsupportedDraft {
        /// The `$schema` value.
        uri: String,
    },
    /// A `$ref` points outside the schema document.
    #[error(
        "`$ref` at `{at}` is `{reference}`; only local references (starting with `#`) are supported"
    )]
    NonLocalRef {
        /// JSON Pointer to the schema object holding the `$ref`.
        at: String,
        /// The reference.
        reference: String,
    },
    /// A keyword that changes how references resolve.
    #[error("keyword `{keyword}` at `{at}` is not supported")]
    UnsupportedKeyword {
        /// JSON Pointer to the schema object holding it.
        at: String,
        /// The keyword.
        keyword: String,
    },
    /// The schema nests deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep,
    /// An input schema that does not describe an object.
    #[error(
        "an input schema must have `\"type\": \"object\"` at its root, since tool arguments are a JSON object"
    )]
    InputNotObject,
    /// The validator refused the schema (an invalid `pattern`, a malformed keyword…).
    #[error("{message}")]
    Invalid {
        /// What the validator said.
        message: String,
    },
}

/// Which side of a tool a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchemaRole {
    Input,
    Output,
}

/// The JSON Schema (draft 2020-12) of what `T` deserializes from: the schema of a tool's
/// arguments.
///
/// Tool arguments are always a JSON object, so a type that accepts anything (such as
/// `serde_json::Value`, whose schema is `true`) gets `{"type": "object"}`.
///
/// ```
/// # use toolprism::schema::input_schema_for;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args { path: String, offset: Option<u32> }
///
/// let schema = input_schema_for::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["path"]));
/// ```
pub fn input_schema_for<T: JsonSchema + ?Sized>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    match &schema {
        Value::Bool(true) => serde_json::json!({"type": "object"}),
        Value::Object(map) if map.keys().all(|key| key.starts_with('$') || key == "title") => {
            let mut object = map.clone();
            object.insert("type".into(), "object".into());
            Value::Object(object)
        }
        _ => schema,
    }
}

/// The JSON Schema (draft 2020-12) of what `T` serializes to: the schema of a tool's value.
///
/// ```
/// # use toolprism::schema::output_schema_for;
/// assert_eq!(output_schema_for::<Vec<u8>>()["type"], "array");
/// assert_eq!(output_schema_for::<()>()["type"], "null");
/// ```
pub fn output_schema_for<T: JsonSchema + ?Sized>() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

static COMPILED: AtomicU64 = AtomicU64::new(0);

/// How many schemas this process has compiled into validators so far: a diagnostic that shows
/// none is compiled per call, per snapshot or per listing — only at registration.
pub fn compiled_schemas() -> u64 {
    COMPILED.load(Ordering::Relaxed)
}

/// Checks `schema` against the supported subset and compiles it. Done once per schema, at
/// registration.
pub(crate) fn compile(schema: &Value, role: SchemaRole) -> Result<Validator, SchemaError> {
    COMPILED.fetch_add(1, Ordering::Relaxed);
    let draft = check_supported(schema)?;
    if role == SchemaRole::Input && schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::InputNotObject);
    }
    // Validate against the schema with its references inlined, when that is finite and not
    // much bigger: a reference hop per value adds up. Otherwise (recursive types, shared
    // definitions that multiply) against the schema as it is.
    let budget = 4 * node_count(schema) + 1_024;
    let inlined = inline_refs(schema, draft == Draft::Draft7, budget).ok();
    jsonschema::options()
        .with_draft(draft)
        .offline()
        .with_pattern_options(PatternOptions::regex())
        .should_validate_formats(true)
        .build(inlined.as_ref().unwrap_or(schema))
        .map_err(|error| SchemaError::Invalid {
            message: error.to_string(),
        })
}

fn node_count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(node_count).sum(),
        Value::Object(map) => map.values().map(node_count).sum(),
        _ => 0,
    }
}

fn check_supported(schema: &Value) -> Result<Draft, SchemaError> {
    let draft = match schema {
        Value::Bool(_) => return Ok(Draft::Draft202012),
        Value::Object(map) => match map.get("$schema") {
            None => Draft::Draft202012,
            Some(Value::String(uri)) => {
                draft_of(uri).ok_or_else(|| SchemaError::UnsupportedDraft { uri: uri.clone() })?
            }
            Some(other) => {
                return Err(SchemaError::UnsupportedDraft {
                    uri: other.to_string(),
                });
            }
        },
        other => {
            return Err(SchemaError::NotASchema {
                found: json_type(other),
            });
        }
    };
    let mut pointer = String::new();
    walk(schema, 0, &mut pointer)?;
    Ok(draft)
}

fn draft_of(uri: &str) -> Option<Draft> {
    let uri = uri.trim_end_matches('#');
    let uri = uri
        .strip_prefix("https://")
        .or_else(|| uri.strip_prefix("http://"))?;
    match uri {
        "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
        "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
        _ => None,
    }
}

/// Keywords whose values are data, not schemas: a `{"$ref": "http://…"}` inside them is an
/// ordinary JSON value.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

fn walk(node: &Value, depth: usize, pointer: &mut String) -> Result<(), SchemaError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) if !reference.starts_with('#') => {
                        return Err(SchemaError::NonLocalRef {
                            at: pointer.clone(),
                            reference: reference.clone(),
                        });
                    }
                    ("$dynamicRef" | "$recursiveRef", Value::String(_)) => {
                        return Err(SchemaError::UnsupportedKeyword {
                            at: pointer.clone(),
                            keyword: key.clone(),
                        });
                    }
                    ("$id", Value::String(_)) if depth > 0 => {
                        return Err(SchemaError::UnsupportedKeyword {
                            at: pointer.clone(),
                            keyword: key.clone(),
                        });
                    }
                    _ if DATA_KEYWORDS.contains(&key.as_str()) => continue,
                    _ => {}
                }
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                walk(value, depth + 1, pointer)?;
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&index.to_string());
                walk(item, depth + 1, pointer)?;
                pointer.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Explains why `instance` fails `validator`, one line per violation, bounded in length
/// whatever the instance holds.
pub(crate) fn describe_violations(validator: &Validator, instance: &Value) -> String {
    let mut listed = Vec::with_capacity(MAX_LISTED_VIOLATIONS);
    let mut total = 0;
    for error in validator.iter_errors(instance).take(MAX_COUNTED_VIOLATIONS) {
        total += 1;
        if listed.len() == MAX_LISTED_VIOLATIONS {
            continue;
        }
        let at = error.instance_path().as_str();
        let at = if at.is_empty() { "(root)" } else { at };
        let message = if is_small(error.instance()) {
            error.to_string()
        } else {
            error.masked().to_string()
        };
        listed.push(format!(
            "- at `{at}`: {}",
            truncate(&message, MAX_VIOLATION_MESSAGE)
        ));
    }
    let mut text = listed.join("\n");
    if total > listed.len() {
        let more = total - listed.len();
        let plus = if total == MAX_COUNTED_VIOLATIONS {
            "+"
        } else {
            ""
        };
        let _ = write!(text, "\n- and {more}{plus} more");
    }
    text
}

/// Whether a value is short enough to quote back in an error message.
fn is_small(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
        Value::String(text) => text.len() <= MAX_ECHOED_STRING,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn accepts_both_drafts_and_local_refs() {
        let local = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": {"$ref": "#/definitions/A"}},
            "definitions": {"A": {"type": "string"}}
        });
        let validator = compile(&local, SchemaRole::Input).unwrap();
        assert!(validator.is_valid(&json!({"a": "x"})));
        assert!(!validator.is_valid(&json!({"a": 1})));
        assert!(compile(&json!(true), SchemaRole::Output).is_ok());
    }

    #[test]
    fn refuses_what_is_outside_the_subset() {
        let remote = json!({"properties": {"a": {"$ref": "https://evil.example/s.json"}}});
        assert_eq!(
            compile(&remote, SchemaRole::Output).unwrap_err(),
            SchemaError::NonLocalRef {
                at: "/properties/a".into(),
                reference: "https://evil.example/s.json".into()
            }
        );
        let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#"});
        assert!(matches!(
            compile(&draft4, SchemaRole::Output),
            Err(SchemaError::UnsupportedDraft { .. })
        ));
        let lookaround = json!({"type": "string", "pattern": "(?=a)b"});
        assert!(matches!(
            compile(&lookaround, SchemaRole::Output),
            Err(SchemaError::Invalid { .. })
        ));
        assert_eq!(
            compile(&json!({"type": "string"}), SchemaRole::Input).unwrap_err(),
            SchemaError::InputNotObject
        );
        assert_eq!(
            compile(&json!([1]), SchemaRole::Output).unwrap_err(),
            SchemaError::NotASchema { found: "an array" }
        );
        let dynamic = json!({"$dynamicRef": "#meta"});
        assert!(matches!(
            compile(&dynamic, SchemaRole::Output),
            Err(SchemaError::UnsupportedKeyword { .. })
        ));
    }

    #[test]
    fn refs_inside_data_keywords_are_data() {
        let schema = json!({"const": {"$ref": "https://example.com"}});
        assert!(compile(&schema, SchemaRole::Output).is_ok());
    }

    #[test]
    fn deep_schemas_are_refused_without_overflowing() {
        let mut schema = json!({"type": "string"});
        for _ in 0..10_000 {
            // Not `json!`, which would re-serialize the whole nested value each time.
            let mut wrapper = serde_json::Map::new();
            wrapper.insert("items".into(), schema);
            schema = Value::Object(wrapper);
        }
        assert_eq!(
            compile(&schema, SchemaRole::Output).unwrap_err(),
            SchemaError::TooDeep
        );
        // Dropping a 10,000-deep `Value` recurses too; leak it rather than test serde_json.
        std::mem::forget(schema);
    }

    #[test]
    fn violations_are_listed_and_bounded() {
        let schema = json!({"type": "array", "items": {"type": "integer"}});
        let validator = compile(&schema, SchemaRole::Output).unwrap();
        let huge = "x".repeat(1_000_000);
        let instance = Value::Array(vec![json!(huge); 500]);
        let text = describe_violations(&validator, &instance);
        assert!(text.len() < 2_000, "{} bytes", text.len());
        assert!(text.contains("at `/0`"), "{text}");
        assert!(text.ends_with("and 95+ more"), "{text}");

        let text = describe_violations(&validator, &json!([1, "two"]));
        assert_eq!(text, "- at `/1`: \"two\" is not of type \"integer\"");
    }
}
