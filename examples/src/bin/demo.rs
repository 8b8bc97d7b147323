//! The demo: a scripted coding session over a temporary workspace that calls every tool —
//! including one output too big for the model (spilled, then read back from where it was
//! kept), one call a policy denies, one invalid input, and a Code Mode program that combines
//! `grep` and `read` and computes with their values — and prints, per call, what the model
//! sees, the canonical value programs get, and the card a UI shows.
//!
//! `cargo run -p toolprism-examples --bin demo` — no network, no API key. The session is
//! also logged; `cargo run -p toolprism-examples --bin tools -- replay <log>` replays it, and
//! `… -- view <log>` writes it as an HTML page.

use std::path::PathBuf;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolprism::bound::{BoundLimits, FsOutputStore};
use toolprism::pipeline::{ExecuteCall, PreDecision};
use toolprism::prelude::*;
use toolprism::present::present_result;
use toolprism::session::{LogOptions, SessionLog};
use toolprism_codemode::CodeMode;
use toolprism_examples::terminal::{self, shorten};
use toolprism_examples::tools::web::FetchPolicy;
use toolprism_examples::tools::{self, Workspace};

/// What a model writes for Code Mode: tools called as functions, their values used as data.
const PROGRAM: &str = r#"const found = await tools.grep({ pattern: "answer" });
const files = [...new Set(found.matches.map((m) => m.path))];
const lines: Record<string, number> = {};
for (const path of files) {
  const file = await tools.read({ path });
  if (file.kind === "text") lines[path] = file.total_lines;
}
console.log(`${found.matches.length} matches in ${files.length} files`);
return lines;"#;

/// Refuses destructive commands outright.
fn no_destruction(call: &ExecuteCall) -> PreDecision {
    let command = call.args()["command"].as_str().unwrap_or_default();
    if call.name() == "bash" && command.contains("rm -rf") {
        PreDecision::deny("recursive deletion is not allowed in this session")
    } else {
        PreDecision::Allow
    }
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: demo

A scripted coding session over a temporary workspace that calls every tool and prints, per
call, what the model sees, the value programs get and the card a UI shows. No network, no API
key. The session is logged; `tools replay LOG` replays it and `tools view LOG` writes it as a
page.
";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    let base = std::env::temp_dir().join(format!("toolprism-demo-{}", std::process::id()));
    let (root, store_dir) = (base.join("workspace"), base.join("tool-output"));
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(
        root.join("src/lib.rs"),
        "/// The answer.\npub fn answer() -> u32 {\n    42\n}\n",
    )?;
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", demo::answer());\n}\n",
    )?;
    std::fs::write(root.join(".gitignore"), "target/\n")?;
    std::fs::create_dir_all(root.join("target"))?;
    std::fs::write(root.join("target/ignored.rs"), "fn answer() {}\n")?;

    let workspace = Workspace::new(&root)?.with_readable(&store_dir)?;
    let page = serve_page().await?;
    // The page is served on loopback, which `web_fetch` reaches only when told it may.
    let page_host = page
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let registry = tools::register_all(Registry::builder(), &workspace)
        .state(FetchPolicy::default().allow(page_host))
        .pre_execute(no_destruction)
        .limits(BoundLimits::new(40, 4 * 1024))
        .output_store(FsOutputStore::new(&store_dir))
        .build()?;
    CodeMode::new().register(&registry)?;
    let log_path = base.join("session.jsonl");
    let (log, _) = SessionLog::open(&log_path, LogOptions::default())?;

    let mut script: Vec<(&str, Value)> = vec![
        (
            "todo_write",
            json!({"todos": [
                {"content": "Find where the answer is defined", "status": "in_progress"},
                {"content": "Change it to 43", "status": "pending"},
            ]}),
        ),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("grep", json!({"pattern": "answer"})),
        ("read", json!({"path": "src/lib.rs"})),
        (
            "edit",
            json!({"path": "src/lib.rs", "old_string": "    42", "new_string": "    43"}),
        ),
        (
            "edit",
            json!({"path": "src/lib.rs", "old_string": "    42", "new_string": "    44"}),
        ),
        (
            "write",
            json!({"path": "NOTES.md", "content": "# Notes\n\nThe answer is now 43.\n"}),
        ),
        ("bash", json!({"command": "grep -rn answer src | wc -l"})),
        ("bash", json!({"command": "seq 1 100000"})),
        ("bash", json!({"command": "rm -rf /"})),
        ("read", json!({"path": 42})),
        ("read", json!({"path": "../../etc/passwd"})),
        ("web_fetch", json!({"url": page})),
        ("run_code", json!({"code": PROGRAM})),
    ];
    let mut at = 0;
    while at < script.len() {
        let (name, args) = script[at].clone();
        at += 1;
        let call = ToolCall::new(format!("call_{at}"), name, args.clone());
        let outcome = log
            .dispatch(&registry.snapshot(), call, Surface::Direct)
            .await?;
        println!("━━ {at}. {name} {}", shorten(&args.to_string(), 100));
        println!(
            "  model sees:\n{}",
            terminal::content(outcome.content(), 12)
        );
        match (outcome.value(), outcome.error()) {
            (Some(value), _) => println!("  value:  {}", shorten(&value.to_string(), 160)),
            (None, Some(error)) => println!(
                "  error:  {} ({})",
                shorten(&error.message.replace('\n', " "), 120),
                error.code().unwrap_or("-")
            ),
            (None, None) => {}
        }
        let card = present_result(
            name,
            &args,
            outcome.content(),
            outcome.is_error(),
            outcome.meta(),
        );
        println!(
            "  card:   {}\n",
            terminal::card(&card).replace('\n', "\n        ")
        );

        // Follow the spill marker once, as a model would: read the kept output from an offset.
        if let Some(kept) = spilled_file(&outcome) {
            script.insert(
                at,
                ("read", json!({"path": kept, "offset": 50_000, "limit": 5})),
            );
        }
    }
    println!("Session logged to {}", log_path.display());
    println!(
        "Replay it: cargo run -p toolprism-examples --bin tools -- replay {}",
        log_path.display()
    );
    println!(
        "See it:    cargo run -p toolprism-examples --bin tools -- view {}",
        log_path.display()
    );
    Ok(())
}

/// The path a spill marker names, if the outcome was bounded.
fn spilled_file(outcome: &ToolOutcome) -> Option<String> {
    let text = outcome.content().iter().find_map(ContentBlock::as_text)?;
    let start = text.find("saved at ")? + "saved at ".len();
    let end = start + text[start..].find("; read")?;
    Some(
        PathBuf::from(&text[start..end])
            .to_string_lossy()
            .into_owned(),
    )
}

/// Serves one small HTML page on a loopback port (no network needed), and returns its URL.
async fn serve_page() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        if let Ok((mut socket, _)) = listener.accept().await {
            let mut request = [0; 2048];
            let _ = socket.read(&mut request).await;
            let body = "<html><head><title>The answer</title></head><body><h1>42</h1><p>It was 42; now it is 43.</p></body></html>";
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    Ok(format!("http://{address}/answer"))
}
