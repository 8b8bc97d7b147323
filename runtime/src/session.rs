//! The durable session log: an append-only JSON Lines file of tool calls and their results,
//! and the replay that shows a saved session exactly as it was shown live, running no tool.
//!
//! # Event format, version 1
//!
//! One JSON object per line, with the format version `v` and a `kind`:
//!
//! ```text
//! {"v":1,"kind":"tool_call","id":"call_1","name":"read","args":{"path":"a.txt"}}
//! {"v":1,"kind":"tool_result","id":"call_1","content":[{"type":"text","text":"…"}],"is_error":false,"meta":{"card":"read",…}}
//! {"v":1,"kind":"nested_result","parent_id":"call_2","id":"n1","name":"grep","content":[…],"is_error":false}
//! ```
//!
//! - `tool_call`: `id`, `name`, and `args` (the arguments as JSON) or `raw_args` (the text a
//!   provider sent, when it was not valid JSON).
//! - `tool_result`: `id`, `content` (what the model saw, after policies and bounding),
//!   `is_error`, `error` (`{message, info?: {name, code}}`, failures only) and `meta`
//!   (presentation metadata, when there was any).
//! - `nested_result`: a dispatch made by a program during the call `parent_id`: its rendered
//!   `content` and `is_error` only.
//!
//! The canonical value is never stored: it is execution-local. Readers skip kinds they do not
//! know (with a warning) and ignore fields they do not know, so later versions may add both.
//!
//! # Writer and reader agree
//!
//! The writer refuses, at write time, every event the reader would not give back as it was
//! written: JSON (`args`, `meta`) nested deeper than [`MAX_DEPTH`](crate::depth::MAX_DEPTH), and lines longer than
//! [`MAX_EVENT_BYTES`]. Both run the same check, so an event shown live is never silently
//! dropped on replay. Raw arguments that parse into JSON too deep to log are logged as the text
//! the provider sent, which is faithful at any depth.
//!
//! # Durability
//!
//! Each event is one `write` of one line to a file opened for appending, so lines are never
//! interleaved. Every append starts on a fresh line: if the file does not end with a newline
//! (a torn line left by a crash, or by another writer), one is written first. A torn line is
//! reported on open and skipped (and reported) by [`SessionLog::read`]; nothing before or after
//! it is lost or rewritten. With [`LogOptions::fsync`], every event is flushed to disk before
//! `append` returns. The reader streams: it holds one line at a time, and skips (and reports)
//! a line longer than [`MAX_EVENT_BYTES`] without holding it.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{Surface, ToolCall};
use crate::depth::check_depth;
use crate::error::FailureError;
use crate::outcome::ToolOutcome;
use crate::pipeline::{DispatchOptions, NestedRecorder, NestedRecording, Snapshot};
use crate::present::ContentBlock;
use crate::present::{Card, present_call, present_result};
use crate::value::present_json;

/// The event format version this crate writes.
pub const LOG_FORMAT_VERSION: u64 = 1;

/// The longest line (one event, newline excluded) the writer writes and the reader reads.
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// One durable event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// A call, as the model made it.
    ToolCall(CallEvent),
    /// What the model saw of a call's result.
    ToolResult(ResultEvent),
    /// What a program saw of a nested dispatch made during a call.
    NestedResult(NestedEvent),
}

/// A call, as the model made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallEvent {
    /// The call id.
    pub id: String,
    /// The tool name the model asked for.
    pub name: String,
    /// The arguments, when they were JSON (`null` included).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub args: Option<Value>,
    /// The arguments as the provider sent them, when they were not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_args: Option<String>,
    /// The tool's title, when the snapshot that ran the call knew one (for a UI: the model
    /// called it by `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The host's repair of the call logged before it under the same id, attempt `n` (from
    /// 1): these are the corrected arguments ([`turn::Repair`](crate::turn::Repair)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<u32>,
}

impl CallEvent {
    fn of(call: &ToolCall) -> io::Result<Self> {
        let (args, raw_args) = call
            .logged_args()
            .map_err(|error| unloggable(&format!("its arguments nest {error}")))?;
        Ok(Self {
            id: call.id().to_owned(),
            name: call.name().to_owned(),
            args,
            raw_args,
            title: None,
            repair: None,
        })
    }

