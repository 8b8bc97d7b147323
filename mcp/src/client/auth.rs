//! The client's side of MCP authorization: a server that answers `401` is authorized with the
//! OAuth 2.1 authorization-code flow and PKCE, discovered from the challenge (protected-resource
//! metadata, then the authorization server's), and a `403 insufficient_scope` is answered by
//! asking again for the scopes held plus the one missing. rmcp's `auth` module does the
//! protocol; this wraps the HTTP client so that every request of a connection (the first
//! included) recovers the same way, at most [`MAX_AUTHORIZATIONS`] times per request.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest, OAuthState,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use toolprism::BoxFuture;

/// The authorizations (a first one, a new one after a refused token, a step-up) one request
/// may cause before its error is returned: a server that keeps refusing is not asked forever.
pub const MAX_AUTHORIZATIONS: u32 = 3;
/// How long one request to the authorization server may take.
const AUTHORIZATION_SERVER_TIMEOUT: Duration = Duration::from_secs(30);

/// Takes the person (or the program acting for them) to the authorization server: opens the
/// authorization URL and returns the URL the authorization server redirected back to (the
/// redirect URI with `code`, `state` and perhaps `iss`).
pub trait Authorizer: Send + Sync + 'static {
    /// Visits `authorization_url`; the redirect back, or why there is none.
    fn authorize<'a>(&'a self, authorization_url: &'a str)
    -> BoxFuture<'a, Result<String, String>>;
}

/// An [`Authorizer`] for an authorization server that grants without asking anyone (a
/// first-party or pre-consented client, a test server): it requests the authorization URL and
/// returns where the answer redirects, without following it.
#[derive(Clone, Debug)]
pub struct FollowRedirect {
    http: reqwest::Client,
}

impl FollowRedirect {
    /// An authorizer with its own HTTP client (no redirects followed, 30 s per request).
    pub fn new() -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(AUTHORIZATION_SERVER_TIMEOUT)
            .build()?;
        Ok(Self { http })
    }
}

impl Authorizer for FollowRedirect {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let response = self
                .http
                .get(authorization_url)
                .send()
                .await
                .map_err(|error| format!("the authorization server cannot be reached: {error}"))?;
            let status = response.status();
            if !status.is_redirection() {
                return Err(format!(
                    "the authorization server answered {status}, not a redirect back"
                ));
            }
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or("the authorization server's redirect has no readable Location")?;
            Ok(location.to_owned())
        })
    }
}

/// How the client registers with an authorization server, in the order MCP prescribes: a
/// client registered beforehand, else a client ID metadata document if the server takes one,
/// else dynamic registration under a name.
#[derive(Clone)]
enum Registration {
    Preregistered {
        client_id: String,
        client_secret: Option<String>,
    },
    Discovered {
        metadata_url: Option<String>,
        client_name: String,
    },
}

