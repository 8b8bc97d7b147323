//! Properties checked on generated schemas, arguments and events:
//!
//! - the differential oracle: the body runs exactly when the arguments are valid under a
//!   validator compiled independently of the pipeline (after the one documented reading of
//!   `null` for an optional property), and every success's value is valid under its output
//!   schema, every invalid value a failure;
//! - lowering round-trip: instances generated from each provider's lowered schema are accepted
//!   by dispatch against the original, except where the lowering folded a constraint into a
//!   description, and then the refusal names that constraint;
//! - the session log's writer and reader agree: what is appended is read back as it was, what
//!   is refused leaves the file untouched.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Map, Number, Value, json};
use toolprism::error::{ErrorInfo, FailureError, codes};
use toolprism::lower::{self, object_root};
use toolprism::prelude::*;
use toolprism::session::{
    CallEvent, Decision, DecisionEvent, DecisionRequest, LogOptions, NestedEvent, ResultEvent,
    SessionEvent, SessionLog,
};
use toolprism_tests::{TempDir, code, text};

// ---------------------------------------------------------------- a small PRNG for instances

/// `SplitMix64`: instances are drawn from a seed proptest chooses (and shrinks).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[usize::try_from(self.below(items.len() as u64)).unwrap()]
    }
}

// ---------------------------------------------------------------- schemas

/// Patterns the generator uses, with strings that match each.
const PATTERNS: [(&str, [&str; 3]); 3] = [
    ("^[a-z]+$", ["abc", "z", "hello"]),
    ("^[0-9]{3}$", ["123", "000", "999"]),
    ("^x", ["x", "xyz", "x-1"]),
];

/// A scalar schema, with constraints a lowering may fold.
fn scalar_schema() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        (any::<bool>(), -5_i64..5, 0_i64..10).prop_map(|(bounded, low, span)| {
            if bounded {
                json!({"type": "integer", "minimum": low, "maximum": low + span})
            } else {
                json!({"type": "integer"})
            }
        }),
        (0_u8..4).prop_map(|kind| match kind {
            0 => json!({"type": "number"}),
            1 => json!({"type": "number", "exclusiveMinimum": 0}),
            2 => json!({"type": "integer", "multipleOf": 3}),
            _ => json!({"type": "number", "maximum": 10.5}),
        }),
        (0_u8..6).prop_map(|kind| match kind {
            0 => json!({"type": "string"}),
            1 => json!({"type": "string", "minLength": 2, "maxLength": 5}),
            2 => json!({"type": "string", "pattern": PATTERNS[0].0}),
            3 => json!({"type": "string", "enum": ["a", "b", "c"]}),
            4 => json!({"type": "string", "const": "fixed"}),
            _ => json!({"type": "string", "format": "email"}),
        }),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "integer", "enum": [1, 2, 3]})),
        Just(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
    ]
}

/// A schema of any shape, objects and arrays included, nested a few levels.
fn any_schema() -> impl Strategy<Value = Value> + Clone {
    scalar_schema().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>(), 0_usize..3).prop_map(|(items, unique, min)| {
                let mut schema = json!({"type": "array", "items": items});
                if unique {
                    schema["uniqueItems"] = json!(true);
                }
                if min > 0 {
                    schema["minItems"] = json!(min);
                }
                schema
            }),
            object_schema(inner),
        ]
    })
}

/// An object schema with some properties required, some optional, maybe closed.
fn object_schema(
    property: impl Strategy<Value = Value> + Clone,
) -> impl Strategy<Value = Value> + Clone {
    (
        prop::collection::vec((property, any::<bool>()), 0..5),
        any::<bool>(),
    )
        .prop_map(|(properties, closed)| {
            let mut map = Map::new();
            let mut required = Vec::new();
            for (index, (schema, is_required)) in properties.into_iter().enumerate() {
                let name = format!("p{index}");
                if is_required {
                    required.push(json!(name));
                }
                map.insert(name, schema);
            }
            let mut schema = json!({"type": "object", "properties": map, "required": required});
            if closed {
                schema["additionalProperties"] = json!(false);
            }
            schema
        })
}

