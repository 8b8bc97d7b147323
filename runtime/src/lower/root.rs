//! The root form providers accept for tool arguments: one object.
//!
//! An args type may be a union of objects — an internally tagged enum is a `oneOf` of one object
//! per variant — and dispatch validates against that union as it is. OpenAI, Anthropic and
//! Gemini all want `"type": "object"` at the root of a tool's parameters, and Anthropic refuses
//! `oneOf`, `anyOf` and `allOf` there. So the lowered schema is one object holding every
//! branch's properties, requiring what every branch requires, with the shapes spelled out in
//! its description (`oneOf: …`). A model that mixes shapes is refused by dispatch with a message
//! naming `oneOf`, the rule the description states.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::depth::MAX_DEPTH;
use crate::schema::resolve_local;

/// Longest description of the shapes folded into the root's description.
const MAX_SHAPES_TEXT: usize = 1_000;

/// `schema` as one object at the root: itself when it is one already, else its union
/// flattened as the module explains.
///
/// ```
/// use serde_json::json;
/// use toolprism::lower::object_root;
///
/// let tagged = json!({"oneOf": [
///     {"type": "object", "properties": {"action": {"const": "read"}, "path": {"type": "string"}}, "required": ["action", "path"]},
///     {"type": "object", "properties": {"action": {"const": "stop"}}, "required": ["action"]}
/// ]});
/// let root = object_root(&tagged);
/// assert_eq!(root["type"], "object");
/// assert_eq!(root["required"], json!(["action"]));
/// assert!(root["description"].as_str().unwrap().starts_with("(oneOf: "));
/// ```
pub fn object_root(schema: &Value) -> Cow<'_, Value> {
    let Value::Object(map) = schema else {
        return Cow::Borrowed(schema);
    };
    let is_object = map.get("type").is_some_and(|ty| ty == "object");
    let combined = ["oneOf", "anyOf", "allOf"]
        .iter()
        .any(|key| map.contains_key(*key));
    if is_object && !combined {
        return Cow::Borrowed(schema);
    }
    let union = if map.contains_key("oneOf") {
        "oneOf"
    } else {
        "anyOf"
    };
    let shapes = shapes_of(schema, schema, 0);
    if shapes.is_empty() {
        return Cow::Borrowed(schema);
    }
    Cow::Owned(flatten(map, union, &shapes))
}

/// One shape an object may take: its properties, and which are required.
#[derive(Clone, Default)]
struct Shape<'a> {
    properties: Vec<(&'a str, &'a Value)>,
    required: BTreeSet<&'a str>,
    closed: bool,
}

impl<'a> Shape<'a> {
    fn merge(&mut self, other: &Shape<'a>) {
        for (name, property) in &other.properties {
            if !self.properties.iter().any(|(known, _)| known == name) {
                self.properties.push((name, property));
            }
        }
        self.required.extend(other.required.iter().copied());
        self.closed |= other.closed;
    }
}

/// The shapes `node` describes: one, or one per branch of its union.
fn shapes_of<'a>(node: &'a Value, root: &'a Value, depth: usize) -> Vec<Shape<'a>> {
    let Value::Object(map) = node else {
        return Vec::new();
    };
    if depth > MAX_DEPTH {
        return Vec::new();
    }
    let mut base = Shape {
        properties: map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, property)| (name.as_str(), property))
            .collect(),
        required: map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect(),
        closed: map.get("additionalProperties") == Some(&Value::Bool(false)),
    };
    let referenced = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| resolve_local(root, reference));
    let members = map
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for member in referenced.into_iter().chain(members) {
        for shape in shapes_of(member, root, depth + 1) {
            base.merge(&shape);
        }
    }
    let branches = map
        .get("oneOf")
        .or_else(|| map.get("anyOf"))
        .and_then(Value::as_array);
    let Some(branches) = branches else {
        return vec![base];
    };
    let mut shapes = Vec::new();
    for branch in branches {
        for shape in shapes_of(branch, root, depth + 1) {
            let mut merged = base.clone();
            merged.merge(&shape);
            shapes.push(merged);
        }
    }
    shapes
}

fn flatten(root: &Map<String, Value>, union: &str, shapes: &[Shape<'_>]) -> Value {
    // Each property's distinct schemas across the shapes, in first-seen order.
    let mut seen: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for shape in shapes {
        for &(name, property) in &shape.properties {
            let schemas = seen.entry(name).or_default();
            if !schemas.contains(&property) {
                schemas.push(property);
            }
        }
    }
    let properties: Map<String, Value> = seen
        .into_iter()
        .map(|(name, schemas)| {
            let schema = match schemas.as_slice() {
                [only] => (*only).clone(),
                several => json!({"anyOf": several}),
            };
            (name.to_owned(), schema)
        })
        .collect();
    let mut required: Vec<&str> = shapes[0].required.iter().copied().collect();
    required.retain(|name| shapes.iter().all(|shape| shape.required.contains(name)));

    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".into(), json!(required));
    }
    if shapes.iter().all(|shape| shape.closed) {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    for key in ["$schema", "$defs", "definitions", "title"] {
        if let Some(value) = root.get(key) {
            out.insert(key.to_owned(), value.clone());
        }
    }
    let note = describe_shapes(union, shapes);
    let description = match root.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing} {note}"),
        _ => note,
    };
    out.insert("description".into(), Value::String(description));
    Value::Object(out)
}

/// `(oneOf: [1] action = "read", requires path; [2] …)`.
fn describe_shapes(union: &str, shapes: &[Shape<'_>]) -> String {
    let quantity = if union == "oneOf" {
        "exactly one"
    } else {
        "at least one"
    };
    let mut text = format!("({union}: the arguments take {quantity} of these shapes:");
    for (index, shape) in shapes.iter().enumerate() {
        let _ = write!(text, " [{}]", index + 1);
        let fixed: Vec<String> = shape
            .properties
            .iter()
            .filter_map(|(name, property)| {
                let value = property.get("const").or_else(|| {
                    property
                        .get("enum")
                        .and_then(Value::as_array)
                        .filter(|values| values.len() == 1)
                        .and_then(|values| values.first())
                })?;
                Some(format!("{name} = {value}"))
            })
            .collect();
        let others: Vec<&str> = shape
            .required
            .iter()
            .copied()
            .filter(|name| !fixed.iter().any(|f| f.starts_with(&format!("{name} = "))))
            .collect();
        let mut parts = fixed;
        if !others.is_empty() {
            parts.push(format!("requires {}", others.join(", ")));
        }
        if parts.is_empty() {
            parts.push("no required properties".to_owned());
        }
        let _ = write!(text, " {};", parts.join(", "));
        if text.len() > MAX_SHAPES_TEXT {
            text = crate::text::truncate(&text, MAX_SHAPES_TEXT);
            break;
        }
    }
    if text.ends_with(';') {
        text.pop();
    }
    text.push(')');
    text
}
