//! The log file: appending one event per line, reading back every event it can, and
//! dispatching a call with its events.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::events::{
    CallEvent, LOG_FORMAT_VERSION, MAX_EVENT_BYTES, NestedEvent, ResultEvent, SessionEvent,
    check_event, unloggable,
};
use crate::call::{Surface, ToolCall};
use crate::error::FailureKind;
use crate::outcome::ToolOutcome;
use crate::pipeline::{DispatchOptions, NestedRecorder, NestedRecording, Snapshot};

/// How a log is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogOptions {
    /// Flush every event to disk (`fsync`) before `append` returns.
    pub fsync: bool,
    /// Log each success's canonical value beside what the model saw, so that a resumed turn
    /// ([`RunOptions::resume`](crate::turn::RunOptions::resume)) gets its values back. Off by
    /// default: a value may hold what a policy kept from the model.
    pub values: bool,
}

impl LogOptions {
    /// Options that fsync every event.
    pub fn fsync() -> Self {
        Self {
            fsync: true,
            values: false,
        }
    }

    /// Logging each success's canonical value too.
    #[must_use]
    pub fn values(mut self) -> Self {
        self.values = true;
        self
    }
}

/// What opening a log found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// The length in bytes of a torn last line, if the file ended in the middle of one.
    pub torn_tail: Option<u64>,
}

/// A problem met while reading a log; the events around it stay readable.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogProblem {
    /// The last line has no newline and is not a complete event: a crash mid-write.
    TornLastLine {
        /// 1-based line number.
        line: usize,
    },
    /// A line that is not a valid event of a known kind.
    Corrupt {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        error: String,
    },
    /// An event of a kind this version does not know (written by a later one): skipped.
    UnknownKind {
        /// 1-based line number.
        line: usize,
        /// Its kind.
        kind: String,
        /// Its `v`.
        version: u64,
    },
}

/// The events of a log, and what could not be read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogContents {
    /// The events, in order.
    pub events: Vec<SessionEvent>,
    /// The problems, in order.
    pub problems: Vec<LogProblem>,
}

/// Why a recorded dispatch could not be logged. If the tool ran, its outcome is here: nothing
/// is lost because the log failed.
#[derive(Debug, thiserror::Error)]
#[error("the session log could not be written: {source}")]
pub struct RecordError {
    /// The outcome, if the call was dispatched.
    pub outcome: Option<ToolOutcome>,
    /// The I/O error.
    #[source]
    pub source: io::Error,
}

/// How a call is logged: as the host's repair of the call logged before it (attempt `repair`),
/// and whether it is run again after a stop (`resume`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Logged {
    pub(crate) repair: Option<u32>,
    pub(crate) resume: bool,
}

/// An append-only session log.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::session::{LogOptions, SessionLog, replay};
/// use serde_json::json;
///
/// /// Adds.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let path = std::env::temp_dir().join(format!("toolprism-doc-log-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let (log, _report) = SessionLog::open(&path, LogOptions::default()).unwrap();
/// let registry = Registry::builder().tool(Add).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = ToolCall::new("c1", "add", json!({"a": 1, "b": 2}));
/// let outcome = log.dispatch(&registry.snapshot(), call, Surface::Direct).await.unwrap();
/// assert_eq!(outcome.value().unwrap(), &json!(3));
/// # });
/// let contents = SessionLog::read(&path).unwrap();
/// let replayed = replay(&contents.events);
/// assert_eq!(replayed[0].result.as_ref().unwrap().content, [ContentBlock::text("3")]);
/// # std::fs::remove_file(&path).unwrap();
/// ```
///
/// Cloning it is an `Arc` clone: the clones append to the same file, one line at a time.
/// Calls dispatched through [`SessionLog::dispatch`] carry the log with them, so a nested
/// dispatch they make (a Code Mode program calling tools) is logged as a `nested_result`
/// under its parent.
#[derive(Clone, Debug)]
pub struct SessionLog {
    inner: Arc<LogFile>,
}

#[derive(Debug)]
struct LogFile {
    path: PathBuf,
    file: Mutex<File>,
    options: LogOptions,
}