    /// The call as `snapshot` knows it: with its tool's title.
    fn in_snapshot(call: &ToolCall, snapshot: &Snapshot) -> io::Result<Self> {
        let mut event = Self::of(call)?;
        event.title = snapshot
            .definition(call.name())
            .and_then(|tool| tool.about().title.clone());
        Ok(event)
    }

    /// The arguments for presentation: the JSON, or the raw text as a string.
    pub fn shown_args(&self) -> Value {
        match (&self.args, &self.raw_args) {
            (Some(args), _) => args.clone(),
            (None, Some(raw)) => Value::String(raw.clone()),
            (None, None) => Value::Null,
        }
    }
}

/// What the model saw of a call's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultEvent {
    /// The call id.
    pub id: String,
    /// The content, after policies and bounding.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The error of a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<FailureError>,
    /// Presentation metadata, when there was any (`null` included).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub meta: Option<Value>,
}

impl ResultEvent {
    fn of(id: &str, outcome: &ToolOutcome) -> Self {
        Self {
            id: id.to_owned(),
            content: outcome.content().to_vec(),
            is_error: outcome.is_error(),
            error: outcome.error().cloned(),
            meta: outcome.meta().cloned(),
        }
    }
}

/// What a program saw of a nested dispatch: its rendered content and whether it failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedEvent {
    /// The call during which the program made this dispatch.
    pub parent_id: String,
    /// The nested call's id.
    pub id: String,
    /// The tool it called.
    pub name: String,
    /// Its rendered content.
    pub content: Vec<ContentBlock>,
    /// Whether it failed.
    pub is_error: bool,
}

/// Logs a nested dispatch made during a logged call. Nested dispatch cannot fail for the
/// log's sake (the program already has the value), so a write error is reported by `tracing`
/// only.
impl NestedRecorder for SessionLog {
    fn record(&self, parent_id: &str, id: String, name: String, outcome: &ToolOutcome) {
        if let Err(error) = self.append(&NestedEvent::of(parent_id, id, name, outcome)) {
            tracing::warn!(parent_id, %error, "a nested result could not be logged");
        }
    }
}

impl NestedEvent {
    fn of(parent_id: &str, id: String, name: String, outcome: &ToolOutcome) -> SessionEvent {
        SessionEvent::NestedResult(Self {
            parent_id: parent_id.to_owned(),
            id,
            name,
            content: outcome.content().to_vec(),
            is_error: outcome.is_error(),
        })
    }
}

/// How a log is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogOptions {
    /// Flush every event to disk (`fsync`) before `append` returns.
    pub fsync: bool,
}

impl LogOptions {
    /// Options that fsync every event.
    pub fn fsync() -> Self {
        Self { fsync: true }
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
        self.dispatch_logged(snapshot, call, surface, options, None)
            .await
    }

