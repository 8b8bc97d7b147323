//! The HTTP door: serving the endpoint over streamable HTTP, what a client may send it (sizes
//! and times), and the authorization in front of it.
//!
//! - `serve`: binding, accepting connections, rmcp's service mounted with axum, shutdown;
//! - `door`: a request's head and body, bounded in size and time;
//! - `guard`: `401` and `403` from the resource server's authorization (`crate::auth`), and
//!   its metadata routes.

pub(crate) mod door;
#[cfg(feature = "auth")]
pub(crate) mod guard;
pub(crate) mod serve;
