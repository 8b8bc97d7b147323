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
//! - the whole document (data keywords such as `const`, `enum`, `default` and `examples`
//!   included) nests at most [`MAX_DEPTH`] levels deep and has at most [`MAX_SCHEMA_NODES`]
//!   nodes;
//! - validating against it applies at most [`MAX_EVALUATIONS`] subschemas to any one node of
//!   any instance (see [`cost`](self#the-cost-of-validation) below), and no cycle of `$ref`s
//!   stays on one instance node forever;
//! - every `pattern` (and `patternProperties` key) compiles under the `regex` crate's syntax
//!   (no look-around or back-references), which keeps matching linear in the input, whatever
//!   a model sends.
//!
//! Input schemas must in addition describe JSON objects only: `"type": "object"` at the root,
//! or a `oneOf`/`anyOf` whose every branch does (an internally tagged enum), or an `allOf` or
//! `$ref` to one that does — since every provider passes tool arguments as an object.
//!
//! # The cost of validation
//!
//! A schema of a kilobyte can make validation exponential: `anyOf` over the same definition
//! twice, forty levels down, applies 2⁴⁰ subschemas to one value. Registration counts, for
//! every depth of instance up to [`MAX_DEPTH`], how many subschema applications can land on one
//! instance node — taking the worst property name and array index at every step, so the count
//! bounds what any validator does — and refuses the schema when that exceeds
//! [`MAX_EVALUATIONS`]. For every accepted schema, validating a value of `n` nodes therefore
//! applies at most `MAX_EVALUATIONS × n` subschemas, each of which checks its own keywords in
//! time linear in the node (patterns are linear-time; `uniqueItems` hashes).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

mod cost;
mod inline;
mod normalize;
mod plan;
mod refs;
mod roundtrip;

pub use cost::MAX_EVALUATIONS;
pub use inline::{InlineError, inline_refs};
pub(crate) use normalize::{coerce_integral_floats, strip_refused_nulls};
pub(crate) use plan::{Expect, ExpectItems, ExpectMembers, Plan};
pub(crate) use roundtrip::serialized_gaps;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, PatternOptions, Validator};
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value, json};

use crate::depth::{self, MAX_DEPTH};
use crate::text::truncate;

use cost::CostError;
use refs::resolve;
pub(crate) use refs::resolve as resolve_local;

/// The most nodes (objects, arrays and scalars, data included) a schema may have.
pub const MAX_SCHEMA_NODES: usize = 100_000;

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
    /// The schema nests deeper than [`MAX_DEPTH`].
    #[error("the schema nests deeper than {MAX_DEPTH} levels of arrays and objects (at `{at}`)")]
    TooDeep {
        /// JSON Pointer to the first array or object past the limit.
        at: String,
    },
    /// The schema has more than [`MAX_SCHEMA_NODES`] nodes.
    #[error("the schema has {nodes} nodes, more than the {MAX_SCHEMA_NODES} allowed")]
    TooLarge {
        /// How many nodes it has.
        nodes: usize,
    },
    /// Validating against the schema could apply more than [`MAX_EVALUATIONS`] subschemas to
    /// one node of a value.
    #[error(
        "validating against it could apply {evaluations} subschemas to a single value at depth {depth}, more than the {MAX_EVALUATIONS} allowed: its `$ref`s, `allOf`, `anyOf` or `oneOf` fan out"
    )]
    TooCostly {
        /// Subschema applications on one instance node (saturating).
        evaluations: u64,
        /// The instance depth where the bound was first exceeded.
        depth: usize,
    },
    /// `$ref`s that lead back to themselves without moving into the instance: validation
    /// would never end.
    #[error(
        "the `$ref`s through `{at}` form a cycle that never moves into the value, so validation would never end"
    )]
    ReferenceCycle {
        /// JSON Pointer to a schema object on the cycle.
        at: String,
    },
    /// The schema's references are too intricate to bound within registration's own budget.
    #[error("its `$ref`s are too intricate to bound the cost of validating against it")]
    TooIntricate,
    /// A `pattern` (or a `patternProperties` key) that does not compile.
    #[error("the regular expression `{pattern}` at `{at}` is refused: {reason}")]
    InvalidPattern {
        /// JSON Pointer to the `pattern` keyword or the `patternProperties` key.
        at: String,
        /// The pattern, cut to a readable length.
        pattern: String,
        /// Why.
        reason: String,
    },
    /// An input schema that does not describe objects only.
    #[error(
        "an input schema must describe JSON objects only (`\"type\": \"object\"` at its root, or a `oneOf`/`anyOf` whose every branch has it), since tool arguments are a JSON object"
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
    arguments_schema(
        generator(Direction::Deserialize)
            .into_root_schema_for::<T>()
            .to_value(),
    )
}

