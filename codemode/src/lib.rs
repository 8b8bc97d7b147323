#![doc = include_str!("../README.md")]
//!
//! [`CodeMode`] makes the tool; [`declarations`] is the TypeScript its description holds.
//!
//! # Limits
//!
//! Each run is bounded by [`Limits`] — heap, stack, CPU time, wall time, tool calls,
//! concurrent calls, log bytes, result bytes — and each way a run can end without a result
//! has its own failure code ([`Stop`]): a syntax error, an uncaught exception (with its line
//! and column), a limit, a result that is not JSON. The host keeps running and a later run is
//! unaffected: every run has its own runtime. Dropping the `run_code` future drops the
//! nested calls in flight and stops the engine.
//!
//! # Values, losslessly
//!
//! A program's result (and each call's arguments) is read without `JSON.stringify`'s silent
//! changes: `NaN`, `Infinity`, `undefined`, functions, `BigInt`, cycles, and objects that are
//! not plain (`Map`, `Date`…) fail the run naming the path (`result.rows[2].size`). A tool
//! value holding an integer JavaScript cannot represent exactly (beyond ±2^53 − 1) is refused
//! to the program (`VALUE_NOT_REPRESENTABLE`) rather than rounded.
//!
//! # JavaScript, or TypeScript
//!
//! The declarations are TypeScript, because that is how models read APIs best, and models
//! shown TypeScript write it. With the `typescript` feature, a program QuickJS refuses as
//! JavaScript is stripped of its types by oxc and run, errors mapped back to the lines and
//! columns the model wrote; types are erased, not checked (the values are: by the output
//! schemas). Without it, type syntax is a syntax error, and the description asks for plain
//! JavaScript.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod convert;
mod declare;
mod engine;
mod host;
mod limits;
mod pool;
#[cfg(feature = "typescript")]
mod typescript;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;
use toolprism::tool::AdvertisedTool;
use toolprism::{RegistrationError, Registry, ToolContext, ToolDef, ToolError};
use tracing::Instrument as _;

pub use declare::{MAX_SCHEMA_DEPTH, declarations};
pub use limits::{Limits, Stop};

use engine::{Failure, Program, RunEnd};

/// How many programs run at once unless [`CodeMode::concurrent_runs`] says otherwise.
pub const DEFAULT_CONCURRENT_RUNS: usize = 16;

/// The name `run_code` is registered under unless [`CodeMode::name`] says otherwise.
pub const DEFAULT_TOOL_NAME: &str = "run_code";

/// The failure class (`name`) of a run that ended without a result; the code is its
/// [`Stop`]'s.
pub const ERROR_NAME: &str = "CodeModeError";

/// Makes the `run_code` tool: its limits, its name, and the tools it declares.
#[derive(Clone, Debug)]
#[must_use]
pub struct CodeMode {
    limits: Limits,
    name: String,
    /// Runs at once, across every call of the tools this makes; more wait their turn.
    runs: Arc<Semaphore>,
}

impl Default for CodeMode {
    fn default() -> Self {
        Self::new()
    }
}

/// `run_code`'s arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct RunCodeArgs {
    /// The program: the body of an async JavaScript function. Use `await` on tool calls and
    /// `return` the result.
    pub code: String,
}

/// `run_code`'s value: what the program logged and what it returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunCodeValue {
    /// `console` output, one entry per call.
    pub logs: Vec<String>,
    /// What the program returned; absent when it returned nothing (`undefined`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "toolprism::value::present_json"
    )]
    pub result: Option<Value>,
}

impl CodeMode {
    /// Code Mode with the default [`Limits`], as `run_code`.
    pub fn new() -> Self {
        Self {
            limits: Limits::default(),
            name: DEFAULT_TOOL_NAME.to_owned(),
            runs: Arc::new(Semaphore::new(DEFAULT_CONCURRENT_RUNS)),
        }
    }

    /// The limits of every run.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How many programs run at once (default 16), each on a thread of its own; more wait
    /// their turn (dropping a waiting call just drops it). Shared by every tool this
    /// `CodeMode` makes.
    pub fn concurrent_runs(mut self, runs: usize) -> Self {
        self.runs = Arc::new(Semaphore::new(runs.max(1)));
        self
    }

    /// The tool's name (default `run_code`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The `run_code` tool, declaring `tools` in its description. A program can call every
    /// tool of the snapshot it runs in that programs may call (not one only the model may
    /// call, nor `run_code` itself); the declarations say what each takes and gives. A tool
    /// only programs may call is declared here and offered to the model nowhere else.
    pub fn tool<'a>(&self, tools: impl IntoIterator<Item = &'a AdvertisedTool>) -> ToolDef {
        let own = self.name.clone();
        let callable: Vec<AdvertisedTool> = tools
            .into_iter()
            .filter(|tool| tool.name() != own && tool.about().callers.programs())
            .cloned()
            .collect();
        let declared = declarations(&callable);
        let limits = self.limits;
        let runs = self.runs.clone();
        ToolDef::builder(self.name.clone())
            .description(description(&declared))
            .args::<RunCodeArgs>()
            .returns::<RunCodeValue>()
            .handler(move |args: RunCodeArgs, cx: ToolContext| {
                run(args.code, limits, runs.clone(), cx)
            })
            .render(|_, value: &RunCodeValue| render(value))
            .build()
            .with_description_for_callers(described_for(callable))
            .with_title("Run a program")
            // The model writes programs; a program does not start another.
            .with_callers(toolprism::tool::Callers::Direct)
    }

    /// Registers `run_code` in `registry`, declaring the tools registered so far. A registry
    /// whose tools change later should register it again (after
    /// [`Registry::remove`]) so the declarations follow; calls always see the current tools.
    pub fn register(&self, registry: &Registry) -> Result<(), RegistrationError> {
        let snapshot = registry.snapshot();
        registry.register(self.tool(snapshot.definitions()))
    }
}