/// How [`crate::McpClient::connect_http`] gets an access token from a protected server's
/// authorization server: the authorization-code flow with PKCE, the redirect handled by an
/// [`Authorizer`].
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use toolprism_mcp::{FollowRedirect, ImportOptions, McpClient, OAuth};
/// let oauth = OAuth::new("http://127.0.0.1:8976/callback", FollowRedirect::new()?)
///     .client_name("my agent");
/// let options = ImportOptions::default().oauth(oauth);
/// let client = McpClient::connect_http("https://mcp.example.com/mcp", options).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OAuth {
    redirect_uri: String,
    registration: Registration,
    scopes: Vec<String>,
    authorizer: Arc<dyn Authorizer>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client secret stays out of prints.
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// Authorization with this redirect URI, registered dynamically as `toolprism` (or with a
    /// metadata document, see [`OAuth::client_metadata_url`]), scopes chosen from the server's
    /// challenge and metadata.
    pub fn new(redirect_uri: impl Into<String>, authorizer: impl Authorizer) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
            registration: Registration::Discovered {
                metadata_url: None,
                client_name: "toolprism".to_owned(),
            },
            scopes: Vec::new(),
            authorizer: Arc::new(authorizer),
        }
    }

    /// Use a client registered beforehand with the authorization server.
    #[must_use]
    pub fn client_id(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.registration = Registration::Preregistered {
            client_id: client_id.into(),
            client_secret,
        };
        self
    }

    /// The HTTPS URL of this client's metadata document (its client ID, for an authorization
    /// server that takes them); dynamic registration otherwise.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        if let Registration::Discovered { metadata_url, .. } = &mut self.registration {
            *metadata_url = Some(url.into());
        }
        self
    }

    /// The name registered dynamically.
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        if let Registration::Discovered { client_name, .. } = &mut self.registration {
            *client_name = name.into();
        }
        self
    }

    /// Ask for these scopes at first, not those the server's challenge and metadata name.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    fn request(&self, challenge: &str) -> AuthorizationRequest {
        let mut request =
            AuthorizationRequest::new(self.redirect_uri.clone()).with_challenge(challenge);
        request = match &self.registration {
            Registration::Preregistered {
                client_id,
                client_secret,
            } => {
                let request = request.with_preregistered_client(client_id.clone());
                match client_secret {
                    Some(secret) => request.with_client_secret(secret.clone()),
                    None => request,
                }
            }
            Registration::Discovered {
                metadata_url,
                client_name,
            } => {
                let request = request.with_client_name(client_name.clone());
                match metadata_url {
                    Some(url) => request.with_client_metadata_url(url.clone()),
                    None => request,
                }
            }
        };
        if self.scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(self.scopes.clone())
        }
    }
}

/// The grant a connection holds, and how many times it was replaced (so that requests refused
/// with the same one cause one authorization, not one each).
#[derive(Clone, Default)]
struct Grant {
    manager: Option<Arc<AuthorizationManager>>,
    generation: u64,
}

/// rmcp's reqwest client, authorized as [`OAuth`] says.
#[derive(Clone)]
pub(crate) struct OAuthHttpClient {
    http: reqwest::Client,
    shared: Arc<Shared>,
}

struct Shared {
    server_url: String,
    oauth: OAuth,
    /// Read without waiting: requests with a good token never wait on an authorization.
    grant: std::sync::RwLock<Grant>,
    /// Held across an authorization, so that one runs at a time.
    authorizing: tokio::sync::Mutex<()>,
}

/// What the server said when it refused a request.
enum Refusal {
    /// `401`: no token, or one it does not take.
    Unauthorized(String),
    /// `403 insufficient_scope`, with the scope it names.
    InsufficientScope(String, Option<String>),
}

impl Refusal {
    /// The refusal as the error a request ends with.
    fn into_error(self) -> StreamableHttpError<reqwest::Error> {
        use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
        match self {
            Self::Unauthorized(challenge) => {
                StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge))
            }
            Self::InsufficientScope(challenge, scope) => StreamableHttpError::InsufficientScope(
                InsufficientScopeError::new(challenge, scope),
            ),
        }
    }
}

