//! A [`Registry`] as an MCP server: a `ServerHandler` written over snapshots.
//!
//! - `tools/list`: the snapshot's definitions in registration order, schemas as registered,
//!   built once per registry generation and shared by every connection.
//! - `tools/call`: one dispatch on the direct surface. Success carries the rendered, bounded
//!   content, the value as `structuredContent` and the tool's card in `_meta`; failure carries
//!   `isError`, the message, and `{name, code}` in `_meta`. Invalid arguments are a tool error;
//!   an unknown tool is JSON-RPC `-32602`.
//! - `resources/read`: the full text of a bounded result, by the URI its marker names.
//! - Progress reports become `notifications/progress` when the client sent a token; a client's
//!   cancellation drops the dispatch.
//! - A body's requests for input go to the client (`input`); a call may become a
//!   task the client polls (`tasks`, kept in a `task_store`); resources, prompts and completion go to the
//!   host's rmcp handler, if it gave one (`host`).
//! - A change to the registry is announced: `notifications/tools/list_changed` to sessions of
//!   2025-11-25, the `subscriptions/listen` stream on 2026-07-28.

//!
//! Where each part is decided:
//!
//! - `setup`: the server and what the host sets on it (`McpServer::new`, the `with_` methods);
//! - `handler`: rmcp's `ServerHandler`, each request handed to the part that answers it;
//! - `listing`: what `tools/list` shows, for each protocol generation;
//! - `request`: what a request says of itself (its protocol generation, whether the client
//!   takes tasks, its caller);
//! - `call`: `tools/call`; `drive`: its dispatch driven to what the request answers;
//!   `detach`: a call that becomes a task;
//! - `peer`: the client as a call sees it; `progress`: the reports waiting to be sent;
//! - `input`: a body's requests for input; `tasks` and `task_store`: tasks and where they are
//!   kept;
//! - `resources`, `object_outputs`: retained outputs as resources, and kept in object storage;
//! - `announce`: telling 2025-11-25 sessions that the tools changed;
//! - `host`: the host's own rmcp handler; `stdio`: serving over stdin and stdout;
//! - `traced`: each request a span, timed.

mod announce;
mod call;
mod detach;
mod drive;
mod handler;
pub(crate) mod host;
pub(crate) mod input;
mod listing;
#[cfg(feature = "object-store")]
pub(crate) mod object_outputs;
pub(crate) mod peer;
pub(crate) mod progress;
mod request;
pub(crate) mod resources;
pub(crate) mod setup;
#[cfg(feature = "stdio")]
pub(crate) mod stdio;
pub(crate) mod task_store;
pub(crate) mod tasks;
pub(crate) mod traced;
