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

/// What a tool's hints say, in words: `read-only`, `destructive`, `idempotent`, `open-world`
/// (and their negations where the tool said so).
pub(crate) fn hints(about: &toolprism::tool::ToolAbout) -> Vec<&'static str> {
    let hints = about.hints;
    let mut said = Vec::new();
    for (value, yes, no) in [
        (hints.read_only, "read-only", "writes"),
        (hints.destructive, "destructive", "not destructive"),
        (hints.idempotent, "idempotent", "not idempotent"),
        (hints.open_world, "open-world", "closed-world"),
    ] {
        match value {
            Some(true) => said.push(yes),
            Some(false) => said.push(no),
            None => {}
        }
    }
    if about.defer_loading {
        said.push("deferred");
    }
    match about.callers {
        toolprism::tool::Callers::Programs => said.push("programs only"),
        toolprism::tool::Callers::Direct => said.push("model only"),
        _ => {}
    }
    said
}

/// A tool's account of itself, added to its schema's JSON: title, hints (as MCP names them),
/// icons, examples, timeout, deferral and callers, each where said.
pub(crate) fn add_about(shown: &mut serde_json::Value, about: &toolprism::tool::ToolAbout) {
    use serde_json::json;
    if let Some(title) = &about.title {
        shown["title"] = json!(title);
    }
    let hints = about.hints;
    if !hints.is_empty() {
        let mut annotations = serde_json::Map::new();
        for (name, value) in [
            ("readOnlyHint", hints.read_only),
            ("destructiveHint", hints.destructive),
            ("idempotentHint", hints.idempotent),
            ("openWorldHint", hints.open_world),
        ] {
            if let Some(value) = value {
                annotations.insert(name.to_owned(), json!(value));
            }
        }
        shown["annotations"] = serde_json::Value::Object(annotations);
    }
    if !about.icons.is_empty() {
        shown["icons"] = json!(about.icons);
    }
    if !about.examples.is_empty() {
        shown["examples"] = json!(about.examples);
    }
    if let Some(timeout) = about.timeout {
        shown["timeout_ms"] = json!(timeout.as_millis());
    }
    if about.defer_loading {
        shown["defer_loading"] = json!(true);
    }
    if about.callers != toolprism::tool::Callers::Both {
        shown["callers"] = json!(about.callers);
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