/// An input schema: an object, sometimes with a property through `$defs`, sometimes a union
/// of objects tagged by a `kind` property.
fn input_schema() -> impl Strategy<Value = Value> {
    let object = object_schema(any_schema());
    prop_oneof![
        4 => object.clone(),
        1 => (object.clone(), any_schema()).prop_map(|(mut root, shared)| {
            root["properties"]["shared"] = json!({"$ref": "#/$defs/Shared"});
            root["$defs"] = json!({"Shared": shared});
            root
        }),
        1 => prop::collection::vec(object, 2..4).prop_map(|branches| {
            let branches: Vec<Value> = branches
                .into_iter()
                .enumerate()
                .map(|(index, mut branch)| {
                    branch["properties"]["kind"] = json!({"type": "string", "const": format!("k{index}")});
                    let required = branch["required"].as_array_mut().unwrap();
                    required.push(json!("kind"));
                    branch
                })
                .collect();
            json!({"oneOf": branches})
        }),
    ]
}

// ---------------------------------------------------------------- instances from a schema

/// Which dialect an instance generator reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dialect {
    /// Plain JSON Schema (and OpenAI strict mode, which is JSON Schema).
    Json,
    /// Gemini's: upper-case types, `nullable`.
    Gemini,
}

/// An instance of `schema` as a model obeying it would write, ignoring descriptions.
fn instance(schema: &Value, root: &Value, dialect: Dialect, rng: &mut Rng, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        return json!(null);
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(reference.trim_start_matches('#')).unwrap();
        return instance(target, root, dialect, rng, depth);
    }
    if dialect == Dialect::Gemini && map.get("nullable") == Some(&json!(true)) && rng.chance(20) {
        return json!(null);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        let branch = rng.pick(branches).clone();
        return instance(&branch, root, dialect, rng, depth);
    }
    if let Some(value) = map.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return rng.pick(values).clone();
    }
    let types: Vec<String> = match map.get("type") {
        Some(Value::String(name)) => vec![name.to_lowercase()],
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_lowercase)
            .collect(),
        _ => vec!["string".into()],
    };
    let ty = rng.pick(&types).clone();
    match ty.as_str() {
        "null" => json!(null),
        "boolean" => json!(rng.chance(50)),
        "integer" | "number" => number(map, ty == "number", rng),
        "string" => string(map, rng),
        "array" => {
            let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let count = if depth > 4 { min } else { min + rng.below(3) };
            let items = map.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..count)
                    .map(|_| instance(&items, root, dialect, rng, depth + 1))
                    .collect(),
            )
        }
        _ => {
            let mut out = Map::new();
            let required: BTreeSet<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (name, property) in map
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if required.contains(name.as_str()) || rng.chance(60) {
                    out.insert(
                        name.clone(),
                        instance(property, root, dialect, rng, depth + 1),
                    );
                }
            }
            Value::Object(out)
        }
    }
}

/// A number within the bounds the schema states (`minimum`, `maximum`, `exclusiveMinimum`,
/// `multipleOf`), sometimes with a fraction when it may have one.
fn number(map: &Map<String, Value>, fractional: bool, rng: &mut Rng) -> Value {
    let exclusive = map.get("exclusiveMinimum").and_then(Value::as_i64);
    let low = map
        .get("minimum")
        .and_then(Value::as_i64)
        .or(exclusive.map(|bound| bound + 1))
        .unwrap_or(-20);
    let maximum = map.get("maximum").and_then(Value::as_f64);
    // Bounds here are small: the casts are exact.
    #[allow(clippy::cast_possible_truncation)]
    let high = maximum.map_or(20, |maximum| maximum.floor() as i64);
    let span = u64::try_from(high - low + 1).unwrap_or(1);
    let mut n = low + i64::try_from(rng.below(span)).unwrap();
    if let Some(step) = map.get("multipleOf").and_then(Value::as_i64) {
        n -= n.rem_euclid(step);
    }
    let with_fraction = f64::from(i32::try_from(n).unwrap()) + 0.25;
    if fractional && rng.chance(30) && maximum.is_none_or(|maximum| with_fraction <= maximum) {
        json!(with_fraction)
    } else {
        json!(n)
    }
}

