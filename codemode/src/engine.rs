//! The JavaScript side of a run: a fresh QuickJS runtime on an engine thread (`pool`), holding
//! nothing but `tools` and `console`, driven until the program's promise settles or a limit
//! ends it. A tool call with none other in flight is dispatched here, inside the host's Tokio
//! runtime, and answered at once if it completes at once; any other leaves as a message to the
//! host and comes back as a settled promise.
//!
//! An engine thread per run keeps a busy program off the host's executor: a loop that spins
//! until its CPU limit blocks this thread, never an async worker.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::function::{Opt, Rest};
use rquickjs::promise::PromiseState;
use rquickjs::{
    Coerced, Ctx, Exception, Function, Object, Persistent, Promise, Runtime, Type, Value,
};
use smol_str::SmolStr;
use tokio::sync::mpsc::UnboundedSender;
use toolprism::context::NestedDispatcher;
use toolprism::{BoxFuture, FrozenValue, ToolCall, ToolOutcome};

use crate::convert::{NotJson, Reading, to_js};
use crate::limits::{Limits, Stop};
use crate::pool::Fresh;

/// The file name errors and stack traces give the program.
pub(crate) const PROGRAM_FILE: &str = "program.js";

/// The program runs as the body of an async function: `await` and `return` work at its top
/// level. The opening takes one line, so reported lines are shifted back by one.
const OPENING: &str = "(async () => {\n";
const CLOSING: &str = "\n})()";

/// What the engine asks of the host.
pub(crate) enum ToHost {
    /// Run a tool call; answer with a [`Settled`] of the same `seq`.
    Call {
        seq: u64,
        name: String,
        args: serde_json::Value,
    },
    /// Finish a tool call the engine started and that waits on something; answer with a
    /// [`Settled`] of the same `seq`.
    Finish {
        seq: u64,
        dispatch: BoxFuture<'static, ToolOutcome>,
        /// What the call does, as its tool declares it.
        effect: Option<toolprism::effects::Effect>,
    },
    /// The run is over.
    Done(RunEnd),
}

/// How the engine dispatches a call itself: on its own thread, inside the host's Tokio
/// runtime, so that a call that completes at once (most do) never crosses threads. A call
/// that waits is handed to the host as it stands.
#[derive(Clone, Debug)]
pub(crate) struct InlineDispatch {
    pub(crate) dispatcher: NestedDispatcher,
    pub(crate) runtime: tokio::runtime::Handle,
    pub(crate) parent_id: String,
    /// The span of the run (`run_program`), so that a call dispatched here is traced inside it;
    /// shared by every clone, and let go by all of them at once when the run ends (the
    /// program's functions, which hold one, outlive it until the runtime is freed).
    pub(crate) span: Arc<Mutex<Option<tracing::Span>>>,
}

impl InlineDispatch {
    /// The run's span, while the run lasts (none after).
    fn span(&self) -> tracing::Span {
        let span = self.span.lock().unwrap_or_else(PoisonError::into_inner);
        span.clone().unwrap_or_else(tracing::Span::none)
    }

