#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
mod auth;
mod client;
#[cfg(feature = "http-server")]
mod http;
mod server;
mod telemetry;
mod wire;

#[cfg(feature = "auth")]
pub use auth::{
    authorization::Authorization,
    introspection::IntrospectionValidator,
    jwt::{ISSUER_RETRY_INTERVAL, JwtValidator, MAX_VERIFIED_TOKENS},
    token::{AuthSetupError, MAX_TOKEN_BYTES, TokenError, TokenValidator},
};
#[cfg(feature = "oauth-client")]
pub use client::auth::{Authorizer, FollowRedirect, MAX_AUTHORIZATIONS, OAuth};
pub use client::connection::McpClient;
pub use client::error::{
    ClientError, REMOTE_TOOL_ERROR, SERVER_ERROR, SERVER_TIMEOUT, SERVER_UNAVAILABLE,
};
pub use client::input::{MAX_INPUT_ASKS, MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS};
pub use client::inspect::{MAX_REMOTE_DESCRIPTION_BYTES, Poisoned, RefusedTool};
pub use client::limits::{MAX_IMPORTED_TOOLS, MAX_LISTING_BYTES};
pub use client::options::{BearerToken, ImportOptions};
pub use client::pins::{
    DEFINITION_CHANGED, HeldTool, MAX_PIN_FILE_BYTES, NewTools, PIN_FORMAT_VERSION, Pin, PinError,
    PinFile, PinnedDefinition, Pins,
};
pub use client::progress::MAX_PROGRESS_MESSAGE;
pub use client::shared::RemoteTool;
#[cfg(feature = "http-server")]
pub use http::connections::{MAX_CONNECTIONS, WRITE_TIMEOUT, raise_fd_limit};
#[cfg(feature = "http-server")]
pub use http::door::{
    BODY_READ_TIMEOUT, HEADER_READ_TIMEOUT, HEAVY_BODY_VALUES, MAX_BODY_BYTES, MAX_HEADER_BYTES,
    MAX_HEADERS, MAX_HEAVY_BODIES, SHUTDOWN_GRACE,
};
#[cfg(feature = "http-server")]
pub use http::serve::{DEFAULT_HTTP_ADDR, HttpMode, MCP_PATH, RunningHttp};
#[cfg(feature = "http-server")]
pub use http::sessions::{MAX_SESSIONS, MAX_SESSIONS_PER_CALLER, SESSION_IDLE_TIMEOUT};
pub use server::input::DEFAULT_REQUEST_STATE_TTL;
#[cfg(feature = "object-store")]
pub use server::object_outputs::{DEFAULT_OUTPUT_TTL, ObjectOutputStore};
pub use server::peer::McpPeer;
pub use server::resources::{OUTPUT_URI_PREFIX, OutputResources, output_uri};
pub use server::setup::{ClientTrace, McpServer, RequestStateKeyError};
#[cfg(feature = "stdio")]
pub use server::stdio::ServeError;
#[cfg(feature = "object-store")]
pub use server::task_store::ObjectTaskStore;
pub use server::task_store::{MAX_MEMORY_TASK_ENTRIES, MemoryTaskStore, TaskStore, TaskStoreError};
pub use server::tasks::{DEFAULT_TASK_TTL, MAX_RUNNING_TASKS, TASK_POLL, TASK_POLL_MAX};
pub use wire::names::{NameError, provider_safe_name};
pub use wire::result::{CARD_META_KEY, ERROR_META_KEY};
pub use wire::schema;

/// Who a call runs for: what the authorization finds in a token (moved to the runtime, where
/// scopes are checked; re-exported here).
pub use toolprism::access::Caller;

/// Re-exported so hosts name the same rmcp this crate speaks.
pub use rmcp;
