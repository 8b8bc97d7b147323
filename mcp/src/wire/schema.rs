//! Output schemas across protocol generations.
//!
//! MCP 2025-11-25 requires an `outputSchema` whose root is an object, and `structuredContent`
//! that is an object. A tool whose value is anything else (a string, a list, a union) is
//! advertised to those peers wrapped, the way FastMCP does it: `{"result": <value>}`, described
//! by an object schema marked `x-fastmcp-wrap-result`, whose `result` property is the tool's
//! own schema. The schema's `$defs`/`definitions` move to the wrapper's root and every local
//! `$ref` is rewritten to its new place, so nothing is dropped and every reference resolves.
//! 2026-07-28 peers get the schema and the value as they are.

use serde_json::{Map, Value, json};

/// FastMCP's marker on a wrapper schema: clients unwrap `structuredContent.result`.
pub const WRAP_MARKER: &str = "x-fastmcp-wrap-result";
/// The property a wrapped value is carried in.
pub const WRAP_PROPERTY: &str = "result";

/// A schema as 2025-11-25's wire schema takes it: each subschema directly under `properties`
/// an object (`true` is `{}`, `false` is `{"not": {}}`: the same constraints). Non-object
/// roots are turned into objects the same way.
pub(crate) fn legacy_form(schema: &Value) -> Map<String, Value> {
    let mut object = as_object(schema);
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for subschema in properties.values_mut() {
            if let Value::Bool(_) = subschema {
                *subschema = Value::Object(as_object(subschema));
            }
        }
    }
    object
}

/// A schema as an object: `true` (anything) is `{}`, `false` (nothing) `{"not": {}}`.
pub(crate) fn as_object(schema: &Value) -> Map<String, Value> {
    match schema {
        Value::Object(object) => object.clone(),
        Value::Bool(true) => Map::new(),
        _ => Map::from_iter([("not".to_owned(), json!({}))]),
    }
}

/// The object-rooted wrapper of a schema that is not.
pub(crate) fn wrap(schema: &Value) -> Map<String, Value> {
    let mut inner = as_object(schema);
    let mut wrapper = Map::new();
    wrapper.insert("type".into(), json!("object"));
    for key in ["$schema", "$id"] {
        if let Some(value) = inner.remove(key) {
            wrapper.insert(key.into(), value);
        }
    }
    let mut hoisted = Vec::new();
    for key in ["$defs", "definitions"] {
        if let Some(mut defs) = inner.remove(key) {
            rewrite_refs(&mut defs);
            hoisted.push((key, defs));
        }
    }
    let mut inner = Value::Object(inner);
    rewrite_refs(&mut inner);
    wrapper.insert("properties".into(), json!({ WRAP_PROPERTY: inner }));
    wrapper.insert("required".into(), json!([WRAP_PROPERTY]));
    wrapper.insert(WRAP_MARKER.into(), Value::Bool(true));
    for (key, defs) in hoisted {
        wrapper.insert(key.into(), defs);
    }
    wrapper
}

/// Points every local `$ref` at its place in the wrapper: definitions stay where they were
/// (they moved to the wrapper's root with their names), anything else now lives under
/// `#/properties/result`. The schema was depth-checked when it was registered.
fn rewrite_refs(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(moved) = moved_ref(reference) {
                            *reference = moved;
                        }
                    }
                    // Literal values are data, not schemas.
                    ("const" | "enum" | "default" | "examples", _) => {}
                    (_, value) => rewrite_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

fn moved_ref(reference: &str) -> Option<String> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.starts_with("/$defs/") || pointer.starts_with("/definitions/") {
        return None;
    }
    Some(format!("#/properties/{WRAP_PROPERTY}{pointer}"))
}

/// The tool's own schema inside a wrapper marked `x-fastmcp-wrap-result`, with the hoisted
/// definitions, `$schema` and `$id` put back and references pointed at them again: what an importing client
/// validates the unwrapped value against. `None` when `schema` is no such wrapper.
pub(crate) fn unwrap(schema: &Value) -> Option<Value> {
    let object = schema.as_object()?;
    if object.get(WRAP_MARKER) != Some(&Value::Bool(true)) {
        return None;
    }
    let mut inner = object
        .get("properties")?
        .get(WRAP_PROPERTY)?
        .as_object()?
        .clone();
    unrewrite_refs_in_map(&mut inner);
    for key in ["$defs", "definitions"] {
        if let Some(defs) = object.get(key) {
            let mut defs = defs.clone();
            unrewrite_refs(&mut defs);
            inner.insert(key.into(), defs);
        }
    }
    // The draft the wrapper declares is the draft of what it wraps.
    for key in ["$schema", "$id"] {
        if let Some(value) = object.get(key) {
            inner.insert(key.into(), value.clone());
        }
    }
    Some(Value::Object(inner))
}

fn unrewrite_refs_in_map(object: &mut Map<String, Value>) {
    for (key, value) in object.iter_mut() {
        match (key.as_str(), value) {
            ("$ref", Value::String(reference)) => {
                let prefix = format!("#/properties/{WRAP_PROPERTY}");
                if let Some(rest) = reference.strip_prefix(&prefix)
                    && (rest.is_empty() || rest.starts_with('/'))
                {
                    *reference = format!("#{rest}");
                }
            }
            ("const" | "enum" | "default" | "examples", _) => {}
            (_, value) => unrewrite_refs(value),
        }
    }
}

fn unrewrite_refs(schema: &mut Value) {
    match schema {
        Value::Object(object) => unrewrite_refs_in_map(object),
        Value::Array(items) => items.iter_mut().for_each(unrewrite_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_schema_keeps_its_definitions_and_its_references_resolve() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/Hit"},
            "$defs": {"Hit": {"type": "object", "properties": {"next": {"$ref": "#"}}}},
        });
        let wrapped = Value::Object(wrap(&schema));
        assert_eq!(wrapped["x-fastmcp-wrap-result"], true);
        assert_eq!(
            wrapped["properties"]["result"]["items"]["$ref"],
            "#/$defs/Hit"
        );
        assert_eq!(
            wrapped["$defs"]["Hit"]["properties"]["next"]["$ref"],
            "#/properties/result"
        );
        let validator = jsonschema::validator_for(&wrapped).unwrap();
        assert!(validator.is_valid(&json!({"result": [{"next": [{}]}]})));
        assert!(!validator.is_valid(&json!({"result": [{"next": 3}]})));
        assert_eq!(unwrap(&wrapped).unwrap(), schema);
    }

    #[test]
    fn boolean_property_schemas_become_objects_for_legacy_peers() {
        let schema = json!({"type": "object", "properties": {"any": true, "none": false, "s": {"type": "string"}}});
        let legacy = Value::Object(legacy_form(&schema));
        assert_eq!(legacy["properties"]["any"], json!({}));
        assert_eq!(legacy["properties"]["none"], json!({"not": {}}));
        assert_eq!(legacy["properties"]["s"], json!({"type": "string"}));
        let before = jsonschema::validator_for(&schema).unwrap();
        let after = jsonschema::validator_for(&legacy).unwrap();
        for instance in [
            json!({"any": 1}),
            json!({"none": 1}),
            json!({"s": 2}),
            json!({}),
        ] {
            assert_eq!(
                before.is_valid(&instance),
                after.is_valid(&instance),
                "{instance}"
            );
        }
    }

    #[test]
    fn only_wrappers_are_unwrapped() {
        assert_eq!(unwrap(&json!({"type": "object"})), None);
    }
}