/// A string the schema accepts: a sample of its pattern, an email for `format: email`, else
/// within its length bounds.
fn string(map: &Map<String, Value>, rng: &mut Rng) -> Value {
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        let (_, samples) = PATTERNS.iter().find(|(p, _)| *p == pattern).unwrap();
        return json!(rng.pick(samples));
    }
    if map.get("format").and_then(Value::as_str) == Some("email") {
        return json!("someone@example.com");
    }
    let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = map
        .get("maxLength")
        .and_then(Value::as_u64)
        .unwrap_or(8)
        .max(min);
    let len = min + rng.below(max - min + 1);
    json!("s".repeat(usize::try_from(len).unwrap()))
}

/// A random JSON value, for arguments that ignore the schema.
fn noise(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 5 } else { 7 }) {
        0 => json!(null),
        1 => json!(rng.chance(50)),
        2 => json!(i64::try_from(rng.below(40)).unwrap() - 20),
        3 => json!(0.5),
        4 => json!(["s", "abc", "", "x1"][usize::try_from(rng.below(4)).unwrap()]),
        5 => Value::Array((0..rng.below(3)).map(|_| noise(rng, depth + 1)).collect()),
        _ => {
            let mut map = Map::new();
            for index in 0..rng.below(4) {
                map.insert(format!("p{index}"), noise(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

/// Changes one thing in `value`, maybe making it invalid.
fn mutate(value: &mut Value, rng: &mut Rng) {
    match value {
        Value::Object(map) if !map.is_empty() && rng.chance(70) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = rng.pick(&keys).clone();
            match rng.below(3) {
                0 => {
                    map.remove(&key);
                }
                1 => {
                    map.insert(key, json!(null));
                }
                _ => mutate(map.get_mut(&key).unwrap(), rng),
            }
        }
        Value::Array(items) if !items.is_empty() && rng.chance(70) => {
            let at = usize::try_from(rng.below(items.len() as u64)).unwrap();
            mutate(&mut items[at], rng);
        }
        other => *other = noise(rng, 3),
    }
}

// ---------------------------------------------------------------- the independent reading of null

/// Removes `null` members the schemas make optional and refuse `null` for: the one reading
/// the pipeline documents (where several branches of a union declare the member, every one of
/// them must). Written here from the documentation, for the generated shapes.
fn strip_optional_nulls(value: &mut Value, schemas: &[&Value], root: &Value) {
    let mut applied: Vec<&Value> = Vec::new();
    for schema in schemas {
        let schema = resolve(schema, root);
        applied.push(schema);
        if let Some(Value::Array(branches)) = schema.get("oneOf").or_else(|| schema.get("anyOf")) {
            applied.extend(branches.iter().map(|branch| resolve(branch, root)));
        }
    }
    match value {
        Value::Object(members) => {
            members.retain(|name, member| {
                let declaring: Vec<(&Value, bool)> = applied
                    .iter()
                    .filter_map(|schema| {
                        let property = schema.get("properties")?.get(name)?;
                        let required = schema
                            .get("required")
                            .and_then(Value::as_array)
                            .is_some_and(|names| names.iter().any(|n| n == name.as_str()));
                        Some((property, required))
                    })
                    .collect();
                let refused = member.is_null()
                    && !declaring.is_empty()
                    && declaring
                        .iter()
                        .all(|(property, required)| !required && !accepts_null(property, root));
                !refused
            });
            for (name, member) in members.iter_mut() {
                let children: Vec<&Value> = applied
                    .iter()
                    .filter_map(|schema| schema.get("properties")?.get(name))
                    .collect();
                strip_optional_nulls(member, &children, root);
            }
        }
        Value::Array(items) => {
            let children: Vec<&Value> = applied
                .iter()
                .filter_map(|schema| schema.get("items"))
                .collect();
            for item in items {
                strip_optional_nulls(item, &children, root);
            }
        }
        _ => {}
    }
}

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.trim_start_matches('#')).unwrap(),
        None => schema,
    }
}

fn accepts_null(schema: &Value, root: &Value) -> bool {
    let schema = resolve(schema, root);
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        return branches.iter().any(|branch| accepts_null(branch, root));
    }
    let typed = match schema.get("type") {
        Some(Value::String(name)) => name == "null",
        Some(Value::Array(names)) => names.iter().any(|name| name == "null"),
        _ => true,
    };
    typed
        && schema.get("const").is_none_or(Value::is_null)
        && schema
            .get("enum")
            .and_then(Value::as_array)
            .is_none_or(|values| values.contains(&Value::Null))
}

