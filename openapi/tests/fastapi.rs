//! A real API: the `FastAPI` application of `scripts/openapi_api/`, started on loopback by
//! `scripts/openapi-api` (which installs `FastAPI` and uvicorn on first use). Its own OpenAPI
//! 3.1 document, read from its URL, becomes tools that are listed and called: values,
//! error statuses, authentication, encoding on the wire, a response that contradicts the
//! document, and a redirect to another host.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism_openapi::{Credentials, Document, Generated, Method, OpenApi, RouteMap, Secret};

/// The shop's secrets, as `scripts/openapi_api/shop.py` holds them.
const TOKEN: &str = "shop-token-7f3a";
const API_KEY: &str = "shop-key-91c2";

struct Shop {
    base: String,
    _process: tokio::process::Child,
}

/// Starts the shop; `away` is where its `/away` redirects.
async fn shop(away: &str) -> Shop {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut process = tokio::process::Command::new(root.join("scripts/openapi-api"))
        .env("SHOP_AWAY", away)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("scripts/openapi-api starts");
    let stdout = process.stdout.take().expect("its stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    // The first run installs FastAPI: minutes, not seconds.
    let base = tokio::time::timeout(Duration::from_secs(600), lines.next_line())
        .await
        .expect("the shop starts within ten minutes")
        .expect("its stdout reads")
        .expect("it prints its base URL");
    Shop {
        base,
        _process: process,
    }
}

async fn tools(shop: &Shop, credentials: Credentials) -> (Generated, Registry) {
    let document = Document::from_url(&format!("{}/openapi.json", shop.base))
        .await
        .expect("the shop's document loads");
    let generated = OpenApi::new(document)
        .base_url(&shop.base)
        .credentials(credentials)
        .max_response_bytes(64 * 1024)
        .build()
        .expect("the tools build");
    let registry = Registry::builder()
        .tools(generated.tools.clone())
        .build()
        .expect("the tools register");
    (generated, registry)
}

async fn call(registry: &Registry, name: &str, args: Value) -> ToolOutcome {
    registry
        .dispatch(ToolCall::new("c1", name, args), Surface::Direct)
        .await
}

fn value(outcome: &ToolOutcome) -> Value {
    match outcome.value() {
        Some(value) => serde_json::to_value(value).unwrap(),
        None => panic!("a failure: {:?}", outcome.error()),
    }
}

fn failure(outcome: &ToolOutcome) -> (String, String) {
    let error = outcome.error().expect("a failure");
    let code = error
        .info
        .as_ref()
        .map(|info| info.code.clone())
        .unwrap_or_default();
    (code, error.message.clone())
}

#[tokio::test]
async fn a_fastapi_application_becomes_tools_with_hints_from_its_methods() {
    let shop = shop("http://127.0.0.1:9/").await;
    let (generated, registry) = tools(&shop, Credentials::new()).await;
    let names: Vec<&str> = generated
        .operations
        .iter()
        .map(|op| op.tool.as_str())
        .collect();
    for expected in [
        "list_items",
        "get_item",
        "create_item",
        "delete_item",
        "echo",
        "secure",
    ] {
        assert!(names.contains(&expected), "{expected} among {names:?}");
    }
    assert!(generated.skipped.is_empty(), "{:?}", generated.skipped);
    let delete = generated
        .operations
        .iter()
        .find(|op| op.tool == "delete_item")
        .unwrap();
    assert_eq!(
        (delete.method, delete.path.as_str()),
        (Method::Delete, "/items/{item_id}")
    );
    assert_eq!(delete.operation_id.as_deref(), Some("delete_item"));

    let snapshot = registry.snapshot();
    let hints = |name: &str| snapshot.definition(name).unwrap().about().hints;
    let get = hints("get_item");
    assert_eq!((get.read_only, get.idempotent), (Some(true), Some(true)));
    let delete = hints("delete_item");
    assert_eq!(
        (delete.read_only, delete.idempotent, delete.destructive),
        (Some(false), Some(true), Some(true))
    );
    let create = hints("create_item");
    assert_eq!(
        (create.read_only, create.idempotent, create.destructive),
        (Some(false), Some(false), Some(false))
    );
    assert_eq!(
        snapshot
            .definition("list_items")
            .unwrap()
            .about()
            .title
            .as_deref(),
        Some("Lists items.")
    );
}

#[tokio::test]
async fn calls_read_create_and_delete_and_error_statuses_carry_the_apis_body() {
    let shop = shop("http://127.0.0.1:9/").await;
    let (_, registry) = tools(&shop, Credentials::new()).await;

    let lamp = value(&call(&registry, "get_item", json!({"item_id": 1})).await);
    assert_eq!(lamp["name"], "lamp");

    let created = value(
        &call(
            &registry,
            "create_item",
            json!({"name": "desk", "price": 80, "tags": ["office"]}),
        )
        .await,
    );
    let id = created["id"].as_i64().expect("an id");
    assert_eq!(created["name"], "desk");
    let found = value(
        &call(
            &registry,
            "list_items",
            json!({"tag": ["office", "garden"]}),
        )
        .await,
    );
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");

    // Refused before any request: the API never sees it.
    let invalid = call(&registry, "create_item", json!({"name": "", "price": -1})).await;
    assert_eq!(failure(&invalid).0, codes::INVALID_TOOL_INPUT);
    let all = value(&call(&registry, "list_items", json!({"limit": 100})).await);
    assert_eq!(all.as_array().unwrap().len(), 2, "{all}");

    let deleted = call(&registry, "delete_item", json!({"item_id": id})).await;
    assert_eq!(value(&deleted), Value::Null);
    let again = call(&registry, "delete_item", json!({"item_id": id})).await;
    let (code, message) = failure(&again);
    assert_eq!(code, "HTTP_404");
    assert!(message.contains(&format!("no item {id}")), "{message}");
    assert!(message.contains("DELETE /items/{item_id}"), "{message}");
}

#[tokio::test]
async fn arguments_reach_the_wire_encoded_in_every_location() {
    let shop = shop("http://127.0.0.1:9/").await;
    let (_, registry) = tools(&shop, Credentials::new()).await;
    let seen = value(
        &call(
            &registry,
            "echo",
            json!({
                "word": "a b?c#é&d",
                "q": ["x y", "z&w=1"],
                "x-trace": "trace-1",
                "session": "s; t=u",
            }),
        )
        .await,
    );
    assert_eq!(seen["raw_path"], "/echo/a%20b%3Fc%23%C3%A9%26d");
    assert_eq!(seen["word"], "a b?c#é&d");
    assert_eq!(seen["raw_query"], "q=x%20y&q=z%26w%3D1");
    assert_eq!(seen["q"], json!(["x y", "z&w=1"]));
    assert_eq!(seen["x_trace"], "trace-1");
    // Percent-encoded, so it cannot add a cookie; Starlette does not decode cookie values.
    assert_eq!(seen["session"], "s%3B%20t%3Du");

    for segment in ["..", "."] {
        let refused = call(&registry, "echo", json!({"word": segment})).await;
        let (code, message) = failure(&refused);
        assert_eq!(code, "INVALID_REQUEST");
        assert!(message.contains("change the request's path"), "{message}");
    }
    // A query parameter named like a body field: both arguments, both on the wire.
    let labelled = call(
        &registry,
        "label",
        json!({"name": "from-query", "name__body": "from-body", "price": 1}),
    )
    .await;
    assert_eq!(
        value(&labelled),
        json!({"query_name": "from-query", "body_name": "from-body"})
    );

    // A `/` stays inside its segment (Starlette matches routes on the decoded path, so this
    // route is not found: it is not another route either).
    let slash = call(&registry, "echo", json!({"word": "a/b"})).await;
    assert_eq!(failure(&slash).0, "HTTP_404");
    let header = call(
        &registry,
        "echo",
        json!({"word": "w", "x-trace": "a\r\nX-Evil: 1"}),
    )
    .await;
    assert_eq!(failure(&header).0, "INVALID_REQUEST");
}

#[tokio::test]
async fn secrets_authenticate_and_never_show_in_failures() {
    let shop = shop("http://127.0.0.1:9/").await;
    let (_, anonymous) = tools(&shop, Credentials::new()).await;
    let refused = call(&anonymous, "secure", json!({})).await;
    assert!(failure(&refused).0.starts_with("HTTP_40"), "{refused:?}");

    let credentials = Credentials::new()
        .with("HTTPBearer", Secret::new(TOKEN))
        .with("APIKeyQuery", Secret::new(API_KEY));
    assert!(!format!("{credentials:?}").contains(TOKEN));
    let (_, registry) = tools(&shop, credentials).await;
    assert_eq!(
        value(&call(&registry, "secure", json!({})).await),
        json!({"ok": true})
    );
    assert_eq!(
        value(&call(&registry, "keyed", json!({})).await),
        json!({"ok": true})
    );

    let wrong = Credentials::new().with("APIKeyQuery", Secret::new("wrong-key-in-the-url"));
    let (_, registry) = tools(&shop, wrong).await;
    let (code, message) = failure(&call(&registry, "keyed", json!({})).await);
    assert_eq!(code, "HTTP_403");
    assert!(!message.contains("wrong-key-in-the-url"), "{message}");
}

#[tokio::test]
async fn a_response_that_contradicts_the_document_is_reported_not_passed_on() {
    let shop = shop("http://127.0.0.1:9/").await;
    let (_, registry) = tools(&shop, Credentials::new()).await;
    let lie = call(&registry, "liar", json!({})).await;
    let (code, message) = failure(&lie);
    assert_eq!(code, codes::INVALID_TOOL_OUTPUT, "{message}");
    assert!(lie.value().is_none());

    let text = call(&registry, "notes", json!({"size": 3})).await;
    assert_eq!(value(&text), json!("nnn"));
    let huge = call(&registry, "notes", json!({"size": 100_000})).await;
    assert_eq!(failure(&huge).0, "HTTP_RESPONSE_TOO_LARGE");

    // A refusal longer than what is read is quoted from its start, cut where marked.
    let refusal = call(&registry, "refusal", json!({"size": 100_000})).await;
    let (code, message) = failure(&refusal);
    assert_eq!(code, "HTTP_422");
    assert!(message.contains(": why why why"), "{message}");
    assert!(message.ends_with('…'), "{message}");
    assert!(message.len() < toolprism_openapi::MAX_ERROR_BODY_BYTES + 200);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed() {
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let away = format!("http://{}/stolen", elsewhere.local_addr().unwrap());
    let shop = shop(&away).await;
    let (_, registry) = tools(&shop, Credentials::new()).await;
    let (code, message) = failure(&call(&registry, "away", json!({})).await);
    assert_eq!(code, "HTTP_307", "{message}");
    // Nothing connected to the other origin.
    let accepted = tokio::time::timeout(Duration::from_millis(200), elsewhere.accept()).await;
    assert!(accepted.is_err(), "the redirect was followed");
}

#[tokio::test]
async fn route_maps_choose_and_rename_operations() {
    let shop = shop("http://127.0.0.1:9/").await;
    let document = Document::from_url(&format!("{}/openapi.json", shop.base))
        .await
        .unwrap();
    let generated = OpenApi::new(document)
        .base_url(&shop.base)
        .route(
            RouteMap::new()
                .path("^/items/")
                .unwrap()
                .methods([Method::Get])
                .rename("read_item"),
        )
        .route(RouteMap::new().tags(["items"]).include())
        .route(RouteMap::new().exclude())
        .build()
        .unwrap();
    let mut names: Vec<&str> = generated
        .operations
        .iter()
        .map(|op| op.tool.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["create_item", "delete_item", "list_items", "read_item"]
    );
    assert!(generated.skipped.iter().all(|skipped| skipped.excluded));
}