/// Which way a derived schema describes a type.
#[derive(Clone, Copy)]
enum Direction {
    Deserialize,
    Serialize,
}

/// A schemars generator for draft 2020-12. Apart from it, the functions that derive a schema
/// are generic only in the one call that needs the type: each tool's crate gets a copy of that
/// call, not of this.
fn generator(direction: Direction) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12();
    match direction {
        Direction::Deserialize => settings.for_deserialize(),
        Direction::Serialize => settings.for_serialize(),
    }
    .into_generator()
}

/// A generated schema as a tool's input schema: object-rooted, numbers bounded, no root title.
fn arguments_schema(mut schema: Value) -> Value {
    if let Value::Object(map) = &schema
        && map.keys().all(|key| key.starts_with('$') || key == "title")
    {
        let mut object = map.clone();
        object.insert("type".into(), "object".into());
        schema = Value::Object(object);
    } else if schema == Value::Bool(true) {
        schema = json!({"type": "object"});
    }
    bound_numbers(&mut schema, 0);
    without_root_title(schema)
}

/// A derived schema without the `title` schemars gives its root: the Rust type's name, which
/// tells a model nothing and lengthens every listing (named subschemas keep their `$defs`
/// keys).
fn without_root_title(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        map.remove("title");
    }
    schema
}

/// Adds the range of each Rust number type (which schemars names in `format` only) as
/// `minimum`/`maximum`, so that a value the type cannot hold — `u64::MAX` for an `i32`,
/// `1e39` for an `f32`, which serde would turn into infinity — is refused by validation,
/// naming the field and the bound, before deserialization.
fn bound_numbers(schema: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match schema {
        Value::Object(map) => {
            if let Some((minimum, maximum)) = map
                .get("format")
                .and_then(Value::as_str)
                .and_then(number_range)
            {
                map.entry("minimum").or_insert(minimum);
                map.entry("maximum").or_insert(maximum);
            }
            for (key, value) in map.iter_mut() {
                if !DATA_KEYWORDS.contains(&key.as_str()) {
                    bound_numbers(value, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                bound_numbers(item, depth + 1);
            }
        }
        _ => {}
    }
}

/// The range a schemars number `format` stands for, as JSON numbers serde reads exactly.
///
/// Only ranges narrower than what a JSON integer carries anyway: for 64-bit and wider integers
/// serde refuses a value that does not fit when it deserializes the arguments (naming the
/// field), and nineteen-digit bounds would only lengthen every listing a model reads.
/// (schemars gives unsigned types their `minimum` of 0 itself.)
fn number_range(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int8" => (json!(i8::MIN), json!(i8::MAX)),
        "int16" => (json!(i16::MIN), json!(i16::MAX)),
        "int32" => (json!(i32::MIN), json!(i32::MAX)),
        "uint8" => (json!(0), json!(u8::MAX)),
        "uint16" => (json!(0), json!(u16::MAX)),
        "uint32" => (json!(0), json!(u32::MAX)),
        "float" => (json!(-f64::from(f32::MAX)), json!(f64::from(f32::MAX))),
        _ => return None,
    })
}

/// The JSON Schema (draft 2020-12) of what `T` serializes to: the schema of a tool's value.
///
/// ```
/// # use toolprism::schema::output_schema_for;
/// assert_eq!(output_schema_for::<Vec<u8>>()["type"], "array");
/// assert_eq!(output_schema_for::<()>()["type"], "null");
/// ```
pub fn output_schema_for<T: JsonSchema + ?Sized>() -> Value {
    without_root_title(
        generator(Direction::Serialize)
            .into_root_schema_for::<T>()
            .to_value(),
    )
}

