//! The durable session log: an append-only JSON Lines file of tool calls, their results and
//! the decisions they waited for; the replay that shows a saved session exactly as it was
//! shown live, running no tool; and [`Decisions`], which any process holding the log takes.
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
//! - `decision_requested` and `decided`: a call that waits for a person, and their decision
//!   ([`Decisions`]).
//!
//! The canonical value is stored (`tool_result`'s `value`) only with [`LogOptions::values`]:
//! by default it is execution-local. Readers skip kinds they do not know (with a warning) and
//! ignore fields they do not know, so later versions may add both.
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

mod decisions;
mod events;
mod log;
mod replay;

pub use decisions::{DecisionError, Decisions};
pub use events::{
    CallEvent, Decision, DecisionEvent, DecisionRequest, LOG_FORMAT_VERSION, MAX_EVENT_BYTES,
    NestedEvent, ResultEvent, SessionEvent,
};
pub(crate) use log::Logged;
pub use log::{LogContents, LogOptions, LogProblem, OpenReport, RecordError, SessionLog};
pub use replay::{ReplayedCall, ReplayedResult, replay};
