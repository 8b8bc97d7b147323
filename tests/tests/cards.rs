//! Presentation cards from real tools: each kind, the generic fallback, one client code path
//! per kind whatever the tool, and the card JSON Schema.

use std::sync::OnceLock;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolprism::prelude::*;
use toolprism::present::{Card, present_call, present_result};
use toolprism_examples::tools::web::FetchPolicy;
use toolprism_examples::tools::{self, Workspace};
use toolprism_tests::TempDir;

/// A workspace with a few files, and every coding tool over it.
fn coding_registry(dir: &TempDir) -> Registry {
    dir.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    dir.write(
        "src/main.rs",
        "fn main() {\n    println!(\"{}\", answer());\n}\n",
    );
    dir.write("README.md", "# demo\n\nThe answer is 42.\n");
    let workspace = Workspace::new(dir.path()).unwrap();
    tools::register_all(Registry::builder(), &workspace)
        // The pages are served on loopback.
        .state(FetchPolicy::default().allow("127.0.0.1"))
        .build()
        .unwrap()
}

/// The result card of one call, as a live UI computes it.
async fn card_of(registry: &Registry, name: &str, args: Value) -> Card {
    let outcome = registry
        .dispatch(ToolCall::new("call_1", name, args.clone()), Surface::Direct)
        .await;
    present_result(
        name,
        &args,
        outcome.content(),
        outcome.is_error(),
        outcome.meta(),
    )
}

/// A client's whole rendering code: it switches on the card kind, never on a tool name.
fn render_card(card: &Card) -> String {
    match card {
        Card::Generic(card) => format!("[{}] {}", card.title, card.input),
        Card::Terminal(card) => format!(
            "$ {} → {:?}\n{}",
            card.command, card.exit_code, card.output_tail
        ),
        Card::Diff(card) => format!("{} +{} -{}", card.path, card.added, card.removed),
        Card::Read(card) => format!(
            "{} lines {}-{} of {}",
            card.path, card.first_line, card.last_line, card.total_lines
        ),
        Card::Search(card) => {
            let paths: Vec<&str> = card.matches.iter().map(|m| m.path.as_str()).collect();
            format!(
                "search `{}`: {} matches in {}",
                card.query,
                card.total,
                paths.join(", ")
            )
        }
        Card::Web(card) => format!("{} — {}", card.url, card.title.as_deref().unwrap_or("")),
        other => format!("unknown card {}", other.kind()),
    }
}

fn card_schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| jsonschema::validator_for(&Card::json_schema()).unwrap())
}

fn assert_valid(card: &Card) {
    let value = serde_json::to_value(card).unwrap();
    let errors: Vec<String> = card_schema()
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{value}: {errors:?}");
}

#[tokio::test]
async fn every_card_kind_comes_from_a_real_tool_and_matches_the_schema() {
    let dir = TempDir::new("cards-kinds");
    let registry = coding_registry(&dir);

    let read = card_of(&registry, "read", json!({"path": "src/lib.rs"})).await;
    let Card::Read(read_card) = &read else {
        panic!("{read:?}")
    };
    assert_eq!(
        (
            read_card.first_line,
            read_card.last_line,
            read_card.total_lines
        ),
        (1, 3, 3)
    );

    let edit = card_of(
        &registry,
        "edit",
        json!({"path": "src/lib.rs", "old_string": "    42", "new_string": "    43"}),
    )
    .await;
    let Card::Diff(diff) = &edit else {
        panic!("{edit:?}")
    };
    assert_eq!((diff.added, diff.removed), (1, 1));
    assert!(diff.diff.contains("-    42\n+    43\n"), "{}", diff.diff);

    let write = card_of(
        &registry,
        "write",
        json!({"path": "notes/new.txt", "content": "one\ntwo\n"}),
    )
    .await;
    let Card::Diff(created) = &write else {
        panic!("{write:?}")
    };
    assert_eq!((created.added, created.removed), (2, 0));
    assert!(
        created
            .diff
            .starts_with("--- /dev/null\n+++ b/notes/new.txt\n"),
        "{}",
        created.diff
    );

    let bash = card_of(&registry, "bash", json!({"command": "echo hello; exit 3"})).await;
    let Card::Terminal(terminal) = &bash else {
        panic!("{bash:?}")
    };
    assert_eq!(
        (terminal.exit_code, terminal.output_tail.as_str()),
        (Some(3), "hello\n")
    );

    let glob = card_of(&registry, "glob", json!({"pattern": "**/*.rs"})).await;
    let grep = card_of(&registry, "grep", json!({"pattern": "answer"})).await;
    for card in [&glob, &grep] {
        assert_eq!(card.kind(), "search", "{card:?}");
    }

    let todo = card_of(
        &registry,
        "todo_write",
        json!({"todos": [{"content": "ship it", "status": "in_progress"}]}),
    )
    .await;
    let Card::Generic(generic) = &todo else {
        panic!("{todo:?}")
    };
    assert_eq!(generic.title, "todo_write");
    assert_eq!(generic.input["todos"][0]["content"], "ship it");
    assert_eq!(
        generic.output.as_deref(),
        Some(&[ContentBlock::text("Todos (0/1 completed):\n[>] ship it")][..])
    );

    let web = card_of(
        &registry,
        "web_fetch",
        json!({"url": serve_once(PAGE).await}),
    )
    .await;
    let Card::Web(page) = &web else {
        panic!("{web:?}")
    };
    assert_eq!(page.title.as_deref(), Some("A test page"));
    assert!(
        page.excerpt.contains("Hello from a real socket."),
        "{}",
        page.excerpt
    );

    for card in [&read, &edit, &write, &bash, &glob, &grep, &todo, &web] {
        assert_valid(card);
    }
    let kinds: std::collections::BTreeSet<&str> = [&read, &edit, &bash, &glob, &todo, &web]
        .iter()
        .map(|card| card.kind())
        .collect();
    assert_eq!(kinds.len(), 6, "all six kinds: {kinds:?}");
}

