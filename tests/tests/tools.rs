//! The first-party coding tools: for each, its value, its text (exact), its card and its bad
//! inputs; confinement to the workspace; and the bash timeout killing the process group.

// Fixtures build text the readable way.
#![allow(clippy::format_collect)]

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolprism::error::codes;
use toolprism::prelude::*;
use toolprism::present::{Card, present_result};
use toolprism_examples::tools::web::FetchPolicy;
use toolprism_examples::tools::{self, Workspace, workspace::OUTSIDE_WORKSPACE};
use toolprism_tests::{TempDir, code, text};

struct Fixture {
    dir: TempDir,
    registry: Registry,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let dir = TempDir::new(&format!("tools-{name}"));
        dir.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
        dir.write(
            "src/main.rs",
            "fn main() {\n    println!(\"{}\", answer());\n}\n",
        );
        dir.write("notes.txt", "alpha\nbeta\nalpha again\n");
        let workspace = Workspace::new(dir.path()).unwrap();
        let registry = tools::register_all(Registry::builder(), &workspace)
            // The pages are served on loopback.
            .state(FetchPolicy::default().allow("127.0.0.1"))
            .build()
            .unwrap();
        Self { dir, registry }
    }

    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        self.registry
            .dispatch(ToolCall::new("call_1", name, args), Surface::Direct)
            .await
    }

    async fn card(&self, name: &str, args: Value) -> Card {
        let outcome = self.call(name, args.clone()).await;
        present_result(
            name,
            &args,
            outcome.content(),
            outcome.is_error(),
            outcome.meta(),
        )
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(relative)).unwrap()
    }
}

fn value(outcome: &ToolOutcome) -> &Value {
    outcome.value().unwrap_or_else(|| panic!("{outcome:?}"))
}

// ---------------------------------------------------------------- read

#[tokio::test]
async fn read_returns_numbered_lines_and_a_hint_to_continue() {
    let fx = Fixture::new("read");
    fx.dir.write(
        "long.txt",
        (1..=10).map(|n| format!("row {n}\n")).collect::<String>(),
    );
    let outcome = fx
        .call("read", json!({"path": "long.txt", "offset": 3, "limit": 2}))
        .await;
    assert_eq!(
        value(&outcome),
        &json!({"kind": "text", "path": "long.txt", "offset": 3, "total_lines": 10,
                "lines": [{"number": 3, "text": "row 3"}, {"number": 4, "text": "row 4"}]})
    );
    assert_eq!(
        text(&outcome),
        "<path>long.txt</path>\n<type>file</type>\n<content>\n3: row 3\n4: row 4\n</content>\n(Showing lines 3-4 of 10. Use offset=5 to continue.)"
    );
    let whole = fx.call("read", json!({"path": "src/lib.rs"})).await;
    assert_eq!(
        text(&whole),
        "<path>src/lib.rs</path>\n<type>file</type>\n<content>\n1: pub fn answer() -> u32 {\n2:     42\n3: }\n</content>\n(End of file - total 3 lines)"
    );
    let Card::Read(card) = fx
        .card("read", json!({"path": "long.txt", "offset": 9}))
        .await
    else {
        panic!("not a read card")
    };
    assert_eq!(
        (card.first_line, card.last_line, card.total_lines),
        (9, 10, 10)
    );
}

#[tokio::test]
async fn read_returns_images_as_images() {
    let fx = Fixture::new("read-image");
    let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    fx.dir.write("dot.png", png);
    let outcome = fx.call("read", json!({"path": "dot.png"})).await;
    assert_eq!(value(&outcome)["kind"], "image");
    assert_eq!(value(&outcome)["mime_type"], "image/png");
    assert_eq!(
        outcome.content(),
        [
            ContentBlock::text("Image read successfully"),
            ContentBlock::image_from_bytes(&png, "image/png")
        ]
    );
}

#[tokio::test]
async fn read_refuses_bad_inputs_with_typed_failures() {
    let fx = Fixture::new("read-bad");
    fx.dir.write("binary.bin", [0_u8, 1, 2, 3]);
    fx.dir.write("latin1.txt", [b'c', b'a', b'f', 0xE9]);
    let cases = [
        (json!({"path": "missing.txt"}), "NOT_FOUND"),
        (json!({"path": "src"}), "IS_A_DIRECTORY"),
        (json!({"path": "binary.bin"}), "NOT_TEXT"),
        (json!({"path": "latin1.txt"}), "NOT_TEXT"),
        (
            json!({"path": "notes.txt", "offset": 99}),
            "OFFSET_PAST_END",
        ),
        (
            json!({"path": "notes.txt", "offset": 0}),
            codes::INVALID_TOOL_INPUT,
        ),
        (
            json!({"path": "notes.txt", "limit": 5000}),
            codes::INVALID_TOOL_INPUT,
        ),
        (
            json!({"path": "notes.txt", "lines": 3}),
            codes::INVALID_TOOL_INPUT,
        ),
    ];
    for (args, expected) in cases {
        let outcome = fx.call("read", args.clone()).await;
        assert_eq!(code(&outcome), Some(expected), "{args}: {}", text(&outcome));
    }
}

