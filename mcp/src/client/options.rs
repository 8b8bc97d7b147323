//! How tools are imported: names, timeouts, protocol version, grouping, and the access token.

use std::time::Duration;

use rmcp::model::ProtocolVersion;
use toolprism::tool::Namespace;

/// How tools are imported.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Put before every remote name (e.g. `"github_"`), to keep servers apart.
    pub prefix: String,
    /// How long one call may take before it fails with [`SERVER_TIMEOUT`](crate::SERVER_TIMEOUT) (and is cancelled
    /// on the server). Default: 120 s.
    pub call_timeout: Duration,
    /// How long connecting and listing may take. Default: 30 s.
    pub connect_timeout: Duration,
    /// Speak only this protocol version (`2025-11-25` with `initialize`, `2026-07-28`
    /// without). Default: `None`, 2026-07-28 if the server offers it, else 2025-11-25.
    pub protocol_version: Option<ProtocolVersion>,
    /// Put every imported tool in this group for OpenAI Responses (`namespace` tools).
    pub namespace: Option<Namespace>,
    /// Defer every imported tool: left out of the first request, found through tool search.
    pub defer_loading: bool,
    /// The access token sent to a server reached over HTTP (`Authorization: Bearer …`).
    pub bearer_token: Option<BearerToken>,
    /// Authorize with the server's authorization server when it asks (OAuth 2.1 with PKCE),
    /// for a server reached over HTTP; see [`crate::OAuth`].
    #[cfg(feature = "oauth-client")]
    pub oauth: Option<crate::OAuth>,
    /// The longest description or title a remote tool may carry, in bytes (its own or any in
    /// its schemas); a tool with a longer one is refused at import. Default:
    /// [`MAX_REMOTE_DESCRIPTION_BYTES`](crate::MAX_REMOTE_DESCRIPTION_BYTES), 16 KiB.
    pub max_description_bytes: usize,
    /// Pin each tool's definition, and hold a tool whose definition changed since
    /// ([`PinFile`](crate::PinFile)). Default: none.
    pub pins: Option<crate::PinFile>,
    /// The endpoint the server's pins are kept under, in place of the one the client knows
    /// (the command, the URL, or `transport` for [`McpClient::connect`](crate::McpClient::connect)).
    pub endpoint: Option<String>,
}

/// An access token, kept out of every `Debug` print and log.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// The token as sent.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(…)")
    }
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            prefix: String::new(),
            call_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(30),
            protocol_version: None,
            namespace: None,
            defer_loading: false,
            bearer_token: None,
            #[cfg(feature = "oauth-client")]
            oauth: None,
            max_description_bytes: super::inspect::MAX_REMOTE_DESCRIPTION_BYTES,
            pins: None,
            endpoint: None,
        }
    }
}

impl ImportOptions {
    /// The same options with this name prefix.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The same options with this call timeout.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The same options, speaking only this protocol version.
    #[must_use]
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = Some(version);
        self
    }

    /// The same options, with every imported tool in this namespace (OpenAI Responses).
    #[must_use]
    pub fn namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(namespace);
        self
    }

    /// The same options, with every imported tool deferred to tool search.
    #[must_use]
    pub fn defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }

    /// The same options, sending this access token to a server reached over HTTP (one the host
    /// got from the server's authorization server).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(BearerToken(token.into()));
        self
    }

    /// The same options, authorizing with the server's authorization server when it asks
    /// (a bearer token given too is sent first). An authorization at connection counts in the
    /// [`connect_timeout`](Self::connect_timeout): give a person the time they need.
    #[cfg(feature = "oauth-client")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The same options, refusing a remote tool whose description or title (its own, or any
    /// in its schemas) is longer than `bytes`.
    #[must_use]
    pub fn max_description_bytes(mut self, bytes: usize) -> Self {
        self.max_description_bytes = bytes;
        self
    }

    /// The same options, pinning each tool's definition in `pins`: a tool whose definition
    /// changed since is held (shown as pinned, its calls refused with
    /// [`DEFINITION_CHANGED`](crate::DEFINITION_CHANGED)) until accepted
    /// ([`McpClient::accept`](crate::McpClient::accept), or `tools pins accept`).
    #[must_use]
    pub fn pins(mut self, pins: crate::PinFile) -> Self {
        self.pins = Some(pins);
        self
    }

    /// The same options, keeping the server's pins under this endpoint.
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The same options with this timeout for connecting and listing.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }
}
