//! TypeScript declarations for the tools a program can call, generated from their schemas:
//! `declare const tools: { read(args: ReadArgs): Promise<ReadValue>; … }`, with doc comments
//! from the descriptions.
//!
//! Every type is the schema's or wider, never narrower: what the schema says and TypeScript
//! cannot (`not`, `if`/`then`, patterns, bounds) is left out, and what cannot be written as a
//! wider type (a `$ref` outside the schema, schemas nested past [`MAX_SCHEMA_DEPTH`]) is
//! `unknown`. A type is named for its tool (`read_file` → `ReadFileArgs`, `ReadFileValue`), a
//! definition for its key (`Line`), each name made unique; a type two tools share is declared
//! once, under the name it was first given.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::{Map, Value};
use toolprism::tool::AdvertisedTool;

/// How deep a schema is followed; deeper parts are `unknown`.
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// The declarations of `tools`, one member per tool, in the order given.
///
/// ```
/// use toolprism::prelude::*;
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::builder().tool(Add).build().unwrap();
/// let declarations = toolprism_codemode::declarations(registry.snapshot().definitions());
/// assert!(declarations.contains("add(args: AddArgs): Promise<AddValue>;"));
/// assert!(declarations.contains("type AddValue = number;"));
/// ```
pub fn declarations<'a>(tools: impl IntoIterator<Item = &'a AdvertisedTool>) -> String {
    let mut declared = Declared::default();
    let mut members = String::new();
    for tool in tools {
        let stem = pascal_case(tool.name());
        let args = declared.declare(tool.input_schema(), &format!("{stem}Args"));
        let value = declared.declare(tool.output_schema(), &format!("{stem}Value"));
        push_doc(&mut members, tool.description(), "  ");
        let _ = writeln!(
            members,
            "  {}(args: {args}): Promise<{value}>;",
            property_name(tool.name())
        );
    }
    format!(
        "{}\ndeclare const tools: {{\n{members}}};\n",
        declared.types
    )
}

/// The types declared so far. A type is declared once: a schema (or a `$defs` entry) equal to
/// one declared before, the definitions it refers to included, is the type declared before,
/// so tools that share a type (and its doc comment) cost the model its name only.
#[derive(Default)]
struct Declared {
    names: TypeNames,
    /// The name each type was declared under.
    by_key: HashMap<TypeKey, String>,
    types: String,
}

/// What makes two schemas one type.
#[derive(PartialEq, Eq, Hash)]
enum TypeKey {
    /// A root schema: its JSON, definitions included.
    Root(String),
    /// A definition: its name, its JSON, and the name and JSON of every definition it refers
    /// to, directly or not (`None` for one the schema lacks).
    Definition {
        name: String,
        schema: String,
        reached: Vec<(String, Option<String>)>,
    },
}

impl Declared {
    /// Declares the type of a root schema (and its definitions) unless it is declared already,
    /// and returns its name: `fallback`, made unique. Definitions are named for their key.
    fn declare(&mut self, schema: &Value, fallback: &str) -> String {
        // An equal root has equal definitions, declared with it.
        let root_json = schema.to_string();
        let budget = KEY_BUDGET_FACTOR.saturating_mul(root_json.len());
        let root_key = TypeKey::Root(root_json);
        if let Some(name) = self.by_key.get(&root_key) {
            return name.clone();
        }
        let root_name = self.names.unique(fallback);
        self.by_key.insert(root_key, root_name.clone());
        let defs = definitions_of(schema);
        let mut keys = defs
            .map(|defs| definition_keys(defs, budget))
            .unwrap_or_default();
        let mut def_names: HashMap<&str, String> = HashMap::new();
        let mut new_defs = Vec::new();
        for (def, def_schema) in defs.iter().flat_map(|defs| defs.iter()) {
            let key = keys.remove(def.as_str());
            if let Some(name) = key.as_ref().and_then(|key| self.by_key.get(key)) {
                def_names.insert(def.as_str(), name.clone());
                continue;
            }
            let name = self.names.unique(&pascal_case(def));
            if let Some(key) = key {
                self.by_key.insert(key, name.clone());
            }
            new_defs.push((name.clone(), def_schema));
            def_names.insert(def.as_str(), name);
        }
        let writer = Writer {
            defs,
            def_names: &def_names,
            root_name: &root_name,
        };
        for (type_name, schema) in std::iter::once((root_name.as_str(), schema)).chain(
            new_defs
                .iter()
                .map(|(name, schema)| (name.as_str(), *schema)),
        ) {
            push_doc(&mut self.types, description_of(schema), "");
            let body = writer.type_of(schema, 0, "");
            let _ = writeln!(self.types, "type {type_name} = {body};");
        }
        root_name
    }
}

