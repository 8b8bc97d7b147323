//! Rewriting a JSON Schema into the dialect a provider accepts.
//!
//! One function per dialect, each pure: schema in, schema out, or the keyword that cannot be
//! expressed.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::depth::check_depth;
use crate::schema::{InlineError, inline_refs};

/// Why a schema cannot be expressed in a provider's dialect.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("keyword `{keyword}` at `{at}`: {reason}")]
pub struct DialectError {
    /// The keyword that cannot be expressed.
    pub keyword: String,
    /// JSON Pointer to the schema object holding it.
    pub at: String,
    /// Why.
    pub reason: String,
}

fn error(keyword: &str, at: &str, reason: impl Into<String>) -> DialectError {
    DialectError {
        keyword: keyword.to_owned(),
        at: at.to_owned(),
        reason: reason.into(),
    }
}

/// Refuses a schema deeper than [`MAX_DEPTH`](crate::depth::MAX_DEPTH) before any rewrite
/// recurses into it. Every rewrite is then linear in the schema (times that depth, at worst,
/// for `allOf` merges).
fn within_depth(schema: &Value) -> Result<(), DialectError> {
    check_depth(schema).map_err(|too_deep| {
        error(
            "(nesting)",
            &too_deep.at,
            format!("the schema nests {too_deep}"),
        )
    })
}

/// The most nodes a schema may grow to when its references are inlined.
const INLINE_BUDGET: usize = 100_000;
/// The longest constraint text folded into a description.
const MAX_FOLDED: usize = 200;

/// Keywords that only annotate or organise a schema, dropped by every rewrite.
const DROPPED: [&str; 10] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentEncoding",
    "contentMediaType",
];

/// The schema for OpenAI (Chat Completions and Responses) outside strict mode, and for
/// Anthropic's `input_schema`: JSON Schema as it is, without the `$schema` URL.
pub fn plain(schema: &Value) -> Result<Value, DialectError> {
    // A copy, which `Value::clone` makes by recursion: measure first.
    within_depth(schema)?;
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    Ok(schema)
}

/// The schema for OpenAI strict mode (structured outputs):
///
/// - every object gets `"additionalProperties": false` and lists all its properties as
///   required; a property that was optional becomes nullable instead (its `type` gains
///   `"null"`, or it is wrapped as `anyOf: [schema, {"type": "null"}]`), so leaving it out is
///   still possible, as `null` — which dispatch reads as leaving the property out wherever the
///   original schema refuses `null` for it (see `docs/pipeline.md`, step 2);
/// - `oneOf` becomes `anyOf`; `allOf` members are merged when they do not clash;
/// - `$ref`/`$defs` stay (strict mode resolves them, recursion included);
/// - keywords strict mode does not accept are folded into the description (`minLength: 3`);
///   integer formats schemars emits (`uint32`, `int64`, …) are dropped, their bounds stay;
/// - a map (an object whose `additionalProperties` is a schema) has no strict form: error.
pub fn openai_strict(schema: &Value) -> Result<Value, DialectError> {
    within_depth(schema)?;
    let mut out = strict_node(schema, "", Strict::OpenAi)?;
    if let (Value::Object(out), Some(Value::Object(defs))) = (&mut out, schema.get("$defs")) {
        let mut strict_defs = Map::new();
        for (name, def) in defs {
            let at = format!("/$defs/{name}");
            strict_defs.insert(name.clone(), strict_node(def, &at, Strict::OpenAi)?);
        }
        out.insert("$defs".into(), Value::Object(strict_defs));
    }
    Ok(out)
}

/// Which provider's strict mode a schema is rewritten for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strict {
    OpenAi,
    Anthropic,
}

impl Strict {
    /// The string formats it accepts.
    fn formats(self) -> &'static [&'static str] {
        match self {
            Self::OpenAi => &OPENAI_FORMATS,
            Self::Anthropic => &ANTHROPIC_FORMATS,
        }
    }

    /// Whether it refuses `keyword` (beside what OpenAI's refuses): Anthropic's takes no
    /// numeric or string bounds, and of the array bounds only `minItems` of 0 or 1.
    fn also_unsupported(self, keyword: &str, value: &Value) -> bool {
        self == Self::Anthropic
            && (ANTHROPIC_UNSUPPORTED.contains(&keyword)
                || (keyword == "minItems" && value.as_u64().is_none_or(|count| count > 1)))
    }
}

