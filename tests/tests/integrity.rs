//! Locked exports: each rule of `docs/integrity.md` on the change it names, the lock file
//! read back as written and refused when edited by hand, and a registry's own definitions.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolprism::integrity::{Audience, Lock, LockError, LockedTool, Rule, Severity, compare};
use toolprism::prelude::*;
use toolprism::tool::Fingerprint;

/// A definition of `read` with this input schema, output schema and hints.
fn definition(input: Value, output: Value, hints: Value) -> Value {
    json!({"name": "read", "title": "Read file", "description": "Reads a file.",
        "input_schema": input, "output_schema": output, "hints": hints})
}

fn lock_of(definitions: &[Value]) -> Lock {
    let tools: BTreeMap<String, LockedTool> = definitions
        .iter()
        .map(|definition| {
            let locked = LockedTool {
                fingerprint: Fingerprint::of_definition(definition).unwrap(),
                definition: definition.clone(),
            };
            (definition["name"].as_str().unwrap().to_owned(), locked)
        })
        .collect();
    Lock {
        toolprism_lock: 1,
        tools,
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The rules found from `before` to `after` (inputs, outputs and hints of `read`).
fn rules(before: Value, after: Value) -> Vec<(String, Rule)> {
    compare(&lock_of(&[before]), &lock_of(&[after]))
        .into_iter()
        .map(|change| (change.path, change.rule))
        .collect()
}

fn input(properties: Value, required: &[&str]) -> Value {
    definition(
        object(properties, required),
        json!({"type": "string"}),
        json!({"read_only": true}),
    )
}

fn output(properties: Value, required: &[&str]) -> Value {
    definition(
        object(json!({}), &[]),
        object(properties, required),
        json!({}),
    )
}

#[test]
fn input_changes_are_breaking_when_a_call_that_worked_may_not() {
    let path = json!({"path": {"type": "string"}});
    let cases = [
        (
            input(path.clone(), &["path"]),
            input(
                json!({"path": {"type": "string"}, "encoding": {"type": "string"}}),
                &["path", "encoding"],
            ),
            (
                "/input_schema/properties/encoding",
                Rule::InputRequiredAdded,
            ),
        ),
        (
            input(path.clone(), &["path"]),
            input(
                json!({"path": {"type": "string"}, "limit": {"type": "integer"}}),
                &["path"],
            ),
            ("/input_schema/properties/limit", Rule::InputAdded),
        ),
        (
            input(
                json!({"path": {"type": "string"}, "limit": {"type": "integer"}}),
                &["path"],
            ),
            input(path.clone(), &["path"]),
            ("/input_schema/properties/limit", Rule::InputRemoved),
        ),
        (
            input(json!({"limit": {"type": "integer"}}), &[]),
            input(json!({"limit": {"type": "integer"}}), &["limit"]),
            ("/input_schema/required", Rule::InputMadeRequired),
        ),
        (
            input(json!({"limit": {"type": "integer"}}), &["limit"]),
            input(json!({"limit": {"type": "integer"}}), &[]),
            ("/input_schema/required", Rule::InputMadeOptional),
        ),
        (
            input(json!({"limit": {"type": "number"}}), &[]),
            input(json!({"limit": {"type": "integer"}}), &[]),
            ("/input_schema/properties/limit/type", Rule::InputNarrowed),
        ),
        (
            input(json!({"limit": {"type": "integer"}}), &[]),
            input(json!({"limit": {"type": ["integer", "null"]}}), &[]),
            ("/input_schema/properties/limit/type", Rule::InputWidened),
        ),
        (
            input(json!({"mode": {"enum": ["a", "b"]}}), &[]),
            input(json!({"mode": {"enum": ["a"]}}), &[]),
            ("/input_schema/properties/mode/enum", Rule::InputNarrowed),
        ),
        (
            input(json!({"mode": {"enum": ["a"]}}), &[]),
            input(json!({"mode": {"enum": ["a", "b"]}}), &[]),
            ("/input_schema/properties/mode/enum", Rule::InputWidened),
        ),
        (
            input(json!({"limit": {"type": "integer", "maximum": 100}}), &[]),
            input(json!({"limit": {"type": "integer", "maximum": 10}}), &[]),
            (
                "/input_schema/properties/limit/maximum",
                Rule::InputNarrowed,
            ),
        ),
        (
            input(json!({"limit": {"type": "integer", "minimum": 1}}), &[]),
            input(json!({"limit": {"type": "integer"}}), &[]),
            ("/input_schema/properties/limit/minimum", Rule::InputWidened),
        ),
        (
            input(
                json!({"tags": {"type": "array", "items": {"type": "string"}}}),
                &[],
            ),
            input(
                json!({"tags": {"type": "array", "items": {"type": "string", "maxLength": 8}}}),
                &[],
            ),
            (
                "/input_schema/properties/tags/items/maxLength",
                Rule::InputNarrowed,
            ),
        ),
        (
            input(json!({"path": {"type": "string"}}), &[]),
            input(json!({"path": {"type": "string", "pattern": "^/"}}), &[]),
            ("/input_schema/properties/path", Rule::Unclassified),
        ),
    ];
    for (before, after, (path, rule)) in cases {
        assert_eq!(rules(before, after), [(path.to_owned(), rule)], "{path}");
    }
    assert_eq!(Rule::InputRequiredAdded.severity(), Severity::Breaking);
    assert_eq!(Rule::InputAdded.severity(), Severity::Compatible);
}

#[test]
fn output_changes_are_breaking_when_a_reader_may_be_surprised() {
    let cases = [
        (
            output(json!({"text": {"type": "string"}}), &["text"]),
            output(
                json!({"text": {"type": "string"}, "lines": {"type": "integer"}}),
                &["text"],
            ),
            ("/output_schema/properties/lines", Rule::OutputAdded),
        ),
        (
            output(
                json!({"text": {"type": "string"}, "lines": {"type": "integer"}}),
                &["text"],
            ),
            output(json!({"text": {"type": "string"}}), &["text"]),
            ("/output_schema/properties/lines", Rule::OutputRemoved),
        ),
        (
            output(json!({"lines": {"type": "integer"}}), &[]),
            output(json!({"lines": {"type": "string"}}), &[]),
            ("/output_schema/properties/lines/type", Rule::OutputRetyped),
        ),
        (
            output(json!({"text": {"type": "string"}}), &["text"]),
            output(json!({"text": {"type": "string"}}), &[]),
            ("/output_schema/required", Rule::OutputRemoved),
        ),
        (
            output(json!({"kind": {"enum": ["file"]}}), &[]),
            output(json!({"kind": {"enum": ["file", "dir"]}}), &[]),
            ("/output_schema/properties/kind/enum", Rule::OutputRetyped),
        ),
        (
            output(json!({"kind": {"enum": ["file", "dir"]}}), &[]),
            output(json!({"kind": {"enum": ["file"]}}), &[]),
            ("/output_schema/properties/kind/enum", Rule::OutputAdded),
        ),
    ];
    for (before, after, (path, rule)) in cases {
        assert_eq!(rules(before, after), [(path.to_owned(), rule)], "{path}");
    }
}

#[test]
fn hints_made_less_safe_are_breaking_and_descriptions_are_for_the_model() {
    let with = |hints: Value| definition(json!({"type": "object"}), json!({}), hints);
    assert_eq!(
        rules(with(json!({"read_only": true})), with(json!({}))),
        [("/hints/read_only".to_owned(), Rule::HintLessSafe)]
    );
    assert_eq!(
        rules(
            with(json!({"destructive": false})),
            with(json!({"destructive": true}))
        ),
        [("/hints/destructive".to_owned(), Rule::HintLessSafe)]
    );
    assert_eq!(
        rules(
            with(json!({"idempotent": false})),
            with(json!({"idempotent": true}))
        ),
        [("/hints/idempotent".to_owned(), Rule::HintSafer)]
    );
    // Unsaid and the unsafe value promise a host the same: no change for callers.
    assert!(rules(with(json!({})), with(json!({"open_world": true}))).is_empty());

    let mut clarified = with(json!({}));
    clarified["description"] = json!("Reads a file, relative to the workspace.");
    let changes = compare(&lock_of(&[with(json!({}))]), &lock_of(&[clarified]));
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].rule, Rule::Described);
    assert_eq!(changes[0].rule.audience(), Audience::Model);
    assert_eq!(changes[0].severity(), Severity::Compatible);
}

