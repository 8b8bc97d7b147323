//! Hostile documents: looping and exponential references, remote references, huge enums,
//! alias bombs, deep nesting, broken paths. Each is a precise refusal (of the document, or of
//! one operation with its reason), reached without unbounded work.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolprism_openapi::{Document, LoadError, OpenApi, Skipped};

fn document(paths: Value, components: Value) -> Document {
    Document::from_value(json!({
        "openapi": "3.1.0",
        "info": {"title": "hostile", "version": "1"},
        "paths": paths,
        "components": components,
    }))
    .expect("an OpenAPI document")
}

fn skipped(document: Document) -> Vec<Skipped> {
    let generated = OpenApi::new(document)
        .base_url("http://127.0.0.1:9")
        .build()
        .expect("the build completes");
    assert!(generated.tools.is_empty(), "{:?}", generated.operations);
    generated.skipped
}

fn only_reason(document: Document) -> String {
    let skipped = skipped(document);
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(!skipped[0].excluded);
    skipped[0].reason.clone()
}

fn with_parameter_schema(schema: Value, components: Value) -> Document {
    document(
        json!({"/x": {"get": {
            "operationId": "x",
            "parameters": [{"name": "p", "in": "query", "schema": schema}],
            "responses": {"200": {"description": "ok"}},
        }}}),
        components,
    )
}

#[test]
fn references_that_loop_are_refused_by_count() {
    let looping = document(
        json!({"/x": {"get": {
            "parameters": [{"$ref": "#/components/parameters/a"}],
            "responses": {},
        }}}),
        json!({"parameters": {
            "a": {"$ref": "#/components/parameters/b"},
            "b": {"$ref": "#/components/parameters/a"},
        }}),
    );
    let reason = only_reason(looping);
    assert!(reason.contains("more than 32 times"), "{reason}");
}

#[test]
fn a_recursive_schema_stays_recursive() {
    let tree = with_parameter_schema(
        json!({"$ref": "#/components/schemas/Node"}),
        json!({"schemas": {"Node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}},
        }}}),
    );
    let generated = OpenApi::new(tree)
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    assert_eq!(generated.tools.len(), 1, "{:?}", generated.skipped);
    let schema = generated.tools[0].input_schema();
    assert_eq!(
        schema["$defs"]["Node"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
}

#[test]
fn references_that_multiply_are_refused_by_size() {
    // Each level refers twice to the next: 2^25 schema objects if expanded, within the depth.
    let mut levels = serde_json::Map::new();
    for level in 0..25 {
        let next = format!("#/x-levels/l{}", level + 1);
        levels.insert(
            format!("l{level}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    levels.insert("l25".to_owned(), json!({"type": "string"}));
    let mut root = json!({
        "openapi": "3.1.0",
        "info": {"title": "hostile", "version": "1"},
        "paths": {"/x": {"get": {
            "parameters": [{"name": "p", "in": "query", "schema": {"$ref": "#/x-levels/l0"}}],
            "responses": {},
        }}},
    });
    root["x-levels"] = Value::Object(levels);
    let reason = only_reason(Document::from_value(root).unwrap());
    assert!(reason.contains("schema objects"), "{reason}");
}

#[test]
fn remote_references_are_refused() {
    let remote = with_parameter_schema(
        json!({"$ref": "https://attacker.example/schema.json#/Thing"}),
        json!({}),
    );
    let reason = only_reason(remote);
    assert!(reason.contains("remote references are refused"), "{reason}");
    let file = with_parameter_schema(json!({"$ref": "other.yaml#/Thing"}), json!({}));
    assert!(only_reason(file).contains("not local"));
}

#[test]
fn a_huge_enum_is_refused_with_the_runtimes_reason() {
    let values: Vec<Value> = (0..200_000).map(|n| Value::from(format!("v{n}"))).collect();
    let reason = only_reason(with_parameter_schema(
        json!({"type": "string", "enum": values}),
        json!({}),
    ));
    assert!(reason.starts_with("its input schema"), "{reason}");
}

#[test]
fn broken_paths_and_bodies_skip_only_their_operation() {
    let doc = document(
        json!({
            "/a/{id}": {"get": {"operationId": "missing_parameter", "responses": {}}},
            "/b/{id": {"get": {
                "operationId": "unclosed",
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {},
            }},
            "/c": {"post": {
                "operationId": "form_only",
                "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object"}}}},
                "responses": {},
            }},
            "/d": {"get": {"operationId": "fine", "responses": {"200": {"description": "ok"}}}},
        }),
        json!({}),
    );
    let generated = OpenApi::new(doc)
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    assert_eq!(generated.operations.len(), 1);
    assert_eq!(generated.operations[0].tool, "fine");
    let reasons: Vec<(&str, &str)> = generated
        .skipped
        .iter()
        .map(|s| (s.operation_id.as_deref().unwrap(), s.reason.as_str()))
        .collect();
    assert!(
        reasons.contains(&(
            "missing_parameter",
            "its path names `id` but no path parameter has that name"
        )),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|(id, reason)| *id == "unclosed" && reason.contains("unclosed")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|(id, reason)| *id == "form_only" && reason.contains("multipart/form-data")),
        "{reasons:?}"
    );
}

