//! Running a turn's calls: dispatched in the order their tools' effects need (at most N at
//! once, results in the calls' order), retried and repaired as the host asks, logged.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::repair::{Repair, RepairRequest, Repairer};
use super::schedule::in_effect_order;
use super::{Arguments, AssistantTurn, Caller, ReadCall};
use crate::call::Surface;
use crate::effects::Effect;
use crate::error::{FailureError, FailureKind};
use crate::outcome::ToolOutcome;
use crate::pipeline::{DispatchOptions, Snapshot};
use crate::session::{Logged, RecordError, ResultEvent, SessionEvent, SessionLog};

/// How a turn's calls are run.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RunOptions {
    /// Calls running at once (default 8; at least 1).
    pub max_concurrent: usize,
    /// A session log every call and its result go to, cut-off calls included (as the text
    /// they were).
    pub log: Option<SessionLog>,
    /// What every call is dispatched with: the caller it runs for (whose scopes are checked
    /// as for any call), the owner of what it retains, an answerer, a progress sink.
    pub dispatch: DispatchOptions,
    /// Whether a call of an idempotent tool that failed transiently runs again (never, by
    /// default).
    pub retry: Option<Retry>,
    /// Whether a call the log already answered is answered from it, not run again
    /// ([`resume`](Self::resume)).
    pub resume: bool,
    /// The host's hook that mends a call refused for its arguments, and its attempts.
    repair: Option<Repairer>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            max_concurrent: 8,
            log: None,
            dispatch: DispatchOptions::default(),
            retry: None,
            resume: false,
            repair: None,
        }
    }
}

impl RunOptions {
    /// At most `calls` at once.
    #[must_use]
    pub fn max_concurrent(mut self, calls: usize) -> Self {
        self.max_concurrent = calls;
        self
    }

    /// Logging every call and its result to `log`.
    #[must_use]
    pub fn log(mut self, log: SessionLog) -> Self {
        self.log = Some(log);
        self
    }

    /// Dispatching every call with `options` (a caller, say:
    /// [`DispatchOptions::caller`]).
    #[must_use]
    pub fn dispatch_options(mut self, options: DispatchOptions) -> Self {
        self.dispatch = options;
        self
    }

    /// Running a call of an idempotent tool again when it fails transiently, as `retry` says.
    #[must_use]
    pub fn retry(mut self, retry: Retry) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Running the turn again after an interruption (a process that ended while a call
    /// waited for a decision, say): a call the log already has a result for — the same id,
    /// tool and arguments — is answered from the log ([`ResultEvent::to_outcome`]) and does
    /// not run a second time; the others run. Values come back when the log keeps them
    /// ([`LogOptions::values`](crate::session::LogOptions::values)). Needs a log; the turn's
    /// call ids must be unique in it, as providers' are.
    #[must_use]
    pub fn resume(mut self) -> Self {
        self.resume = true;
        self
    }

    /// Mending a call refused for its arguments (`INVALID_TOOL_INPUT`) with `hook`, at most
    /// `attempts` times per call, before the model is told ([`Repair`]).
    #[must_use]
    pub fn repair(mut self, hook: impl Repair, attempts: u32) -> Self {
        self.repair = Some(Repairer {
            hook: Arc::new(hook),
            attempts,
        });
        self
    }
}

/// When a failed call runs again: only a call of a tool that says it is idempotent
/// (`#[tool(idempotent)]`), only on a failure `retry` deems transient (by default a
/// `TOOL_TIMEOUT`), at most `attempts` more times, waiting `delay` before each. Every attempt
/// is dispatched (and logged) as a call of its own.
#[derive(Clone)]
pub struct Retry {
    attempts: u32,
    delay: Duration,
    transient: Arc<dyn Fn(&FailureError) -> bool + Send + Sync>,
}

impl Retry {
    /// At most `attempts` more tries, at once, on a timeout.
    pub fn new(attempts: u32) -> Self {
        Self {
            attempts,
            delay: Duration::ZERO,
            transient: Arc::new(|error: &FailureError| error.kind() == Some(FailureKind::Timeout)),
        }
    }