// ---------------------------------------------------------------- write

#[tokio::test]
async fn write_creates_and_overwrites_with_a_diff_card() {
    let fx = Fixture::new("write");
    let created = fx
        .call(
            "write",
            json!({"path": "docs/new.md", "content": "# New\n"}),
        )
        .await;
    assert_eq!(
        value(&created),
        &json!({"path": "docs/new.md", "operation": "create", "before": null, "bytes": 6})
    );
    assert_eq!(text(&created), "Created file successfully: docs/new.md");
    assert_eq!(fx.read("docs/new.md"), "# New\n");

    let args = json!({"path": "notes.txt", "content": "alpha\ngamma\n"});
    let overwritten = fx.call("write", args.clone()).await;
    assert_eq!(value(&overwritten)["operation"], "overwrite");
    assert_eq!(value(&overwritten)["before"], "alpha\nbeta\nalpha again\n");
    assert_eq!(text(&overwritten), "Wrote file successfully: notes.txt");
    let Card::Diff(card) = present_result(
        "write",
        &args,
        overwritten.content(),
        false,
        overwritten.meta(),
    ) else {
        panic!("not a diff card")
    };
    assert_eq!((card.added, card.removed), (1, 2));
    assert_eq!(
        card.diff,
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,2 @@\n alpha\n-beta\n-alpha again\n+gamma\n"
    );

    fx.dir.write("blob.bin", [0xFF, 0xFE, 0x00]);
    let binary = fx
        .call("write", json!({"path": "blob.bin", "content": "x"}))
        .await;
    assert_eq!(code(&binary), Some("NOT_TEXT"));
    let missing = fx.call("write", json!({"path": "a.txt"})).await;
    assert_eq!(code(&missing), Some(codes::INVALID_TOOL_INPUT));
}

// ---------------------------------------------------------------- edit

#[tokio::test]
async fn edit_replaces_exactly_one_match() {
    let fx = Fixture::new("edit");
    let args = json!({"path": "src/lib.rs", "old_string": "    42", "new_string": "    43"});
    let outcome = fx.call("edit", args.clone()).await;
    assert_eq!(
        value(&outcome),
        &json!({"path": "src/lib.rs", "replacements": 1,
                "before": "pub fn answer() -> u32 {\n    42\n}\n",
                "after": "pub fn answer() -> u32 {\n    43\n}\n"})
    );
    assert_eq!(
        text(&outcome),
        "Edited file successfully: src/lib.rs\nReplacements: 1\n```diff\n-    42\n+    43\n```"
    );
    assert_eq!(
        fx.read("src/lib.rs"),
        "pub fn answer() -> u32 {\n    43\n}\n"
    );
    let Card::Diff(card) = present_result("edit", &args, outcome.content(), false, outcome.meta())
    else {
        panic!("not a diff card")
    };
    assert_eq!(
        (card.path.as_str(), card.added, card.removed),
        ("src/lib.rs", 1, 1)
    );
}

#[tokio::test]
async fn edit_names_the_problem_when_it_cannot_replace() {
    let fx = Fixture::new("edit-bad");
    let edit = |old: &str, new: &str, all: bool| json!({"path": "notes.txt", "old_string": old, "new_string": new, "replace_all": all});
    let none = fx.call("edit", edit("gamma", "delta", false)).await;
    assert_eq!(code(&none), Some("NO_MATCH"));
    assert!(
        text(&none).contains("copy the text exactly"),
        "{}",
        text(&none)
    );

    let many = fx.call("edit", edit("alpha", "omega", false)).await;
    assert_eq!(code(&many), Some("MULTIPLE_MATCHES"));
    assert!(text(&many).contains("occurs 2 times"), "{}", text(&many));
    assert_eq!(
        fx.read("notes.txt"),
        "alpha\nbeta\nalpha again\n",
        "a failed edit changes nothing"
    );

    let all = fx.call("edit", edit("alpha", "omega", true)).await;
    assert_eq!(value(&all)["replacements"], 2);
    assert_eq!(fx.read("notes.txt"), "omega\nbeta\nomega again\n");

    assert_eq!(
        code(&fx.call("edit", edit("", "x", false)).await),
        Some("EMPTY_OLD_STRING")
    );
    assert_eq!(
        code(&fx.call("edit", edit("beta", "beta", false)).await),
        Some("NO_CHANGE")
    );
}