    /// Lets go of the run's span, for every clone.
    fn let_go_of_the_span(&self) {
        self.span
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// A tool call's answer.
#[derive(Debug)]
pub(crate) struct Settled {
    pub(crate) seq: u64,
    pub(crate) reply: Result<FrozenValue, CallError>,
}

/// A failed tool call, as the program's `catch` sees it.
#[derive(Clone, Debug)]
pub(crate) struct CallError {
    pub(crate) name: String,
    pub(crate) code: String,
    pub(crate) message: String,
}

/// How a run ended.
#[derive(Debug)]
pub(crate) struct RunEnd {
    pub(crate) logs: Vec<String>,
    pub(crate) outcome: Result<Option<serde_json::Value>, Failure>,
}

/// A run that ended without a result.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) stop: Stop,
    /// What happened, and where (`line 3, column 7`), when the engine knows.
    pub(crate) detail: String,
}

impl Failure {
    fn new(stop: Stop, detail: impl Into<String>) -> Self {
        Self {
            stop,
            detail: detail.into(),
        }
    }
}

/// What a run needs: the program, the tools it may call, its limits, and how it may
/// dispatch calls itself (when the host runs on Tokio).
#[derive(Debug)]
pub(crate) struct Program {
    pub(crate) code: String,
    pub(crate) tools: Vec<String>,
    pub(crate) limits: Limits,
    pub(crate) inline: Option<InlineDispatch>,
}

/// Starts a run on an engine thread of its own (`pool`). The run ends by sending
/// [`ToHost::Done`] (unless the host is gone); `cancel` ends it early, from any thread.
pub(crate) fn spawn(
    program: Program,
    to_host: UnboundedSender<ToHost>,
    from_host: Receiver<Settled>,
    cancel: Arc<AtomicBool>,
) -> std::io::Result<()> {
    // Room for QuickJS's own stack limit, plus the host code around it.
    let stack = program.limits.max_stack_bytes() + (4 << 20);
    crate::pool::start(
        stack,
        Box::new(move |fresh| {
            let mut program = program;
            // The run's runtime, freed once the host has the run's end: freeing it (a last
            // garbage collection) is no part of the run's time.
            let mut used = None;
            let end = catch_unwind(AssertUnwindSafe(|| {
                run(&program, fresh, &mut used, &to_host, &from_host, &cancel)
            }))
            .unwrap_or_else(|_| RunEnd {
                logs: Vec::new(),
                outcome: Err(Failure::new(Stop::Engine, "the engine panicked")),
            });
            // Its hold on the run's span let go first: the span ends with the run, not with
            // this thread's cleaning up.
            if let Some(inline) = program.inline.take() {
                inline.let_go_of_the_span();
            }
            let _ = to_host.send(ToHost::Done(end));
            drop(used);
        }),
    )
}

/// The `resolve` and `reject` of a tool call's promise, kept until the call settles.
type Resolvers = (Persistent<Function<'static>>, Persistent<Function<'static>>);

/// The state the program's native functions share with the loop.
struct Shared {
    /// Why the run must end, set by a limit; read by the interrupt handler.
    stop: Rc<Cell<Option<Stop>>>,
    logs: RefCell<Vec<String>>,
    log_bytes: Cell<usize>,
    calls: Cell<usize>,
    pending: RefCell<HashMap<u64, Resolvers>>,
    inline: Option<InlineDispatch>,
    /// When the run must end, and whether its host dropped it: checked before a call is
    /// dispatched here, where no interrupt would notice them.
    deadline: Instant,
    cancel: Arc<AtomicBool>,
    /// Time this thread spent in tools' code (their polls, by the wall clock: a thread-CPU
    /// reading costs a system call), which the program's CPU limit leaves out.
    tools_cpu: Rc<Cell<Duration>>,
    /// Where the printed JavaScript of a TypeScript program came from.
    #[cfg(feature = "typescript")]
    positions: RefCell<crate::typescript::Positions>,
    to_host: UnboundedSender<ToHost>,
    limits: Limits,
}

impl Shared {
    fn end(&self, stop: Stop) {
        if self.stop.get().is_none() {
            self.stop.set(Some(stop));
        }
    }

