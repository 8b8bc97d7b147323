//! A document's schemas as self-contained JSON Schema 2020-12, the dialect the runtime checks:
//! each `#/components/schemas/…` a schema refers to copied into `$defs` (a recursive one
//! stays recursive there), 3.0's dialect turned into 2020-12 (`nullable`, boolean exclusive
//! bounds, `example`), and what JSON Schema does not know (`discriminator`, `xml`, `x-…`)
//! left out.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use crate::document::{Document, Version, quoted};

/// The most component schemas one tool's schemas may draw in.
pub const MAX_DEFS: usize = 2_000;

/// The most schema objects converted for one tool: references inlined (those that do not
/// name a component) could otherwise multiply a small document into an exponential one.
pub const MAX_SCHEMA_NODES: usize = 200_000;

/// The most text one tool's schemas may copy from the document (descriptions, enums,
/// defaults, examples), in bytes: a long string referred to from many places is copied to
/// each.
pub const MAX_SCHEMA_BYTES: usize = 16 << 20;

const COMPONENT_SCHEMAS: &str = "#/components/schemas/";

/// Keywords whose value is a schema.
const SCHEMA_KEYWORDS: [&str; 12] = [
    "items",
    "not",
    "additionalProperties",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
    "additionalItems",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_LIST_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: [&str; 4] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
];
/// Keywords left out: OpenAPI's own, or what would change how references resolve.
const DROPPED_KEYWORDS: [&str; 9] = [
    "discriminator",
    "xml",
    "externalDocs",
    "nullable",
    "example",
    "$id",
    "$schema",
    "$dynamicAnchor",
    "$anchor",
];

/// Converts schemas of one document into self-contained ones, sharing their `$defs`.
pub(crate) struct Converter<'a> {
    document: &'a Document,
    /// Component name → the key it has in `$defs`.
    keys: BTreeMap<String, String>,
    /// The keys in `$defs` so far, to find a fresh one without a scan.
    taken: BTreeSet<String>,
    defs: Map<String, Value>,
    wanted: VecDeque<String>,
    /// Schema objects converted so far, against [`MAX_SCHEMA_NODES`].
    nodes: usize,
    /// Bytes of text copied so far, against [`MAX_SCHEMA_BYTES`].
    bytes: usize,
}

impl<'a> Converter<'a> {
    pub(crate) fn new(document: &'a Document) -> Self {
        Self {
            document,
            keys: BTreeMap::new(),
            taken: BTreeSet::new(),
            defs: Map::new(),
            wanted: VecDeque::new(),
            nodes: 0,
            bytes: 0,
        }
    }

    /// About how much memory what was converted so far takes: its text and its schema objects.
    pub(crate) fn footprint(&self) -> usize {
        self.bytes + self.nodes * 64
    }

    /// `schema` converted; the components it refers to are converted by [`finish`].
    ///
    /// [`finish`]: Self::finish
    pub(crate) fn convert(&mut self, schema: &Value) -> Result<Value, String> {
        self.convert_at(schema, 0)
    }

    /// The `$defs` every converted schema needs, converted in turn.
    pub(crate) fn finish(&mut self) -> Result<Map<String, Value>, String> {
        while let Some(name) = self.wanted.pop_front() {
            let key = self.keys[&name].clone();
            let reference = format!("{COMPONENT_SCHEMAS}{}", escape_pointer(&name));
            let component = self.document.pointer(&reference)?;
            let converted = self.convert_at(component, 0)?;
            self.defs.insert(key, converted);
        }
        Ok(std::mem::take(&mut self.defs))
    }

    /// Counts `bytes` more of copied text against [`MAX_SCHEMA_BYTES`].
    fn copied(&mut self, bytes: usize) -> Result<(), String> {
        self.bytes += bytes;
        if self.bytes > MAX_SCHEMA_BYTES {
            return Err(format!(
                "its schemas copy more than {MAX_SCHEMA_BYTES} bytes of text"
            ));
        }
        Ok(())
    }

