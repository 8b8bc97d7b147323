//! The HTTP door: serving the endpoint over streamable HTTP, what a client may send it (sizes
//! and times), and the authorization in front of it.
//!
//! - `serve`: binding (refused beyond loopback without authorization), rmcp's service mounted
//!   with axum behind every layer, shutdown;
//! - `connections`: how many connections at once, which gives way, writes in time;
//! - `door`: a request's head and body, bounded in size and time, heavy bodies a few at a time;
//! - `sessions`: sessions bound to their caller, capped, closed when idle;
//! - `guard`: `401` and `403` from the resource server's authorization (`crate::auth`), and
//!   its metadata routes.

pub(crate) mod connections;
pub(crate) mod door;
#[cfg(feature = "auth")]
pub(crate) mod guard;
pub(crate) mod serve;
pub(crate) mod sessions;
