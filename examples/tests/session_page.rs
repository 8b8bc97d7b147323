//! The session page in a real browser: a session of every card kind — a hostile file among
//! the outputs — logged through the `tools` command line, written by `view`, loaded by
//! headless Chromium (Debian's, installed by `scripts/chromium` on first use); the rendered DOM
//! is checked and a screenshot saved to `target/tmp/session-page.png`.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

/// Serves one page with a hostile title on loopback, once; returns its URL.
fn serve_page() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut socket, _)) = listener.accept() {
            let mut request = [0; 2048];
            let _ = socket.read(&mut request);
            let body = "<html><head><title>Release &lt;notes&gt;</title></head><body><p>Version 2 is out.</p></body></html>";
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes());
        }
    });
    format!("http://{address}/notes")
}

fn tools(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir)
        // The page is served on loopback.
        .env("TOOLPRISM_FETCH_ALLOW", "127.0.0.1")
        .args(args)
        .output()
        .expect("the tools binary runs")
}

fn chromium(args: &[&str]) -> std::process::Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/chromium");
    Command::new(script)
        .args(args)
        .output()
        .expect("scripts/chromium runs")
}

const HOSTILE: &str = "<script>document.title='pwned'</script>\n<img src=x onerror=\"document.body.dataset.pwned='yes'\">\n";

#[test]
fn every_card_kind_renders_in_a_browser_and_hostile_markup_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The log and the page live outside the workspace, so `grep` does not search them.
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("session.jsonl");
    let log = log.to_str().unwrap();
    let page = out.path().join("page.html");
    std::fs::write(root.join("hostile.html"), HOSTILE).unwrap();
    std::fs::write(root.join("lib.rs"), "fn answer() -> u32 {\n    42\n}\n").unwrap();
    let url = serve_page();
    let calls = [
        ("read", json!({"path": "hostile.html"})),
        ("grep", json!({"pattern": "answer|script"})),
        (
            "edit",
            json!({"path": "lib.rs", "old_string": "42", "new_string": "43"}),
        ),
        (
            "bash",
            json!({"command": "printf '\\033[1;31mred\\033[0m and plain\\n'"}),
        ),
        ("bash", json!({"command": "seq 1 100000"})),
        ("web_fetch", json!({"url": url})),
        ("read", json!({"path": 7})),
        (
            "run_code",
            json!({"code": "const found = await tools.grep({pattern: 'answer'}); const file = await tools.read({path: found.matches[0].path}); return file.total_lines;"}),
        ),
    ];
    for (tool, args) in &calls {
        let args = args.to_string();
        let output = tools(root, &["call", tool, &args, "--log", log]);
        assert!(output.status.code().is_some(), "{tool}: {output:?}");
    }
    let output = tools(root, &["view", log, "-o", page.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let page_url = format!("file://{}", page.display());

    let dumped = chromium(&["--dump-dom", &page_url]);
    let dom = String::from_utf8_lossy(&dumped.stdout);
    assert!(
        dom.contains("</section>"),
        "Chromium rendered nothing:\n{}\n{}",
        dom,
        String::from_utf8_lossy(&dumped.stderr)
    );
    // Every call is there, each card by its kind.
    assert_eq!(
        dom.matches("<section class=\"call").count(),
        calls.len(),
        "{dom}"
    );
    for kind in ["read", "search", "diff", "terminal", "web", "generic"] {
        assert!(
            dom.contains(&format!("data-card=\"{kind}\"")),
            "no {kind} card:\n{dom}"
        );
    }
    for (shown, what) in [
        // Each call under its tool's title, beside the name the model called it by.
        (
            "<span class=\"title\">Edit file</span> <span class=\"tool\">edit</span>",
            "the titles",
        ),
        ("<span class=\"b f31\">red</span>", "ANSI colors"),
        ("<span class=\"add\">+    43</span>", "the diff"),
        ("class=\"content spilled\"", "the spilled preview"),
        ("<section class=\"call failed\"", "the failure"),
        ("2 nested calls", "the program's calls"),
    ] {
        assert!(dom.contains(shown), "{what}:\n{dom}");
    }
    // The tool keeps the title as the page wrote it (an entity), and the page shows that text.
    assert!(
        dom.contains("Release &amp;lt;notes&amp;gt;"),
        "the page title:\n{dom}"
    );
    // The hostile file is shown, never run: no element came out of it.
    assert!(dom.contains("&lt;script&gt;document.title="), "{dom}");
    assert!(!dom.contains("<script"), "{dom}");
    assert!(!dom.contains("<img src=\"x\""), "{dom}");
    assert!(
        !dom.contains("pwned=\"yes\"") && !dom.contains("<title>pwned"),
        "{dom}"
    );

    let screenshot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("session-page.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot = format!("--screenshot={}", screenshot.display());
    let output = chromium(&[
        &shot,
        "--window-size=1000,2200",
        "--hide-scrollbars",
        &page_url,
    ]);
    let png = std::fs::read(&screenshot).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "no screenshot: {output:?}"
    );
}