    /// Ends the run (throwing) if its wall time is over at `now` or its host dropped it.
    fn check_still_wanted(&self, ctx: &Ctx<'_>, now: Instant) -> rquickjs::Result<()> {
        if now >= self.deadline {
            self.end(Stop::WallTime);
        } else if self.cancel.load(Ordering::Relaxed) || self.to_host.is_closed() {
            self.end(Stop::Engine);
        } else {
            return Ok(());
        }
        Err(Exception::throw_internal(ctx, "the run is over"))
    }
}

fn run(
    program: &Program,
    fresh: Option<Fresh>,
    used: &mut Option<Fresh>,
    to_host: &UnboundedSender<ToHost>,
    from_host: &Receiver<Settled>,
    cancel: &Arc<AtomicBool>,
) -> RunEnd {
    let limits = program.limits;
    *used = fresh.or_else(Fresh::make);
    let Some(Fresh { runtime, context }) = used.as_ref() else {
        return RunEnd {
            logs: Vec::new(),
            outcome: Err(Failure::new(Stop::Engine, "QuickJS could not start")),
        };
    };
    runtime.set_memory_limit(limits.max_memory_bytes());
    runtime.set_max_stack_size(limits.max_stack_bytes());
    let stop = Rc::new(Cell::new(None));
    let tools_cpu = Rc::new(Cell::new(Duration::ZERO));
    let started = Instant::now();
    let deadline = started + limits.max_wall_time();
    runtime.set_interrupt_handler(Some(Box::new({
        let stop = stop.clone();
        let cancel = cancel.clone();
        let tools_cpu = tools_cpu.clone();
        let clock = CpuClock::start();
        move || {
            if stop.get().is_none() {
                if Instant::now() >= deadline {
                    stop.set(Some(Stop::WallTime));
                } else if clock.elapsed().saturating_sub(tools_cpu.get()) > limits.max_cpu_time() {
                    stop.set(Some(Stop::CpuTime));
                }
            }
            stop.get().is_some() || cancel.load(Ordering::Relaxed)
        }
    })));
    let shared = Shared {
        stop,
        logs: RefCell::new(Vec::new()),
        log_bytes: Cell::new(0),
        calls: Cell::new(0),
        pending: RefCell::new(HashMap::new()),
        inline: program.inline.clone(),
        deadline,
        cancel: cancel.clone(),
        tools_cpu,
        #[cfg(feature = "typescript")]
        positions: RefCell::default(),
        to_host: to_host.clone(),
        limits,
    };
    let shared = Rc::new(shared);
    let outcome = context.with(|ctx| match Reading::new(&ctx) {
        Ok(reading) => {
            let reading = Rc::new(reading);
            let _release = Release {
                shared: &shared,
                reading: &reading,
            };
            drive(
                &ctx, runtime, program, &shared, &reading, from_host, deadline,
            )
        }
        Err(error) => Err(engine_failure(&ctx, runtime, &shared, error)),
    });
    let logs = shared.logs.take();
    RunEnd { logs, outcome }
}

/// Lets go of the runtime's values the run holds outside the runtime (the resolvers of pending
/// calls, what reading keeps) when the run ends, a panic included: they must go before the
/// runtime does, and the program's functions, which share them, live until it goes.
struct Release<'a, 'js> {
    shared: &'a Shared,
    reading: &'a Reading<'js>,
}

impl Drop for Release<'_, '_> {
    fn drop(&mut self) {
        self.shared.pending.borrow_mut().clear();
        self.reading.clear();
    }
}

/// Installs the globals, starts the program and runs its event loop to the end.
fn drive<'js>(
    ctx: &Ctx<'js>,
    runtime: &Runtime,
    program: &Program,
    shared: &Rc<Shared>,
    reading: &Rc<Reading<'js>>,
    from_host: &Receiver<Settled>,
    deadline: Instant,
) -> Result<Option<serde_json::Value>, Failure> {
    install(ctx, program, shared, reading)
        .map_err(|error| engine_failure(ctx, runtime, shared, error))?;
    let promise = evaluate(ctx, runtime, program, shared)?;
    loop {
        while ctx.execute_pending_job() {
            if shared.stop.get().is_some() {
                break;
            }
        }
        if let Some(stop) = shared.stop.get() {
            return Err(Failure::new(stop, ""));
        }
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<Value<'js>>() {
                    Some(Ok(value)) => result_of(ctx, runtime, shared, reading, &value),
                    _ => Err(Failure::new(
                        Stop::Engine,
                        "the settled result could not be read",
                    )),
                };
            }
            PromiseState::Rejected => {
                // `result` throws the rejection into the context, where `catch` takes it.
                let _ = promise.result::<Value<'js>>();
                let error = ctx.catch();
                return Err(thrown(ctx, runtime, shared, &error));
            }
            PromiseState::Pending => {}
        }
        if shared.pending.borrow().is_empty() {
            return Err(Failure::new(
                Stop::NeverSettled,
                "no tool call is running and no job is queued, so the program can never finish \
                 (a promise nothing resolves?)",
            ));
        }
        let Some(remaining) = deadline.checked_duration_since(Instant::now()) else {
            return Err(Failure::new(Stop::WallTime, "while waiting on tool calls"));
        };
        let settled = match receive(from_host, remaining) {
            Ok(settled) => settled,
            Err(RecvTimeoutError::Timeout) => {
                return Err(Failure::new(Stop::WallTime, "while waiting on tool calls"));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Failure::new(Stop::Engine, "the host went away"));
            }
        };
        settle(ctx, shared, settled)
            .map_err(|error| engine_failure(ctx, runtime, shared, error))?;
    }
}