    fn convert_at(&mut self, schema: &Value, depth: usize) -> Result<Value, String> {
        if depth > toolprism::depth::MAX_DEPTH {
            return Err(format!(
                "a schema nests deeper than {} levels",
                toolprism::depth::MAX_DEPTH
            ));
        }
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(format!(
                "its schemas expand to more than {MAX_SCHEMA_NODES} schema objects"
            ));
        }
        let Value::Object(object) = schema else {
            // `true`, `false`: schemas as they are; anything else the runtime refuses.
            return Ok(schema.clone());
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let converted = self.reference(reference, depth)?;
            // 3.0 ignores what stands beside a reference; 3.1 applies it too.
            if self.document.version == Version::V3_0 || object.len() == 1 {
                return Ok(converted);
            }
            let mut beside = object.clone();
            beside.remove("$ref");
            let beside = self.convert_at(&Value::Object(beside), depth + 1)?;
            return Ok(serde_json::json!({"allOf": [converted, beside]}));
        }
        let mut out = Map::new();
        for (key, value) in object {
            if DROPPED_KEYWORDS.contains(&key.as_str()) || key.starts_with("x-") {
                continue;
            }
            let converted = if SCHEMA_KEYWORDS.contains(&key.as_str()) {
                self.convert_at(value, depth + 1)?
            } else if SCHEMA_LIST_KEYWORDS.contains(&key.as_str()) {
                match value {
                    Value::Array(list) => Value::Array(
                        list.iter()
                            .map(|item| self.convert_at(item, depth + 1))
                            .collect::<Result<_, _>>()?,
                    ),
                    other => other.clone(),
                }
            } else if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
                match value {
                    Value::Object(map) => Value::Object(
                        map.iter()
                            .map(|(name, item)| {
                                Ok((name.clone(), self.convert_at(item, depth + 1)?))
                            })
                            .collect::<Result<_, String>>()?,
                    ),
                    other => other.clone(),
                }
            } else {
                self.copied(text_bytes(value))?;
                value.clone()
            };
            self.copied(key.len())?;
            out.insert(key.clone(), converted);
        }
        if self.document.version == Version::V3_0 {
            from_3_0(object, &mut out);
        }
        self.not_requiring_one_way_properties(object, &mut out);
        Ok(Value::Object(out))
    }

    /// A reference: to a component schema, kept as a reference into `$defs`; to somewhere
    /// else in the document, the schema there, converted in place.
    fn reference(&mut self, reference: &str, depth: usize) -> Result<Value, String> {
        if let Some(name) = reference.strip_prefix(COMPONENT_SCHEMAS)
            && !name.contains('/')
        {
            let name =
                unescape_pointer(&percent_encoding::percent_decode_str(name).decode_utf8_lossy());
            let key = if let Some(key) = self.keys.get(&name) {
                key.clone()
            } else {
                if self.keys.len() >= MAX_DEFS {
                    return Err(format!(
                        "its schemas draw in more than {MAX_DEFS} component schemas"
                    ));
                }
                let key = self.fresh_key(&name);
                self.keys.insert(name.clone(), key.clone());
                self.wanted.push_back(name);
                key
            };
            return Ok(serde_json::json!({"$ref": format!("#/$defs/{key}")}));
        }
        let target = self.document.pointer(reference)?;
        if target.get("$ref").is_some() && depth > crate::document::MAX_REF_HOPS {
            return Err(format!("the reference {} loops", quoted(reference)));
        }
        self.convert_at(target, depth + 1)
    }

    /// `readOnly` properties are not sent and `writeOnly` ones not returned, yet documents list
    /// them in `required`; the schemas are shared by the input and the output, so neither is
    /// required in either. A valid request or response is never refused for them.
    fn not_requiring_one_way_properties(
        &self,
        original: &Map<String, Value>,
        out: &mut Map<String, Value>,
    ) {
        let (Some(Value::Object(properties)), Some(Value::Array(required))) =
            (original.get("properties"), out.get_mut("required"))
        else {
            return;
        };
        required.retain(|name| {
            let Some(property) = name.as_str().and_then(|name| properties.get(name)) else {
                return true;
            };
            let property = self.document.resolve(property).unwrap_or(property);
            let one_way = |key: &str| property.get(key) == Some(&Value::Bool(true));
            !(one_way("readOnly") || one_way("writeOnly"))
        });
    }

    /// A `$defs` key for a component: its name in `[A-Za-z0-9_.-]`, unique.
    fn fresh_key(&mut self, name: &str) -> String {
        let base: String = name
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-') {
                    ch
                } else {
                    '_'
                }
            })
            .take(100)
            .collect();
        let key = if self.taken.contains(&base) {
            // At most MAX_DEFS keys are taken, so one of the next MAX_DEFS + 1 is free.
            (2..=MAX_DEFS + 2)
                .map(|n| format!("{base}_{n}"))
                .find(|key| !self.taken.contains(key))
                .unwrap_or(base)
        } else {
            base
        };
        self.taken.insert(key.clone());
        key
    }
}

/// 3.0's dialect in 2020-12 terms: `nullable: true` as `null` among the types (or beside the
/// schema), boolean `exclusiveMinimum`/`exclusiveMaximum` as the bound itself, `example` as
/// `examples`.
fn from_3_0(original: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match original.get(exclusive) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = out.remove(bound) {
                    out.insert(exclusive.to_owned(), limit);
                } else {
                    out.remove(exclusive);
                }
            }
            Some(Value::Bool(false)) => {
                out.remove(exclusive);
            }
            _ => {}
        }
    }
    if let Some(example) = original.get("example") {
        out.entry("examples")
            .or_insert_with(|| Value::Array(vec![example.clone()]));
    }
    if original.get("nullable") != Some(&Value::Bool(true)) {
        return;
    }
    if let Some(Value::Array(choices)) = out.get_mut("enum")
        && !choices.contains(&Value::Null)
    {
        choices.push(Value::Null);
    }
    match out.get_mut("type") {
        Some(Value::String(single)) => {
            let single = std::mem::take(single);
            out.insert("type".to_owned(), serde_json::json!([single, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.contains(&Value::from("null")) {
                types.push(Value::from("null"));
            }
        }
        _ => {
            let schema = std::mem::take(out);
            out.insert(
                "anyOf".to_owned(),
                serde_json::json!([Value::Object(schema), {"type": "null"}]),
            );
        }
    }
}

/// The bytes of text in a value (its strings and keys), found without recursion.
fn text_bytes(value: &Value) -> usize {
    let mut pending = vec![value];
    let mut bytes = 0;
    while let Some(value) = pending.pop() {
        bytes += 8;
        match value {
            Value::String(text) => bytes += text.len(),
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    bytes += key.len();
                    pending.push(item);
                }
            }
            _ => {}
        }
    }
    bytes
}

/// A component's name as a JSON pointer token.
fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer token as the name it stands for.
fn unescape_pointer(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}