/// String formats Anthropic's strict mode accepts.
const ANTHROPIC_FORMATS: [&str; 10] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords Anthropic's strict mode refuses beside those OpenAI's does.
const ANTHROPIC_UNSUPPORTED: [&str; 7] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "maxItems",
    "pattern",
];

/// The schema for Anthropic's strict tool use (`"strict": true`):
///
/// - every local `$ref` is inlined; a recursive type has no strict form: error on `$ref`;
/// - every object gets `"additionalProperties": false`; optional properties stay optional;
/// - `oneOf` becomes `anyOf`; `allOf` members are merged when they do not clash;
/// - keywords strict mode does not accept — numeric and string bounds, `pattern`, array bounds
///   other than `minItems` of 0 or 1, and those OpenAI's strict mode refuses — are folded into
///   the description, where the model still reads them and dispatch still enforces them;
/// - a map (an object whose `additionalProperties` is a schema) has no strict form: error.
pub fn anthropic_strict(schema: &Value) -> Result<Value, DialectError> {
    within_depth(schema)?;
    let draft_07 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| uri.contains("draft-07"));
    let inlined = inline_refs(schema, draft_07, INLINE_BUDGET).map_err(|inline| match inline {
        InlineError::Recursive { reference } => error(
            "$ref",
            "",
            format!("`{reference}` is recursive, which Anthropic's strict mode cannot express"),
        ),
        other => error("$ref", "", other.to_string()),
    })?;
    strict_node(&inlined, "", Strict::Anthropic)
}