#[tokio::test]
async fn two_tools_with_search_cards_render_through_one_code_path() {
    let dir = TempDir::new("cards-search");
    let registry = coding_registry(&dir);
    let glob = card_of(&registry, "glob", json!({"pattern": "src/*.rs"})).await;
    let grep = card_of(
        &registry,
        "grep",
        json!({"pattern": "answer", "include": "*.rs"}),
    )
    .await;
    // The client knows no tool names: both land in its `search` arm.
    assert_eq!(
        render_card(&glob),
        "search `src/*.rs`: 2 matches in src/lib.rs, src/main.rs"
    );
    assert_eq!(
        render_card(&grep),
        "search `answer`: 2 matches in src/lib.rs, src/main.rs"
    );
}

#[tokio::test]
async fn failures_and_tools_without_cards_get_the_generic_card() {
    let dir = TempDir::new("cards-generic");
    let registry = coding_registry(&dir);
    let args = json!({"path": "src/lib.rs", "old_string": "not there", "new_string": "x"});
    let failed = card_of(&registry, "edit", args.clone()).await;
    let Card::Generic(generic) = &failed else {
        panic!("{failed:?}")
    };
    assert!(generic.is_error);
    assert_eq!(generic.input, args);
    let output = generic.output.as_ref().unwrap();
    assert!(
        output[0].as_text().unwrap().contains("was not found"),
        "{output:?}"
    );
    assert_valid(&failed);

    let call = present_call("edit", &args);
    assert_eq!(render_card(&call), format!("[edit] {args}"));
    assert_valid(&call);
}

#[test]
fn a_meta_that_claims_a_card_but_is_not_one_falls_back_to_generic() {
    let meta = json!({"card": "read", "path": 3});
    let card = present_result("x", &json!({}), &[], false, Some(&meta));
    assert_eq!(card.kind(), "generic");
}

#[test]
fn the_card_schema_file_is_current() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../runtime/schemas/card.schema.json"
    );
    let generated = serde_json::to_string_pretty(&Card::json_schema()).unwrap() + "\n";
    if std::env::var_os("TOOLPRISM_BLESS").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "runtime/schemas/card.schema.json is stale; regenerate it with TOOLPRISM_BLESS=1 cargo test -p toolprism-tests --test cards"
    );
}

const PAGE: &str = "<html><head><title>A test page</title><style>p{}</style></head>\
<body><p>Hello from a real socket.</p><script>ignored()</script></body></html>";

/// Serves one HTTP response on a loopback port, and returns the URL.
async fn serve_once(body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0; 4096];
        let _ = socket.read(&mut request).await.unwrap();
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(response.as_bytes()).await.unwrap();
    });
    format!("http://{address}/page")
}