/// A schema with more definitions than this shares none of them (they are declared for it
/// alone): comparing them costs the square of their number.
const MAX_SHARED_DEFINITIONS: usize = 256;
/// The keys of a schema's definitions hold at most this many times the schema's JSON; past
/// that, a definition is declared for its schema alone.
const KEY_BUDGET_FACTOR: usize = 8;

/// The keys of the definitions that may be the same type as another schema's. None when one
/// refers to the root (they are part of the root's type) or when there are too many; not one
/// nested too deep to see all its references, nor one that refers to such a one, nor one whose
/// key would pass `budget` bytes.
fn definition_keys(defs: &Map<String, Value>, mut budget: usize) -> HashMap<&str, TypeKey> {
    let mut keys = HashMap::new();
    if defs.len() > MAX_SHARED_DEFINITIONS {
        return keys;
    }
    // Each definition's JSON and the definitions it names (`None`: not all could be seen).
    let mut seen: HashMap<&str, (String, Option<Vec<&str>>)> = HashMap::new();
    for (name, schema) in defs {
        let named = references(schema);
        if named.as_ref().is_some_and(|named| named.contains(&"#")) {
            return keys;
        }
        let named = named.map(|named| named.into_iter().filter_map(local_definition).collect());
        seen.insert(name.as_str(), (schema.to_string(), named));
    }
    'definitions: for name in defs.keys() {
        let mut reached = std::collections::BTreeMap::new();
        let mut pending = vec![name.as_str()];
        while let Some(next) = pending.pop() {
            let Some((_, named)) = seen.get(next) else {
                continue;
            };
            let Some(named) = named else {
                continue 'definitions;
            };
            for &target in named {
                if !reached.contains_key(target) {
                    reached.insert(target, seen.get(target).map(|(json, _)| json));
                    pending.push(target);
                }
            }
        }
        let (json, _) = &seen[name.as_str()];
        let size = json.len()
            + reached
                .iter()
                .map(|(name, json)| name.len() + json.map_or(0, String::len))
                .sum::<usize>();
        let Some(left) = budget.checked_sub(size) else {
            continue;
        };
        budget = left;
        let reached = reached
            .into_iter()
            .map(|(name, json)| (name.to_owned(), json.cloned()))
            .collect();
        keys.insert(
            name.as_str(),
            TypeKey::Definition {
                name: name.clone(),
                schema: json.clone(),
                reached,
            },
        );
    }
    keys
}

/// How deep in a schema's JSON `$ref`s are looked for: deeper than a schema is written
/// ([`MAX_SCHEMA_DEPTH`] levels, at most two JSON levels each).
const REFERENCE_DEPTH: usize = 2 * (MAX_SCHEMA_DEPTH + 1) + 2;

/// The `$ref`s in a schema; `None` when it nests deeper than [`REFERENCE_DEPTH`].
fn references(schema: &Value) -> Option<Vec<&str>> {
    let mut found = Vec::new();
    let mut pending = vec![(schema, 0)];
    while let Some((value, depth)) = pending.pop() {
        if depth > REFERENCE_DEPTH {
            return None;
        }
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    found.push(reference.as_str());
                }
                pending.extend(object.values().map(|value| (value, depth + 1)));
            }
            Value::Array(items) => pending.extend(items.iter().map(|value| (value, depth + 1))),
            _ => {}
        }
    }
    Some(found)
}

