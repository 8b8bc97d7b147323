//! An agent: the coding tools in a real loop with a model, over HTTP, streamed. Each step
//! sends the conversation, reads the model's turn back as it streams (its text printed as it
//! comes), runs the turn's calls, prints each call's card, and sends the results back, until
//! the model answers without calling a tool.
//!
//! ```text
//! TOOLPRISM_PROVIDER=anthropic TOOLPRISM_API_KEY=sk-ant-… TOOLPRISM_MODEL=claude-sonnet-4-5 \
//!     cargo run -p toolprism-examples --bin agent -- "What does src/lib.rs export?"
//! ```
//!
//! | variable | meaning |
//! |---|---|
//! | `TOOLPRISM_PROVIDER` | `openai-chat`, `openai-responses`, `anthropic` or `gemini` |
//! | `TOOLPRISM_BASE_URL` | the API's base URL (default: the provider's own; any OpenAI-compatible server for `openai-chat`) |
//! | `TOOLPRISM_API_KEY` | the key |
//! | `TOOLPRISM_MODEL` | the model |
//!
//! Options: `--root DIR` (the workspace the tools may touch; default the current directory),
//! `--max-steps N` (default 10).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use futures_util::StreamExt as _;
use toolprism::lower::{Provider, ToolOptions};
use toolprism::prelude::*;
use toolprism::present::present_result;
use toolprism::turn::{Conversation, RunOptions, StreamEvent, StreamReader, run_calls};
use toolprism_examples::terminal;
use toolprism_examples::tools::{Workspace, register_all};

/// The most of an error response shown.
const MAX_ERROR_BYTES: usize = 4 * 1024;

struct Settings {
    provider: Provider,
    base_url: String,
    key: String,
    model: String,
    root: PathBuf,
    max_steps: usize,
    prompt: String,
}

fn settings() -> Result<Settings, String> {
    let variable = |name: &str| std::env::var(name).map_err(|_| format!("set {name}"));
    let provider = match variable("TOOLPRISM_PROVIDER")?.as_str() {
        "openai-chat" => Provider::OpenAiChat,
        "openai-responses" => Provider::OpenAiResponses,
        "anthropic" => Provider::Anthropic,
        "gemini" => Provider::Gemini,
        other => {
            return Err(format!(
                "TOOLPRISM_PROVIDER is `{other}`: say openai-chat, openai-responses, anthropic or gemini"
            ));
        }
    };
    let base_url = std::env::var("TOOLPRISM_BASE_URL").unwrap_or_else(|_| {
        match provider {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::Gemini => "https://generativelanguage.googleapis.com",
            _ => "https://api.openai.com/v1",
        }
        .to_owned()
    });
    let mut settings = Settings {
        provider,
        base_url,
        key: variable("TOOLPRISM_API_KEY")?,
        model: variable("TOOLPRISM_MODEL")?,
        root: std::env::current_dir().map_err(|error| error.to_string())?,
        max_steps: 10,
        prompt: String::new(),
    };
    let mut args = std::env::args().skip(1);
    let mut prompt = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => settings.root = args.next().ok_or("--root needs a directory")?.into(),
            "--max-steps" => {
                settings.max_steps = args
                    .next()
                    .and_then(|steps| steps.parse().ok())
                    .ok_or("--max-steps needs a number")?;
            }
            _ => prompt.push(arg),
        }
    }
    settings.prompt = prompt.join(" ");
    if settings.prompt.is_empty() {
        return Err("say what to do: agent \"…\"".to_owned());
    }
    Ok(settings)
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: agent [--root DIR] [--max-steps N] PROMPT

The coding tools in a loop with a model over HTTP, streamed, until the model answers without
calling a tool.

Environment:
  TOOLPRISM_PROVIDER   openai-chat, openai-responses, anthropic or gemini
  TOOLPRISM_BASE_URL   the API's base URL (default: the provider's own)
  TOOLPRISM_API_KEY    the key
  TOOLPRISM_MODEL      the model

Options:
  --root DIR       the workspace the tools may touch (default: the current directory)
  --max-steps N    the most model turns (default 10)
";

#[tokio::main]
async fn main() -> ExitCode {
    toolprism_examples::help_if_asked(USAGE);
    let settings = match settings() {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    match run(settings).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {}", terminal::shorten(&message, MAX_ERROR_BYTES));
            ExitCode::FAILURE
        }
    }
}

async fn run(settings: Settings) -> Result<(), String> {
    let workspace = Workspace::new(&settings.root).map_err(|error| error.to_string())?;
    let registry = register_all(Registry::builder(), &workspace)
        .build()
        .map_err(|error| error.to_string())?;
    let snapshot = registry.snapshot();
    let mut conversation = Conversation::new(settings.provider, &settings.model)
        .with_system(
            "You are a coding assistant. Use the tools to look at the workspace before answering.",
        )
        .with_tools(&snapshot, ToolOptions::default())
        .map_err(|error| error.to_string())?;
    conversation.user(&settings.prompt);
    let client = reqwest::Client::new();

    for step in 1..=settings.max_steps {
        let request = conversation.request(&settings.base_url, &settings.key, true);
        let mut sending = client.post(&request.url).json(&request.body);
        for (name, value) in &request.headers {
            sending = sending.header(*name, value);
        }
        let response = sending.send().await.map_err(|error| error.to_string())?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            return Err(format!("{} answered {status}: {body}", request.url));
        }

        println!("── step {step}");
        let mut reader = StreamReader::new(settings.provider);
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|error| error.to_string())?;
            for event in reader.feed(&chunk).map_err(|error| error.to_string())? {
                if let StreamEvent::Text(text) = event {
                    print!("{}", toolprism_cli::visible::visible(&text));
                    let _ = std::io::stdout().flush();
                }
            }
        }
        let turn = reader.finish().map_err(|error| error.to_string())?;
        println!();
        if turn.calls().is_empty() {
            return Ok(());
        }
        let outcomes = run_calls(&snapshot, &turn, &RunOptions::default())
            .await
            .map_err(|error| error.to_string())?;
        for (call, outcome) in turn.calls().iter().zip(&outcomes) {
            let args = call.arguments().json().cloned().unwrap_or_default();
            let card = present_result(
                call.name(),
                &args,
                outcome.content(),
                outcome.is_error(),
                outcome.meta(),
            );
            println!("{}", terminal::card(&card));
        }
        conversation
            .push_turn(&turn, &outcomes)
            .map_err(|error| error.to_string())?;
    }
    Err(format!("no answer after {} steps", settings.max_steps))
}