#[test]
fn a_parameter_named_like_a_body_field_gets_its_own_key() {
    let doc = document(
        json!({"/items": {"post": {
            "operationId": "create",
            "parameters": [{"name": "name", "in": "query", "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "name__body": {"type": "integer"}},
                "required": ["name"],
            }}}},
            "responses": {},
        }}}),
        json!({}),
    );
    let generated = OpenApi::new(doc)
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    let schema = generated.tools[0].input_schema();
    let mut keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["name", "name__body", "name__body__body"]);
    assert_eq!(schema["required"], json!(["name__body"]));
}

#[test]
fn yaml_alias_bombs_and_deep_documents_are_refused_while_read() {
    let mut bomb = String::from("openapi: 3.1.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..12 {
        let previous = format!("*a{}", level - 1);
        let _ = writeln!(
            bomb,
            "a{level}: &a{level} [{}]",
            [previous.as_str(); 10].join(", ")
        );
    }
    let refused = Document::parse(&bomb).unwrap_err();
    assert!(matches!(refused, LoadError::Syntax(_)), "{refused}");
    assert!(refused.to_string().contains("budget breached"), "{refused}");

    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let deep = format!("{{\"openapi\": \"3.1.0\", \"paths\": {{}}, \"x\": {deep}}}");
    assert!(matches!(Document::parse(&deep), Err(LoadError::TooDeep(_))));
    let deep_yaml = format!(
        "openapi: 3.1.0\nx: {}1{}\n",
        "[".repeat(100),
        "]".repeat(100)
    );
    let deep_yaml = Document::parse(&deep_yaml).unwrap_err();
    assert!(deep_yaml.to_string().contains("Depth"), "{deep_yaml}");

    assert!(matches!(
        Document::parse("{\"swagger\": \"2.0\"}"),
        Err(LoadError::NotOpenApi(_))
    ));
}

#[test]
fn openapi_3_0_nullable_and_exclusive_bounds_become_2020_12() {
    let doc = Document::parse(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      operationId: x\n      parameters:\n        - name: p\n          in: query\n          schema: {type: integer, nullable: true, minimum: 0, exclusiveMinimum: true, example: 3}\n      responses: {}\n",
    )
    .unwrap();
    let generated = OpenApi::new(doc)
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    let p = &generated.tools[0].input_schema()["properties"]["p"];
    assert_eq!(p["type"], json!(["integer", "null"]));
    assert_eq!(p["exclusiveMinimum"], json!(0));
    assert!(p.get("minimum").is_none() && p.get("nullable").is_none());
    assert_eq!(p["examples"], json!([3]));
}

#[test]
fn parameters_that_would_take_the_clients_own_headers_or_styles_skip_their_operation() {
    let operation = |parameter: Value| {
        json!({"get": {
            "parameters": [parameter],
            "responses": {"200": {"description": "ok"}},
        }})
    };
    let doc = document(
        json!({
            "/host": operation(json!({"name": "Host", "in": "header", "schema": {"type": "string"}})),
            "/length": operation(json!({"name": "content-length", "in": "header"})),
            "/space": operation(json!({"name": "Bad Name", "in": "header"})),
            "/matrix": operation(json!({"name": "q", "in": "query", "style": "matrix"})),
            "/served": {"servers": [{"url": "https://uploads.example.com"}], "get": {
                "responses": {"200": {"description": "ok"}},
            }},
        }),
        json!({}),
    );
    let skipped = skipped(doc);
    let reason = |path: &str| {
        skipped
            .iter()
            .find(|skipped| skipped.path == path)
            .map_or_else(
                || panic!("{path} skipped: {skipped:?}"),
                |skipped| skipped.reason.clone(),
            )
    };
    assert!(reason("/host").contains("a header the HTTP client sets itself"));
    assert!(reason("/length").contains("a header the HTTP client sets itself"));
    assert!(reason("/space").contains("is not a header name"));
    assert!(reason("/matrix").contains("which OpenAPI does not define there"));
    assert!(reason("/served").contains("its own server `https://uploads.example.com`"));
}

#[test]
fn a_body_of_more_fields_than_parameters_allowed_is_one_argument() {
    let fields: serde_json::Map<String, Value> = (0..=toolprism_openapi::MAX_PARAMETERS)
        // Every name the same once made a property name: keys found without a rescan.
        .map(|n| (format!("f{}", "!".repeat(n)), json!({"type": "string"})))
        .collect();
    let doc = document(
        json!({"/wide": {"post": {
            "operationId": "wide",
            "requestBody": {"content": {"application/json": {"schema": {
                "type": "object", "properties": fields,
            }}}},
            "responses": {},
        }}}),
        json!({}),
    );
    let generated = OpenApi::new(doc)
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    let schema = generated.tools[0].input_schema();
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["body"]);
}