/// The definition a local `$ref` names.
fn local_definition(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The `$defs` (or draft-07 `definitions`) at a schema's root, which its `$ref`s name.
fn definitions_of(schema: &Value) -> Option<&Map<String, Value>> {
    let root = schema.as_object()?;
    root.get("$defs")
        .or_else(|| root.get("definitions"))
        .and_then(Value::as_object)
}

/// A schema's description, or nothing.
fn description_of(schema: &Value) -> &str {
    schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Writes the types of one schema, whose `$ref`s name its `$defs`.
struct Writer<'a> {
    defs: Option<&'a Map<String, Value>>,
    /// The type name each definition is declared under.
    def_names: &'a HashMap<&'a str, String>,
    /// The type name of the schema's root, which `#` names (a recursive type).
    root_name: &'a str,
}

impl Writer<'_> {
    /// The TypeScript type of a schema: the schema's own set of values, or a wider one.
    fn type_of(&self, schema: &Value, depth: usize, indent: &str) -> String {
        if depth > MAX_SCHEMA_DEPTH {
            return "unknown".to_owned();
        }
        let object = match schema {
            Value::Bool(false) => return "never".to_owned(),
            Value::Object(object) => object,
            _ => return "unknown".to_owned(),
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            return self.reference(reference);
        }
        if let Some(constant) = object.get("const") {
            return literal(constant).unwrap_or_else(|| "unknown".to_owned());
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            let literals: Option<Vec<String>> = values.iter().map(literal).collect();
            return match literals {
                Some(literals) if !literals.is_empty() => literals.join(" | "),
                _ => "unknown".to_owned(),
            };
        }
        let mut parts = Vec::new();
        if let Some(base) = self.base_type(object, depth, indent) {
            parts.push(base);
        }
        for (keyword, separator) in [("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")] {
            if let Some(Value::Array(branches)) = object.get(keyword) {
                if branches.is_empty() {
                    continue;
                }
                let branches: Vec<String> = branches
                    .iter()
                    .map(|branch| format!("({})", self.type_of(branch, depth + 1, indent)))
                    .collect();
                parts.push(format!("({})", branches.join(separator)));
            }
        }
        match parts.len() {
            0 => "unknown".to_owned(),
            1 => parts.remove(0),
            _ => parts.join(" & "),
        }
    }

    /// The type `type` (and the keywords that imply one) describes; `None` when the schema
    /// leaves it open.
    fn base_type(&self, object: &Map<String, Value>, depth: usize, indent: &str) -> Option<String> {
        let types: Vec<&str> = match object.get("type") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ if object.contains_key("properties")
                || object.contains_key("additionalProperties")
                || object.contains_key("required") =>
            {
                vec!["object"]
            }
            _ if object.contains_key("items") || object.contains_key("prefixItems") => {
                vec!["array"]
            }
            _ => return None,
        };
        let written: Vec<String> = types
            .iter()
            .map(|kind| match *kind {
                "string" => "string".to_owned(),
                "number" | "integer" => "number".to_owned(),
                "boolean" => "boolean".to_owned(),
                "null" => "null".to_owned(),
                "array" => self.array(object, depth, indent),
                "object" => self.object(object, depth, indent),
                _ => "unknown".to_owned(),
            })
            .collect();
        if written.is_empty() {
            return Some("never".to_owned());
        }
        Some(if written.len() == 1 {
            written.into_iter().next().unwrap_or_default()
        } else {
            written.join(" | ")
        })
    }

    fn array(&self, object: &Map<String, Value>, depth: usize, indent: &str) -> String {
        let rest = match object.get("items") {
            None | Some(Value::Bool(true)) => Some("unknown".to_owned()),
            Some(Value::Bool(false)) => None,
            Some(items) if object.contains_key("prefixItems") || !items.is_array() => {
                Some(self.type_of(items, depth + 1, indent))
            }
            // Draft-07 tuple form: `items` as an array, the rest by `additionalItems`.
            Some(_) => match object.get("additionalItems") {
                Some(Value::Bool(false)) => None,
                Some(more) => Some(self.type_of(more, depth + 1, indent)),
                None => Some("unknown".to_owned()),
            },
        };
        let prefix = object
            .get("prefixItems")
            .or_else(|| object.get("items").filter(|items| items.is_array()))
            .and_then(Value::as_array);
        let count = |keyword: &str| {
            object
                .get(keyword)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        let (min_items, max_items) = (count("minItems").unwrap_or(0), count("maxItems"));
        match (prefix, rest) {
            (None, Some(rest)) => format!("Array<{rest}>"),
            (None, None) => "[]".to_owned(),
            (Some(prefix), rest) => {
                // Items past `minItems` may be missing; none past `maxItems` are there.
                let rest = rest.filter(|_| max_items.is_none_or(|max| max > prefix.len()));
                let mut elements: Vec<String> = prefix
                    .iter()
                    .enumerate()
                    .map(|(index, item)| {
                        let optional = if index < min_items { "" } else { "?" };
                        format!("({}){optional}", self.type_of(item, depth + 1, indent))
                    })
                    .collect();
                if let Some(rest) = rest {
                    elements.push(format!("...Array<{rest}>"));
                }
                format!("[{}]", elements.join(", "))
            }
        }
    }

    fn object(&self, object: &Map<String, Value>, depth: usize, indent: &str) -> String {
        let inner = format!("{indent}  ");
        let required: HashSet<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = object.get("properties").and_then(Value::as_object);
        let mut members = String::new();
        for (name, schema) in properties.into_iter().flatten() {
            push_doc(&mut members, description_of(schema), &inner);
            let optional = if required.contains(name.as_str()) {
                ""
            } else {
                "?"
            };
            let _ = writeln!(
                members,
                "{inner}{}{optional}: {};",
                property_name(name),
                self.type_of(schema, depth + 1, &inner)
            );
        }
        let has_properties = properties.is_some_and(|properties| !properties.is_empty());
        let others = match object.get("additionalProperties") {
            // With named properties, other keys may hold anything TypeScript would have to
            // reconcile with each of them: `unknown` is the only sound index type.
            _ if object.contains_key("patternProperties") => Some("unknown".to_owned()),
            Some(Value::Bool(false)) => None,
            Some(_) if has_properties => Some("unknown".to_owned()),
            Some(schema) => Some(self.type_of(schema, depth + 1, &inner)),
            None if has_properties => None,
            None => Some("unknown".to_owned()),
        };
        if let Some(others) = others {
            let _ = writeln!(members, "{inner}[key: string]: {others};");
        }
        if members.is_empty() {
            return "{}".to_owned();
        }
        format!("{{\n{members}{indent}}}")
    }

    fn reference(&self, reference: &str) -> String {
        if reference == "#" {
            return self.root_name.to_owned();
        }
        local_definition(reference)
            .and_then(|name| self.def_names.get(name))
            .filter(|_| self.defs.is_some())
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned())
    }
}

