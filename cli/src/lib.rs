#![doc = include_str!("../README.md")]
//!
//! On a terminal, `call` shows a progress bar fed by the tool's progress reports, and Ctrl-C
//! cancels the call (drops it) and says so; a tool that asks for input is answered there
//! ([`ask`]); the exit statuses are in [`exit`]. Colors follow
//! the conventions: none when `NO_COLOR` is set or the output is not a terminal.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod ask;
mod calls;
pub mod exit;
pub mod html;
mod lock;
#[cfg(feature = "openapi")]
pub mod openapi;
mod out;
#[cfg(feature = "mcp")]
mod pins;
mod summary;
pub mod terminal;
pub mod visible;

use std::io::{IsTerminal as _, Read as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use toolprism::context::{Progress, ProgressSink};
use toolprism::lower::{Provider, ToolOptions, lower_tools};
use toolprism::pipeline::DispatchOptions;
use toolprism::present::present_result;
use toolprism::session::{LogContents, LogOptions, SessionLog, replay};
use toolprism::{Registry, Surface, ToolCall, ToolOutcome};

use crate::out::{out, outln};
use crate::visible::{visible, visible_json};

/// The command line of a tool set.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "The tools of this registry: list them, read their schemas, call them, serve them, and show session logs."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The tools, one line each: name, what it does (its description's first paragraph, cut),
    /// input → output.
    List,
    /// A tool's input and output schemas, as registered or lowered for a provider.
    Schema {
        /// The tool.
        tool: String,
        /// Lower the definition for this provider's wire format.
        #[arg(long, value_enum)]
        dialect: Option<Dialect>,
    },
    /// Calls a tool and shows what the model sees, the value and the card.
    Call {
        /// The tool.
        tool: String,
        /// The arguments: JSON, `@file` for a file of JSON, or `-` for standard input.
        #[arg(default_value = "{}")]
        args: String,
        /// Call as a program would (nested): the value, no presentation.
        #[arg(long)]
        nested: bool,
        /// Print one line of JSON: `is_error`, `content`, `value` or `error`, `meta`.
        #[arg(long)]
        json: bool,
        /// Append the call and its result to this session log (for `replay` and `view`).
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Serves the registry over MCP: stdio, or streamable HTTP with `--http`.
    #[cfg(feature = "mcp")]
    Serve {
        /// Listen for streamable HTTP here (loopback unless you say otherwise).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
    },
    /// Reads a saved provider response (or, with `--stream`, a stream of server-sent events)
    /// and prints what toolprism reads of it, one JSON line each: `{"text"}`, and per call
    /// `{"id", "name", "arguments"}` or `{"id", "name", "error": {"code", "message"}}` (`"id":
    /// null` when the provider sent none).
    Calls {
        /// The provider whose wire format it is.
        #[arg(long, value_enum)]
        provider: calls::ProviderArg,
        /// It is a stream of server-sent events, not one response body.
        #[arg(long)]
        stream: bool,
        /// The response or stream: a file, or `-` for standard input.
        #[arg(default_value = "-", value_name = "FILE")]
        source: String,
    },
    /// An MCP client's pin file: the imported tools it holds since their definitions changed
    /// (`list`), and accepting a change (`accept SERVER TOOL`).
    #[cfg(feature = "mcp")]
    Pins {
        /// What to do.
        #[command(subcommand)]
        action: PinsAction,
        /// The pin file.
        #[arg(long, global = true, default_value = "pins.json", value_name = "FILE")]
        file: PathBuf,
    },
    /// Writes the tools' definitions to a lock file; with `--check`, compares them with it and
    /// reports each change as breaking or compatible (exit status 8 on a breaking one).
    Lock {
        /// The lock file.
        #[arg(long, default_value = "tools.lock.json", value_name = "FILE")]
        file: PathBuf,
        /// Compare with the lock instead of writing it.
        #[arg(long)]
        check: bool,
    },
    /// Shows a session log in the terminal, as it was shown live (no tool runs).
    Replay {
        /// The log (JSON Lines).
        log: PathBuf,
    },
    /// Writes a session log as one self-contained HTML page.
    View {
        /// The log (JSON Lines).
        log: PathBuf,
        /// Where to write the page (default: the log's path with `.html`).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

/// What `pins` does.
#[cfg(feature = "mcp")]
#[derive(Debug, Subcommand)]
enum PinsAction {
    /// Each tool held, with what changed.
    List,
    /// Accepts the definition a tool is listed with now.
    Accept {
        /// The server, as the pin file names it (`name endpoint`).
        server: String,
        /// The tool's name on the server.
        tool: String,
    },
}

/// A provider wire format, for `schema --dialect`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Dialect {
    OpenaiChat,
    OpenaiStrict,
    OpenaiResponses,
    Anthropic,
    Gemini,
}

/// Runs the command line over `registry`, from the process's arguments, and returns the exit
/// status ([`exit`]).
pub fn run(registry: Registry) -> ExitCode {
    run_with(registry, std::env::args_os())
}

/// Runs the command line over `registry` with these arguments (the first is the program
/// name).
pub fn run_with<I, T>(registry: Registry, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(problem) => {
            return ExitCode::from(error(exit::USAGE, &format!("no async runtime: {problem}")));
        }
    };
    let style = Style::detect();
    let code = runtime.block_on(async move {
        match cli.command {
            Command::List => list(&registry, style),
            Command::Schema { tool, dialect } => schema(&registry, &tool, dialect),
            Command::Call {
                tool,
                args,
                nested,
                json,
                log,
            } => {
                let how = CallOptions { nested, json, log };
                call(&registry, &tool, &args, &how, style).await
            }
            #[cfg(feature = "mcp")]
            Command::Serve { http } => serve(registry, http).await,
            Command::Calls {
                provider,
                stream,
                source,
            } => calls::calls(provider, stream, &source),
            Command::Lock { file, check } => lock::lock(&registry, &file, check),
            #[cfg(feature = "mcp")]
            Command::Pins { action, file } => match action {
                PinsAction::List => pins::list(&file),
                PinsAction::Accept { server, tool } => pins::accept(&file, &server, &tool),
            },
            Command::Replay { log } => replay_log(&log, style),
            Command::View { log, output } => view(&log, output),
        }
    });
    // A tool left running after Ctrl-C must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(100));
    ExitCode::from(code)
}

/// Prints an error and returns its status.
fn error(code: u8, message: &str) -> u8 {
    eprintln!("error: {}", visible(message));
    code
}

/// Whether to color: not when `NO_COLOR` is set (to anything but empty), nor when stdout is
/// not a terminal.
#[derive(Clone, Copy, Debug)]
struct Style {
    color: bool,
}

impl Style {
    fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        Self {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

fn list(registry: &Registry, style: Style) -> u8 {
    let snapshot = registry.snapshot();
    let width = snapshot
        .definitions()
        .map(|tool| tool.name().len())
        .max()
        .unwrap_or(0);
    for tool in snapshot.definitions() {
        // The first paragraph, on one line: doc comments wrap sentences across lines.
        let summary = tool
            .description()
            .lines()
            .map(str::trim)
            .take_while(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let about = tool.about();
        let summary = match &about.title {
            Some(title) => format!("{title}: {summary}"),
            None => summary,
        };
        let hints = summary::hints(about);
        outln!(
            "{}  {:<81}  {}{}",
            style.bold(&format!("{:width$}", tool.name())),
            visible(&terminal::shorten(&summary, 80)),
            // Property names are an imported tool's server's text.
            style.dim(&visible(&format!(
                "{} → {}",
                summary::of(tool.input_schema()),
                summary::of(tool.output_schema())
            ))),
            style.dim(&if hints.is_empty() {
                String::new()
            } else {
                format!("  ({})", hints.join(", "))
            })
        );
    }
    exit::OK
}

fn schema(registry: &Registry, tool: &str, dialect: Option<Dialect>) -> u8 {
    let snapshot = registry.snapshot();
    let Some(definition) = snapshot.definition(tool) else {
        return error(exit::UNKNOWN_TOOL, &format!("no tool is named `{tool}`"));
    };
    let shown = match dialect {
        None => {
            let mut shown = json!({
                "name": definition.name(),
                "description": definition.description(),
                "input_schema": definition.input_schema(),
                "output_schema": definition.output_schema(),
            });
            summary::add_about(&mut shown, definition.about());
            shown
        }
        Some(dialect) => {
            let (provider, options) = match dialect {
                Dialect::OpenaiChat => (Provider::OpenAiChat, ToolOptions::default()),
                Dialect::OpenaiStrict => (Provider::OpenAiChat, ToolOptions::default().strict()),
                Dialect::OpenaiResponses => (
                    Provider::OpenAiResponses,
                    ToolOptions::default().with_output_schemas(),
                ),
                Dialect::Anthropic => (Provider::Anthropic, ToolOptions::default()),
                Dialect::Gemini => (
                    Provider::Gemini,
                    ToolOptions::default().with_output_schemas(),
                ),
            };
            match lower_tools(provider, [definition], options) {
                Ok(mut lowered) => lowered.pop().unwrap_or(Value::Null),
                Err(problem) => return error(exit::TOOL_FAILED, &problem.to_string()),
            }
        }
    };
    outln!(
        "{}",
        visible_json(&serde_json::to_string_pretty(&shown).unwrap_or_default())
    );
    exit::OK
}

/// The most argument text `call` reads (from the command line, a file or standard input).
pub const MAX_ARGS_BYTES: u64 = 64 * 1024 * 1024;

/// Reads the arguments: JSON, `@file`, or `-` for standard input; at most
/// [`MAX_ARGS_BYTES`] of it.
fn read_args(args: &str) -> Result<Value, String> {
    let text = if args == "-" {
        read_bounded(std::io::stdin().lock(), "standard input")?
    } else if let Some(path) = args.strip_prefix('@') {
        let file = std::fs::File::open(path)
            .map_err(|error| format!("`{path}` could not be read: {error}"))?;
        read_bounded(file, &format!("`{path}`"))?
    } else {
        args.to_owned()
    };
    serde_json::from_str(&text).map_err(|error| format!("the arguments are not JSON: {error}"))
}

fn read_bounded(source: impl std::io::Read, what: &str) -> Result<String, String> {
    let mut text = String::new();
    source
        .take(MAX_ARGS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| format!("{what} could not be read: {error}"))?;
    if text.len() as u64 > MAX_ARGS_BYTES {
        return Err(format!(
            "{what} holds more than {MAX_ARGS_BYTES} bytes of arguments"
        ));
    }
    Ok(text)
}

/// How `call` calls and shows.
#[derive(Debug)]
struct CallOptions {
    nested: bool,
    json: bool,
    log: Option<PathBuf>,
}

async fn call(
    registry: &Registry,
    tool: &str,
    args_text: &str,
    how: &CallOptions,
    style: Style,
) -> u8 {
    let args = match read_args(args_text) {
        Ok(args) => args,
        Err(message) => return error(exit::USAGE, &message),
    };
    let log = match how
        .log
        .as_deref()
        .map(|path| SessionLog::open(path, LogOptions::default()))
    {
        None => None,
        Some(Ok((log, _))) => Some(log),
        Some(Err(problem)) => {
            return error(
                exit::USAGE,
                &format!("the session log could not be opened: {problem}"),
            );
        }
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        bar.set_message(format!("calling {tool}"));
        bar
    });
    let mut options = DispatchOptions::default();
    if let Some(bar) = &bar {
        options = options.progress(Bar(bar.clone()));
    }
    // A tool that asks is answered on the terminal; with none (or the arguments read from
    // standard input), asking fails with `INPUT_UNAVAILABLE`.
    if std::io::stdin().is_terminal() && args_text != "-" {
        options = options.answerer(ask::TerminalAnswerer::new(bar.clone()));
    }
    let surface = if how.nested {
        Surface::Nested
    } else {
        Surface::Direct
    };
    let snapshot = registry.snapshot();
    let id = format!("cli_{}", std::process::id());
    let call = ToolCall::new(id, tool, args.clone());
    // Listening before the call starts: a Ctrl-C at any point of it is a cancellation.
    let interrupted = interrupt();
    let dispatch = async {
        match &log {
            None => Ok(snapshot.dispatch_with(call, surface, options).await),
            Some(log) => log.dispatch_with(&snapshot, call, surface, options).await,
        }
    };
    let outcome = tokio::select! {
        outcome = dispatch => match outcome {
            Ok(outcome) => outcome,
            Err(problem) => {
                if let Some(bar) = &bar {
                    bar.finish_and_clear();
                }
                return error(exit::USAGE, &problem.to_string());
            }
        },
        () = interrupted => {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            eprintln!("cancelled: the call to `{tool}` was dropped");
            return exit::CANCELLED;
        }
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let code = exit::of(&outcome);
    if how.json {
        outln!("{}", visible_json(&one_line(&outcome)));
    } else if how.nested {
        show_nested(&outcome, style);
    } else {
        show_direct(tool, &args, &outcome, style);
    }
    code
}

/// Resolves on the first Ctrl-C (`SIGINT`) after it is called.
fn interrupt() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listener = signal(SignalKind::interrupt());
        async move {
            match listener {
                Ok(mut listener) => {
                    listener.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Progress reports, on the spinner.
#[derive(Debug)]
struct Bar(indicatif::ProgressBar);

impl ProgressSink for Bar {
    fn report(&self, progress: &Progress) {
        if let Some(total) = progress.total {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a bar's length"
            )]
            {
                self.0.set_length(total.max(0.0) as u64);
                self.0.set_position(progress.done.max(0.0) as u64);
            }
            self.0.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
        }
        if let Some(message) = &progress.message {
            self.0.set_message(visible(message).into_owned());
        }
    }
}

/// The outcome as one line of JSON.
fn one_line(outcome: &ToolOutcome) -> String {
    let mut line = json!({
        "is_error": outcome.is_error(),
        "content": outcome.content(),
    });
    if let Some(value) = outcome.value() {
        line["value"] = value.as_value().clone();
    }
    if let Some(error) = outcome.error() {
        line["error"] = serde_json::to_value(error).unwrap_or(Value::Null);
    }
    if let Some(meta) = outcome.meta() {
        line["meta"] = meta.clone();
    }
    line.to_string()
}

fn show_direct(tool: &str, args: &Value, outcome: &ToolOutcome, style: Style) {
    outln!("{}", style.bold("model sees:"));
    out!("{}", terminal::content(outcome.content(), usize::MAX));
    show_value_or_error(outcome, style);
    let card = present_result(
        tool,
        args,
        outcome.content(),
        outcome.is_error(),
        outcome.meta(),
    );
    outln!("{}", style.bold("card:"));
    outln!("  {}", terminal::card(&card).replace('\n', "\n  "));
}

fn show_nested(outcome: &ToolOutcome, style: Style) {
    show_value_or_error(outcome, style);
}

fn show_value_or_error(outcome: &ToolOutcome, style: Style) {
    if let Some(value) = outcome.value() {
        outln!("{}", style.bold("value:"));
        let pretty = serde_json::to_string_pretty(value.as_value()).unwrap_or_default();
        outln!("  {}", visible_json(&pretty).replace('\n', "\n  "));
    }
    if let Some(error) = outcome.error() {
        let code = visible(error.code().unwrap_or("-"));
        outln!("{}", style.red(&format!("error ({code}):")));
        outln!("  {}", visible(&error.message).replace('\n', "\n  "));
    }
}

#[cfg(feature = "mcp")]
async fn serve(registry: Registry, http: Option<std::net::SocketAddr>) -> u8 {
    use toolprism_mcp::{HttpMode, McpServer};
    // Spans and metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; exported on return.
    #[cfg(feature = "otel")]
    let _telemetry = match toolprism_otel::Telemetry::init_from_env("toolprism-tools") {
        Ok(telemetry) => telemetry,
        Err(problem) => return error(exit::USAGE, &problem.to_string()),
    };
    let server = McpServer::new(registry);
    let outcome = match http {
        None => server
            .serve_stdio()
            .await
            .map_err(|error| error.to_string()),
        Some(addr) => match server.serve_http(addr, HttpMode::Sessions).await {
            Ok(running) => {
                // Scripts and tests read the address from this line.
                outln!("listening on {}", running.url());
                let _ = std::io::Write::flush(&mut std::io::stdout());
                running
                    .wait_for_stop_signal()
                    .await
                    .map_err(|error| error.to_string())
            }
            Err(error) => Err(error.to_string()),
        },
    };
    match outcome {
        Ok(()) => exit::OK,
        Err(message) => error(exit::TOOL_FAILED, &message),
    }
}

/// A session log, or the usage error that says why it cannot be read.
fn read_log(path: &std::path::Path) -> Result<LogContents, u8> {
    SessionLog::read(path).map_err(|problem| {
        error(
            exit::USAGE,
            &format!("`{}` could not be read: {problem}", path.display()),
        )
    })
}

fn replay_log(path: &std::path::Path, style: Style) -> u8 {
    let contents = match read_log(path) {
        Ok(contents) => contents,
        Err(code) => return code,
    };
    for problem in &contents.problems {
        outln!("{}", style.red(&visible(&format!("! {problem:?}"))));
    }
    for call in replay(&contents.events) {
        outln!("{} {}", style.bold("▶"), terminal::card(&call.call_card));
        for nested in &call.nested {
            let status = if nested.is_error { "failed" } else { "ok" };
            outln!("  ↳ nested {} ({status})", visible(&nested.name));
        }
        match &call.result {
            Some(result) => {
                out!("{}", terminal::content(&result.content, 8));
                outln!("  {}\n", terminal::card(&result.card).replace('\n', "\n  "));
            }
            None => outln!("  (no result: the session ended during this call)\n"),
        }
    }
    exit::OK
}

fn view(path: &std::path::Path, output: Option<PathBuf>) -> u8 {
    let contents = match read_log(path) {
        Ok(contents) => contents,
        Err(code) => return code,
    };
    let title = path.file_name().map_or_else(
        || "session".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let page = html::page(&title, &contents);
    let output = output.unwrap_or_else(|| path.with_extension("html"));
    match std::fs::write(&output, page) {
        Ok(()) => {
            outln!("{}", output.display());
            exit::OK
        }
        Err(problem) => error(
            exit::USAGE,
            &format!("`{}` could not be written: {problem}", output.display()),
        ),
    }
}
