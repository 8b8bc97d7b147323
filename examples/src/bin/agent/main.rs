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
//!
//! With `--session DIR`, every call and its result go to a session log in `DIR`, and
//! `--ask TOOL` asks a person before each call of `TOOL`. The agent does not wait at a prompt:
//! it saves the turn, prints each call that waits and how to decide it, and exits with status
//! 3. A later run decides and resumes, from the log alone, in a new process:
//!
//! ```text
//! agent --session .agent --ask bash "Run the tests"          # stops: call_1 waits
//! agent --session .agent --approve call_1                    # runs it, then goes on
//! ```
//!
//! `--reject ID REASON`, `--edit ID JSON` (arguments checked against the tool's input schema)
//! and `--substitute ID JSON` (a result checked against its output schema) decide otherwise.
//! The calls of the turn that ran before the stop are answered from the log, not run again.

mod waiting;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use futures_util::StreamExt as _;
use toolprism::error::FailureKind;
use toolprism::lower::{Provider, ToolOptions};
use toolprism::prelude::*;
use toolprism::present::present_result;
use toolprism::session::Decision;
use toolprism::turn::{
    AssistantTurn, Conversation, RunOptions, StreamEvent, StreamReader, run_calls,
};
use toolprism_examples::terminal;
use toolprism_examples::tools::{Workspace, register_all};
use waiting::{AskBefore, Session, Waiting};

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
    /// `--session DIR`: the log, and a turn stopped for decisions.
    session: Option<PathBuf>,
    /// `--ask TOOL`: ask before each call of these tools.
    ask: Vec<String>,
    /// `--approve`, `--reject`, `--edit`, `--substitute`: decisions on the calls that wait.
    decisions: Vec<(String, Decision)>,
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
        session: None,
        ask: Vec::new(),
        decisions: Vec::new(),
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
            "--session" => {
                settings.session = Some(args.next().ok_or("--session needs a directory")?.into());
            }
            "--ask" => settings.ask.push(args.next().ok_or("--ask needs a tool")?),
            "--approve" | "--reject" | "--edit" | "--substitute" => {
                let decision = waiting::decision(&arg, || args.next())?;
                settings.decisions.push(decision);
            }
            _ => prompt.push(arg),
        }
    }
    settings.prompt = prompt.join(" ");
    if settings.session.is_none() && (!settings.ask.is_empty() || !settings.decisions.is_empty()) {
        return Err("--ask and decisions need --session DIR".to_owned());
    }
    Ok(settings)
}

/// What `--help` prints.
const USAGE: &str = "\
Usage: agent [--root DIR] [--max-steps N] [--session DIR [--ask TOOL]...] PROMPT
       agent --session DIR [--approve ID | --reject ID REASON | --edit ID JSON | --substitute ID JSON]...

The coding tools in a loop with a model over HTTP, streamed, until the model answers without
calling a tool. With --session, calls of the tools named by --ask wait for a person's
decision: the agent saves the turn and exits with status 3, and a later run decides and
resumes from the session's log.

Environment:
  TOOLPRISM_PROVIDER   openai-chat, openai-responses, anthropic or gemini
  TOOLPRISM_BASE_URL   the API's base URL (default: the provider's own)
  TOOLPRISM_API_KEY    the key
  TOOLPRISM_MODEL      the model

Options:
  --root DIR       the workspace the tools may touch (default: the current directory)
  --max-steps N    the most model turns (default 10)
  --session DIR    log the session in DIR; stop there when a call waits for a decision
  --ask TOOL       ask before each call of TOOL (needs --session)
  --approve ID     run the waiting call ID as the model made it
  --reject ID WHY  do not run it; the model is told WHY
  --edit ID JSON   run it with these arguments instead
  --substitute ID JSON  do not run it; answer with this result
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
        // Calls wait for decisions: the turn is saved, and a later run resumes it.
        Err(Stop::Waiting) => ExitCode::from(3),
        Err(Stop::Failed(message)) => {
            eprintln!("error: {}", terminal::shorten(&message, MAX_ERROR_BYTES));
            ExitCode::FAILURE
        }
    }
}

/// Why the loop ended without an answer.
enum Stop {
    Failed(String),
    Waiting,
}

