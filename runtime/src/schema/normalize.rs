//! Reading arguments the way the tool's schema means them, where a model's JSON and a Rust type
//! disagree on form but not on meaning:
//!
//! - `1.0` where the schema says `"type": "integer"`: JSON Schema counts it an integer (and so
//!   does validation), serde's integer types refuse a float. It becomes `1`.
//! - `null` for an optional property whose schema refuses `null`: OpenAI strict mode makes
//!   every property required and the optional ones nullable, so an obedient model sends
//!   `"tags": null` for a property it means to leave out. The property is removed, which is
//!   what the model meant; a `null` the schema accepts is kept, since there it may mean
//!   something else than leaving the property out.
//!
//! Both walk the arguments and the schema together. The arguments are within
//! [`MAX_DEPTH`](crate::depth::MAX_DEPTH), and the subschemas applied to each node are bounded
//! by the schema's cost bound, so the walk is too.

use std::collections::HashSet;

use serde_json::{Map, Number, Value};

use crate::depth::MAX_DEPTH;

use super::refs::resolve;

/// Removes `null` members of objects where the schema makes the member optional and refuses
/// `null` for it. True if anything was removed.
pub(crate) fn strip_refused_nulls(root: &Value, draft_07: bool, args: &mut Value) -> bool {
    let mut walk = Walk {
        root,
        draft_07,
        fix: Fix::Nulls,
        changed: false,
    };
    walk.visit(vec![root], args, 0);
    walk.changed
}

/// Turns floats with no fractional part into integers where the schema says `integer`. True
/// if anything changed.
pub(crate) fn coerce_integral_floats(root: &Value, draft_07: bool, args: &mut Value) -> bool {
    let mut walk = Walk {
        root,
        draft_07,
        fix: Fix::Floats,
        changed: false,
    };
    walk.visit(vec![root], args, 0);
    walk.changed
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fix {
    Nulls,
    Floats,
}

struct Walk<'a> {
    root: &'a Value,
    draft_07: bool,
    fix: Fix,
    changed: bool,
}

impl<'a> Walk<'a> {
    fn visit(&mut self, entry: Vec<&'a Value>, instance: &mut Value, depth: usize) {
        if depth > MAX_DEPTH || entry.is_empty() {
            return;
        }
        let applied = self.in_place(entry);
        match instance {
            Value::Number(number) if self.fix == Fix::Floats => {
                if let Some(integer) = as_integer(number)
                    && applied.iter().any(|schema| says_integer(schema))
                {
                    *number = integer;
                    self.changed = true;
                }
            }
            Value::Object(members) => {
                if self.fix == Fix::Nulls {
                    let before = members.len();
                    members.retain(|key, value| {
                        !(value.is_null() && self.optional_and_refuses_null(&applied, key))
                    });
                    self.changed |= members.len() != before;
                }
                for (key, child) in members.iter_mut() {
                    let schemas = applied
                        .iter()
                        .filter_map(|schema| member_schema(schema, key))
                        .collect();
                    self.visit(schemas, child, depth + 1);
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    let schemas = applied
                        .iter()
                        .filter_map(|schema| self.element_schema(schema, index))
                        .collect();
                    self.visit(schemas, item, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Every schema object that applies to the node `entry` applies to, through references
    /// and combinators (each once).
    fn in_place(&self, entry: Vec<&'a Value>) -> Vec<&'a Map<String, Value>> {
        let mut seen = HashSet::new();
        let mut pending = entry;
        let mut applied = Vec::new();
        while let Some(schema) = pending.pop() {
            let Value::Object(map) = schema else {
                continue;
            };
            if !seen.insert(std::ptr::from_ref(map)) {
                continue;
            }
            if let Some(target) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| resolve(self.root, reference))
            {
                pending.push(target);
                if self.draft_07 {
                    // Draft-07 ignores everything beside a `$ref`.
                    continue;
                }
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                pending.extend(map.get(key).and_then(Value::as_array).into_iter().flatten());
            }
            applied.push(map);
        }
        applied
    }

    /// Whether every schema that declares `key` makes it optional and refuses `null` for it
    /// (and at least one declares it).
    fn optional_and_refuses_null(&self, applied: &[&'a Map<String, Value>], key: &str) -> bool {
        let mut declared = false;
        for schema in applied {
            let Some(property) = schema
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|properties| properties.get(key))
            else {
                continue;
            };
            declared = true;
            let required = schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|names| names.iter().any(|name| name == key));
            if required || self.accepts_null(property, 0) {
                return false;
            }
        }
        declared
    }

    /// Whether `schema` may accept `null`; true when unsure, so that a `null` is only ever
    /// removed where it could not be valid.
    fn accepts_null(&self, schema: &'a Value, hops: usize) -> bool {
        let Value::Object(map) = schema else {
            return schema != &Value::Bool(false);
        };
        if hops > MAX_DEPTH {
            return true;
        }
        let refuses = match map.get("type") {
            Some(Value::String(name)) => name != "null",
            Some(Value::Array(names)) => !names.iter().any(|name| name == "null"),
            _ => false,
        };
        if refuses
            || map.get("const").is_some_and(|value| !value.is_null())
            || map
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|values| !values.contains(&Value::Null))
        {
            return false;
        }
        let accepts = |member: &'a Value| self.accepts_null(member, hops + 1);
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| resolve(self.root, reference))
            && !accepts(target)
        {
            return false;
        }
        if map
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|members| !members.iter().all(accepts))
        {
            return false;
        }
        ["anyOf", "oneOf"].iter().all(|key| {
            map.get(*key)
                .and_then(Value::as_array)
                .is_none_or(|branches| branches.iter().any(accepts))
        })
    }

    /// The subschema an array element at `index` is checked against, in this schema.
    fn element_schema(&self, schema: &'a Map<String, Value>, index: usize) -> Option<&'a Value> {
        let tuple = if self.draft_07 {
            schema.get("items").and_then(Value::as_array)
        } else {
            schema.get("prefixItems").and_then(Value::as_array)
        };
        match tuple {
            Some(members) if index < members.len() => Some(&members[index]),
            Some(_) if self.draft_07 => schema.get("additionalItems"),
            _ => schema.get("items").filter(|items| !items.is_array()),
        }
    }
}

/// The subschema a member named `key` is checked against, in this schema (patterns aside).
fn member_schema<'a>(schema: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    match schema.get("properties").and_then(Value::as_object) {
        Some(properties) if properties.contains_key(key) => properties.get(key),
        _ => schema.get("additionalProperties"),
    }
}

