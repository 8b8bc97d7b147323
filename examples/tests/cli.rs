//! The command line as a user drives it: the built `tools` binary spawned over a temporary
//! workspace, every subcommand, and the exit status of each class of outcome.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use toolprism_cli::exit;
use toolprism_cli::visible::is_hidden;

fn tools(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("the tools binary runs")
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nTODO: beta\n").unwrap();
    dir
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn status(output: &Output) -> u8 {
    u8::try_from(output.status.code().expect("exited")).unwrap()
}

#[test]
fn list_shows_every_tool_on_one_line() {
    let dir = workspace();
    let output = tools(dir.path(), &["list"]);
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9, "{text}");
    let read = lines.iter().find(|line| line.starts_with("read ")).unwrap();
    assert!(read.contains("{limit?, offset?, path} → "), "{read}");
    assert!(!text.contains('\x1b'), "NO_COLOR: no escapes");
}

#[test]
fn schema_prints_the_registered_or_lowered_definition() {
    let dir = workspace();
    let output = tools(dir.path(), &["schema", "read"]);
    assert_eq!(status(&output), exit::OK);
    let shown: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(shown["name"], "read");
    assert_eq!(shown["input_schema"]["required"], json!(["path"]));
    let output = tools(dir.path(), &["schema", "read", "--dialect", "gemini"]);
    let lowered: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        lowered["functionDeclarations"][0]["parameters"]["type"],
        "OBJECT"
    );
    let output = tools(dir.path(), &["schema", "nope"]);
    assert_eq!(status(&output), exit::UNKNOWN_TOOL);
    let output = tools(dir.path(), &["schema", "read", "--dialect", "klingon"]);
    assert_eq!(status(&output), exit::USAGE);
}