/// The JSON Schema of what `T` deserializes from, as generated (no object rule, no added
/// ranges): what the value of a tool must serialize to for `render` and `meta` to see it.
pub(crate) fn deserialize_schema_for<T: JsonSchema + ?Sized>() -> Value {
    generator(Direction::Deserialize)
        .into_root_schema_for::<T>()
        .to_value()
}

static COMPILED: AtomicU64 = AtomicU64::new(0);

/// How many schemas this process has compiled into validators so far: a diagnostic that shows
/// none is compiled per call, per snapshot or per listing — only at registration.
pub fn compiled_schemas() -> u64 {
    COMPILED.load(Ordering::Relaxed)
}

/// A compiled schema: the validator, and whether the schema is draft-07 (whose `$ref` hides
/// its siblings).
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) validator: Validator,
    pub(crate) draft_07: bool,
    /// For a schema made of the keywords serde-derived types use: what the lossless snapshot
    /// checks while it builds a value, or what arguments are checked against first, so that
    /// the validator walks only the values the plan doubts.
    pub(crate) plan: Option<Plan>,
}

/// Checks `schema` against the supported subset and compiles it. Done once per schema, at
/// registration. Every check that walks the schema runs after its depth and size are known to
/// be within the limits, and the cost bound runs before anything that could expand it.
/// Makes the checks registration makes of a tool's input schema (depth, size, draft, local
/// references only, validation cost, patterns), and compiles it: `Ok` when a tool with this
/// input schema registers. For schemas from elsewhere — an MCP server's — before relying on
/// them.
///
/// ```
/// use serde_json::json;
/// use toolprism::schema::{check_input_schema, check_output_schema};
///
/// assert!(check_input_schema(&json!({"type": "object"})).is_ok());
/// assert!(check_input_schema(&json!({"$ref": "https://example.com/s.json"})).is_err());
/// assert!(check_output_schema(&json!({"type": "string", "pattern": "(?=a)"})).is_err());
/// ```
pub fn check_input_schema(schema: &Value) -> Result<(), SchemaError> {
    compile(schema, SchemaRole::Input).map(drop)
}

/// [`check_input_schema`], for an output schema.
pub fn check_output_schema(schema: &Value) -> Result<(), SchemaError> {
    compile(schema, SchemaRole::Output).map(drop)
}

pub(crate) fn compile(schema: &Value, role: SchemaRole) -> Result<Compiled, SchemaError> {
    COMPILED.fetch_add(1, Ordering::Relaxed);
    let shape = depth::inspect(schema).map_err(|error| SchemaError::TooDeep { at: error.at })?;
    if shape.nodes > MAX_SCHEMA_NODES {
        return Err(SchemaError::TooLarge { nodes: shape.nodes });
    }
    let draft = check_supported(schema)?;
    cost::evaluations_per_node(schema).map_err(|error| match error {
        CostError::TooCostly { evaluations, depth } => {
            SchemaError::TooCostly { evaluations, depth }
        }
        CostError::Cycle { at } => SchemaError::ReferenceCycle { at },
        CostError::TooIntricate => SchemaError::TooIntricate,
    })?;
    if role == SchemaRole::Input && !describes_objects_only(schema, schema, 0) {
        return Err(SchemaError::InputNotObject);
    }
    // Validate against the schema with its references inlined, when that is finite and not
    // much bigger: a reference hop per value adds up. Otherwise (recursive types, shared
    // definitions that multiply) against the schema as it is.
    let budget = 4 * shape.nodes + 1_024;
    let draft_07 = draft == Draft::Draft7;
    let inlined = inline_refs(schema, draft_07, budget).ok();
    let validator = jsonschema::options()
        .with_draft(draft)
        .offline()
        .with_pattern_options(PatternOptions::regex())
        .should_validate_formats(true)
        .build(inlined.as_ref().unwrap_or(schema))
        .map_err(|error| refused(&error))?;
    let plan = Plan::of(inlined.as_ref().unwrap_or(schema));
    // `inline_refs` refuses a result past the depth limit, so the inlined copy drops normally.
    drop(inlined);
    Ok(Compiled {
        validator,
        draft_07,
        plan,
    })
}

