//! The `mcp_server` example driven by the official Python SDK's `ClientSession` over stdio, at
//! both protocol generations. `scripts/mcp-peer` installs the pinned SDK on first use.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn drive(generation: &str, workspace: &Path, output: &Path) -> Value {
    let mut peer = peer("drive_server.py");
    peer.arg(generation)
        .arg(env!("CARGO_BIN_EXE_mcp_server"))
        .args(["--demo", "--max-lines", "20", "--root"])
        .arg(workspace)
        .arg("--output-dir")
        .arg(output);
    report(&mut peer)
}

/// A Python peer of `scripts/mcp_peers/`, to be given its arguments.
fn peer(script: &str) -> Command {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut command = Command::new(root.join("scripts/mcp-peer"));
    command.arg(script);
    command
}

/// Runs a peer; the one JSON report it prints last.
fn report(peer: &mut Command) -> Value {
    let run = peer.output().expect("scripts/mcp-peer runs");
    assert!(
        run.status.success(),
        "the Python client failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8(run.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("one JSON report")
}

#[test]
fn the_python_sdk_lists_calls_validates_answers_reads_back_and_hears_progress() {
    let workspace = tempfile::tempdir().unwrap();
    let output = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("small.txt"), "alpha\nbeta\n").unwrap();
    let big = (1..=500).fold(String::new(), |mut text, n| {
        let _ = writeln!(text, "row {n}");
        text
    });
    std::fs::write(workspace.path().join("big.txt"), &big).unwrap();

    for generation in ["legacy", "current"] {
        let report = drive(generation, workspace.path(), output.path());
        let tools = report["tools"].as_array().unwrap();
        assert_eq!(tools.first(), Some(&json!("read")), "{generation}");
        assert_eq!(tools.last(), Some(&json!("greet")));

        // The coding tools' titles and hints, as the SDK's types read them; examples are in
        // the description, MCP having no field for them.
        let about = &report["about"];
        assert_eq!(about["read"]["title"], "Read file", "{generation}");
        assert_eq!(
            about["read"]["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": false}),
            "{generation}"
        );
        assert_eq!(
            about["write"]["annotations"],
            json!({"destructiveHint": true, "idempotentHint": true, "openWorldHint": false}),
            "{generation}"
        );
        assert_eq!(about["bash"]["annotations"]["destructiveHint"], true);
        assert_eq!(about["bash"]["annotations"]["openWorldHint"], true);
        assert_eq!(
            about["web_fetch"]["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": true})
        );
        assert!(
            about["grep"]["description"]
                .as_str()
                .unwrap()
                .contains("Examples of arguments:"),
            "{generation}"
        );

        // The SDK checked `structuredContent` against `outputSchema` before returning it.
        let read = &report["read"];
        assert_eq!(read["is_error"], false);
        let lines = json!([{"number": 1, "text": "alpha"}, {"number": 2, "text": "beta"}]);
        let value = match generation {
            "legacy" => &read["structured"]["result"],
            _ => &read["structured"],
        };
        assert_eq!(value["lines"], lines, "{generation}");
        assert!(read["text"][0].as_str().unwrap().contains("1: alpha"));
        assert_eq!(read["meta"]["toolprism.dev/card"]["card"], "read");

        let invalid = &report["invalid"];
        assert_eq!(invalid["is_error"], true);
        assert_eq!(invalid["structured"], Value::Null);
        assert_eq!(
            invalid["meta"]["toolprism.dev/error"]["code"],
            "INVALID_TOOL_INPUT"
        );
        assert!(invalid["text"][0].as_str().unwrap().contains("/path"));

        assert_eq!(report["unknown"]["code"], -32602);

        let counted = &report["count_to"];
        let expected = match generation {
            "legacy" => json!({"result": 4}),
            _ => json!(4),
        };
        assert_eq!(counted["structured"], expected);
        let steps: Vec<f64> = counted["progress"]
            .as_array()
            .unwrap()
            .iter()
            .map(|step| step[0].as_f64().unwrap())
            .collect();
        assert_eq!(steps, [1.0, 2.0, 3.0, 4.0]);

        // The tool's form reached the SDK's elicitation callback (a live request at
        // 2025-11-25, an input-required result answered by a retry at 2026-07-28), and the
        // call resumed with the answer read into the tool's type.
        let greet = &report["greet"];
        assert_eq!(
            greet["text"],
            json!(["Hello, Ada! Hello, Ada!"]),
            "{generation}"
        );
        assert_eq!(greet["asked"][0]["message"], "Who is there?");
        let schema = &greet["asked"][0]["schema"];
        assert_eq!(schema["required"], json!(["name", "times"]));
        assert_eq!(schema["properties"]["times"]["maximum"], 3);
        let rounds = match generation {
            "legacy" => json!(0),
            _ => json!(1),
        };
        assert_eq!(greet["rounds"], rounds, "{generation}");

        // What the model was shown is bounded; the whole is read back through resources.
        let spilled = &report["spilled"];
        assert!(
            spilled["uri"]
                .as_str()
                .unwrap()
                .starts_with("toolprism://output/")
        );
        assert!(spilled["shown_bytes"].as_u64().unwrap() < 2_000);
        let full = spilled["read"][0].as_str().unwrap();
        assert!(
            full.contains("1: row 1\n") && full.contains("500: row 500\n"),
            "{generation}"
        );
    }
}

#[test]
fn the_python_sdk_follows_a_task_and_answers_its_form() {
    let workspace = tempfile::tempdir().unwrap();
    let mut peer = peer("follow_task.py");
    peer.arg(env!("CARGO_BIN_EXE_mcp_server"))
        .args(["--demo", "--root"])
        .arg(workspace.path());
    let report = report(&mut peer);

    // The call was answered with a task, validated by the extension's models in the SDK.
    assert_eq!(report["created"]["resultType"], "task");
    assert_eq!(report["created"]["status"], "working");
    // The task showed the tool's form; the SDK's elicitation callback answered it through
    // tasks/update, and the task completed with the answer.
    // The first poll may come before the body has asked (the task runs on while the call is
    // answered): the first status past `working` is the form.
    let seen = report["seen"].as_array().unwrap();
    let asked = seen.iter().find(|seen| seen["status"] != "working");
    assert_eq!(
        asked,
        Some(&json!({"status": "input_required", "asks": ["visitor"]})),
        "{seen:?}"
    );
    assert_eq!(seen.last().unwrap()["status"], "completed");
    let result = &report["final"]["result"];
    assert_eq!(result["content"][0]["text"], "Hello, Grace!");
    assert_eq!(result["isError"], false);
    // Over stdio the client is told of each change.
    assert_eq!(
        report["told"],
        json!(["input_required", "working", "completed"])
    );
    // A tool that is no task is answered at once.
    assert_eq!(report["count_to"], 2);
}