#[test]
fn call_shows_model_text_value_and_card() {
    let dir = workspace();
    let output = tools(dir.path(), &["call", "read", r#"{"path": "notes.txt"}"#]);
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    assert!(text.contains("model sees:\n"), "{text}");
    assert!(text.contains("2: TODO: beta"), "{text}");
    assert!(text.contains("value:\n"), "{text}");
    assert!(text.contains("\"total_lines\": 2"), "{text}");
    assert!(
        text.contains("card:\n  📄 notes.txt  lines 1–2 of 2"),
        "{text}"
    );
}

#[test]
fn call_reads_arguments_from_a_file_or_stdin_and_json_output_parses_back() {
    let dir = workspace();
    // Outside the workspace, or grep would find the pattern in the arguments' own file.
    let elsewhere = tempfile::tempdir().unwrap();
    let args_file = elsewhere.path().join("args.json");
    std::fs::write(&args_file, r#"{"pattern": "TODO"}"#).unwrap();
    let at_file = format!("@{}", args_file.display());
    let output = tools(dir.path(), &["call", "grep", &at_file, "--json"]);
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(line["is_error"], false);
    assert_eq!(line["value"]["matches"][0]["line"], "TODO: beta");
    assert_eq!(line["meta"]["card"], "search");

    let mut child = Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir.path())
        .args(["call", "glob", "-", "--nested"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"pattern": "*.txt"}"#)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    // A program's view: the value, no model text, no card.
    assert!(text.starts_with("value:\n"), "{text}");
    assert!(
        text.contains("notes.txt") && !text.contains("card:"),
        "{text}"
    );
}

#[test]
fn each_failure_class_has_its_exit_status() {
    let dir = workspace();
    let cases: [(&[&str], u8); 6] = [
        (&["call", "read", "not json"], exit::USAGE),
        (&["call", "read", "@missing.json"], exit::USAGE),
        (&["call", "nope"], exit::UNKNOWN_TOOL),
        (&["call", "read", r#"{"path": 7}"#], exit::INVALID_INPUT),
        (
            &["call", "read", r#"{"path": "missing.txt"}"#],
            exit::TOOL_FAILED,
        ),
        (&["call", "bash", r#"{"command": "exit 3"}"#], exit::OK),
    ];
    for (args, expected) in cases {
        let output = tools(dir.path(), args);
        assert_eq!(
            status(&output),
            expected,
            "{args:?}: {}{}",
            stdout(&output),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let output = tools(dir.path(), &["call", "read", r#"{"path": 7}"#, "--json"]);
    let line: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(line["error"]["info"]["code"], "INVALID_TOOL_INPUT");
    let output = tools(dir.path(), &["call", "read", "not json"]);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("the arguments are not JSON"),
        "{output:?}"
    );
}

#[test]
fn calls_logged_replay_in_the_terminal_and_view_as_a_page() {
    let dir = workspace();
    let program =
        json!({"code": "const r = await tools.read({path: 'notes.txt'}); return r.total_lines;"});
    for (tool, args) in [
        ("read", json!({"path": "notes.txt"}).to_string()),
        ("run_code", program.to_string()),
    ] {
        let output = tools(dir.path(), &["call", tool, &args, "--log", "session.jsonl"]);
        assert_eq!(status(&output), exit::OK, "{output:?}");
    }
    let output = tools(dir.path(), &["replay", "session.jsonl"]);
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    assert!(text.contains("▶ ▪ read {\"path\":\"notes.txt\"}"), "{text}");
    assert!(text.contains("↳ nested read (ok)"), "{text}");
    let output = tools(dir.path(), &["view", "session.jsonl", "-o", "page.html"]);
    assert_eq!(status(&output), exit::OK);
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert_eq!(page.matches("<section class=\"call").count(), 2, "{page}");
    let output = tools(dir.path(), &["replay", "missing.jsonl"]);
    assert_eq!(status(&output), exit::USAGE);
}

/// A file whose text would clear the screen, set the clipboard (OSC 52), overwrite a line, open
/// a CSI with the one-character C1 form and read backwards, if a terminal were given it.
const HOSTILE: &str = "fine\n\x1b]52;c;ZXZpbA==\x07\x1b[2Jgone\rOVER \u{9b}31m \u{202e}txt.exe\n";

fn assert_nothing_hidden(shown: &str) {
    let hidden: Vec<char> = shown.chars().filter(|&c| is_hidden(c)).collect();
    assert!(
        hidden.is_empty(),
        "{hidden:?} reached the terminal in {shown:?}"
    );
}

#[test]
fn what_a_tool_returns_never_drives_the_terminal() {
    let dir = workspace();
    std::fs::write(dir.path().join("hostile.txt"), HOSTILE).unwrap();
    let args = json!({"path": "hostile.txt"}).to_string();
    let output = tools(
        dir.path(),
        &["call", "read", &args, "--log", "session.jsonl"],
    );
    assert_eq!(status(&output), exit::OK, "{output:?}");
    let text = stdout(&output);
    assert_nothing_hidden(&text);
    // Shown, not dropped: the model's text as escapes, the value as JSON escapes.
    assert!(
        text.contains(
            r"2: \u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2Jgone\u{d}OVER \u{9b}31m \u{202e}txt.exe"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#""text": "\u001b]52;c;ZXZpbA==\u0007\u001b[2Jgone\rOVER \u009b31m \u202etxt.exe""#
        ),
        "{text}"
    );

    // A command's output, in the terminal card and the model's text; a failure's message.
    let printf = json!({"command": r"printf '\033[2J\342\200\256x\r'; exit 3"}).to_string();
    let output = tools(
        dir.path(),
        &["call", "bash", &printf, "--log", "session.jsonl"],
    );
    let text = stdout(&output);
    assert_nothing_hidden(&text);
    assert!(text.contains(r"\u{1b}[2J\u{202e}x"), "{text}");

    // One line of JSON: the same value, parsed back, with nothing hidden on the way.
    let output = tools(dir.path(), &["call", "read", &args, "--json"]);
    let line = stdout(&output);
    assert_nothing_hidden(&line);
    let parsed: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        parsed["value"]["lines"][1]["text"],
        HOSTILE.lines().nth(1).unwrap()
    );

    // A session log is someone else's file: replayed, it cannot drive the terminal either.
    let output = tools(dir.path(), &["replay", "session.jsonl"]);
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    assert_nothing_hidden(&text);
    assert!(text.contains(r"\u{1b}]52;c;"), "{text}");
}

#[test]
fn serve_answers_over_http_on_loopback() {
    let dir = workspace();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir.path())
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    let url = line.trim().strip_prefix("listening on ").expect(&line);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
}

#[test]
fn usage_errors_and_help() {
    let dir = workspace();
    assert_eq!(status(&tools(dir.path(), &["frobnicate"])), exit::USAGE);
    let help = tools(dir.path(), &["--help"]);
    assert_eq!(status(&help), exit::OK);
    let text = stdout(&help);
    for command in ["list", "schema", "call", "serve", "replay", "view"] {
        assert!(text.contains(command), "{command}: {text}");
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_drops_the_call_and_says_so() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = workspace();
    let log = dir.path().join("session.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir.path())
        .args(["call", "bash", r#"{"command": "sleep 60"}"#, "--log"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The call is logged once it is under way (the Ctrl-C listener is set up before it).
    for _ in 0..600 {
        if std::fs::read_to_string(&log).is_ok_and(|text| text.contains("tool_call")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(std::fs::read_to_string(&log).unwrap().contains("tool_call"));
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(status(&output), exit::CANCELLED, "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cancelled: the call to `bash` was dropped"),
        "{stderr}"
    );
}

/// Runs the binary under a pseudo-terminal (util-linux `script`), as a user at a terminal would.
#[cfg(unix)]
fn tools_at_a_terminal(dir: &Path, args: &str, no_color: bool) -> String {
    let mut command = Command::new("script");
    command
        .current_dir(dir)
        .args([
            "-qec",
            &format!("{} {args}", env!("CARGO_BIN_EXE_tools")),
            "/dev/null",
        ])
        .env_remove("NO_COLOR");
    if no_color {
        command.env("NO_COLOR", "1");
    }
    let output = command.output().expect("script (util-linux) runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[cfg(unix)]
#[test]
fn a_terminal_gets_a_progress_spinner_and_colors_unless_no_color() {
    let dir = workspace();
    let args = r#"call bash '{"command": "sleep 0.5; echo done"}'"#;
    let shown = tools_at_a_terminal(dir.path(), args, false);
    assert!(shown.contains("calling bash"), "no spinner: {shown:?}");
    assert!(
        shown.contains("\x1b[1mmodel sees:\x1b[0m"),
        "no color: {shown:?}"
    );
    let plain = tools_at_a_terminal(dir.path(), args, true);
    assert!(plain.contains("model sees:"), "{plain:?}");
    assert!(!plain.contains("\x1b[1m"), "NO_COLOR: {plain:?}");
    // Not a terminal: neither.
    let output = tools(dir.path(), &["call", "bash", r#"{"command": "echo done"}"#]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("calling"), "{stderr:?}");
}

/// `tools` with `input` on standard input.
fn tools_with_input(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tools binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn calls_prints_what_toolprism_reads_of_a_response_or_a_stream() {
    let dir = workspace();
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Adding."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1,}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ];
    let stream = events.iter().fold(String::new(), |mut stream, event| {
        stream.push_str("data: ");
        stream.push_str(&event.to_string());
        stream.push_str("\r\n\r\n");
        stream
    });
    std::fs::write(dir.path().join("stream.sse"), &stream).unwrap();
    let output = tools(
        dir.path(),
        &["calls", "--provider", "anthropic", "--stream", "stream.sse"],
    );
    assert_eq!(status(&output), exit::OK);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], r#"{"text":"Adding."}"#);
    assert_eq!(
        lines[1],
        r#"{"id":"toolu_1","name":"add","arguments":{"a":1}}"#
    );
    let broken: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(broken["id"], "toolu_2");
    assert_eq!(broken["error"]["code"], "INVALID_TOOL_INPUT");
    assert!(
        broken["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at byte 9"),
        "{broken}"
    );
    assert_eq!(lines.len(), 3);

    // A Gemini response read from standard input; Gemini sent no id.
    let body = r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"beep"}}]},"finishReason":"STOP"}]}"#;
    let output = tools_with_input(dir.path(), &["calls", "--provider", "gemini", "-"], body);
    assert_eq!(status(&output), exit::OK);
    assert_eq!(
        stdout(&output).trim(),
        r#"{"id":null,"name":"beep","arguments":{}}"#
    );

    // Not what the provider sends: a clear error and its own status.
    let output = tools_with_input(
        dir.path(),
        &["calls", "--provider", "openai-chat"],
        "{\"x\": 1}",
    );
    assert_eq!(status(&output), exit::UNREADABLE);
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no `choices`"));
}

#[test]
fn every_binary_prints_its_usage_for_help() {
    for (name, binary) in [
        ("tools", env!("CARGO_BIN_EXE_tools")),
        ("mcp_server", env!("CARGO_BIN_EXE_mcp_server")),
        ("mcp_client", env!("CARGO_BIN_EXE_mcp_client")),
        (
            "mcp_conformance_server",
            env!("CARGO_BIN_EXE_mcp_conformance_server"),
        ),
        ("agent", env!("CARGO_BIN_EXE_agent")),
        ("demo", env!("CARGO_BIN_EXE_demo")),
        ("policies", env!("CARGO_BIN_EXE_policies")),
        ("quickstart", env!("CARGO_BIN_EXE_quickstart")),
        ("bound_memory", env!("CARGO_BIN_EXE_bound_memory")),
    ] {
        let output = Command::new(binary)
            .arg("--help")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = stdout(&output);
        assert!(output.status.success(), "{name}: {output:?}");
        assert!(
            text.starts_with(&format!("Usage: {name}"))
                || (name == "tools" && text.contains("Usage: tools")),
            "{name}: {text}"
        );
    }
}

#[test]
fn a_reader_that_closes_the_pipe_ends_the_command_quietly() {
    let dir = workspace();
    // Far more than a pipe holds (64 KiB): the command is still writing when the reader goes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tools"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["call", "bash", r#"{"command": "seq 1 200000"}"#])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    let output = child.wait_with_output().unwrap();
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(!errors.contains("panicked"), "{errors}");
    assert_eq!(output.status.code(), Some(0), "{errors}");
}

/// The project's own tool set is locked (`examples/tools.lock.json`, which `.ci/run` checks):
/// it passes `lock --check`; a lock in which `read` had no `path` field finds the field a
/// new required one, a breaking change (status 8); `lock` writes the same file again.
#[test]
fn the_tool_set_is_locked_and_a_breaking_change_fails_the_check() {
    let dir = workspace();
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools.lock.json");
    let committed = committed.to_str().unwrap();
    let output = tools(dir.path(), &["lock", "--check", "--file", committed]);
    assert_eq!(
        status(&output),
        exit::OK,
        "{}{}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );

    let written = dir.path().join("tools.lock.json");
    assert_eq!(status(&tools(dir.path(), &["lock"])), exit::OK);
    let text = std::fs::read_to_string(&written).unwrap();
    assert_eq!(
        text,
        std::fs::read_to_string(committed).unwrap(),
        "the lock is current"
    );

    // As if `read` had had no `path`: the lock edited, and its fingerprint made again.
    let mut lock: Value = serde_json::from_str(&text).unwrap();
    let read = &mut lock["tools"]["read"];
    let schema = &mut read["definition"]["input_schema"];
    schema["properties"].as_object_mut().unwrap().remove("path");
    schema["required"] = json!([]);
    let fingerprint = toolprism::tool::Fingerprint::of_definition(&read["definition"]).unwrap();
    read["fingerprint"] = json!(fingerprint);
    let older = dir.path().join("older.lock.json");
    std::fs::write(&older, serde_json::to_string_pretty(&lock).unwrap()).unwrap();
    let output = tools(
        dir.path(),
        &["lock", "--check", "--file", older.to_str().unwrap()],
    );
    assert_eq!(status(&output), exit::BREAKING_CHANGE);
    let report = stdout(&output);
    assert!(
        report.contains("breaking   read /input_schema/properties/path — a new required input field (for callers)"),
        "{report}"
    );

    // Edited by hand without its fingerprint, the lock is refused.
    std::fs::write(&older, text.replace("Reads a file", "Reads any file")).unwrap();
    let output = tools(
        dir.path(),
        &["lock", "--check", "--file", older.to_str().unwrap()],
    );
    assert_eq!(status(&output), exit::USAGE);
    assert!(String::from_utf8_lossy(&output.stderr).contains("edited or damaged"));
}

/// `pins list` shows what an MCP client's pin file holds and what changed; `pins accept`
/// pins the listed definition.
#[test]
fn pins_lists_what_is_held_and_accepts_a_change() {
    let dir = workspace();
    let definition = |description: &str| {
        json!({"name": "clean", "title": null, "description": description,
            "inputSchema": {"type": "object"}, "outputSchema": null, "annotations": null})
    };
    let pinned = |description: &str| {
        let definition = definition(description);
        json!({"fingerprint": toolprism::tool::Fingerprint::of_definition(&definition).unwrap(),
            "definition": definition})
    };
    let file = dir.path().join("pins.json");
    let pins = json!({"toolprism_pins": 1, "servers": {"peer stdio:server": {"clean": {
        "pinned": pinned("Echoes."), "pending": pinned("Echoes. Call me again.")}}}});
    std::fs::write(&file, pins.to_string()).unwrap();
    let file = file.to_str().unwrap();

    let output = tools(dir.path(), &["pins", "list", "--file", file]);
    assert_eq!(status(&output), exit::OK);
    let shown = stdout(&output);
    assert!(
        shown.starts_with(
            "peer stdio:server — clean\n  compatible /description: a title or description changed"
        ),
        "{shown}"
    );

    let output = tools(
        dir.path(),
        &[
            "pins",
            "accept",
            "peer stdio:server",
            "clean",
            "--file",
            file,
        ],
    );
    assert_eq!(
        status(&output),
        exit::OK,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let shown = stdout(&tools(dir.path(), &["pins", "list", "--file", file]));
    assert!(shown.starts_with("nothing held"), "{shown}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let clean = &saved["servers"]["peer stdio:server"]["clean"];
    assert_eq!(
        clean["pinned"]["definition"]["description"],
        "Echoes. Call me again."
    );
    assert!(clean.get("pending").is_none());
    // Nothing waits any more.
    let output = tools(
        dir.path(),
        &[
            "pins",
            "accept",
            "peer stdio:server",
            "clean",
            "--file",
            file,
        ],
    );
    assert_eq!(status(&output), exit::USAGE);
}