/// String formats strict mode accepts.
const OPENAI_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords strict mode does not accept; folded into the description.
const OPENAI_UNSUPPORTED: [&str; 18] = [
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

fn strict_node(schema: &Value, at: &str, dialect: Strict) -> Result<Value, DialectError> {
    let Some(map) = object_form(schema, at)? else {
        return Ok(json!({}));
    };
    let mut out = Map::new();
    let mut folded = Vec::new();
    for (key, value) in map.iter() {
        let here = format!("{at}/{key}");
        match key.as_str() {
            k if DROPPED.contains(&k) => {}
            "default" | "examples" => folded.push(format!("{key}: {}", compact(value))),
            "format" => match value.as_str() {
                Some(format) if dialect.formats().contains(&format) => {
                    out.insert(key.clone(), value.clone());
                }
                Some(format) if is_numeric_format(format) => {}
                _ => folded.push(format!("format: {}", compact(value))),
            },
            k if OPENAI_UNSUPPORTED.contains(&k) || dialect.also_unsupported(k, value) => {
                folded.push(format!("{key}: {}", compact(value)));
            }
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut strict = Map::new();
                for (name, property) in properties {
                    let property = strict_node(property, &format!("{here}/{name}"), dialect)?;
                    let property =
                        if dialect == Strict::Anthropic || required.contains(&name.as_str()) {
                            property
                        } else {
                            nullable(property)
                        };
                    strict.insert(name.clone(), property);
                }
                out.insert(key.clone(), Value::Object(strict));
            }
            "required" => {}
            "additionalProperties" => match value {
                Value::Bool(false) => {}
                Value::Bool(true) if map.contains_key("properties") => {}
                _ => {
                    return Err(error(
                        key,
                        at,
                        "strict mode requires `additionalProperties: false`, so a map with free-form keys cannot be expressed",
                    ));
                }
            },
            "oneOf" | "anyOf" => {
                out.insert("anyOf".into(), strict_each(value, &here, dialect)?);
            }
            "items" => {
                out.insert(key.clone(), strict_node(value, &here, dialect)?);
            }
            "prefixItems" => {
                out.insert(key.clone(), strict_each(value, &here, dialect)?);
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    let is_object = map.get("type").is_some_and(|t| {
        t == "object" || t.as_array().is_some_and(|ts| ts.contains(&json!("object")))
    });
    if is_object || map.contains_key("properties") {
        let names: Vec<Value> = out
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .keys()
                    .map(|name| Value::String(name.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let required = match dialect {
            Strict::OpenAi => names,
            // Anthropic takes optional properties: those required stay the only ones.
            Strict::Anthropic => names
                .into_iter()
                .filter(|name| {
                    map.get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|required| required.contains(name))
                })
                .collect(),
        };
        out.insert("required".into(), Value::Array(required));
        out.insert("additionalProperties".into(), Value::Bool(false));
        out.entry("properties").or_insert_with(|| json!({}));
    }
    fold(&mut out, &folded);
    Ok(Value::Object(out))
}

fn strict_each(value: &Value, at: &str, dialect: Strict) -> Result<Value, DialectError> {
    let Value::Array(items) = value else {
        return Ok(value.clone());
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| strict_node(item, &format!("{at}/{index}"), dialect))
        .collect()
}

/// A schema that also accepts `null`.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let plain =
        !map.contains_key("$ref") && !map.contains_key("anyOf") && !map.contains_key("oneOf");
    match map.get_mut("type") {
        Some(Value::String(single)) if plain => {
            let single = std::mem::take(single);
            if single == "null" {
                map.insert("type".into(), Value::String(single));
            } else {
                map.insert("type".into(), json!([single, "null"]));
                if let Some(Value::Array(values)) = map.get_mut("enum")
                    && !values.contains(&Value::Null)
                {
                    values.push(Value::Null);
                }
            }
            Value::Object(map)
        }
        Some(Value::Array(types)) if plain => {
            if !types.contains(&json!("null")) {
                types.push(json!("null"));
            }
            Value::Object(map)
        }
        _ => {
            if map
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.contains(&json!({"type": "null"})))
            {
                return Value::Object(map);
            }
            json!({"anyOf": [Value::Object(map), {"type": "null"}]})
        }
    }
}

/// The schema for Gemini's OpenAPI-style subset:
///
/// - every local `$ref` is inlined and `$defs` removed; a recursive type has no inlined form:
///   error on `$ref`;
/// - `type` becomes Gemini's upper-case name; `["T", "null"]` becomes `T` with
///   `"nullable": true`, and so does a `null` branch of `anyOf`/`oneOf`;
/// - `oneOf` becomes `anyOf`; `allOf` members are merged when they do not clash;
/// - `const` becomes a one-value `enum` (strings), numeric and boolean `enum`/`const` are
///   folded into the description;
/// - keywords Gemini does not accept (`exclusiveMinimum`, `multipleOf`, `not`, `prefixItems`,
///   …) are folded into the description; `additionalProperties: false` is dropped, and a map's
///   value schema is described instead;
/// - a schema that accepts nothing (`false`) has no form: error.
pub fn gemini(schema: &Value) -> Result<Value, DialectError> {
    within_depth(schema)?;
    let draft_07 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| uri.contains("draft-07"));
    let inlined = inline_refs(schema, draft_07, INLINE_BUDGET).map_err(|inline| match inline {
        InlineError::Recursive { reference } => error(
            "$ref",
            "",
            format!(
                "`{reference}` is recursive, and Gemini schemas have no references to express it"
            ),
        ),
        other => error("$ref", "", other.to_string()),
    })?;
    gemini_node(&inlined, "")
}

/// Keywords Gemini's schema accepts as they are.
const GEMINI_KEPT: [&str; 12] = [
    "description",
    "title",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "default",
];

/// Formats Gemini's schema accepts.
const GEMINI_FORMATS: [&str; 6] = ["enum", "date-time", "int32", "int64", "float", "double"];

fn gemini_node(schema: &Value, at: &str) -> Result<Value, DialectError> {
    let Some(map) = object_form(schema, at)? else {
        return Ok(json!({}));
    };
    let mut out = Map::new();
    let mut folded = Vec::new();
    let mut nullable = false;
    for (key, value) in map.iter() {
        let here = format!("{at}/{key}");
        match key.as_str() {
            k if DROPPED.contains(&k) => {}
            k if GEMINI_KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            "type" => nullable |= gemini_type(value, &mut out),
            "format" => match value.as_str() {
                Some(format) if GEMINI_FORMATS.contains(&format) => {
                    out.insert(key.clone(), value.clone());
                }
                Some(format) if is_numeric_format(format) => {}
                _ => folded.push(format!("format: {}", compact(value))),
            },
            "examples" => {
                if let Some(first) = value.as_array().and_then(|examples| examples.first()) {
                    out.insert("example".into(), first.clone());
                }
            }
            "const" | "enum" => nullable |= gemini_enum(key, value, &mut out, &mut folded),
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                let mut converted = Map::new();
                for (name, property) in properties {
                    converted.insert(
                        name.clone(),
                        gemini_node(property, &format!("{here}/{name}"))?,
                    );
                }
                out.insert(key.clone(), Value::Object(converted));
            }
            "required" => {
                out.insert(key.clone(), value.clone());
            }
            "items" => match value {
                Value::Bool(false) => {}
                _ => {
                    out.insert(key.clone(), gemini_node(value, &here)?);
                }
            },
            "prefixItems" => {
                let items = value.as_array().cloned().unwrap_or_default();
                let branches = items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| gemini_node(item, &format!("{here}/{index}")))
                    .collect::<Result<Vec<_>, _>>()?;
                folded.push(format!(
                    "items in this order: {}",
                    compact(&Value::Array(branches.clone()))
                ));
                out.insert("items".into(), json!({"anyOf": branches}));
            }
            "anyOf" | "oneOf" => nullable |= gemini_any_of(value, &here, &mut out)?,
            "additionalProperties" => match value {
                Value::Bool(_) => {}
                schema => folded.push(format!(
                    "keys are free-form; each value: {}",
                    compact(&gemini_node(schema, &here)?)
                )),
            },
            _ if key.starts_with("x-") => {}
            _ => folded.push(format!("{key}: {}", compact(value))),
        }
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    fold(&mut out, &folded);
    Ok(Value::Object(out))
}