/// Starts the program: its promise, or why it did not start. A program that does not parse as
/// JavaScript is tried as TypeScript.
fn evaluate<'js>(
    ctx: &Ctx<'js>,
    runtime: &Runtime,
    program: &Program,
    shared: &Shared,
) -> Result<Promise<'js>, Failure> {
    let source = format!("{OPENING}{}{CLOSING}", program.code);
    let promise: Promise<'js> = match ctx.eval_with_options(source.as_str(), eval_options()) {
        Ok(promise) => promise,
        Err(error) => {
            let failure = engine_failure(ctx, runtime, shared, error);
            // Nothing ran: a program that does not parse as JavaScript may be TypeScript.
            #[cfg(feature = "typescript")]
            if failure.stop == Stop::Syntax
                && let Some(stripped) = crate::typescript::strip(&source)
            {
                *shared.positions.borrow_mut() = stripped.positions;
                ctx.eval_with_options(stripped.code, eval_options())
                    .map_err(|error| engine_failure(ctx, runtime, shared, error))?
            } else {
                return Err(failure);
            }
            #[cfg(not(feature = "typescript"))]
            return Err(failure);
        }
    };
    Ok(promise)
}

/// How long the engine polls for a settled call before it blocks: a quick tool's answer
/// arrives within it, and the thread is spared a sleep and a wake-up (the hand-over is most of
/// a nested call's cost).
const SPIN: Duration = Duration::from_micros(50);

/// The next settled call, waiting at most `limit`.
fn receive(from_host: &Receiver<Settled>, limit: Duration) -> Result<Settled, RecvTimeoutError> {
    let start = Instant::now();
    while start.elapsed() < SPIN.min(limit) {
        match from_host.try_recv() {
            Ok(settled) => return Ok(settled),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                return Err(RecvTimeoutError::Disconnected);
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    from_host.recv_timeout(limit.saturating_sub(start.elapsed()))
}

/// The program is a script, in strict mode, named [`PROGRAM_FILE`] in stack traces.
fn eval_options() -> EvalOptions {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some(PROGRAM_FILE.to_owned());
    options
}

/// The program's value as the run's result: `undefined` is no result.
fn result_of<'js>(
    ctx: &Ctx<'js>,
    runtime: &Runtime,
    shared: &Shared,
    reading: &Reading<'js>,
    value: &Value<'js>,
) -> Result<Option<serde_json::Value>, Failure> {
    if value.is_undefined() {
        return Ok(None);
    }
    let read = reading.to_json(value, "result", shared.limits.max_result_bytes());
    match read {
        Ok(json) => Ok(Some(json)),
        Err(NotJson::Value(problem)) => Err(Failure::new(Stop::NotJson, problem)),
        Err(NotJson::TooLarge) => Err(Failure::new(Stop::ResultSize, "")),
        Err(NotJson::Engine(error)) => Err(engine_failure(ctx, runtime, shared, error)),
    }
}

/// Resolves or rejects the promise a tool call returned.
fn settle(ctx: &Ctx<'_>, shared: &Shared, settled: Settled) -> rquickjs::Result<()> {
    let Some((resolve, reject)) = shared.pending.borrow_mut().remove(&settled.seq) else {
        return Ok(());
    };
    let (resolve, reject) = (resolve.restore(ctx)?, reject.restore(ctx)?);
    answer(ctx, shared, settled.reply, &resolve, &reject)
}

/// Resolves a call's promise with its value, or rejects it with its error. A call that waits
/// for a decision ends the run instead: the program runs again once it is decided.
fn answer<'js>(
    ctx: &Ctx<'js>,
    shared: &Shared,
    reply: Result<FrozenValue, CallError>,
    resolve: &Function<'js>,
    reject: &Function<'js>,
) -> rquickjs::Result<()> {
    if let Err(error) = &reply
        && error.code == toolprism::error::codes::DECISION_PENDING
    {
        shared.end(Stop::DecisionPending);
        return Err(Exception::throw_internal(
            ctx,
            "the run waits for a decision",
        ));
    }
    let error = match reply {
        Ok(value) => match to_js(ctx, value.as_value())? {
            Ok(value) => return resolve.call::<_, ()>((value,)),
            Err(problem) => CallError {
                name: "ToolValueError".to_owned(),
                code: "VALUE_NOT_REPRESENTABLE".to_owned(),
                message: problem,
            },
        },
        Err(error) => error,
    };
    reject.call::<_, ()>((error_object(ctx, &error)?,))
}