impl SessionLog {
    /// Opens (or creates) a log for appending, reporting a torn last line if there is one.
    pub fn open(path: impl AsRef<Path>, options: LogOptions) -> io::Result<(Self, OpenReport)> {
        let path = path.as_ref().to_path_buf();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)?;
        let torn_tail = torn_tail_len(&mut file)?;
        if let Some(bytes) = torn_tail {
            tracing::warn!(path = %path.display(), bytes, "session log ends in a torn line");
            // End the torn line, so the next event starts on a line of its own.
            file.write_all(b"\n")?;
            if options.fsync {
                file.sync_data()?;
            }
        }
        let log = Self {
            inner: Arc::new(LogFile {
                path,
                file: Mutex::new(file),
                options,
            }),
        };
        Ok((log, OpenReport { torn_tail }))
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Appends one event, as one line written at once, on a line of its own.
    ///
    /// An event the reader would not give back as written — JSON nested deeper than
    /// [`MAX_DEPTH`](crate::depth::MAX_DEPTH), a line longer than [`MAX_EVENT_BYTES`] — is refused with an
    /// [`io::ErrorKind::InvalidInput`] error, and nothing is written.
    pub fn append(&self, event: &SessionEvent) -> io::Result<()> {
        #[derive(Serialize)]
        struct Line<'a> {
            v: u64,
            #[serde(flatten)]
            event: &'a SessionEvent,
        }
        check_event(event).map_err(|problem| unloggable(&problem))?;
        let mut line = serde_json::to_vec(&Line {
            v: LOG_FORMAT_VERSION,
            event,
        })?;
        if line.len() > MAX_EVENT_BYTES {
            return Err(unloggable(&format!(
                "it is {} bytes as JSON, more than the {MAX_EVENT_BYTES} a line may have",
                line.len()
            )));
        }
        line.push(b'\n');
        let mut file = self
            .inner
            .file
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Another writer may have left a torn line since the last append: start a fresh one.
        if !ends_with_newline(&mut file)? {
            line.insert(0, b'\n');
        }
        file.write_all(&line)?;
        if self.inner.options.fsync {
            file.sync_data()?;
        }
        Ok(())
    }

    /// Dispatches a call the model made through `snapshot`, logging the call before and what
    /// the model saw after.
    pub async fn dispatch(
        &self,
        snapshot: &Snapshot,
        call: ToolCall,
        surface: Surface,
    ) -> Result<ToolOutcome, RecordError> {
        self.dispatch_with(snapshot, call, surface, DispatchOptions::default())
            .await
    }

    /// [`dispatch`](Self::dispatch) with the host's options (a progress sink, extensions).
    pub async fn dispatch_with(
        &self,
        snapshot: &Snapshot,
        call: ToolCall,
        surface: Surface,
        options: DispatchOptions,
    ) -> Result<ToolOutcome, RecordError> {
        self.dispatch_logged(snapshot, call, surface, options, Logged::default())
            .await
    }

    /// [`dispatch_with`](Self::dispatch_with), the call marked as the host's repair of the
    /// one logged before it (attempt `repair`); `resume`: the call ran before and is run again,
    /// the nested dispatches it made then given back from the log.
    pub(crate) async fn dispatch_logged(
        &self,
        snapshot: &Snapshot,
        call: ToolCall,
        surface: Surface,
        options: DispatchOptions,
        logged: Logged,
    ) -> Result<ToolOutcome, RecordError> {
        let Logged { repair, resume } = logged;
        let id = call.id().to_owned();
        if let Err(source) = CallEvent::in_snapshot(&call, snapshot)
            .map(|event| CallEvent { repair, ..event })
            .and_then(|event| self.append(&SessionEvent::ToolCall(event)))
        {
            // The call does not run: its arguments may be too deep to drop by recursion.
            call.dispose();
            return Err(RecordError {
                outcome: None,
                source,
            });
        }
        let recording = if resume {
            match Resumed::of(self, &id) {
                Ok(resumed) => NestedRecording(Arc::new(resumed)),
                Err(source) => {
                    call.dispose();
                    return Err(RecordError {
                        outcome: None,
                        source,
                    });
                }
            }
        } else {
            NestedRecording(Arc::new(self.clone()))
        };
        let options = options.extension(recording);
        let outcome = snapshot.dispatch_with(call, surface, options).await;
        // A call that waits for a decision has no result yet: it is logged when it runs.
        if waits(&outcome) {
            return Ok(outcome);
        }
        let result = ResultEvent::of(&id, &outcome, self.inner.options.values);
        match self.append(&SessionEvent::ToolResult(result)) {
            Ok(()) => Ok(outcome),
            Err(source) => Err(RecordError {
                outcome: Some(outcome),
                source,
            }),
        }
    }

    /// Logs a call the host answered without dispatching it (a call cut off before its
    /// arguments ended), with the outcome the model was given.
    pub fn record(&self, call: &ToolCall, outcome: &ToolOutcome) -> io::Result<()> {
        self.append(&SessionEvent::ToolCall(CallEvent::of(call)?))?;
        self.append(&SessionEvent::ToolResult(ResultEvent::of(
            call.id(),
            outcome,
            self.inner.options.values,
        )))
    }

    /// Dispatches a call a program made during the call `parent_id`, as a nested call, logging
    /// its rendered content and error flag under the parent.
    pub async fn dispatch_nested(
        &self,
        snapshot: &Snapshot,
        parent_id: &str,
        call: ToolCall,
    ) -> Result<ToolOutcome, RecordError> {
        let (id, name) = (call.id().to_owned(), call.name().to_owned());
        let args = call.logged_args().ok().and_then(|(args, _)| args);
        let outcome = snapshot.dispatch(call, Surface::Nested).await;
        let event = NestedEvent::of(
            parent_id,
            id,
            name,
            args,
            &outcome,
            self.inner.options.values,
        );
        match self.append(&event) {
            Ok(()) => Ok(outcome),
            Err(source) => Err(RecordError {
                outcome: Some(outcome),
                source,
            }),
        }
    }

    /// Reads a log: every event it can, and a report of every line it cannot.
    pub fn read(path: impl AsRef<Path>) -> io::Result<LogContents> {
        Self::read_from(File::open(path)?)
    }

    /// Reads a log from any reader (a file, a socket, bytes in memory), one line at a time.
    ///
    /// ```
    /// use toolprism::session::SessionLog;
    ///
    /// let log = b"{\"v\":1,\"kind\":\"tool_call\",\"id\":\"c1\",\"name\":\"add\"}\nnot json\n";
    /// let contents = SessionLog::read_from(&log[..]).unwrap();
    /// assert_eq!((contents.events.len(), contents.problems.len()), (1, 1));
    /// ```
    pub fn read_from(reader: impl Read) -> io::Result<LogContents> {
        let mut events = Vec::new();
        let problems = Self::scan(reader, |event| events.push(event))?;
        Ok(LogContents { events, problems })
    }

    /// Reads a log one event at a time, handing each to `each` and holding none: the memory
    /// it takes is one line's. Returns what could not be read.
    pub fn scan(
        reader: impl Read,
        mut each: impl FnMut(SessionEvent),
    ) -> io::Result<Vec<LogProblem>> {
        let mut reader = BufReader::new(reader);
        let mut problems = Vec::new();
        let mut line = Vec::new();
        let mut number = 0;
        loop {
            line.clear();
            let Some(read) = read_line(&mut reader, &mut line)? else {
                return Ok(problems);
            };
            number += 1;
            if read.overlong {
                tracing::warn!(line = number, "skipping an over-long session log line");
                problems.push(LogProblem::Corrupt {
                    line: number,
                    error: format!("the line is longer than {MAX_EVENT_BYTES} bytes"),
                });
                continue;
            }
            match accept(number, &line, !read.ended) {
                Some(Ok(event)) => each(event),
                Some(Err(problem)) => problems.push(problem),
                None => {}
            }
        }
    }
}