#[test]
fn tools_removed_and_added_and_refs_compared_inlined() {
    let read = input(json!({"path": {"type": "string"}}), &["path"]);
    let mut write = read.clone();
    write["name"] = json!("write");
    let changes = compare(&lock_of(std::slice::from_ref(&read)), &lock_of(&[write]));
    let found: Vec<_> = changes
        .iter()
        .map(|change| (change.tool.as_str(), change.rule))
        .collect();
    assert_eq!(
        found,
        [("read", Rule::ToolRemoved), ("write", Rule::ToolAdded)]
    );

    // The same schema written with a `$ref` is no change at all.
    let referred = definition(
        json!({"type": "object", "properties": {"path": {"$ref": "#/$defs/Path"}}, "required": ["path"],
            "$defs": {"Path": {"type": "string"}}}),
        json!({"type": "string"}),
        json!({"read_only": true}),
    );
    assert!(rules(read, referred).is_empty());
}

/// Reads a file.
#[tool(read_only)]
fn read(#[arg] path: String) -> String {
    path
}

#[test]
fn a_lock_file_reads_back_as_written_and_an_edited_one_is_refused() {
    let registry = Registry::builder().tool(Read).build().unwrap();
    let lock = Lock::of(&registry.snapshot());
    let text = lock.to_json();
    assert!(text.ends_with('\n'));
    assert_eq!(Lock::from_json(&text).unwrap(), lock);
    assert!(compare(&lock, &Lock::of(&registry.snapshot())).is_empty());
    // Written twice, the same bytes.
    assert_eq!(Lock::of(&registry.snapshot()).to_json(), text);

    let edited = text.replace("Reads a file.", "Reads any file.");
    assert!(matches!(
        Lock::from_json(&edited),
        Err(LockError::Tampered { tool }) if tool == "read"
    ));
    let newer = text.replace("\"toolprism_lock\": 1", "\"toolprism_lock\": 2");
    assert!(matches!(
        Lock::from_json(&newer),
        Err(LockError::Version(2))
    ));
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert!(matches!(Lock::from_json(&deep), Err(LockError::Invalid(_))));
}