/// An `Error` carrying a failed call's `name`, `code` and `message`.
fn error_object<'js>(ctx: &Ctx<'js>, error: &CallError) -> rquickjs::Result<Value<'js>> {
    let exception = Exception::from_message(ctx.clone(), &error.message)?;
    let object = exception.as_object();
    object.set("name", error.name.as_str())?;
    object.set("code", error.code.as_str())?;
    Ok(exception.into_value())
}

/// `tools` and `console`, the only globals a program gets beyond the language's own.
fn install<'js>(
    ctx: &Ctx<'js>,
    program: &Program,
    shared: &Rc<Shared>,
    reading: &Rc<Reading<'js>>,
) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let tools = Object::new(ctx.clone())?;
    for name in &program.tools {
        let shared = shared.clone();
        let reading = reading.clone();
        let tool = name.clone();
        let function = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Opt<Value<'js>>| {
            call_tool(&ctx, &shared, &reading, &tool, args.0)
        })?
        .with_name(name.as_str())?;
        tools.set(name.as_str(), function)?;
    }
    freeze(ctx, &tools)?;
    globals.set("tools", tools)?;
    let console = Object::new(ctx.clone())?;
    for (method, prefix) in [
        ("log", ""),
        ("info", ""),
        ("debug", ""),
        ("warn", "warn: "),
        ("error", "error: "),
    ] {
        let shared = shared.clone();
        let function = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            log(&ctx, &shared, prefix, &args.0)
        })?
        .with_name(method)?;
        console.set(method, function)?;
    }
    freeze(ctx, &console)?;
    globals.set("console", console)?;
    Ok(())
}

fn freeze<'js>(ctx: &Ctx<'js>, object: &Object<'js>) -> rquickjs::Result<()> {
    let freeze: Function<'js> = ctx
        .globals()
        .get::<_, Object<'js>>("Object")?
        .get("freeze")?;
    freeze.call::<_, ()>((object.clone(),))
}

/// `tools.<name>(args)`: a promise of the call's canonical value.
fn call_tool<'js>(
    ctx: &Ctx<'js>,
    shared: &Shared,
    reading: &Reading<'js>,
    tool: &str,
    args: Option<Value<'js>>,
) -> rquickjs::Result<Value<'js>> {
    // A run that has ended (a program that caught the throw) makes no further call.
    if shared.stop.get().is_some() {
        return Err(Exception::throw_internal(ctx, "the run is over"));
    }
    let calls = shared.calls.get() + 1;
    shared.calls.set(calls);
    if calls > shared.limits.max_tool_calls() {
        shared.end(Stop::ToolCalls);
        return Err(Exception::throw_internal(
            ctx,
            "the tool call limit is reached",
        ));
    }
    let (promise, resolve, reject) = ctx.promise()?;
    match arguments(shared, reading, args)? {
        Ok(args) => start(ctx, shared, tool, calls as u64, args, resolve, reject)?,
        Err(problem) => {
            let error = CallError {
                name: "ToolInputError".to_owned(),
                code: "INVALID_TOOL_INPUT".to_owned(),
                message: format!("The arguments to `{tool}` are not JSON: {problem}"),
            };
            reject.call::<_, ()>((error_object(ctx, &error)?,))?;
        }
    }
    Ok(promise.into_value())
}