fn says_integer(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(name)) => name == "integer",
        Some(Value::Array(names)) => names.iter().any(|name| name == "integer"),
        _ => false,
    }
}

/// The integer a float with no fractional part stands for, if `i64` or `u64` holds it.
fn as_integer(number: &Number) -> Option<Number> {
    if number.is_i64() || number.is_u64() {
        return None;
    }
    let float = number.as_f64()?;
    if float.fract() != 0.0 {
        return None;
    }
    // The casts saturate; a value outside the range does not round-trip and is left alone. The
    // comparisons are exact on purpose: only a float that is exactly the integer converts.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_precision_loss,
        clippy::cast_sign_loss,
        clippy::float_cmp
    )]
    if float >= 0.0 {
        let integer = float as u64;
        (integer as f64 == float && float < 18_446_744_073_709_551_616.0).then(|| integer.into())
    } else {
        let integer = float as i64;
        (integer as f64 == float).then(|| integer.into())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integral_floats_become_integers_only_where_the_schema_says_integer() {
        let schema = json!({"type": "object", "properties": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "list": {"type": "array", "items": {"$ref": "#/$defs/N"}}
        }, "$defs": {"N": {"type": ["integer", "null"]}}});
        let mut args = json!({"count": 3.0, "ratio": 2.0, "list": [1.0, 2.5, null]});
        assert!(coerce_integral_floats(&schema, false, &mut args));
        assert_eq!(
            args,
            json!({"count": 3, "ratio": 2.0, "list": [1, 2.5, null]})
        );
        assert!(args["count"].is_u64() && args["ratio"].is_f64());
        let mut huge = json!({"count": 1e30});
        assert!(!coerce_integral_floats(&schema, false, &mut huge));
    }

    #[test]
    fn only_nulls_an_optional_property_refuses_are_removed() {
        let schema = json!({"type": "object", "properties": {
            "tags": {"type": "array", "default": []},
            "note": {"type": ["string", "null"]},
            "must": {"type": "string"},
            "kind": {"$ref": "#/$defs/Kind"},
            "inner": {"type": "object", "properties": {"x": {"type": "integer"}}}
        }, "required": ["must"], "$defs": {"Kind": {"enum": ["a", "b"]}}});
        let mut args =
            json!({"tags": null, "note": null, "must": null, "kind": null, "inner": {"x": null}});
        assert!(strip_refused_nulls(&schema, false, &mut args));
        assert_eq!(args, json!({"note": null, "must": null, "inner": {}}));
    }

    #[test]
    fn a_union_strips_only_what_every_declaring_branch_refuses() {
        let schema = json!({"type": "object", "anyOf": [
            {"properties": {"a": {"type": "string"}}},
            {"properties": {"a": {"type": "null"}}}
        ]});
        let mut args = json!({"a": null});
        assert!(!strip_refused_nulls(&schema, false, &mut args));
    }
}