// ---------------------------------------------------------------- glob

#[tokio::test]
async fn glob_keeps_every_path_in_the_value_and_shows_a_page() {
    let fx = Fixture::new("glob");
    fx.dir.write(".gitignore", "target/\n");
    fx.dir.write("target/debug/build.rs", "");
    for n in 0..150 {
        fx.dir.write(&format!("many/file{n:03}.txt"), "");
    }
    let rust = fx.call("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        value(&rust),
        &json!({"paths": ["src/lib.rs", "src/main.rs"]}),
        "target/ is ignored"
    );
    assert_eq!(text(&rust), "src/lib.rs\nsrc/main.rs");

    let many = fx
        .call("glob", json!({"pattern": "*.txt", "path": "many"}))
        .await;
    assert_eq!(value(&many)["paths"].as_array().unwrap().len(), 150);
    let shown = text(&many);
    assert_eq!(
        shown
            .lines()
            .filter(|line| line.starts_with("many/"))
            .count(),
        100
    );
    assert!(shown.ends_with(
        "(Showing 100 of 150 files. Use a more specific pattern or path to see the rest.)"
    ));
    let Card::Search(card) = fx
        .card("glob", json!({"pattern": "*.txt", "path": "many"}))
        .await
    else {
        panic!("not a search card")
    };
    assert_eq!((card.total, card.matches.len()), (150, 50));

    let none = fx.call("glob", json!({"pattern": "*.zig"})).await;
    assert_eq!(text(&none), "No files found");
    assert_eq!(
        code(&fx.call("glob", json!({"pattern": "a[b"})).await),
        Some("INVALID_PATTERN")
    );
}

// ---------------------------------------------------------------- grep

#[tokio::test]
async fn grep_finds_lines_by_file_and_skips_binaries() {
    let fx = Fixture::new("grep");
    fx.dir.write("data.bin", b"answer\0binary");
    let outcome = fx.call("grep", json!({"pattern": "answer"})).await;
    assert_eq!(
        value(&outcome),
        &json!({"truncated": false, "matches": [
            {"path": "src/lib.rs", "line_number": 1, "line": "pub fn answer() -> u32 {"},
            {"path": "src/main.rs", "line_number": 2, "line": "    println!(\"{}\", answer());"},
        ]})
    );
    assert_eq!(
        text(&outcome),
        "Found 2 matches\nsrc/lib.rs:\n  Line 1: pub fn answer() -> u32 {\n\nsrc/main.rs:\n  Line 2:     println!(\"{}\", answer());"
    );
    let Card::Search(card) = fx.card("grep", json!({"pattern": "answer"})).await else {
        panic!("not a search card")
    };
    assert_eq!((card.query.as_str(), card.total), ("answer", 2));
    assert_eq!(card.matches[1].path, "src/main.rs");
    assert_eq!(card.matches[1].line, Some(2));
    let only_lib = fx
        .call("grep", json!({"pattern": "answer", "include": "lib.rs"}))
        .await;
    assert_eq!(value(&only_lib)["matches"].as_array().unwrap().len(), 1);

    fx.dir.write(
        "big.txt",
        (0..300).map(|n| format!("hit {n}\n")).collect::<String>(),
    );
    let big = fx
        .call("grep", json!({"pattern": "^hit", "path": "big.txt"}))
        .await;
    assert_eq!(value(&big)["matches"].as_array().unwrap().len(), 300);
    assert!(text(&big).ends_with(
        "(Showing 100 of 300 matches. Narrow the pattern or the path to see the rest.)"
    ));
    assert_eq!(
        text(&fx.call("grep", json!({"pattern": "zzz"})).await),
        "No matches found"
    );
    assert_eq!(
        code(&fx.call("grep", json!({"pattern": "(unclosed"})).await),
        Some("INVALID_PATTERN")
    );
}

// ---------------------------------------------------------------- bash