/// Starts call `seq` with its arguments read: alone in flight (so within the concurrency
/// limit) it is dispatched here, and settled at once if it completes at once; otherwise it goes
/// to the host, its promise's `resolve` and `reject` kept until it settles.
fn start<'js>(
    ctx: &Ctx<'js>,
    shared: &Shared,
    tool: &str,
    seq: u64,
    args: serde_json::Value,
    resolve: Function<'js>,
    reject: Function<'js>,
) -> rquickjs::Result<()> {
    let inline = shared
        .inline
        .as_ref()
        .filter(|_| shared.pending.borrow().is_empty());
    let message = match inline {
        Some(inline) => {
            // Kept for the host, should the call wait: later calls are ordered by it.
            let effect = inline.dispatcher.effect_of(tool, &args);
            let before = Instant::now();
            shared.check_still_wanted(ctx, before)?;
            let (dispatched, after) = dispatch_here(shared, inline, seq, tool, args, before);
            match dispatched {
                Ok(reply) => {
                    // A call that ran past the deadline ends the run, not succeeds.
                    shared.check_still_wanted(ctx, after)?;
                    answer(ctx, shared, reply, &resolve, &reject)?;
                    return Ok(());
                }
                Err(dispatch) => ToHost::Finish {
                    seq,
                    dispatch,
                    effect,
                },
            }
        }
        None => ToHost::Call {
            seq,
            name: tool.to_owned(),
            args,
        },
    };
    shared.pending.borrow_mut().insert(
        seq,
        (
            Persistent::save(ctx, resolve),
            Persistent::save(ctx, reject),
        ),
    );
    if let Err(unsent) = shared.to_host.send(message) {
        // A dispatch handed over is dropped where it ran: inside the host's runtime.
        let _inside = inline.map(|inline| inline.runtime.enter());
        drop(unsent);
        shared.end(Stop::Engine);
    }
    Ok(())
}

/// A call's arguments as JSON (an empty object when none are given), or why they are not JSON.
fn arguments<'js>(
    shared: &Shared,
    reading: &Reading<'js>,
    args: Option<Value<'js>>,
) -> rquickjs::Result<Result<serde_json::Value, String>> {
    let Some(args) = args.filter(|args| !args.is_undefined()) else {
        return Ok(Ok(serde_json::Value::Object(serde_json::Map::new())));
    };
    let max_bytes = shared.limits.max_result_bytes();
    match reading.to_json(&args, "args", max_bytes) {
        Ok(args) => Ok(Ok(args)),
        Err(NotJson::Value(problem)) => Ok(Err(problem)),
        Err(NotJson::TooLarge) => Ok(Err(format!(
            "the arguments are larger than {max_bytes} bytes as JSON"
        ))),
        Err(NotJson::Engine(error)) => Err(error),
    }
}

/// What [`dispatch_here`] gives: the reply if the call completed at once, else the dispatch as
/// it stands.
type Dispatched = Result<Result<FrozenValue, CallError>, BoxFuture<'static, ToolOutcome>>;

