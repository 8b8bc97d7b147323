//! How importing and calling remote tools fail: the codes of a call's failure, and why
//! connecting or importing failed.

use std::time::Duration;

use rmcp::service::ServiceError;
use toolprism::RegistrationError;

use super::limits::{MAX_IMPORTED_TOOLS, MAX_LIST_PAGES, MAX_LISTING_BYTES};
use crate::wire::names::NameError;

/// The code of a call that failed because the server could not be reached or went away.
pub const SERVER_UNAVAILABLE: &str = "MCP_SERVER_UNAVAILABLE";
/// The code of a call the server did not answer in time.
pub const SERVER_TIMEOUT: &str = "MCP_SERVER_TIMEOUT";
/// The code of a call the server answered with a JSON-RPC error.
pub const SERVER_ERROR: &str = "MCP_SERVER_ERROR";
/// The code of a remote tool's own failure (`isError`) when the server gave none.
pub const REMOTE_TOOL_ERROR: &str = "REMOTE_TOOL_ERROR";

/// Why connecting or importing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be started or reached.
    #[error("cannot connect to the MCP server: {0}")]
    Connect(String),
    /// The server did not answer in time.
    #[error("the MCP server did not answer within {0:?}")]
    Timeout(Duration),
    /// The server answered a request with an error, or went away.
    #[error("the MCP server failed: {0}")]
    Service(#[from] ServiceError),
    /// A remote name has no local name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The server lists more than [`MAX_IMPORTED_TOOLS`] tools, or pages without end.
    #[error(
        "the MCP server lists more than {MAX_IMPORTED_TOOLS} tools (or more than {MAX_LIST_PAGES} pages of them); nothing was imported"
    )]
    TooManyTools,
    /// The server's tool definitions take more than [`MAX_LISTING_BYTES`] bytes of JSON.
    #[error(
        "the MCP server's tool definitions take more than {MAX_LISTING_BYTES} bytes of JSON; nothing was imported"
    )]
    ListingTooLarge,
    /// The registry refused an imported tool.
    #[error("cannot register remote tool `{remote}`: {source}")]
    Register {
        /// The remote name.
        remote: String,
        /// Why.
        source: RegistrationError,
    },
    /// The pin file could not be read or written, or nothing waits to be accepted.
    #[error(transparent)]
    Pins(#[from] crate::PinError),
}