    /// [`dispatch_with`](Self::dispatch_with), the call marked as the host's repair of the
    /// one logged before it (attempt `repair`).
    pub(crate) async fn dispatch_logged(
        &self,
        snapshot: &Snapshot,
        call: ToolCall,
        surface: Surface,
        options: DispatchOptions,
        repair: Option<u32>,
    ) -> Result<ToolOutcome, RecordError> {
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
        let recording = NestedRecording(Arc::new(self.clone()));
        let options = options.extension(recording);
        let outcome = snapshot.dispatch_with(call, surface, options).await;
        match self.append(&SessionEvent::ToolResult(ResultEvent::of(&id, &outcome))) {
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
        let outcome = snapshot.dispatch(call, Surface::Nested).await;
        match self.append(&NestedEvent::of(parent_id, id, name, &outcome)) {
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
        let mut reader = BufReader::new(reader);
        let mut contents = LogContents::default();
        let mut line = Vec::new();
        let mut number = 0;
        loop {
            line.clear();
            let Some(read) = read_line(&mut reader, &mut line)? else {
                return Ok(contents);
            };
            number += 1;
            if read.overlong {
                tracing::warn!(line = number, "skipping an over-long session log line");
                contents.problems.push(LogProblem::Corrupt {
                    line: number,
                    error: format!("the line is longer than {MAX_EVENT_BYTES} bytes"),
                });
                continue;
            }
            accept(&mut contents, number, &line, !read.ended);
        }
    }
}

/// Why an event cannot be logged faithfully.
fn unloggable(problem: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("this event cannot be logged faithfully: {problem}"),
    )
}

/// The rule writer and reader share: what an event may hold to be read back as written.
fn check_event(event: &SessionEvent) -> Result<(), String> {
    let (json, what) = match event {
        SessionEvent::ToolCall(call) => (call.args.as_ref(), "its arguments"),
        SessionEvent::ToolResult(result) => (result.meta.as_ref(), "its presentation metadata"),
        SessionEvent::NestedResult(_) => (None, ""),
    };
    match json.map(check_depth) {
        Some(Err(error)) => Err(format!("{what} nest {error}")),
        _ => Ok(()),
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

const KNOWN_KINDS: [&str; 3] = ["tool_call", "tool_result", "nested_result"];

/// Adds line `number` to `contents`: its event, or the problem with it. A last line with no
/// newline that does not parse is a torn write.
fn accept(contents: &mut LogContents, number: usize, line: &[u8], unterminated: bool) {
    if line.is_empty() {
        return;
    }
    match parse_line(line) {
        Ok(Some(event)) => contents.events.push(event),
        Ok(None) => {}
        Err(_) if unterminated => contents
            .problems
            .push(LogProblem::TornLastLine { line: number }),
        Err(Problem::Unknown { kind, version }) => {
            tracing::warn!(
                line = number,
                kind,
                version,
                "skipping a session event of an unknown kind"
            );
            contents.problems.push(LogProblem::UnknownKind {
                line: number,
                kind,
                version,
            });
        }
        Err(Problem::Corrupt(error)) => {
            tracing::warn!(line = number, error, "skipping a corrupt session log line");
            contents.problems.push(LogProblem::Corrupt {
                line: number,
                error,
            });
        }
    }
}

enum Problem {
    Unknown { kind: String, version: u64 },
    Corrupt(String),
}

fn parse_line(line: &[u8]) -> Result<Option<SessionEvent>, Problem> {
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
    Ok(Some(event))
}

/// One call of a replayed session, with everything the UI and the model were shown.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedCall {
    /// The call as logged.
    pub call: CallEvent,
    /// The call's card.
    pub call_card: Card,
    /// The result, if the log has one.
    pub result: Option<ReplayedResult>,
    /// Nested dispatches made during the call: rendered content and error flag only.
    pub nested: Vec<NestedEvent>,
}

/// A replayed result.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedResult {
    /// What the model saw.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The error of a failure.
    pub error: Option<FailureError>,
    /// The result's card.
    pub card: Card,
}

/// Rebuilds what a session showed, from its events alone: no tool runs. The cards come from
/// [`present_call`] and [`present_result`], the pure functions the live session used.
pub fn replay(events: &[SessionEvent]) -> Vec<ReplayedCall> {
    let mut calls: Vec<ReplayedCall> = Vec::new();
    for event in events {
        match event {
            SessionEvent::ToolCall(call) => calls.push(ReplayedCall {
                call_card: present_call(&call.name, &call.shown_args()),
                call: call.clone(),
                result: None,
                nested: Vec::new(),
            }),
            SessionEvent::ToolResult(result) => {
                if let Some(call) = calls.iter_mut().rev().find(|c| c.call.id == result.id) {
                    call.result = Some(ReplayedResult {
                        card: present_result(
                            &call.call.name,
                            &call.call.shown_args(),
                            &result.content,
                            result.is_error,
                            result.meta.as_ref(),
                        ),
                        content: result.content.clone(),
                        is_error: result.is_error,
                        error: result.error.clone(),
                    });
                }
            }
            SessionEvent::NestedResult(nested) => {
                if let Some(call) = calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.call.id == nested.parent_id)
                {
                    call.nested.push(nested.clone());
                }
            }
        }
    }
    calls
}
