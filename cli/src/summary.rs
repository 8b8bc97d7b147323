//! A schema in a few characters, for `list`: `{path, offset?, limit?}`, `string`,
//! `{kind: "text", …} | {kind: "image", …}`.

use serde_json::Value;

/// Properties shown before `…`.
const MAX_PROPERTIES: usize = 4;

/// A short, one-line description of what a schema accepts.
pub(crate) fn of(schema: &Value) -> String {
    summary(schema, 0)
}

fn summary(schema: &Value, depth: usize) -> String {
    let Value::Object(object) = schema else {
        return if schema == &Value::Bool(false) {
            "never"
        } else {
            "any"
        }
        .to_owned();
    };
    if depth > 2 {
        return "…".to_owned();
    }
    if let Some(constant) = object.get("const") {
        return constant.to_string();
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = object.get(keyword) {
            return branches
                .iter()
                .map(|branch| summary(branch, depth + 1))
                .collect::<Vec<_>>()
                .join(" | ");
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut shown: Vec<String> = properties
            .iter()
            .take(MAX_PROPERTIES)
            .map(|(name, property)| match property.get("const") {
                Some(constant) => format!("{name}: {constant}"),
                None if required.contains(&name.as_str()) => name.clone(),
                None => format!("{name}?"),
            })
            .collect();
        if properties.len() > MAX_PROPERTIES {
            shown.push("…".to_owned());
        }
        return format!("{{{}}}", shown.join(", "));
    }
    match object.get("type") {
        Some(Value::String(kind)) if kind == "array" => {
            format!(
                "[{}]",
                object
                    .get("items")
                    .map_or_else(|| "any".to_owned(), |items| summary(items, depth + 1))
            )
        }
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if object.contains_key("$ref") => "object".to_owned(),
        _ => "any".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_and_on_one_line() {
        assert_eq!(of(&json!({"type": "integer"})), "integer");
        assert_eq!(
            of(
                &json!({"type": "object", "properties": {"path": {}, "limit": {}}, "required": ["path"]})
            ),
            "{limit?, path}"
        );
        assert_eq!(
            of(&json!({"oneOf": [{"properties": {"kind": {"const": "a"}}}, {"type": "null"}]})),
            "{kind: \"a\"} | null"
        );
        assert_eq!(of(&json!(true)), "any");
    }
}