#[tokio::test]
async fn bash_reports_output_and_exit_code() {
    let fx = Fixture::new("bash");
    let args = json!({"command": "echo out; echo err >&2; exit 4"});
    let outcome = fx.call("bash", args.clone()).await;
    let value = value(&outcome);
    assert_eq!(
        (
            value["exit_code"].clone(),
            value["stdout"].clone(),
            value["stderr"].clone()
        ),
        (json!(4), json!("out\n"), json!("err\n"))
    );
    assert_eq!(value["timed_out"], false);
    assert_eq!(text(&outcome), "out\nerr\n\nCommand exited with code 4.");
    let Card::Terminal(card) =
        present_result("bash", &args, outcome.content(), false, outcome.meta())
    else {
        panic!("not a terminal card")
    };
    assert_eq!(
        (card.exit_code, card.output_tail.as_str()),
        (Some(4), "out\nerr\n")
    );

    let in_root = fx.call("bash", json!({"command": "ls src"})).await;
    assert_eq!(
        text(&in_root),
        "lib.rs\nmain.rs\n\nCommand exited with code 0."
    );
    for bad in [
        json!({"command": "true", "timeout_ms": 0}),
        json!({"command": "true", "timeout_ms": 700_000}),
        json!({}),
    ] {
        assert_eq!(
            code(&fx.call("bash", bad).await),
            Some(codes::INVALID_TOOL_INPUT)
        );
    }
}

#[tokio::test]
async fn a_bash_timeout_kills_the_whole_process_group() {
    let fx = Fixture::new("bash-timeout");
    // A background grandchild that would outlive a kill of the shell alone.
    let command = "sleep 300 & echo $! > sleeper.pid; echo started; sleep 100";
    let outcome = fx
        .call("bash", json!({"command": command, "timeout_ms": 2_000}))
        .await;
    let value = value(&outcome);
    assert_eq!(value["timed_out"], true);
    assert_eq!(value["exit_code"], Value::Null);
    assert_eq!(value["stdout"], "started\n");
    assert_eq!(
        text(&outcome),
        "started\n\nCommand exceeded timeout of 2000 ms. Retry with a larger timeout."
    );
    let pid = fx.read("sleeper.pid").trim().to_owned();
    // Reaped or a zombie about to be: either way, not running.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let running = state
        .split_whitespace()
        .nth(2)
        .is_some_and(|state| state != "Z");
    assert!(
        !running,
        "the background sleep {pid} survived the timeout: {state}"
    );
}

// ---------------------------------------------------------------- todo_write

#[tokio::test]
async fn todo_write_keeps_the_list_and_counts_it() {
    let fx = Fixture::new("todo");
    let args = json!({"todos": [
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "write a test", "status": "pending"},
    ]});
    let outcome = fx.call("todo_write", args.clone()).await;
    assert_eq!(
        value(&outcome)["counts"],
        json!({"pending": 1, "in_progress": 1, "completed": 1})
    );
    assert_eq!(
        text(&outcome),
        "Todos (1/3 completed):\n[x] read the code\n[>] fix the bug\n[ ] write a test"
    );
    assert_eq!(fx.card("todo_write", args).await.kind(), "generic");
    let bad = json!({"todos": [{"content": "x", "status": "done"}]});
    assert_eq!(
        code(&fx.call("todo_write", bad).await),
        Some(codes::INVALID_TOOL_INPUT)
    );
}

// ---------------------------------------------------------------- web_fetch

#[tokio::test]
async fn web_fetch_returns_the_text_of_a_page() {
    let fx = Fixture::new("web");
    let url = serve(
        200,
        "<html><head><title>T</title></head><body><p>Body &amp; soul</p></body></html>",
    )
    .await;
    let outcome = fx.call("web_fetch", json!({"url": url})).await;
    assert_eq!(
        value(&outcome),
        &json!({"url": url, "status": 200, "title": "T", "text": "Body & soul", "truncated": false})
    );
    assert_eq!(text(&outcome), "Body & soul");
    let Card::Web(card) = fx
        .card(
            "web_fetch",
            json!({"url": serve(200, "<title>T</title>x").await}),
        )
        .await
    else {
        panic!("not a web card")
    };
    assert_eq!(card.title.as_deref(), Some("T"));

    let missing = fx
        .call("web_fetch", json!({"url": serve(404, "gone").await}))
        .await;
    assert_eq!(code(&missing), Some("HTTP_ERROR"));
    let tls = fx
        .call("web_fetch", json!({"url": "https://example.com"}))
        .await;
    assert_eq!(code(&tls), Some("UNSUPPORTED_URL"));
    let closed = fx
        .call("web_fetch", json!({"url": "http://127.0.0.1:1/"}))
        .await;
    assert_eq!(code(&closed), Some(codes::TOOL_FAILED));
}