/// Why the validator refused a schema, with where in it.
fn refused(error: &jsonschema::ValidationError<'_>) -> SchemaError {
    let at = error.instance_path().to_string();
    if let ValidationErrorKind::Format { format } = error.kind()
        && format == "regex"
    {
        let pattern = match error.instance().as_ref() {
            Value::String(pattern) => pattern.clone(),
            // A `patternProperties` key: the last segment of the pointer.
            _ => at.rsplit('/').next().unwrap_or_default().to_owned(),
        };
        return SchemaError::InvalidPattern {
            reason: pattern_problem(&pattern),
            pattern: truncate(&pattern, MAX_ECHOED_STRING),
            at,
        };
    }
    SchemaError::Invalid {
        message: format!(
            "{} (at `{}`)",
            truncate(&error.to_string(), MAX_VIOLATION_MESSAGE),
            if at.is_empty() { "the root" } else { &at }
        ),
    }
}

/// What is wrong with a pattern the `regex` crate refused, in words a schema author can act on.
fn pattern_problem(pattern: &str) -> String {
    const ENGINE: &str = "patterns run on the `regex` crate, whose matching stays linear in the input whatever the pattern";
    if ["(?=", "(?!", "(?<=", "(?<!"]
        .iter()
        .any(|look| pattern.contains(look))
    {
        return format!(
            "look-around (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`) is not supported: {ENGINE}"
        );
    }
    let bytes = pattern.as_bytes();
    let back_reference = bytes.windows(2).any(|pair| {
        pair[0] == b'\\' && (pair[1].is_ascii_digit() && pair[1] != b'0' || pair[1] == b'k')
    });
    if back_reference {
        return format!("back-references (`\\1`, `\\k<name>`) are not supported: {ENGINE}");
    }
    format!("it is not a valid regular expression ({ENGINE})")
}

/// Whether a schema can only accept JSON objects: an object type, or a union of such.
/// `hops` bounds the references followed; the cost bound, checked before, bounds the fan-out.
fn describes_objects_only(node: &Value, root: &Value, hops: usize) -> bool {
    let Value::Object(map) = node else {
        return false;
    };
    if hops > MAX_DEPTH {
        return false;
    }
    let is_object =
        |ty: &Value| ty == "object" || ty.as_array().is_some_and(|t| t == &[json!("object")]);
    if map.get("type").is_some_and(is_object) {
        return true;
    }
    let only = |member: &Value| describes_objects_only(member, root, hops + 1);
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| resolve(root, reference))
        && only(target)
    {
        return true;
    }
    if map
        .get("allOf")
        .and_then(Value::as_array)
        .is_some_and(|members| members.iter().any(only))
    {
        return true;
    }
    ["oneOf", "anyOf"].iter().any(|key| {
        map.get(*key)
            .and_then(Value::as_array)
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(only))
    })
}