/// Dispatches a call on this thread, inside the host's runtime, from `before`: its reply if it
/// completed at once, else the dispatch as it stands, for the host to finish; and when it
/// returned. The time the tool took is kept out of the program's CPU time.
fn dispatch_here(
    shared: &Shared,
    inline: &InlineDispatch,
    seq: u64,
    tool: &str,
    args: serde_json::Value,
    before: Instant,
) -> (Dispatched, Instant) {
    let call = ToolCall::new(call_id(&inline.parent_id, seq), tool, args);
    let span = inline.span();
    let start = || {
        let _in_run = span.enter();
        let mut dispatch = inline.dispatcher.dispatch(call);
        let _inside = inline.runtime.enter();
        // The host polls it again, with a waker of its own, if it is not done.
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let polled = dispatch.as_mut().poll(&mut context);
        (dispatch, polled)
    };
    // On this thread, the subscriber the run is traced by (the host's may be scoped to its
    // own thread), so that the call's span is the run's child wherever it runs.
    let traced_by = span.with_subscriber(|(_, subscriber)| subscriber.clone());
    let (dispatch, polled) = match traced_by {
        Some(subscriber) => tracing::dispatcher::with_default(&subscriber, start),
        None => start(),
    };
    let after = Instant::now();
    shared
        .tools_cpu
        .set(shared.tools_cpu.get() + after.saturating_duration_since(before));
    let dispatched = match polled {
        std::task::Poll::Ready(outcome) => Ok(reply(outcome)),
        std::task::Poll::Pending => Err(dispatch),
    };
    (dispatched, after)
}

/// A nested call's id: `<parent_id>.<seq>`, held inline when short (most are).
pub(crate) fn call_id(parent_id: &str, seq: u64) -> SmolStr {
    // Written digit by digit: the formatting machinery costs more than the rest of the id.
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = seq;
    loop {
        at -= 1;
        digits[at] = u8::try_from(rest % 10).map_or(b'0', |digit| b'0' + digit);
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut id = smol_str::SmolStrBuilder::new();
    id.push_str(parent_id);
    id.push('.');
    id.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
    id.finish()
}

/// A nested outcome as the program gets it: the canonical value, or the error's parts.
pub(crate) fn reply(outcome: ToolOutcome) -> Result<FrozenValue, CallError> {
    match outcome.into_parts().result {
        Ok(value) => Ok(value),
        Err(error) => {
            let (name, code) = error.info.map_or_else(
                || ("ToolError".to_owned(), "TOOL_FAILED".to_owned()),
                |info| (info.name, info.code),
            );
            Err(CallError {
                name,
                code,
                message: error.message,
            })
        }
    }
}

/// `console.*`: one line, its values separated by spaces, as `console.log` shows them.
fn log<'js>(
    ctx: &Ctx<'js>,
    shared: &Shared,
    prefix: &str,
    values: &[Value<'js>],
) -> rquickjs::Result<()> {
    let mut line = prefix.to_owned();
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            line.push(' ');
        }
        line.push_str(&shown(ctx, value)?);
    }
    let bytes = shared.log_bytes.get() + line.len() + 1;
    if bytes > shared.limits.max_log_bytes() {
        shared.end(Stop::Logs);
        return Err(Exception::throw_internal(ctx, "the log limit is reached"));
    }
    shared.log_bytes.set(bytes);
    shared.logs.borrow_mut().push(line);
    Ok(())
}

/// A value as a log line shows it: strings as they are, errors as `Name: message`, data as
/// JSON, anything else as `String(value)` would.
fn shown<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> rquickjs::Result<String> {
    match value.type_of() {
        Type::String => return value.get::<String>(),
        Type::Exception | Type::Undefined | Type::Function | Type::Constructor | Type::Symbol => {}
        _ => {
            if let Ok(Some(json)) = ctx.json_stringify(value.clone()) {
                return json.to_string();
            }
            // A cycle or a BigInt: JSON.stringify threw; show it as String() does.
            let _ = ctx.catch();
        }
    }
    if let Ok(text) = value.get::<Coerced<String>>() {
        Ok(text.0)
    } else {
        let _ = ctx.catch();
        Ok(format!("[{}]", value.type_name()))
    }
}

