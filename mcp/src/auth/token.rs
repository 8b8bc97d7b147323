//! Checking access tokens: what a resource server needs of an issuer, the limits every
//! validator keeps, and why a token or a setup is refused.

use std::time::Duration;

use toolprism::BoxFuture;

use toolprism::access::Caller;

/// The longest bearer token taken, in bytes; a longer one is refused before it is parsed.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// The most an issuer's metadata or key set may weigh.
pub(super) const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// How long fetching an issuer's metadata or keys may take.
pub(super) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How far `exp` and `nbf` may be off, for clocks that differ.
pub(super) const LEEWAY_SECONDS: u64 = 30;

/// Why a token was refused. Said to nobody but the log: a client is told only that its token
/// is not valid.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not one this resource accepts (malformed, badly signed, expired, not yet
    /// valid, for another issuer or audience, with a refused algorithm).
    #[error("the token is not valid: {0}")]
    Invalid(String),
    /// The issuer could not be asked (its introspection endpoint failed): `503`, not the
    /// token's fault.
    #[error("the issuer could not be asked: {0}")]
    Unavailable(String),
}

/// Checks access tokens: what a resource server needs of an issuer.
pub trait TokenValidator: Send + Sync + 'static {
    /// The caller `token` stands for, or why it is refused.
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>>;
}

/// Why an authorization setup could not be made.
#[derive(Debug, thiserror::Error)]
#[error("authorization: {0}")]
pub struct AuthSetupError(pub(super) String);

/// Seconds since the Unix epoch.
pub(super) fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}
