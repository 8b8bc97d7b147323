//! The client: an MCP server's tools imported into a registry, called, and kept current.
//!
//! Where each part is decided:
//!
//! - `connection`: the connection (`McpClient::connect_*`), importing, closing;
//! - `options`: how tools are imported; `error`: how importing and calls fail; `limits`: what a
//!   server's listing may hold;
//! - `sync`: listing the server's tools and keeping them current; `define`: a remote
//!   definition as a toolprism tool; `inspect`: what a remote definition may not carry;
//!   `pins`: definitions pinned, and tools held when theirs changed;
//! - `call`: a call to an imported tool; `input`: what the server asks during one;
//!   `progress`: the server's progress, routed to the local call;
//! - `events`: what the server sends outside a call's answer; `shared`: what the connection
//!   and its tools share;
//! - `auth`: the client authorizing itself at a protected server (OAuth 2.1 with PKCE).

#[cfg(feature = "oauth-client")]
pub(crate) mod auth;
mod call;
pub(crate) mod connection;
pub(crate) mod define;
pub(crate) mod error;
mod events;
pub(crate) mod input;
pub(crate) mod inspect;
pub(crate) mod limits;
pub(crate) mod options;
pub(crate) mod pins;
pub(crate) mod progress;
pub(crate) mod shared;
mod sync;