// ---------------------------------------------------------------- the differential oracle

/// A dynamic tool over `input`/`output` whose body records that it ran and returns `value`.
fn oracle_tool(input: &Value, output: &Value, value: Value, ran: Arc<AtomicBool>) -> ToolDef {
    ToolDef::builder("probe")
        .description("Records that it ran.")
        .input_schema(input.clone())
        .output_schema(output.clone())
        .handler(move |_args: Value, _cx: ToolContext| {
            ran.store(true, Ordering::SeqCst);
            let value = value.clone();
            async move { Ok::<_, ToolError>(value) }
        })
        .build()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(Config { cases: 400, ..Config::default() })]

    #[test]
    fn the_body_runs_exactly_when_the_arguments_are_valid(
        input in input_schema(),
        output in any_schema(),
        seed in any::<u64>(),
    ) {
        // Formats are validated, as docs/writing-tools.md documents.
        let compile = |schema: &Value| {
            jsonschema::options().should_validate_formats(true).build(schema).unwrap()
        };
        let (independent_input, independent_output) = (compile(&input), compile(&output));
        let mut rng = Rng(seed);
        let runtime = runtime();
        for round in 0..8 {
            let mut args = match round % 4 {
                0 | 1 => instance(&input, &input, Dialect::Json, &mut rng, 0),
                2 => {
                    let mut args = instance(&input, &input, Dialect::Json, &mut rng, 0);
                    mutate(&mut args, &mut rng);
                    args
                }
                _ => noise(&mut rng, 0),
            };
            if !args.is_object() && rng.chance(50) {
                args = json!({"p0": args});
            }
            let value = if rng.chance(50) {
                instance(&output, &output, Dialect::Json, &mut rng, 0)
            } else {
                noise(&mut rng, 0)
            };
            let ran = Arc::new(AtomicBool::new(false));
            let registry = Registry::builder()
                .tool(oracle_tool(&input, &output, value.clone(), ran.clone()))
                .build()
                .unwrap();
            let outcome = runtime.block_on(
                registry.dispatch(ToolCall::new("c", "probe", args.clone()), Surface::Direct),
            );
            let mut stripped = args.clone();
            strip_optional_nulls(&mut stripped, &[&input], &input);
            let valid = independent_input.is_valid(&args) || independent_input.is_valid(&stripped);
            prop_assert_eq!(
                ran.load(Ordering::SeqCst),
                valid,
                "args {} against {}: {}",
                args,
                input,
                text(&outcome)
            );
            if !valid {
                prop_assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT));
                continue;
            }
            if let Some(produced) = outcome.value() {
                prop_assert!(independent_output.is_valid(produced));
                prop_assert_eq!(produced.as_value(), &value);
            } else {
                prop_assert!(!independent_output.is_valid(&value), "{}", text(&outcome));
                prop_assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_OUTPUT));
            }
        }
    }
}

// ---------------------------------------------------------------- lowering round-trip

/// Every description in a lowered schema, joined.
fn descriptions(schema: &Value, out: &mut String) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "description" {
                    if let Some(text) = value.as_str() {
                        out.push_str(text);
                        out.push('\n');
                    }
                } else {
                    descriptions(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| descriptions(item, out)),
        _ => {}
    }
}

/// Whether the lowered schema told the model about the constraint `keyword` in words.
fn folded(keyword: &str, described: &str) -> bool {
    described.contains(&format!("{keyword}:"))
        || (matches!(keyword, "enum" | "const") && described.contains("one of"))
}