    /// Waiting `delay` before each try.
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Deeming a failure transient when `transient` says so (a body's own code, say).
    #[must_use]
    pub fn when(
        mut self,
        transient: impl Fn(&FailureError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.transient = Arc::new(transient);
        self
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Retry")
            .field("attempts", &self.attempts)
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

/// Dispatches a turn's calls through `snapshot` as the model's (direct) calls, in the order
/// their tools' effects need ([`effects`](crate::effects)): calls of read-only tools overlap,
/// a call that writes waits for the calls before it that it may touch and holds back those
/// after it, and calls on different named resources overlap even when they write; at most
/// `options.max_concurrent` at once. One outcome per call, in the calls' order. A call that
/// must not run (cut off, over the size limit) is not dispatched: its outcome is the failure
/// the model is told.
///
/// With a log, a failure to write it is returned after every call has ended: the calls ran.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::lower::Provider;
/// use toolprism::turn::{RunOptions, read_response, run_calls};
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::builder().tool(Add).build().unwrap();
/// let body = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
///   "tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":1,\"b\":2}"}},
///                 {"id":"call_2","type":"function","function":{"name":"add","arguments":"{\"a\":1,"}}]}}]}"#;
/// let turn = read_response(Provider::OpenAiChat, body).unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let outcomes = run_calls(&registry.snapshot(), &turn, &RunOptions::default()).await.unwrap();
/// assert_eq!(outcomes[0].value().unwrap(), &serde_json::json!(3));
/// assert!(outcomes[1].error().unwrap().message.contains("not valid JSON"));
/// let next = turn.next_messages(&outcomes).unwrap(); // the assistant message, then one tool message per call
/// assert_eq!(next.len(), 3);
/// assert_eq!(next[2]["tool_call_id"], "call_2");
/// # });
/// ```
pub async fn run_calls(
    snapshot: &Snapshot,
    turn: &AssistantTurn,
    options: &RunOptions,
) -> Result<Vec<ToolOutcome>, RecordError> {
    let calls = turn.calls();
    let answered = match (&options.log, options.resume) {
        (Some(log), true) => answered_in(log, calls).map_err(|source| RecordError {
            outcome: None,
            source,
        })?,
        _ => HashMap::new(),
    };
    let effects: Vec<Option<Effect>> = calls.iter().map(|call| effect_of(snapshot, call)).collect();
    let run = |at: usize| {
        let answer = answered.get(calls[at].id());
        run_call(snapshot, &calls[at], answer, options)
    };
    let results = in_effect_order(&effects, options.max_concurrent, run).await;
    results.into_iter().collect()
}

/// What a call does, as its tool declares it; `None` for a call that will not reach a body
/// (never dispatched, an unknown tool, arguments that are not JSON).
fn effect_of(snapshot: &Snapshot, call: &ReadCall) -> Option<Effect> {
    let Arguments::Json(arguments) = call.arguments() else {
        return None;
    };
    let definition = snapshot.definition(call.name())?;
    Some(definition.about().effect_of(arguments))
}

/// One call: dispatched (again, while the host's [`Retry`] allows; with corrected
/// arguments, while its repair hook gives them), or the failure the model is told for a call
/// that must not run; logged when there is a log.
async fn run_call(
    snapshot: &Snapshot,
    call: &ReadCall,
    answered: Option<&ResultEvent>,
    options: &RunOptions,
) -> Result<ToolOutcome, RecordError> {
    if let Some(result) = answered {
        return Ok(result.to_outcome());
    }
    let log = options.log.as_ref();
    // A call the provider's program made goes to a tool programs may call.
    let dispatch = match call.caller() {
        Caller::Program { .. } => options.dispatch.clone().from_program(),
        _ => options.dispatch.clone(),
    };
    let mut tool_call = match call.to_call() {
        Ok(tool_call) => tool_call,
        Err(refused) => return record_refused(call, refused, log),
    };
    let retry = options.retry.as_ref().filter(|_| {
        snapshot
            .definition(call.name())
            .is_some_and(|definition| definition.about().hints.idempotent == Some(true))
    });
    let (mut tries, mut repairs) = (0, 0);
    let mut arguments = call.arguments().clone();
    loop {
        let repair = (repairs > 0).then_some(repairs);
        let outcome = match log {
            None => {
                snapshot
                    .dispatch_with(tool_call.clone(), Surface::Direct, dispatch.clone())
                    .await
            }
            Some(log) => {
                let logged = Logged {
                    repair,
                    resume: options.resume,
                };
                log.dispatch_logged(
                    snapshot,
                    tool_call.clone(),
                    Surface::Direct,
                    dispatch.clone(),
                    logged,
                )
                .await?
            }
        };
        if let Some(retry) = retry.filter(|retry| {
            tries < retry.attempts
                && outcome
                    .error()
                    .is_some_and(|error| (retry.transient)(error))
        }) {
            tries += 1;
            tracing::debug!(tool = call.name(), tries, "retrying an idempotent call");
            if !retry.delay.is_zero() {
                futures_timer::Delay::new(retry.delay).await;
            }
            continue;
        }
        let Some(corrected) = repaired(options, call.name(), arguments, &outcome, repairs).await
        else {
            return Ok(outcome);
        };
        repairs += 1;
        tracing::debug!(tool = call.name(), repairs, "dispatching a repaired call");
        tool_call = crate::ToolCall::new(call.id(), call.name(), corrected.clone());
        arguments = Arguments::Json(corrected);
    }
}

/// The results `log` holds for the calls of a turn, by call id: for each call the model made
/// with the same tool and arguments (its repairs and retries logged after it), the last
/// result logged. Reads the log once, keeping only what answers these calls.
fn answered_in(log: &SessionLog, calls: &[ReadCall]) -> io::Result<HashMap<String, ResultEvent>> {
    let wanted: HashMap<&str, &ReadCall> = calls.iter().map(|call| (call.id(), call)).collect();
    // Per id: whether the model's call logged last is this turn's, and the result after it.
    let mut found: HashMap<String, (bool, Option<ResultEvent>)> = HashMap::new();
    SessionLog::scan(File::open(log.path())?, |event| match event {
        SessionEvent::ToolCall(logged) if logged.repair.is_none() => {
            if let Some(call) = wanted.get(logged.id.as_str()) {
                let same = logged.name == call.name()
                    && matches!(call.arguments(), Arguments::Json(arguments) if logged.args.as_ref() == Some(arguments));
                found.insert(logged.id, (same, None));
            }
        }
        SessionEvent::ToolResult(result) => {
            if let Some((_, answer)) = found.get_mut(&result.id) {
                *answer = Some(result);
            }
        }
        _ => {}
    })?;
    Ok(found
        .into_iter()
        .filter_map(|(id, (same, answer))| Some((id, answer.filter(|_| same)?)))
        .collect())
}

/// The arguments the host's repair hook gives for a call refused for its arguments, while it
/// has attempts left; `None` otherwise (and for a hook that panicked).
async fn repaired(
    options: &RunOptions,
    name: &str,
    arguments: Arguments,
    outcome: &ToolOutcome,
    repairs: u32,
) -> Option<Value> {
    let repairer = options
        .repair
        .as_ref()
        .filter(|repairer| repairs < repairer.attempts)?;
    let error = outcome
        .error()
        .filter(|error| error.kind() == Some(FailureKind::InvalidInput))?;
    let request = RepairRequest {
        name: name.to_owned(),
        arguments,
        error: error.clone(),
        attempt: repairs + 1,
    };
    match crate::panic::contain(|| repairer.hook.repair(request)).await {
        Ok(corrected) => corrected,
        Err(panic) => {
            tracing::warn!(tool = name, panic, "repair hook panicked");
            None
        }
    }
}

/// A call that must not run: the failure the model is told, logged as the text it was.
fn record_refused(
    call: &ReadCall,
    refused: ToolOutcome,
    log: Option<&SessionLog>,
) -> Result<ToolOutcome, RecordError> {
    let Some(log) = log else {
        return Ok(refused);
    };
    let received = match call.arguments() {
        Arguments::CutOff { received, .. } => received.clone(),
        _ => String::new(),
    };
    let logged = crate::ToolCall::from_raw_args(call.id(), call.name(), received);
    match log.record(&logged, &refused) {
        Ok(()) => Ok(refused),
        Err(source) => Err(RecordError {
            outcome: Some(refused),
            source,
        }),
    }
}