/// Converts `const` or `enum` into `out`: string values stay an `enum`, others are folded into
/// the description. True if `null` was allowed.
fn gemini_enum(
    key: &str,
    value: &Value,
    out: &mut Map<String, Value>,
    folded: &mut Vec<String>,
) -> bool {
    let values = match (key, value) {
        ("const", value) => vec![value.clone()],
        (_, value) => value.as_array().cloned().unwrap_or_default(),
    };
    let nullable = values.contains(&Value::Null);
    let values: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
    if values.iter().all(Value::is_string) {
        if !values.is_empty() {
            out.insert("enum".into(), Value::Array(values));
            out.entry("type").or_insert_with(|| json!("STRING"));
        }
    } else {
        folded.push(format!("one of {}", compact(&Value::Array(values))));
    }
    nullable
}

/// Converts a `type` keyword into `out`; true if it allowed `null`.
fn gemini_type(value: &Value, out: &mut Map<String, Value>) -> bool {
    let (types, null) = split_null(value);
    match types.as_slice() {
        [] if null => {
            out.insert("type".into(), json!("NULL"));
        }
        [] => {}
        [single] => {
            out.insert("type".into(), json!(single.to_uppercase()));
        }
        many => {
            let branches: Vec<Value> = many
                .iter()
                .map(|t| json!({"type": t.to_uppercase()}))
                .collect();
            out.insert("anyOf".into(), Value::Array(branches));
        }
    }
    null
}

/// Converts `anyOf`/`oneOf` into `out` (a lone branch is merged in); true if a branch was
/// `null`.
fn gemini_any_of(
    value: &Value,
    at: &str,
    out: &mut Map<String, Value>,
) -> Result<bool, DialectError> {
    let mut nullable = false;
    let mut branches = Vec::new();
    for (index, branch) in value.as_array().into_iter().flatten().enumerate() {
        if branch == &json!({"type": "null"}) {
            nullable = true;
            continue;
        }
        branches.push(gemini_node(branch, &format!("{at}/{index}"))?);
    }
    if let [Value::Object(only)] = branches.as_slice() {
        for (key, value) in only {
            out.entry(key.clone()).or_insert_with(|| value.clone());
        }
    } else {
        out.insert("anyOf".into(), Value::Array(branches));
    }
    Ok(nullable)
}

/// The type names of a `type` keyword, and whether `null` is among them.
fn split_null(value: &Value) -> (Vec<String>, bool) {
    let names: Vec<&str> = match value {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let null = names.contains(&"null");
    (
        names
            .into_iter()
            .filter(|name| *name != "null")
            .map(str::to_owned)
            .collect(),
        null,
    )
}

/// A schema node as one object with its `allOf` merged in; `None` for `true` (no
/// constraint). `false` accepts nothing, which neither dialect can say.
fn object_form<'a>(
    schema: &'a Value,
    at: &str,
) -> Result<Option<Cow<'a, Map<String, Value>>>, DialectError> {
    match schema {
        Value::Object(map) if !map.contains_key("allOf") => Ok(Some(Cow::Borrowed(map))),
        Value::Object(map) => merge_all_of(map, at).map(|merged| Some(Cow::Owned(merged))),
        Value::Bool(true) => Ok(None),
        _ => Err(error(
            "false",
            at,
            "a schema that accepts nothing cannot be expressed",
        )),
    }
}