impl From<String> for Stop {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

async fn run(settings: Settings) -> Result<(), Stop> {
    let workspace = Workspace::new(&settings.root).map_err(|error| error.to_string())?;
    let session = settings.session.as_deref().map(Session::open).transpose()?;
    let mut builder = register_all(Registry::builder(), &workspace);
    if let Some(session) = &session {
        builder = builder
            .pre_execute(AskBefore(settings.ask.clone()))
            .approver(session.decisions.clone());
    }
    let registry = builder.build().map_err(|error| error.to_string())?;
    let snapshot = registry.snapshot();
    let conversation = Conversation::new(settings.provider, &settings.model)
        .with_system(
            "You are a coding assistant. Use the tools to look at the workspace before answering.",
        )
        .with_tools(&snapshot, ToolOptions::default())
        .map_err(|error| error.to_string())?;
    let (mut conversation, mut resumed) =
        begin(&settings, session.as_ref(), &snapshot, conversation)?;
    let client = reqwest::Client::new();

    for step in 1..=settings.max_steps {
        println!("── step {step}");
        let (turn, stream) = match resumed.take() {
            Some(stream) => (read_turn(settings.provider, stream.as_bytes())?, stream),
            None => next_turn(&client, &conversation, &settings).await?,
        };
        println!();
        if turn.calls().is_empty() {
            if let Some(session) = &session {
                session.answered()?;
            }
            return Ok(());
        }
        let mut options = RunOptions::default();
        if let Some(session) = &session {
            // The calls a run before made are answered from the log, not run again.
            options = options.log(session.log.clone()).resume();
        }
        let outcomes = run_calls(&snapshot, &turn, &options)
            .await
            .map_err(|error| error.to_string())?;
        print_cards(&turn, &outcomes);
        if let Some(session) = &session {
            if waits(&outcomes) {
                let waiting = Waiting {
                    messages: conversation.messages().to_vec(),
                    turn: stream,
                };
                session.stop(&waiting)?;
                for request in session.decisions.pending() {
                    println!("{}", waiting::describe(&request, session.dir()));
                }
                return Err(Stop::Waiting);
            }
            session.answered()?;
        }
        conversation
            .push_turn(&turn, &outcomes)
            .map_err(|error| error.to_string())?;
    }
    Err(Stop::Failed(format!(
        "no answer after {} steps",
        settings.max_steps
    )))
}

/// Where the conversation starts: the turn a run before stopped for decisions, decided now
/// and resumed (its stream, to read again), or the user's prompt.
fn begin(
    settings: &Settings,
    session: Option<&Session>,
    snapshot: &toolprism::Snapshot,
    mut conversation: Conversation,
) -> Result<(Conversation, Option<String>), Stop> {
    match (
        session,
        session.map(Session::waiting).transpose()?.flatten(),
    ) {
        (Some(session), Some(waiting)) => {
            for (id, decision) in &settings.decisions {
                session
                    .decisions
                    .decide(snapshot, id, decision.clone())
                    .map_err(|error| error.to_string())?;
            }
            Ok((
                conversation.with_messages(waiting.messages),
                Some(waiting.turn),
            ))
        }
        _ if !settings.decisions.is_empty() => {
            Err(Stop::Failed("no call waits for a decision".to_owned()))
        }
        _ if settings.prompt.is_empty() => {
            Err(Stop::Failed("say what to do: agent \"…\"".to_owned()))
        }
        _ => {
            conversation.user(&settings.prompt);
            Ok((conversation, None))
        }
    }
}

/// Sends the conversation and reads the model's turn as it streams, printing its text: the
/// turn, and the stream as it was sent (what a stopped run saves).
async fn next_turn(
    client: &reqwest::Client,
    conversation: &Conversation,
    settings: &Settings,
) -> Result<(AssistantTurn, String), String> {
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
    let mut reader = StreamReader::new(settings.provider);
    let mut stream = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|error| error.to_string())?;
        stream.extend_from_slice(&chunk);
        for event in reader.feed(&chunk).map_err(|error| error.to_string())? {
            if let StreamEvent::Text(text) = event {
                print!("{}", toolprism_cli::visible::visible(&text));
                let _ = std::io::stdout().flush();
            }
        }
    }
    let turn = reader.finish().map_err(|error| error.to_string())?;
    let stream = String::from_utf8(stream)
        .map_err(|_| "the provider's stream is not UTF-8 text".to_owned())?;
    Ok((turn, stream))
}

/// A saved turn, read again as it was first read.
fn read_turn(provider: Provider, stream: &[u8]) -> Result<AssistantTurn, String> {
    let mut reader = StreamReader::new(provider);
    reader.feed(stream).map_err(|error| error.to_string())?;
    reader.finish().map_err(|error| error.to_string())
}

/// Whether a call of the turn waits for a decision.
fn waits(outcomes: &[ToolOutcome]) -> bool {
    outcomes.iter().any(|outcome| {
        outcome
            .error()
            .is_some_and(|error| error.kind() == Some(FailureKind::DecisionPending))
    })
}

/// Each call's card; a call that waits has none yet.
fn print_cards(turn: &AssistantTurn, outcomes: &[ToolOutcome]) {
    for (call, outcome) in turn.calls().iter().zip(outcomes) {
        if waits(std::slice::from_ref(outcome)) {
            continue;
        }
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
}