/// A JSON literal as a TypeScript literal type; `None` for objects and arrays.
fn literal(value: &Value) -> Option<String> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => Some(value.to_string()),
        Value::Number(number) => Some(if number.as_f64().is_some_and(f64::is_sign_negative) {
            format!("({number})")
        } else {
            number.to_string()
        }),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// A property or member name: as is when it is an identifier, quoted otherwise.
fn property_name(name: &str) -> String {
    if is_identifier(name) {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// `read_file`, `read-file`, `read.file` → `ReadFile`; a leading digit gets a `T`.
fn pascal_case(name: &str) -> String {
    let mut out = String::new();
    for word in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// Type names handed out so far, so two types never share one, and none is a global type of
/// TypeScript's standard library (which a declaration of the same name would clash with).
struct TypeNames(HashSet<String>);

/// The global types of TypeScript's standard library (ES2022, with its decorator and iterator
/// types): a definition of the same name would clash with one.
const GLOBAL_TYPES: &[&str] = &[
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "ArrayBufferConstructor",
    "ArrayBufferLike",
    "ArrayBufferTypes",
    "ArrayBufferView",
    "ArrayConstructor",
    "ArrayLike",
    "AsyncGenerator",
    "AsyncGeneratorFunction",
    "AsyncGeneratorFunctionConstructor",
    "AsyncIterable",
    "AsyncIterableIterator",
    "AsyncIterator",
    "Atomics",
    "Awaited",
    "BigInt",
    "BigInt64Array",
    "BigInt64ArrayConstructor",
    "BigIntConstructor",
    "BigIntToLocaleStringOptions",
    "BigUint64Array",
    "BigUint64ArrayConstructor",
    "Boolean",
    "BooleanConstructor",
    "CallableFunction",
    "Capitalize",
    "ClassAccessorDecoratorContext",
    "ClassAccessorDecoratorResult",
    "ClassAccessorDecoratorTarget",
    "ClassDecorator",
    "ClassDecoratorContext",
    "ClassFieldDecoratorContext",
    "ClassGetterDecoratorContext",
    "ClassMemberDecoratorContext",
    "ClassMethodDecoratorContext",
    "ClassSetterDecoratorContext",
    "ConcatArray",
    "ConstructorParameters",
    "DataView",
    "DataViewConstructor",
    "Date",
    "DateConstructor",
    "DecoratorContext",
    "DecoratorMetadata",
    "DecoratorMetadataObject",
    "Error",
    "ErrorConstructor",
    "ErrorOptions",
    "EvalError",
    "EvalErrorConstructor",
    "Exclude",
    "Extract",
    "FinalizationRegistry",
    "FinalizationRegistryConstructor",
    "Float32Array",
    "Float32ArrayConstructor",
    "Float64Array",
    "Float64ArrayConstructor",
    "Function",
    "FunctionConstructor",
    "Generator",
    "GeneratorFunction",
    "GeneratorFunctionConstructor",
    "IArguments",
    "ImportAssertions",
    "ImportAttributes",
    "ImportCallOptions",
    "ImportMeta",
    "InstanceType",
    "Int16Array",
    "Int16ArrayConstructor",
    "Int32Array",
    "Int32ArrayConstructor",
    "Int8Array",
    "Int8ArrayConstructor",
    "Intl",
    "Iterable",
    "IterableIterator",
    "Iterator",
    "IteratorObject",
    "IteratorResult",
    "IteratorReturnResult",
    "IteratorYieldResult",
    "JSON",
    "Lowercase",
    "Map",
    "MapConstructor",
    "Math",
    "MethodDecorator",
    "NewableFunction",
    "NoInfer",
    "NonNullable",
    "Number",
    "NumberConstructor",
    "Object",
    "ObjectConstructor",
    "Omit",
    "OmitThisParameter",
    "ParameterDecorator",
    "Parameters",
    "Partial",
    "Pick",
    "Promise",
    "PromiseConstructor",
    "PromiseConstructorLike",
    "PromiseFulfilledResult",
    "PromiseLike",
    "PromiseRejectedResult",
    "PromiseSettledResult",
    "PropertyDecorator",
    "PropertyDescriptor",
    "PropertyDescriptorMap",
    "PropertyKey",
    "Proxy",
    "ProxyConstructor",
    "ProxyHandler",
    "RangeError",
    "RangeErrorConstructor",
    "Readonly",
    "ReadonlyArray",
    "ReadonlyMap",
    "ReadonlySet",
    "Record",
    "ReferenceError",
    "ReferenceErrorConstructor",
    "Reflect",
    "RegExp",
    "RegExpConstructor",
    "RegExpExecArray",
    "RegExpIndicesArray",
    "RegExpMatchArray",
    "Required",
    "ReturnType",
    "Set",
    "SetConstructor",
    "SharedArrayBuffer",
    "SharedArrayBufferConstructor",
    "String",
    "StringConstructor",
    "Symbol",
    "SymbolConstructor",
    "SyntaxError",
    "SyntaxErrorConstructor",
    "TemplateStringsArray",
    "ThisParameterType",
    "ThisType",
    "TypeError",
    "TypeErrorConstructor",
    "TypedPropertyDescriptor",
    "URIError",
    "URIErrorConstructor",
    "Uint16Array",
    "Uint16ArrayConstructor",
    "Uint32Array",
    "Uint32ArrayConstructor",
    "Uint8Array",
    "Uint8ArrayConstructor",
    "Uint8ClampedArray",
    "Uint8ClampedArrayConstructor",
    "Uncapitalize",
    "Uppercase",
    "WeakKey",
    "WeakKeyTypes",
    "WeakMap",
    "WeakMapConstructor",
    "WeakRef",
    "WeakRefConstructor",
    "WeakSet",
    "WeakSetConstructor",
];

impl Default for TypeNames {
    fn default() -> Self {
        Self(GLOBAL_TYPES.iter().map(|name| (*name).to_owned()).collect())
    }
}

impl TypeNames {
    fn unique(&mut self, stem: &str) -> String {
        let mut candidate = stem.to_owned();
        let mut n = 2;
        while !self.0.insert(candidate.clone()) {
            candidate = format!("{stem}{n}");
            n += 1;
        }
        candidate
    }
}

/// A `JSDoc` comment, on one line when the text is one line; `*/` in the text cannot end it.
fn push_doc(out: &mut String, text: &str, indent: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let text = text.replace("*/", "*\\/");
    if !text.contains('\n') {
        let _ = writeln!(out, "{indent}/** {text} */");
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in text.lines() {
        let _ = writeln!(out, "{indent} * {}", line.trim_end());
    }
    let _ = writeln!(out, "{indent} */");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn type_of(schema: &Value) -> String {
        let defs = definitions_of(schema);
        let def_names: HashMap<&str, String> = defs
            .iter()
            .flat_map(|defs| defs.keys())
            .map(|def| (def.as_str(), format!("T_{def}")))
            .collect();
        let writer = Writer {
            defs,
            def_names: &def_names,
            root_name: "T",
        };
        writer.type_of(schema, 0, "")
    }

    #[test]
    fn primitive_and_composite_types() {
        assert_eq!(type_of(&json!({"type": "string"})), "string");
        assert_eq!(
            type_of(&json!({"type": ["integer", "null"]})),
            "number | null"
        );
        assert_eq!(type_of(&json!({"enum": ["a", "b"]})), "\"a\" | \"b\"");
        assert_eq!(type_of(&json!({"const": -1})), "(-1)");
        assert_eq!(
            type_of(&json!({"type": "array", "items": {"type": "boolean"}})),
            "Array<boolean>"
        );
        assert_eq!(
            type_of(&json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            "((string) | (null))"
        );
        assert_eq!(
            type_of(
                &json!({"type": "object", "properties": {"a b": {"type": "string"}}, "required": ["a b"]})
            ),
            "{\n  \"a b\": string;\n}"
        );
    }

    #[test]
    fn what_cannot_be_written_is_unknown_never_wrong() {
        assert_eq!(
            type_of(&json!({"$ref": "https://example.com/schema"})),
            "unknown"
        );
        assert_eq!(type_of(&json!({"$ref": "#/$defs/Missing"})), "unknown");
        assert_eq!(type_of(&json!({"enum": [{"a": 1}]})), "unknown");
        assert_eq!(type_of(&json!({"not": {"type": "string"}})), "unknown");
        assert_eq!(
            type_of(&json!({"type": "string", "pattern": "^a"})),
            "string"
        );
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"type": "array", "items": deep});
        }
        assert!(type_of(&deep).contains("unknown"));
    }

    #[test]
    fn open_objects_keep_an_unknown_index() {
        assert_eq!(
            type_of(&json!({"type": "object"})),
            "{\n  [key: string]: unknown;\n}"
        );
        assert_eq!(
            type_of(&json!({"type": "object", "additionalProperties": {"type": "number"}})),
            "{\n  [key: string]: number;\n}"
        );
    }

    /// A tool whose schemas are given.
    fn remote(name: &str, input: Value, output: Value) -> toolprism::tool::ToolDef {
        toolprism::tool::ToolDef::builder(name)
            .description("Remote.")
            .input_schema(input)
            .output_schema(output)
            .presented_handler(|_: Value, _: toolprism::ToolContext| async {
                Ok::<_, toolprism::ToolError>(toolprism::tool::Presented::new(
                    Value::Null,
                    Vec::new(),
                ))
            })
            .build()
    }

    #[test]
    fn a_type_two_tools_share_is_declared_once() {
        let entry = json!({"type": "object", "description": "One entry.", "properties": {"name": {"type": "string"}}});
        let listing = json!({
            "type": "object",
            "properties": {"entries": {"type": "array", "items": {"$ref": "#/$defs/Entry"}}},
            "$defs": {"Entry": entry},
        });
        let other_entry = json!({
            "type": "object",
            "properties": {"entry": {"$ref": "#/$defs/Entry"}, "map": {"$ref": "#/$defs/Map"}},
            "$defs": {"Entry": {"type": "string"}, "Map": {"type": "object"}},
        });
        let registry = toolprism::Registry::builder()
            .tool(remote("first", json!({"type": "object"}), listing.clone()))
            .tool(remote("second", json!({"type": "object"}), listing))
            .tool(remote("third", other_entry, json!({"type": "number"})))
            .build()
            .unwrap();
        let snapshot = registry.snapshot();
        let text = declarations(snapshot.definitions());
        assert_eq!(text.matches("One entry.").count(), 1, "{text}");
        assert!(
            text.contains("first(args: FirstArgs): Promise<FirstValue>;"),
            "{text}"
        );
        assert!(
            text.contains("second(args: FirstArgs): Promise<FirstValue>;"),
            "{text}"
        );
        assert!(text.contains("entries?: Array<Entry>;"), "{text}");
        // Another `Entry`, another type; and no type takes a global's name.
        assert!(text.contains("type Entry2 = string;"), "{text}");
        assert!(text.contains("entry?: Entry2;"), "{text}");
        assert!(text.contains("map?: Map2;"), "{text}");
        assert!(
            text.contains("third(args: ThirdArgs): Promise<ThirdValue>;"),
            "{text}"
        );
    }

    #[test]
    fn a_definition_is_shared_only_when_all_it_refers_to_is_seen() {
        let defs = |value: Value| value.as_object().unwrap().clone();
        let plain = defs(json!({"A": {"$ref": "#/$defs/B"}, "B": {"type": "string"}}));
        let keys = definition_keys(&plain, usize::MAX);
        assert_eq!(keys.len(), 2);
        // A definition that refers to the root is part of the root's type: none is shared.
        let rooted = defs(json!({"A": {"type": "string"}, "B": {"items": {"$ref": "#"}}}));
        assert!(definition_keys(&rooted, usize::MAX).is_empty());
        // One nested past what is looked at, and one that refers to it, are not shared.
        let mut deep = json!({"$ref": "#"});
        for _ in 0..REFERENCE_DEPTH {
            deep = json!({"items": deep});
        }
        let hidden = defs(json!({"Deep": deep, "Near": {"$ref": "#/$defs/Deep"}, "Other": {}}));
        let keys = definition_keys(&hidden, usize::MAX);
        assert!(
            keys.contains_key("Other") && keys.len() == 1,
            "{:?}",
            keys.keys()
        );
        // Too many to compare, or keys past the budget: not shared.
        let many: Map<String, Value> = (0..=MAX_SHARED_DEFINITIONS)
            .map(|at| (format!("D{at}"), json!({"type": "string"})))
            .collect();
        assert!(definition_keys(&many, usize::MAX).is_empty());
        assert!(definition_keys(&plain, 10).is_empty());
    }

    #[test]
    fn names_are_unique_and_identifiers() {
        assert_eq!(pascal_case("read_file"), "ReadFile");
        assert_eq!(pascal_case("9lives"), "T9lives");
        let mut names = TypeNames::default();
        assert_eq!(names.unique("ReadFile"), "ReadFile");
        assert_eq!(names.unique("ReadFile"), "ReadFile2");
        assert_eq!(property_name("my.tool"), "\"my.tool\"");
        assert_eq!(property_name("read"), "read");
    }
}