impl OAuthHttpClient {
    /// The MCP requests go through rmcp's client as rmcp builds it for itself: no idle pool
    /// (Linux's delayed ACK stalls a reused connection), and no redirect followed (a session
    /// id or a header must not reach another host; a POST must not become a GET).
    pub(crate) fn new(server_url: &str, oauth: OAuth) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            http,
            shared: Arc::new(Shared {
                server_url: server_url.to_owned(),
                oauth,
                grant: std::sync::RwLock::default(),
                authorizing: tokio::sync::Mutex::new(()),
            }),
        })
    }

    fn grant(&self) -> Grant {
        self.shared
            .grant
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The current access token (refreshed if it expired and can be), and its generation.
    async fn token(&self) -> Result<(Option<String>, u64), AuthError> {
        let grant = self.grant();
        let token = match &grant.manager {
            None => None,
            Some(manager) => match manager.get_access_token().await {
                Ok(token) => Some(token),
                Err(AuthError::AuthorizationRequired | AuthError::TokenExpired) => None,
                Err(error) => return Err(error),
            },
        };
        Ok((token, grant.generation))
    }

    /// Runs `call` with the current token (the host's, before any authorization); a refusal
    /// is answered by authorizing (once for all the requests refused with the same grant) and
    /// the call made again. A request authorizes at most [`MAX_AUTHORIZATIONS`] times and is
    /// sent at most twice as many times plus one.
    async fn authorized<T, F, Fut>(
        &self,
        given: Option<String>,
        call: F,
    ) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut authorizations = 0;
        let mut sent = 0;
        loop {
            let (mut token, generation) = self.token().await?;
            if generation == 0 {
                // Before any authorization, the host's own token (if it gave one).
                token = token.or_else(|| given.clone());
            }
            sent += 1;
            let refusal = match call(token).await {
                Err(StreamableHttpError::AuthRequired(error)) => {
                    Refusal::Unauthorized(error.www_authenticate_header)
                }
                Err(StreamableHttpError::InsufficientScope(error)) => {
                    Refusal::InsufficientScope(error.www_authenticate_header, error.required_scope)
                }
                other => return other,
            };
            if authorizations == MAX_AUTHORIZATIONS || sent > 2 * MAX_AUTHORIZATIONS {
                return Err(refusal.into_error());
            }
            if self.authorize(refusal, generation).await? {
                authorizations += 1;
            }
        }
    }

    /// Authorizes after `refusal`, unless another request already replaced the grant it was
    /// refused with (then its token is tried). Whether this authorized. The grant in place
    /// stays until a new one is had: an authorization that fails or is dropped loses nothing.
    async fn authorize(&self, refusal: Refusal, refused: u64) -> Result<bool, AuthError> {
        let _one_at_a_time = self.shared.authorizing.lock().await;
        let held = self.grant();
        if held.generation != refused {
            return Ok(false);
        }
        let oauth = &self.shared.oauth;
        let manager = match (refusal, held.manager) {
            (Refusal::InsufficientScope(_, Some(scope)), Some(manager)) => {
                // Step-up: the scopes held plus the one missing, for the same client.
                let url = manager.request_scope_upgrade(&scope).await?;
                let redirect = oauth
                    .authorizer
                    .authorize(&url)
                    .await
                    .map_err(AuthError::AuthorizationFailed)?;
                let callback = AuthorizationCallback::from_redirect_url(&redirect)?;
                manager
                    .exchange_code_for_token_with_issuer(
                        &callback.code,
                        &callback.csrf_token,
                        callback.issuer.as_deref(),
                    )
                    .await?;
                manager
            }
            (Refusal::Unauthorized(challenge) | Refusal::InsufficientScope(challenge, _), _) => {
                // A token refused (or none): everything discovered again from the challenge,
                // since the server may have moved to another authorization server.
                let mut state = OAuthState::new(self.shared.server_url.as_str(), None).await?;
                state.start_authorization(oauth.request(&challenge)).await?;
                let url = state.get_authorization_url().await?;
                let redirect = oauth
                    .authorizer
                    .authorize(&url)
                    .await
                    .map_err(AuthError::AuthorizationFailed)?;
                state.handle_callback_url(&redirect).await?;
                Arc::new(state.into_authorization_manager().ok_or_else(|| {
                    AuthError::InternalError("the authorization did not complete".to_owned())
                })?)
            }
        };
        *self
            .shared
            .grant
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Grant {
            manager: Some(manager),
            generation: refused + 1,
        };
        Ok(true)
    }
}

type Headers = HashMap<HeaderName, HeaderValue>;
type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

// Every request goes through `authorized`; the token rmcp passes (the host's bearer token, if
// any) is used until the first authorization replaces it.
impl StreamableHttpClient for OAuthHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        given: Option<String>,
        headers: Headers,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.authorized(given, |token| {
            self.http.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        given: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.authorized(given, |token| {
            self.http.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        given: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.authorized(given, |token| {
            self.http.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        given: Option<String>,
        headers: Headers,
    ) -> HttpResult<()> {
        self.authorized(given, |token| {
            self.http
                .delete_session(uri.clone(), session_id.clone(), token, headers.clone())
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        given: Option<String>,
        headers: Headers,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        self.authorized(given, |token| {
            self.http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        given: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        self.authorized(given, |token| {
            self.http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