/// A thrown value, as the failure the model is told about.
fn thrown<'js>(ctx: &Ctx<'js>, runtime: &Runtime, shared: &Shared, error: &Value<'js>) -> Failure {
    if let Some(stop) = shared.stop.get() {
        return Failure::new(stop, "");
    }
    let Some(exception) = error.as_exception() else {
        // QuickJS throws `null` when even the out-of-memory error could not be allocated.
        let usage = runtime.memory_usage();
        let near_limit = usize::try_from(usage.malloc_size).unwrap_or(usize::MAX)
            >= shared.limits.max_memory_bytes() / 4 * 3;
        if error.is_null() && near_limit {
            return Failure::new(Stop::Memory, "");
        }
        let shown = shown(ctx, error).unwrap_or_default();
        return Failure::new(Stop::Exception, format!("the program threw {shown}"));
    };
    let name: String = exception.get("name").unwrap_or_default();
    let message = exception.message().unwrap_or_default();
    let place = exception
        .stack()
        .as_deref()
        .and_then(first_program_location)
        .and_then(|(line, column)| shared.program_position(line, column))
        .map(|(line, column)| format!(" at line {line}, column {column}"))
        .unwrap_or_default();
    let stop = match (name.as_str(), message.as_str()) {
        ("SyntaxError", _) if is_compile_error(exception) => Stop::Syntax,
        ("InternalError", "out of memory") => Stop::Memory,
        ("RangeError", "Maximum call stack size exceeded") => Stop::Stack,
        _ => Stop::Exception,
    };
    let code: Option<String> = exception.get("code").ok();
    let code = code.map(|code| format!(" ({code})")).unwrap_or_default();
    Failure::new(stop, format!("{name}{code}: {message}{place}"))
}

/// A syntax error the parser raised (its stack is only the location), not one the program
/// threw at run time (`JSON.parse`, `new SyntaxError`), whose stack has a frame.
fn is_compile_error(exception: &Exception<'_>) -> bool {
    let location = format!("at {PROGRAM_FILE}:");
    exception.stack().is_some_and(|stack| {
        stack
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .all(|line| line.starts_with(&location))
    })
}

/// The first `program.js:line:column` of a stack trace: a position in the script run.
fn first_program_location(stack: &str) -> Option<(u32, u32)> {
    let marker = format!("{PROGRAM_FILE}:");
    stack.lines().find_map(|frame| {
        let at = frame.find(&marker)? + marker.len();
        let rest = &frame[at..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit() && c != ':')
            .unwrap_or(rest.len());
        let (line, column) = rest[..end].split_once(':')?;
        Some((line.parse().ok()?, column.parse().ok()?))
    })
}

impl Shared {
    /// A position in the script run as one in the program the model wrote: through the
    /// TypeScript map if types were stripped, then past the wrapper's opening line.
    #[cfg_attr(not(feature = "typescript"), expect(clippy::unused_self))]
    fn program_position(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        #[cfg(feature = "typescript")]
        let (line, column) = {
            let positions = self.positions.borrow();
            if positions.is_empty() {
                (line, column)
            } else {
                positions.original(line, column)?
            }
        };
        Some((line.checked_sub(1).filter(|line| *line > 0)?, column))
    }
}

/// A failure of the engine itself (or a limit that surfaced as an exception).
fn engine_failure(
    ctx: &Ctx<'_>,
    runtime: &Runtime,
    shared: &Shared,
    error: rquickjs::Error,
) -> Failure {
    if let Some(stop) = shared.stop.get() {
        return Failure::new(stop, "");
    }
    match error {
        rquickjs::Error::Exception => {
            let thrown_value = ctx.catch();
            thrown(ctx, runtime, shared, &thrown_value)
        }
        other => Failure::new(Stop::Engine, other.to_string()),
    }
}

/// CPU time of the engine's thread (wall time where the platform has no thread clock).
struct CpuClock {
    start: Duration,
}

impl CpuClock {
    fn start() -> Self {
        Self { start: Self::now() }
    }

    fn elapsed(&self) -> Duration {
        Self::now().saturating_sub(self.start)
    }

    #[cfg(unix)]
    fn now() -> Duration {
        use nix::time::{ClockId, clock_gettime};
        clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
    }

    #[cfg(not(unix))]
    fn now() -> Duration {
        use std::sync::OnceLock;
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::call_id;

    #[test]
    fn a_call_id_is_the_parent_id_a_dot_and_the_number() {
        for seq in [0, 1, 9, 10, 1234, u64::MAX] {
            assert_eq!(call_id("run-1", seq), format!("run-1.{seq}"));
        }
        let long = "p".repeat(40);
        assert_eq!(call_id(&long, 7), format!("{long}.7"));
    }
}