#[tokio::test]
async fn web_fetch_reaches_no_private_address_nor_follows_a_redirect_to_one() {
    let dir = TempDir::new("tools-web-private");
    let workspace = Workspace::new(dir.path()).unwrap();
    let registry = |policy: FetchPolicy| {
        tools::register_all(Registry::builder(), &workspace)
            .state(policy)
            .build()
            .unwrap()
    };
    let fetch = |registry: Registry, url: String| async move {
        registry
            .dispatch(
                ToolCall::new("c", "web_fetch", json!({"url": url})),
                Surface::Direct,
            )
            .await
    };
    // By default: loopback by name and by number (IPv4, IPv6, IPv4 inside IPv6), the cloud
    // metadata address, private and unspecified ones — refused before any connection.
    for url in [
        "http://127.0.0.1:9/",
        "http://localhost:9/",
        "http://[::1]:9/",
        "http://[::ffff:127.0.0.1]:9/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://192.168.0.1/",
        "http://0.0.0.0:9/",
    ] {
        let outcome = fetch(registry(FetchPolicy::default()), url.to_owned()).await;
        assert_eq!(code(&outcome), Some("FORBIDDEN_ADDRESS"), "{url}");
    }
    // A host let through that redirects to one that is not: the redirect is checked too.
    let secret = serve(200, "secret").await;
    let hop = serve_redirect(&secret).await;
    let hop_host = hop
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let refused = fetch(
        registry(FetchPolicy::default().allow(hop_host.clone())),
        hop.clone(),
    )
    .await;
    assert_eq!(code(&refused), Some("FORBIDDEN_ADDRESS"));
    let message = &refused.error().unwrap().message;
    assert!(message.contains("127.0.0.1"), "{message}");
    // Both let through: followed to the page.
    let hop = serve_redirect(&serve(200, "secret").await).await;
    let hop_host = hop
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let policy = FetchPolicy::default().allow(hop_host).allow("127.0.0.1");
    let followed = fetch(registry(policy), hop).await;
    assert_eq!(value(&followed)["text"], json!("secret"));
}

/// A server that answers one request with a redirect to `to`.
async fn serve_redirect(to: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let to = to.to_owned();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0; 4096];
        let _ = socket.read(&mut request).await;
        let response = format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n");
        socket.write_all(response.as_bytes()).await.unwrap();
    });
    format!("http://{address}/")
}

async fn serve(status: u16, body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0; 4096];
        let _ = socket.read(&mut request).await;
        // Chunked, to exercise the decoder.
        let response = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        );
        socket.write_all(response.as_bytes()).await.unwrap();
    });
    format!("http://{address}/")
}

// ---------------------------------------------------------------- confinement

#[tokio::test]
async fn file_tools_are_confined_to_the_workspace() {
    let fx = Fixture::new("confined");
    let outside = TempDir::new("tools-outside");
    let secret = outside.write("secret.txt", "do not read\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), fx.dir.path().join("escape")).unwrap();
        std::os::unix::fs::symlink(&secret, fx.dir.path().join("secret-link.txt")).unwrap();
    }
    let secret = secret.to_str().unwrap();
    let attempts = [
        ("read", json!({"path": "../../etc/passwd"})),
        ("read", json!({"path": "/etc/passwd"})),
        ("read", json!({"path": secret})),
        ("read", json!({"path": "secret-link.txt"})),
        ("read", json!({"path": "escape/secret.txt"})),
        ("write", json!({"path": "../evil.txt", "content": "x"})),
        ("write", json!({"path": "escape/new.txt", "content": "x"})),
        ("write", json!({"path": "secret-link.txt", "content": "x"})),
        ("write", json!({"path": "/tmp/evil.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "escape/secret.txt", "old_string": "do", "new_string": "did"}),
        ),
        ("glob", json!({"pattern": "*", "path": "escape"})),
        ("glob", json!({"pattern": "*", "path": ".."})),
        ("grep", json!({"pattern": "read", "path": "escape"})),
        ("grep", json!({"pattern": "read", "path": "/etc"})),
    ];
    for (name, args) in attempts {
        let outcome = fx.call(name, args.clone()).await;
        assert_eq!(
            code(&outcome),
            Some(OUTSIDE_WORKSPACE),
            "{name} {args}: {}",
            text(&outcome)
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "do not read\n"
    );
    assert!(!outside.path().join("new.txt").exists());

    // An absolute path inside the workspace is fine.
    let inside = fx.dir.path().join("notes.txt");
    let outcome = fx
        .call("read", json!({"path": inside.to_str().unwrap()}))
        .await;
    assert!(!outcome.is_error(), "{}", text(&outcome));
}