/// Whether the file is empty or ends with a newline.
fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(true);
    }
    let mut last = [0_u8];
    file.seek(SeekFrom::End(-1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// What reading one line found.
struct LineRead {
    /// The line ended with a newline (rather than the end of the input).
    ended: bool,
    /// The line was longer than [`MAX_EVENT_BYTES`]; `line` holds none of it.
    overlong: bool,
}

/// Reads one line into `line` (without its newline), holding at most [`MAX_EVENT_BYTES`] of it;
/// `None` at the end of the input.
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<LineRead>> {
    let mut read = LineRead {
        ended: false,
        overlong: false,
    };
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(any.then_some(read));
        }
        any = true;
        let (piece, used) = match memchr::memchr(b'\n', available) {
            Some(newline) => (&available[..newline], newline + 1),
            None => (available, available.len()),
        };
        read.ended = used > piece.len();
        if !read.overlong && line.len() + piece.len() > MAX_EVENT_BYTES {
            read.overlong = true;
            line.clear();
        }
        if !read.overlong {
            line.extend_from_slice(piece);
        }
        reader.consume(used);
        if read.ended {
            return Ok(Some(read));
        }
    }
}

/// The length of the last line if the file does not end with a newline.
fn torn_tail_len(file: &mut File) -> io::Result<Option<u64>> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(None);
    }
    let mut chunk = vec![0; 64 * 1024];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let size = usize::try_from(end - start).unwrap_or(chunk.len());
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk[..size])?;
        if end == len && chunk[size - 1] == b'\n' {
            return Ok(None);
        }
        if let Some(newline) = memchr::memrchr(b'\n', &chunk[..size]) {
            return Ok(Some(len - (start + newline as u64 + 1)));
        }
        end = start;
    }
    Ok(Some(len))
}

const KNOWN_KINDS: [&str; 5] = [
    "tool_call",
    "tool_result",
    "nested_result",
    "decision_requested",
    "decided",
];

