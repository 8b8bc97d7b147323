//! What an operation becomes, offline: names, hints and their overrides, output schemas for
//! each kind of response, bodies that are not plain objects, and the base URL's sources.

use serde_json::{Value, json};
use toolprism::tool::Hints;
use toolprism_openapi::{BuildError, Document, Method, OpenApi, method_hints};

fn document(paths: Value) -> Document {
    Document::from_value(json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
    }))
    .unwrap()
}

fn ok(content: Value) -> Value {
    json!({"description": "ok", "content": content})
}

#[test]
fn names_come_from_the_method_and_path_without_an_operation_id() {
    let generated = OpenApi::new(document(json!({
        "/users/{id}/repos": {"get": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {},
        }},
        "/users/{id}.repos": {"get": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {},
        }},
    })))
    .base_url("http://127.0.0.1:9")
    .build()
    .unwrap();
    let names: Vec<&str> = generated
        .operations
        .iter()
        .map(|op| op.tool.as_str())
        .collect();
    assert_eq!(names, ["get_users_id_repos", "get_users_id_repos_2"]);
    assert_eq!(generated.operations[0].operation_id, None);
}

#[test]
fn hints_follow_the_method_unless_overridden() {
    let mut careful = Hints::default();
    careful.read_only = Some(false);
    careful.destructive = Some(true);
    let generated = OpenApi::new(document(json!({
        "/a": {
            "get": {"operationId": "read_a", "responses": {}},
            "post": {"operationId": "reset_a", "responses": {}},
        },
        "/b": {"get": {"responses": {}}},
    })))
    .base_url("http://127.0.0.1:9")
    .hints("reset_a", careful)
    .hints("GET /b", careful)
    .build()
    .unwrap();
    let hints: Vec<Hints> = generated
        .tools
        .iter()
        .map(|tool| tool.about().hints)
        .collect();
    assert_eq!(hints[0], method_hints(Method::Get));
    assert_eq!(hints[1], careful);
    assert_eq!(hints[2], careful);
    assert_eq!(method_hints(Method::Put).idempotent, Some(true));
    assert_eq!(method_hints(Method::Put).destructive, Some(false));
    assert_eq!(method_hints(Method::Patch).idempotent, Some(false));
}

#[test]
fn output_schemas_follow_each_kind_of_response() {
    let generated = OpenApi::new(document(json!({
        "/json": {"get": {"responses": {"200": ok(json!({"application/json": {"schema": {"type": "integer"}}}))}}},
        "/text": {"get": {"responses": {"200": ok(json!({"text/plain": {"schema": {"type": "string"}}}))}}},
        "/empty": {"delete": {"responses": {"204": {"description": "gone"}}}},
        "/image": {"get": {"responses": {"200": ok(json!({"image/png": {}}))}}},
        "/either": {"post": {"responses": {
            "200": ok(json!({"application/json": {"schema": {"type": "string"}}})),
            "202": {"description": "accepted"},
        }}},
        "/untyped": {"get": {"responses": {"default": ok(json!({"application/json": {}}))}}},
    })))
    .base_url("http://127.0.0.1:9")
    .build()
    .unwrap();
    let output = |tool: &str| {
        generated
            .tools
            .iter()
            .find(|def| def.name() == tool)
            .unwrap_or_else(|| panic!("{tool}: {:?}", generated.skipped))
            .output_schema()
            .clone()
    };
    assert_eq!(output("get_json"), json!({"type": "integer"}));
    assert_eq!(output("get_text"), json!({"type": "string"}));
    assert_eq!(output("delete_empty"), json!({"type": "null"}));
    assert_eq!(
        output("get_image")["required"],
        json!(["content_type", "bytes", "base64"])
    );
    assert_eq!(
        output("post_either"),
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
    );
    assert_eq!(output("get_untyped"), json!(true));
}

#[test]
fn a_body_that_is_not_a_plain_object_is_one_argument() {
    let generated = OpenApi::new(document(json!({"/tags": {"put": {
        "operationId": "set_tags",
        "requestBody": {
            "required": true,
            "description": "The tags, in order.",
            "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}},
        },
        "responses": {},
    }}})))
    .base_url("http://127.0.0.1:9")
    .build()
    .unwrap();
    let schema = generated.tools[0].input_schema();
    assert_eq!(schema["required"], json!(["body"]));
    assert_eq!(schema["properties"]["body"]["type"], "array");
    assert_eq!(
        schema["properties"]["body"]["description"],
        "The tags, in order."
    );
    assert_eq!(schema["additionalProperties"], json!(false));
}

#[test]
fn the_base_url_comes_from_the_first_server_with_its_variables() {
    let mut root = json!({
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://{region}.api.example.com/v1", "variables": {"region": {"default": "eu"}}}],
        "paths": {},
    });
    assert!(
        OpenApi::new(Document::from_value(root.clone()).unwrap())
            .build()
            .is_ok()
    );
    root["servers"] = json!([{"url": "/v1"}]);
    let relative = OpenApi::new(Document::from_value(root.clone()).unwrap()).build();
    assert!(
        matches!(relative, Err(BuildError::BaseUrl(reason)) if reason.contains("give a base URL"))
    );
    let given = OpenApi::new(Document::from_value(root).unwrap())
        .base_url("ftp://example.com")
        .build();
    assert!(matches!(given, Err(BuildError::BaseUrl(_))));
}

#[test]
fn read_only_and_write_only_properties_are_not_required_and_escaped_references_resolve() {
    let mut root = json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/users": {"post": {
            "operationId": "create_user",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "$ref": "#/components/schemas/User%20Record",
            }}}},
            "responses": {"201": ok(json!({"application/json": {"schema": {
                "$ref": "#/components/schemas/User%20Record",
            }}}))},
        }}},
        "components": {"schemas": {"User Record": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "readOnly": true},
                "name": {"type": "string"},
                "password": {"type": "string", "writeOnly": true},
            },
            "required": ["id", "name", "password"],
        }}},
    });
    let generated = OpenApi::new(Document::from_value(root.take()).unwrap())
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    assert!(generated.skipped.is_empty(), "{:?}", generated.skipped);
    let tool = &generated.tools[0];
    // The body's fields are its arguments; the server sets `id`, so it is not required.
    assert_eq!(tool.input_schema()["required"], json!(["name", "password"]));
    let output = tool.output_schema();
    assert_eq!(output["$defs"]["User_Record"]["required"], json!(["name"]));
}
