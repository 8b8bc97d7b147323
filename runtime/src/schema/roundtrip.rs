//! Whether a value type deserializes from what it serializes, judged from its two schemas.
//!
//! `render` and `meta` see a tool's value as deserialized from its frozen JSON, so that nothing
//! the value's `Serialize` skips can reach the model. A field that is skipped when serializing
//! but required when deserializing (`#[serde(skip_serializing)]` without `default`) therefore
//! fails every call. schemars derives the two schemas from the same serde attributes, so the
//! gap shows when the type is registered: a property the deserialize schema requires that the
//! serialize schema never produces.

use serde_json::{Map, Value};

use crate::depth::MAX_DEPTH;

/// The first property that `deserialized` requires and `serialized` never produces, described
/// for a tool author; `None` if there is none.
pub(crate) fn serialized_gaps(serialized: &Value, deserialized: &Value) -> Option<String> {
    if let Some(gap) = compare(serialized, deserialized, "", 0) {
        return Some(gap);
    }
    for defs in ["$defs", "definitions"] {
        let (Some(Value::Object(ser_defs)), Some(Value::Object(de_defs))) =
            (serialized.get(defs), deserialized.get(defs))
        else {
            continue;
        };
        for (name, de_def) in de_defs {
            if let Some(ser_def) = ser_defs.get(name)
                && let Some(gap) = compare(ser_def, de_def, &format!(" of `{name}`"), 0)
            {
                return Some(gap);
            }
        }
    }
    None
}

fn compare(serialized: &Value, deserialized: &Value, place: &str, depth: usize) -> Option<String> {
    let (Value::Object(ser), Value::Object(de)) = (serialized, deserialized) else {
        return None;
    };
    if depth > MAX_DEPTH {
        return None;
    }
    let produced = ser.get("properties").and_then(Value::as_object);
    // Extra members (a flattened map) could produce any name: nothing can be concluded.
    let open = ser
        .get("additionalProperties")
        .is_some_and(|additional| additional != &Value::Bool(false));
    let describes_object = produced.is_some() || ser.get("type").is_some_and(|t| t == "object");
    if describes_object && !open {
        let empty = Map::new();
        let produced = produced.unwrap_or(&empty);
        for name in de
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str()
                && !produced.contains_key(name)
            {
                return Some(format!(
                    "field `{name}`{place} is never serialized (`#[serde(skip_serializing)]`?) but is required to deserialize"
                ));
            }
        }
    }
    let (Some(ser_properties), Some(de_properties)) =
        (produced, de.get("properties").and_then(Value::as_object))
    else {
        return compare_children(ser, de, place, depth);
    };
    for (name, de_property) in de_properties {
        if let Some(ser_property) = ser_properties.get(name)
            && let Some(gap) = compare(
                ser_property,
                de_property,
                &format!("{place} in `{name}`"),
                depth + 1,
            )
        {
            return Some(gap);
        }
    }
    compare_children(ser, de, place, depth)
}

/// Compares the subschemas both sides have in the same place: items, and combinator branches
/// of the same count.
fn compare_children(
    ser: &Map<String, Value>,
    de: &Map<String, Value>,
    place: &str,
    depth: usize,
) -> Option<String> {
    if let (Some(ser_items), Some(de_items)) = (ser.get("items"), de.get("items"))
        && let Some(gap) = compare(
            ser_items,
            de_items,
            &format!("{place} in an item"),
            depth + 1,
        )
    {
        return Some(gap);
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        let (Some(Value::Array(ser_members)), Some(Value::Array(de_members))) =
            (ser.get(key), de.get(key))
        else {
            continue;
        };
        if ser_members.len() != de_members.len() {
            continue;
        }
        for (ser_member, de_member) in ser_members.iter().zip(de_members) {
            if let Some(gap) = compare(ser_member, de_member, place, depth + 1) {
                return Some(gap);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::schema::{deserialize_schema_for, output_schema_for};

    fn gaps<T: JsonSchema>() -> Option<String> {
        serialized_gaps(&output_schema_for::<T>(), &deserialize_schema_for::<T>())
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Secretive {
        shown: String,
        #[serde(skip_serializing)]
        secret: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Defaulted {
        shown: String,
        #[serde(skip_serializing, default)]
        secret: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Outer {
        inner: Vec<Secretive>,
    }

    #[test]
    fn a_field_skipped_when_serializing_but_required_is_found_wherever_it_is() {
        let gap = gaps::<Secretive>().unwrap();
        assert!(
            gap.starts_with("field `secret` is never serialized"),
            "{gap}"
        );
        assert_eq!(gaps::<Defaulted>(), None);
        let nested = gaps::<Outer>().unwrap();
        assert!(nested.contains("`secret` of `Secretive`"), "{nested}");
        assert_eq!(gaps::<Vec<Defaulted>>(), None);
    }
}
