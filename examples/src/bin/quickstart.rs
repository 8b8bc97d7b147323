//! The quickstart: a few tools of each kind, and sample calls, good and bad, each printed as
//! one JSON line `{"call": …, "outcome": …}`.
//!
//! Run it with `cargo run -p toolprism-examples --bin quickstart`.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism::present::{Card, ReadCard};

/// Adds two integers.
#[tool]
fn add(#[arg(description = "The left operand.")] a: i64, b: i64) -> i64 {
    a + b
}

/// A workspace whose files the tools may read: state captured once by `#[toolset]`.
struct Workspace {
    root: PathBuf,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File to read, relative to the workspace root.
    path: String,
}

/// The canonical value of `read`: what programs get, and what its text and card project.
#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadValue {
    path: String,
    lines: Vec<Line>,
    total_lines: usize,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Line {
    number: usize,
    text: String,
}

#[toolset]
impl Workspace {
    /// Reads a text file of the workspace, with line numbers.
    #[tool(render = Self::render_read, presentation_meta = Self::read_card)]
    async fn read(&self, args: ReadArgs) -> Result<ReadValue, ToolError> {
        if args.path.contains("..") {
            return Err(ToolError::new("paths must stay inside the workspace")
                .with_code("OUTSIDE_WORKSPACE"));
        }
        let text = tokio::fs::read_to_string(self.root.join(&args.path))
            .await
            .map_err(|error| ToolError::new(format!("cannot read `{}`: {error}", args.path)))?;
        let lines: Vec<Line> = text
            .lines()
            .enumerate()
            .map(|(at, line)| Line {
                number: at + 1,
                text: line.to_owned(),
            })
            .collect();
        Ok(ReadValue {
            path: args.path,
            total_lines: lines.len(),
            lines,
        })
    }

    fn render_read(_args: &ReadArgs, value: &ReadValue) -> String {
        let mut text = format!("<path>{}</path>\n", value.path);
        for line in &value.lines {
            let _ = writeln!(text, "{}: {}", line.number, line.text);
        }
        let _ = write!(
            text,
            "(Showing lines 1-{} of {}.)",
            value.lines.len(),
            value.total_lines
        );
        text
    }

    fn read_card(_args: &ReadArgs, value: &ReadValue) -> Card {
        Card::Read(ReadCard {
            path: value.path.clone(),
            first_line: 1,
            last_line: value.lines.len() as u64,
            total_lines: value.total_lines as u64,
        })
    }
}

/// A dynamic tool, built at run time from JSON Schemas (as an MCP bridge would).
fn shout() -> ToolDef {
    ToolDef::builder("shout")
        .description("Upper-cases a word.")
        .input_schema(json!({
            "type": "object",
            "properties": {"word": {"type": "string", "minLength": 1}},
            "required": ["word"],
            "additionalProperties": false
        }))
        .output_schema(json!({"type": "string"}))
        .handler(|args: Value, _cx: ToolContext| async move {
            let word = args["word"].as_str().unwrap_or_default();
            Ok::<_, ToolError>(Value::String(word.to_uppercase()))
        })
        .build()
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: quickstart

A few tools of each kind and sample calls, good and bad, each printed as one JSON line
{\"call\": ..., \"outcome\": ...}.
";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolprism_examples::help_if_asked(USAGE);
    let root = std::env::temp_dir().join(format!("toolprism-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&root)?;
    std::fs::write(root.join("hello.txt"), "Hello,\nworld!\n")?;

    let registry = Registry::builder()
        .tool(Add)
        .toolset(Workspace { root: root.clone() })
        .tool(shout())
        .build()?;

    let calls = [
        (
            ToolCall::new("c1", "add", json!({"a": 2, "b": 40})),
            Surface::Direct,
        ),
        (
            ToolCall::new("c2", "add", json!({"a": "two", "b": 40})),
            Surface::Direct,
        ),
        (
            ToolCall::new("c3", "read", json!({"path": "hello.txt"})),
            Surface::Direct,
        ),
        (
            ToolCall::new("c4", "read", json!({"path": "hello.txt"})),
            Surface::Nested,
        ),
        (
            ToolCall::new("c5", "read", json!({"path": "missing.txt"})),
            Surface::Direct,
        ),
        (
            ToolCall::new("c6", "read", json!({"path": "../etc/passwd"})),
            Surface::Direct,
        ),
        (
            ToolCall::new("c7", "shout", json!({"word": "quiet"})),
            Surface::Direct,
        ),
        (
            ToolCall::from_raw_args("c8", "shout", r#"{"word": "#),
            Surface::Direct,
        ),
        (
            ToolCall::new("c9", "delete_everything", json!({})),
            Surface::Direct,
        ),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    for (call, surface) in calls {
        let shown = json!({"id": call.id(), "name": call.name(), "surface": surface});
        let outcome = runtime.block_on(registry.dispatch(call, surface));
        println!("{}", json!({"call": shown, "outcome": outcome}));
    }
    std::fs::remove_dir_all(&root)?;
    Ok(())
}