/// `run_code`'s description for each caller: the declarations of only the tools that caller
/// may call (a program's `tools` holds no other), kept per set of tools.
fn described_for(
    callable: Vec<AdvertisedTool>,
) -> impl Fn(&dyn Fn(&str) -> bool) -> String + Send + Sync + 'static {
    /// Sets of tools kept; past it, the kept ones are forgotten.
    const KEPT: usize = 64;
    let kept: Mutex<HashMap<Vec<bool>, String>> = Mutex::default();
    move |may_call| {
        let allowed: Vec<bool> = callable.iter().map(|tool| may_call(tool.name())).collect();
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(described) = kept.get(&allowed) {
            return described.clone();
        }
        let declared = declarations(
            callable
                .iter()
                .zip(&allowed)
                .filter_map(|(tool, allowed)| allowed.then_some(tool)),
        );
        let described = description(&declared);
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(allowed, described.clone());
        described
    }
}

/// What the model is told `run_code` does, with the declarations of the tools.
fn description(declarations: &str) -> String {
    let language = if cfg!(feature = "typescript") {
        "Write JavaScript or TypeScript (types are erased, not checked)"
    } else {
        "Write plain JavaScript (no type annotations)"
    };
    format!(
        "Runs a JavaScript program that calls tools and computes with their values, and \
         returns what it logged and what it returned. The program is the body of an async \
         function: `await` each tool call and `return` the result (any JSON value). \
         `tools.<name>(args)` returns a promise of the tool's value, typed below; a failed \
         call throws an Error with `name`, `code` and `message`. Use it to combine several \
         calls in one step. {language}: no `import` or `require`, no timers, file system \
         or network.\n\n```ts\n{declarations}```"
    )
}

/// Runs one program in the calling tool's context.
async fn run(
    code: String,
    limits: Limits,
    runs: Arc<Semaphore>,
    cx: ToolContext,
) -> Result<RunCodeValue, ToolError> {
    // Never closed, so this waits for a permit and never fails.
    let _permit = runs.acquire_owned().await;
    let tools = cx
        .tool_names()
        .filter(|name| *name != cx.tool_name())
        .map(str::to_owned)
        .collect();
    let program = Program {
        code,
        tools,
        limits,
        inline: None,
    };
    // The run's span holds its nested calls' `execute_tool` spans (they are dispatched
    // inside it); how it stopped, if it failed, is its `error.type`.
    let span = tracing::info_span!(
        target: "toolprism_codemode",
        "run_program",
        otel.name = "run_program",
        otel.status_code = tracing::field::Empty,
        error.type = tracing::field::Empty,
        toolprism.program.bytes = program.code.len(),
    );
    let ran = host::run(program, cx.dispatcher(), cx.call_id());
    let RunEnd { logs, outcome } = if span.is_disabled() {
        ran.await
    } else {
        ran.instrument(span.clone()).await
    };
    if let Err(failure) = &outcome {
        span.record("otel.status_code", "error");
        span.record("error.type", failure.stop.code());
    }
    match outcome {
        Ok(result) => Ok(RunCodeValue { logs, result }),
        Err(failure) => Err(failed(&limits, &failure, &logs)),
    }
}

/// The failure the model is told about: what ended the run, where, and what it had logged.
fn failed(limits: &Limits, failure: &Failure, logs: &[String]) -> ToolError {
    let mut message = failure.stop.headline(limits);
    if !failure.detail.is_empty() {
        message.push_str(": ");
        message.push_str(&failure.detail);
    }
    message.push('.');
    if !logs.is_empty() {
        message.push_str("\n\nLogs before it ended:\n");
        message.push_str(&logs.join("\n"));
    }
    ToolError::new(message)
        .with_code(failure.stop.code())
        .with_name(ERROR_NAME)
}

/// What the model sees of a run: its logs, then its result as JSON.
fn render(value: &RunCodeValue) -> String {
    let mut text = String::new();
    if !value.logs.is_empty() {
        text.push_str("Logs:\n");
        text.push_str(&value.logs.join("\n"));
        text.push_str("\n\n");
    }
    match &value.result {
        Some(result) => {
            text.push_str("Result:\n");
            text.push_str(&serde_json::to_string_pretty(result).unwrap_or_default());
        }
        None => text.push_str("The program returned nothing."),
    }
    text
}