/// The members of `allOf` merged into the schema holding it, when no keyword clashes.
fn merge_all_of(map: &Map<String, Value>, at: &str) -> Result<Map<String, Value>, DialectError> {
    let Some(members) = map.get("allOf") else {
        return Ok(map.clone());
    };
    let mut merged = map.clone();
    merged.remove("allOf");
    for member in members.as_array().into_iter().flatten() {
        let Value::Object(member) = member else {
            return Err(error("allOf", at, "a member is not an object schema"));
        };
        for (key, value) in member {
            match (merged.get_mut(key), key.as_str()) {
                (None, _) => {
                    merged.insert(key.clone(), value.clone());
                }
                (Some(Value::Object(existing)), "properties") => {
                    for (name, property) in value.as_object().into_iter().flatten() {
                        existing.insert(name.clone(), property.clone());
                    }
                }
                (Some(Value::Array(existing)), "required") => {
                    existing.extend(value.as_array().into_iter().flatten().cloned());
                }
                (Some(existing), _) if existing == value => {}
                // The outer schema's own annotation is the more specific one.
                (Some(_), "description" | "title" | "default" | "examples") => {}
                (Some(_), _) => {
                    return Err(error(
                        "allOf",
                        at,
                        format!("its members disagree on `{key}`, so they cannot be merged"),
                    ));
                }
            }
        }
    }
    Ok(merged)
}

fn is_numeric_format(format: &str) -> bool {
    matches!(
        format,
        "int8"
            | "int16"
            | "int32"
            | "int64"
            | "int128"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "uint128"
            | "float"
            | "double"
    )
}

/// A value as compact JSON, cut to [`MAX_FOLDED`] bytes; only that much is ever serialized.
fn compact(value: &Value) -> String {
    crate::text::json_prefix(value, MAX_FOLDED)
}

/// Appends constraints that the dialect cannot carry to the description, so the model still
/// reads them.
fn fold(out: &mut Map<String, Value>, folded: &[String]) {
    if folded.is_empty() {
        return;
    }
    let note = format!("({})", folded.join("; "));
    let description = match out.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing} {note}"),
        _ => note,
    };
    out.insert("description".into(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn gemini_folds_what_it_cannot_say_and_refuses_what_cannot_be_said() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "exclusiveMinimum": 0, "multipleOf": 5},
                "s": {"type": "string", "format": "email", "const": "a@b.c"},
                "either": {"type": ["string", "integer"]},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}}
            },
            "required": ["n"]
        });
        let lowered = gemini(&schema).unwrap();
        let n = &lowered["properties"]["n"];
        assert_eq!(
            (n["type"].clone(), n["nullable"].clone()),
            (json!("INTEGER"), json!(true))
        );
        assert_eq!(n["description"], "(exclusiveMinimum: 0; multipleOf: 5)");
        assert_eq!(lowered["properties"]["s"]["enum"], json!(["a@b.c"]));
        assert_eq!(
            lowered["properties"]["s"]["description"],
            "(format: \"email\")"
        );
        assert_eq!(
            lowered["properties"]["either"]["anyOf"],
            json!([{"type": "STRING"}, {"type": "INTEGER"}])
        );
        assert_eq!(
            lowered["properties"]["tuple"]["items"]["anyOf"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert!(
            lowered["properties"]["map"]["description"]
                .as_str()
                .unwrap()
                .contains("each value")
        );

        let nothing = json!({"type": "object", "properties": {"never": false}});
        assert_eq!(gemini(&nothing).unwrap_err().keyword, "false");
        let clash = json!({"allOf": [{"type": "string"}, {"type": "integer"}]});
        let error = gemini(&clash).unwrap_err();
        assert_eq!((error.keyword.as_str(), error.at.as_str()), ("allOf", ""));
    }

    #[test]
    fn strict_makes_optional_properties_nullable_whatever_their_shape() {
        let schema = json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["a", "b"]},
                "child": {"$ref": "#/$defs/Child"},
                "name": {"type": "string", "minLength": 2}
            },
            "required": ["name"],
            "$defs": {"Child": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        });
        let strict = openai_strict(&schema).unwrap();
        assert_eq!(strict["required"], json!(["child", "kind", "name"]));
        assert_eq!(
            strict["properties"]["kind"],
            json!({"type": ["string", "null"], "enum": ["a", "b", null]})
        );
        assert_eq!(
            strict["properties"]["child"],
            json!({"anyOf": [{"$ref": "#/$defs/Child"}, {"type": "null"}]})
        );
        assert_eq!(
            strict["properties"]["name"],
            json!({"type": "string", "description": "(minLength: 2)"})
        );
        assert_eq!(strict["$defs"]["Child"]["additionalProperties"], false);
        assert_eq!(strict["$defs"]["Child"]["required"], json!(["x"]));
    }

    #[test]
    fn plain_drops_only_the_schema_url() {
        let schema =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
        assert_eq!(plain(&schema), Ok(json!({"type": "object"})));
    }
}