/// Line `number`: its event, the problem with it, or nothing (an empty line). A last line
/// with no newline that does not parse is a torn write.
fn accept(
    number: usize,
    line: &[u8],
    unterminated: bool,
) -> Option<Result<SessionEvent, LogProblem>> {
    if line.is_empty() {
        return None;
    }
    Some(match parse_line(line) {
        Ok(event) => Ok(event),
        Err(_) if unterminated => Err(LogProblem::TornLastLine { line: number }),
        Err(Problem::Unknown { kind, version }) => {
            tracing::warn!(
                line = number,
                kind,
                version,
                "skipping a session event of an unknown kind"
            );
            Err(LogProblem::UnknownKind {
                line: number,
                kind,
                version,
            })
        }
        Err(Problem::Corrupt(error)) => {
            tracing::warn!(line = number, error, "skipping a corrupt session log line");
            Err(LogProblem::Corrupt {
                line: number,
                error,
            })
        }
    })
}

enum Problem {
    Unknown { kind: String, version: u64 },
    Corrupt(String),
}

fn parse_line(line: &[u8]) -> Result<SessionEvent, Problem> {
    let value: Value = serde_json::from_slice(line).map_err(|e| Problem::Corrupt(e.to_string()))?;
    let version = value
        .get("v")
        .and_then(Value::as_u64)
        .filter(|&v| v >= 1)
        .ok_or_else(|| Problem::Corrupt("no format version `v`".into()))?;
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::Corrupt("no `kind`".into()))?;
    if !KNOWN_KINDS.contains(&kind) {
        return Err(Problem::Unknown {
            kind: kind.to_owned(),
            version,
        });
    }
    let event = SessionEvent::deserialize(&value).map_err(|e| Problem::Corrupt(e.to_string()))?;
    check_event(&event).map_err(Problem::Corrupt)?;
    Ok(event)
}

/// Logs a nested dispatch made during a logged call. Nested dispatch cannot fail for the
/// log's sake (the program already has the value), so a write error is reported by `tracing`
/// only. A dispatch that waits for a decision is not logged: it runs when the program runs
/// again.
impl NestedRecorder for SessionLog {
    fn record(
        &self,
        parent_id: &str,
        id: String,
        name: String,
        args: Option<Value>,
        outcome: &ToolOutcome,
    ) {
        if waits(outcome) {
            return;
        }
        let event = NestedEvent::of(
            parent_id,
            id,
            name,
            args,
            outcome,
            self.inner.options.values,
        );
        if let Err(error) = self.append(&event) {
            tracing::warn!(parent_id, %error, "a nested result could not be logged");
        }
    }
}

/// A logged call run again: the nested dispatches its earlier runs made, each given back
/// once, to the same dispatch (same parent, id, tool and arguments), in place of running it
/// again. A program that takes another path runs its new calls.
struct Resumed {
    log: SessionLog,
    earlier: Mutex<HashMap<String, NestedEvent>>,
}

impl Resumed {
    /// The nested dispatches the log holds made during the call `id`, at any depth.
    fn of(log: &SessionLog, id: &str) -> io::Result<Self> {
        let below = format!("{id}.");
        let mut earlier = HashMap::new();
        Self::scan_nested(log, |nested| {
            if nested.parent_id == id || nested.parent_id.starts_with(&below) {
                earlier.insert(nested.id.clone(), nested);
            }
        })?;
        Ok(Self {
            log: log.clone(),
            earlier: Mutex::new(earlier),
        })
    }

    fn scan_nested(log: &SessionLog, mut each: impl FnMut(NestedEvent)) -> io::Result<()> {
        SessionLog::scan(File::open(log.path())?, |event| {
            if let SessionEvent::NestedResult(nested) = event {
                each(nested);
            }
        })
        .map(drop)
    }
}

impl NestedRecorder for Resumed {
    fn answered(&self, parent_id: &str, call: &ToolCall) -> Option<ToolOutcome> {
        let mut earlier = self.earlier.lock().unwrap_or_else(PoisonError::into_inner);
        let logged = earlier.get(call.id())?;
        let args = call.logged_args().ok()?.0;
        if logged.parent_id != parent_id || logged.name != call.name() || logged.args != args {
            return None;
        }
        earlier.remove(call.id()).map(|logged| logged.to_outcome())
    }

    fn record(
        &self,
        parent_id: &str,
        id: String,
        name: String,
        args: Option<Value>,
        outcome: &ToolOutcome,
    ) {
        NestedRecorder::record(&self.log, parent_id, id, name, args, outcome);
    }
}

/// Whether an outcome waits for a decision (and so has no result to log yet).
fn waits(outcome: &ToolOutcome) -> bool {
    outcome
        .error()
        .is_some_and(|error| error.kind() == Some(FailureKind::DecisionPending))
}