/// The keywords of the violations listed in a failure: "- at `…` (`keyword`): …".
fn violated_keywords(message: &str) -> Vec<String> {
    message
        .lines()
        .filter_map(|line| {
            let start = line.find("(`")? + 2;
            let end = start + line[start..].find("`)")?;
            Some(line[start..end].to_owned())
        })
        .collect()
}

proptest! {
    #![proptest_config(Config { cases: 300, ..Config::default() })]

    #[test]
    fn what_a_lowered_schema_tells_a_model_dispatch_accepts(
        input in input_schema(),
        seed in any::<u64>(),
    ) {
        let registry = Registry::builder()
            .tool(oracle_tool(&input, &json!(true), json!(null), Arc::default()))
            .build()
            .unwrap();
        let root = object_root(&input);
        let strict = lower::openai_strict(&root);
        let gemini = lower::gemini(&root);
        let mut rng = Rng(seed);
        let runtime = runtime();
        for (lowered, dialect) in [(strict, Dialect::Json), (gemini, Dialect::Gemini)] {
            let Ok(lowered) = lowered else {
                continue; // A schema the dialect cannot express is an error, not a lie.
            };
            prop_assert_eq!(&lowered["type"].as_str().map(str::to_lowercase), &Some("object".to_owned()));
            let mut described = String::new();
            descriptions(&lowered, &mut described);
            for _ in 0..6 {
                let args = instance(&lowered, &lowered, dialect, &mut rng, 0);
                let outcome = runtime.block_on(
                    registry.dispatch(ToolCall::new("c", "probe", args.clone()), Surface::Direct),
                );
                if !outcome.is_error() {
                    continue;
                }
                let message = text(&outcome);
                prop_assert_eq!(code(&outcome), Some(codes::INVALID_TOOL_INPUT), "{}", message);
                let keywords = violated_keywords(&message);
                prop_assert!(!keywords.is_empty(), "{}", message);
                for keyword in keywords {
                    prop_assert!(
                        folded(&keyword, &described),
                        "{:?}: `{}` refused but never told: {} for {} lowered as {}",
                        dialect, keyword, message, args, lowered
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------- session log agreement

/// A JSON value up to `depth` levels, with strings and floats that test the encoding.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// `value` wrapped in `levels` arrays: depths on both sides of the limit.
fn wrapped(value: Value, levels: usize) -> Value {
    (0..levels).fold(value, |inner, _| Value::Array(vec![inner]))
}

fn event() -> impl Strategy<Value = SessionEvent> {
    let content = prop::collection::vec(any::<String>().prop_map(ContentBlock::text), 0..3);
    prop_oneof![
        (
            any::<String>(),
            any::<String>(),
            json_value(),
            0_usize..70,
            any::<bool>()
        )
            .prop_map(|(id, name, args, levels, raw)| {
                SessionEvent::ToolCall(if raw {
                    CallEvent {
                        id,
                        name,
                        args: None,
                        raw_args: Some(args.to_string()),
                        title: None,
                        repair: None,
                    }
                } else {
                    CallEvent {
                        id,
                        name,
                        args: Some(wrapped(args, levels)),
                        raw_args: None,
                        title: None,
                        repair: None,
                    }
                })
            }),
        (
            any::<String>(),
            content.clone(),
            any::<bool>(),
            proptest::option::of((json_value(), 0_usize..70)),
            any::<String>(),
            proptest::option::of((json_value(), 0_usize..70)),
        )
            .prop_map(|(id, content, is_error, meta, message, value)| {
                SessionEvent::ToolResult(ResultEvent {
                    id,
                    content,
                    is_error,
                    error: is_error.then(|| FailureError {
                        message,
                        info: Some(ErrorInfo {
                            name: "ToolError".into(),
                            code: "TOOL_FAILED".into(),
                        }),
                    }),
                    meta: meta.map(|(meta, levels)| wrapped(meta, levels)),
                    value: value.map(|(value, levels)| wrapped(value, levels)),
                })
            }),
        (
            any::<String>(),
            any::<String>(),
            any::<String>(),
            content,
            any::<bool>(),
            proptest::option::of((json_value(), 0_usize..70)),
            proptest::option::of((json_value(), 0_usize..70)),
        )
            .prop_map(|(parent_id, id, name, content, is_error, args, value)| {
                SessionEvent::NestedResult(NestedEvent {
                    parent_id,
                    id,
                    name,
                    content,
                    is_error,
                    args: args.map(|(args, levels)| wrapped(args, levels)),
                    error: None,
                    value: value.map(|(value, levels)| wrapped(value, levels)),
                })
            }),
        decision_event(),
    ]
}

/// A decision asked or taken, its JSON on both sides of the depth limit.
fn decision_event() -> impl Strategy<Value = SessionEvent> {
    (
        any::<String>(),
        json_value(),
        0_usize..70,
        json_value(),
        0_usize..70,
        0_u8..6,
    )
        .prop_map(|(id, args, levels, given, given_levels, choice)| {
            let given = wrapped(given, given_levels);
            let decision = match choice {
                0 => Decision::Approve,
                1 => Decision::Edit { arguments: given },
                2 => Decision::Reject { reason: id.clone() },
                3 => Decision::Substitute { result: given },
                4 => Decision::AllowAlways {
                    arguments: Some(given),
                },
                _ => Decision::AllowAlways { arguments: None },
            };
            let definition = toolprism::tool::Fingerprint::of_definition(&json!({})).unwrap();
            let args = wrapped(args, levels);
            if choice == 5 {
                return SessionEvent::DecisionRequested(DecisionRequest {
                    id,
                    name: "write".into(),
                    args,
                    definition,
                    policy: "ask".into(),
                    question: "Write?".into(),
                    at: 1,
                });
            }
            SessionEvent::Decided(DecisionEvent {
                id,
                name: "write".into(),
                args,
                policy: "ask".into(),
                definition,
                decision,
                at: 2,
                on_form: choice == 0,
            })
        })
}

proptest! {
    #![proptest_config(Config { cases: 200, ..Config::default() })]

    #[test]
    fn the_session_log_reads_back_exactly_what_it_accepted(
        events in prop::collection::vec((event(), 0_u8..10), 1..12),
    ) {
        let dir = TempDir::new("log-agreement");
        let path = dir.path().join("session.jsonl");
        let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
        let mut accepted = Vec::new();
        // Torn lines: tears with no accepted append between them run into one line.
        let mut torn = 0;
        let mut fresh_line = true;
        for (event, tear) in events {
            let before = std::fs::metadata(&path).unwrap().len();
            match log.append(&event) {
                Ok(()) => {
                    accepted.push(event);
                    fresh_line = true;
                }
                Err(error) => {
                    prop_assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
                    prop_assert_eq!(std::fs::metadata(&path).unwrap().len(), before);
                }
            }
            // Now and then another writer crashes mid-line.
            if tear == 0 {
                use std::io::Write as _;
                let mut other = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                other.write_all(b"{\"v\":1,\"kind\":\"tool_re").unwrap();
                torn += usize::from(fresh_line);
                fresh_line = false;
            }
        }
        let contents = SessionLog::read(&path).unwrap();
        prop_assert_eq!(&contents.events, &accepted);
        prop_assert_eq!(contents.problems.len(), torn);
    }
}

#[test]
fn the_generators_reach_both_sides_of_every_rule() {
    // A guard against a generator that stopped producing what the properties need.
    let mut rng = Rng(7);
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "maximum": 3}}, "required": ["a"]});
    let validator = jsonschema::validator_for(&schema).unwrap();
    let (mut valid, mut invalid) = (0, 0);
    for _ in 0..200 {
        let mut args = instance(&schema, &schema, Dialect::Json, &mut rng, 0);
        if rng.chance(50) {
            mutate(&mut args, &mut rng);
        }
        if validator.is_valid(&args) {
            valid += 1;
        } else {
            invalid += 1;
        }
    }
    assert!(
        valid > 20 && invalid > 20,
        "{valid} valid, {invalid} invalid"
    );
    assert!(folded("minLength", "(minLength: 3)") && !folded("pattern", "(minLength: 3)"));
    assert_eq!(
        violated_keywords("- at `/a` (`minimum`): 0 is less than 1\n- at `/b` (`type`): x"),
        ["minimum", "type"]
    );
}