fn check_supported(schema: &Value) -> Result<Draft, SchemaError> {
    let draft = match schema {
        Value::Bool(_) => return Ok(Draft::Draft202012),
        Value::Object(map) => match map.get("$schema") {
            None => Draft::Draft202012,
            Some(Value::String(uri)) => {
                draft_of(uri).ok_or_else(|| SchemaError::UnsupportedDraft {
                    uri: truncate(uri, MAX_ECHOED_STRING),
                })?
            }
            Some(other) => {
                return Err(SchemaError::UnsupportedDraft {
                    uri: truncate(&other.to_string(), MAX_ECHOED_STRING),
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
    walk(schema, &mut pointer)?;
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

/// Keywords that annotate rather than constrain.
const ANNOTATIONS: [&str; 8] = [
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Checks the keywords of the subset. Recursive, but only over a document already known to be
/// at most [`MAX_DEPTH`] deep.
fn walk(node: &Value, pointer: &mut String) -> Result<(), SchemaError> {
    match node {
        Value::Object(map) => {
            let at = |pointer: &str| truncate(pointer, MAX_VIOLATION_MESSAGE);
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) if !reference.starts_with('#') => {
                        return Err(SchemaError::NonLocalRef {
                            at: at(pointer),
                            reference: truncate(reference, MAX_ECHOED_STRING),
                        });
                    }
                    ("$dynamicRef" | "$recursiveRef", Value::String(_)) => {
                        return Err(SchemaError::UnsupportedKeyword {
                            at: at(pointer),
                            keyword: key.clone(),
                        });
                    }
                    ("$id", Value::String(_)) if !pointer.is_empty() => {
                        return Err(SchemaError::UnsupportedKeyword {
                            at: at(pointer),
                            keyword: key.clone(),
                        });
                    }
                    _ if DATA_KEYWORDS.contains(&key.as_str()) => continue,
                    _ => {}
                }
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&refs::escape(key));
                walk(value, pointer)?;
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                let _ = write!(pointer, "/{index}");
                walk(item, pointer)?;
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

/// Explains why `instance` fails `validator`, one line per violation — where, which keyword,
/// what — bounded in length whatever the instance holds.
pub(crate) fn describe_violations(validator: &Validator, instance: &Value) -> String {
    describe_violations_of(validator, None, instance)
}

/// [`describe_violations`], each violation followed by what was expected there (the part of
/// `schema` holding the keyword it broke) and what was given, each at most
/// [`MAX_QUOTED_BYTES`] of compact JSON: what a model (or a repair hook) needs to mend a call.
pub(crate) fn describe_input_violations(
    validator: &Validator,
    schema: &Value,
    instance: &Value,
) -> String {
    describe_violations_of(validator, Some(schema), instance)
}

fn describe_violations_of(
    validator: &Validator,
    schema: Option<&Value>,
    instance: &Value,
) -> String {
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
        let mut line = format!(
            "- at `{}` (`{}`): {}",
            truncate(at, MAX_VIOLATION_MESSAGE),
            error.kind().keyword(),
            truncate(&message, MAX_VIOLATION_MESSAGE)
        );
        if let Some(schema) = schema {
            if let Some(expected) = keyword_holder(schema, error.evaluation_path().as_str()) {
                let _ = write!(line, "\n  expected: {}", quoted(expected));
            }
            let _ = write!(line, "\n  given: {}", quoted(error.instance()));
        }
        listed.push(line);
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

/// The part of `schema` holding the keyword at `path` (an evaluation path, through `$ref`s:
/// followed where the schema has them, passed over where they were inlined). `None` when the
/// path leads nowhere or its keyword is not there: an advertised schema may differ from the one
/// validated against, and a fragment that does not hold the keyword would mislead.
fn keyword_holder<'a>(schema: &'a Value, path: &str) -> Option<&'a Value> {
    let segments: Vec<String> = path
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (keyword, walk) = segments.split_last()?;
    let mut at = schema;
    for segment in walk {
        at = match (segment.as_str(), at) {
            ("$ref", Value::Object(_)) => through_refs(schema, at),
            (key, Value::Object(map)) => {
                map.get(key).or_else(|| through_refs(schema, at).get(key))?
            }
            (index, Value::Array(items)) => items.get(index.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    [at, through_refs(schema, at)]
        .into_iter()
        .find(|holder| holder.get(keyword.as_str()).is_some())
}

/// `at`, or what its `$ref` names (the validator may have had the reference inlined), a few
/// hops at most.
fn through_refs<'a>(schema: &'a Value, mut at: &'a Value) -> &'a Value {
    for _ in 0..16 {
        match at
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| resolve(schema, reference))
        {
            Some(target) => at = target,
            None => break,
        }
    }
    at
}

/// The most bytes of a schema fragment or a value quoted in an input error.
pub const MAX_QUOTED_BYTES: usize = 200;

/// A value as compact JSON, cut at [`MAX_QUOTED_BYTES`] (with `…`): written only that far,
/// however large the value.
fn quoted(value: &Value) -> String {
    /// Takes bytes until it is full, then refuses more, which ends the writing.
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let room = (MAX_QUOTED_BYTES + 1).saturating_sub(self.0.len());
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let taken = bytes.len().min(room);
            self.0.extend_from_slice(&bytes[..taken]);
            Ok(taken)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded(Vec::new());
    let complete = serde_json::to_writer(&mut out, value).is_ok();
    let text = String::from_utf8_lossy(&out.0).into_owned();
    if complete && text.len() <= MAX_QUOTED_BYTES {
        text
    } else {
        format!("{}…", crate::text::head(&text, MAX_QUOTED_BYTES))
    }
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
        let validator = compile(&local, SchemaRole::Input).unwrap().validator;
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
        let lookaround = json!({"properties": {"a": {"type": "string", "pattern": "(?=a)b"}}});
        let Err(SchemaError::InvalidPattern {
            at,
            pattern,
            reason,
        }) = compile(&lookaround, SchemaRole::Output)
        else {
            panic!("a look-ahead pattern compiled");
        };
        assert_eq!(
            (at.as_str(), pattern.as_str()),
            ("/properties/a/pattern", "(?=a)b")
        );
        assert!(reason.starts_with("look-around"), "{reason}");
        let keyed = json!({"patternProperties": {"(a)\\1": {}}});
        let Err(SchemaError::InvalidPattern { at, reason, .. }) =
            compile(&keyed, SchemaRole::Output)
        else {
            panic!("a back-reference compiled");
        };
        assert_eq!(at, "/patternProperties/(a)\\1");
        assert!(reason.starts_with("back-references"), "{reason}");
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
        assert!(matches!(
            compile(&schema, SchemaRole::Output),
            Err(SchemaError::TooDeep { .. })
        ));
        depth::dispose(schema);
    }

    #[test]
    fn data_keywords_count_towards_the_depth_limit() {
        for keyword in DATA_KEYWORDS {
            let mut data = json!(1);
            for _ in 0..MAX_DEPTH {
                data = json!([data]);
            }
            let schema = json!({"type": "array", keyword: data});
            assert!(
                matches!(
                    compile(&schema, SchemaRole::Output),
                    Err(SchemaError::TooDeep { .. })
                ),
                "{keyword}"
            );
        }
    }

    #[test]
    fn input_schemas_may_be_unions_of_objects() {
        let tagged = json!({"oneOf": [
            {"type": "object", "properties": {"action": {"const": "read"}}},
            {"$ref": "#/$defs/Write"}
        ], "$defs": {"Write": {"type": "object", "properties": {"action": {"const": "write"}}}}});
        assert!(compile(&tagged, SchemaRole::Input).is_ok());
        let mixed = json!({"anyOf": [{"type": "object"}, {"type": "string"}]});
        assert_eq!(
            compile(&mixed, SchemaRole::Input).unwrap_err(),
            SchemaError::InputNotObject
        );
    }

    #[test]
    fn generated_input_schemas_carry_the_range_of_each_number_type() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Numbers {
            small: i32,
            count: u64,
            ratio: f32,
            #[schemars(range(max = 10))]
            capped: u32,
        }
        let schema = input_schema_for::<Numbers>();
        let properties = &schema["properties"];
        assert_eq!(properties["small"]["maximum"], json!(i32::MAX));
        assert_eq!(properties["count"]["minimum"], json!(0));
        assert_eq!(
            properties["count"].get("maximum"),
            None,
            "serde bounds 64-bit integers itself"
        );
        assert_eq!(properties["ratio"]["maximum"], json!(f64::from(f32::MAX)));
        assert_eq!(
            properties["capped"]["maximum"],
            json!(10),
            "a stated bound stays"
        );
    }

    #[test]
    fn violations_are_listed_and_bounded() {
        let schema = json!({"type": "array", "items": {"type": "integer"}});
        let validator = compile(&schema, SchemaRole::Output).unwrap().validator;
        let huge = "x".repeat(1_000_000);
        let instance = Value::Array(vec![json!(huge); 500]);
        let text = describe_violations(&validator, &instance);
        assert!(text.len() < 2_000, "{} bytes", text.len());
        assert!(text.contains("at `/0`"), "{text}");
        assert!(text.ends_with("and 95+ more"), "{text}");

        let text = describe_violations(&validator, &json!([1, "two"]));
        assert_eq!(
            text,
            "- at `/1` (`type`): \"two\" is not of type \"integer\""
        );
    }
}
