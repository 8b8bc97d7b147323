//! The HTTP endpoint as an OAuth 2.1 resource server, as MCP's authorization specification
//! asks: protected-resource metadata (RFC 9728) naming the authorization servers, `401` with
//! `WWW-Authenticate: Bearer resource_metadata="…"` without a valid token, access tokens
//! accepted only for this resource (RFC 8707 audience), and `403 insufficient_scope` for a
//! tool whose scope the token lacks. The caller's claims reach the tools
//! (`cx.extension::<Caller>()`); the token itself is never logged, echoed or kept.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value, json};
use toolprism::BoxFuture;

/// The longest bearer token taken, in bytes; a longer one is refused before it is parsed.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// The most an issuer's metadata or key set may weigh.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// How long fetching an issuer's metadata or keys may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How often an unknown key id may make the key set be fetched again.
const REFETCH_INTERVAL: Duration = Duration::from_secs(30);
/// How far `exp` and `nbf` may be off, for clocks that differ.
const LEEWAY_SECONDS: u64 = 30;
/// The tokens whose signature was checked and whose claims are kept, until they expire: a
/// client sends the same token with every request, and verifying an RSA signature costs more
/// than the rest of a request. Only tokens that passed are kept, each at most
/// [`MAX_TOKEN_BYTES`].
pub const MAX_VERIFIED_TOKENS: usize = 1024;
/// The signature algorithms accepted: asymmetric only (no `none`, no HMAC, whose secret a
/// public key set would hand out).
const ALGORITHMS: [Algorithm; 8] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
];

/// Who made a request, as its access token says.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Caller {
    /// The token's subject (`sub`), if it names one.
    pub subject: Option<String>,
    /// The client the token was issued to (`client_id` or `azp`), if said.
    pub client_id: Option<String>,
    /// The scopes granted (`scope`, space-separated, or `scp`).
    pub scopes: BTreeSet<String>,
    /// Every claim of the token.
    pub claims: Map<String, Value>,
}

impl Caller {
    /// The caller of a token's claims.
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut scopes = BTreeSet::new();
        if let Some(scope) = claims.get("scope").and_then(Value::as_str) {
            scopes.extend(scope.split_whitespace().map(str::to_owned));
        }
        if let Some(Value::Array(granted)) = claims.get("scp") {
            scopes.extend(granted.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        Self {
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes,
            claims,
        }
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
}

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
pub struct AuthSetupError(String);

/// JWT access tokens checked against an issuer's published keys: the signature (with an
/// algorithm of the allow-list, by the key the token names), `iss`, `aud` equal to this
/// resource, `exp` and `nbf` within 30 s. The key set is fetched when made and again, at most
/// every 30 s, when a token names a key it lacks.
pub struct JwtValidator {
    issuer: String,
    audience: String,
    jwks_uri: String,
    http: reqwest::Client,
    keys: RwLock<JwkSet>,
    fetched: Mutex<Instant>,
    /// By the token's SHA-256 digest: the token itself is not kept.
    verified: Mutex<HashMap<[u8; 32], Verified, foldhash::fast::RandomState>>,
}

/// A token that passed, and the seconds since the epoch during which it stays valid (its
/// `nbf` and `exp`, with the leeway).
struct Verified {
    caller: Caller,
    from: u64,
    until: u64,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_uri", &self.jwks_uri)
            .finish_non_exhaustive()
    }
}

/// Fetches a JSON document, bounded in time and size.
async fn fetch_json(http: &reqwest::Client, url: &str) -> Result<Value, String> {
    let mut response = http
        .get(url)
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    if !response.status().is_success() {
        return Err(format!("{url}: {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("{url}: {error}"))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url}: more than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|error| format!("{url}: {error}"))
}

impl JwtValidator {
    /// Finds the issuer's key set through its metadata (RFC 8414
    /// `/.well-known/oauth-authorization-server`, else OIDC's
    /// `/.well-known/openid-configuration`) and fetches it. Tokens must name `audience`: this
    /// endpoint's URL.
    pub async fn discover(issuer: &str, audience: &str) -> Result<Self, AuthSetupError> {
        let http = reqwest::Client::new();
        let base = issuer.trim_end_matches('/');
        let mut why = Vec::new();
        for well_known in [
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ] {
            match fetch_json(&http, &format!("{base}{well_known}")).await {
                Ok(metadata) => {
                    if metadata.get("issuer").and_then(Value::as_str) != Some(issuer) {
                        return Err(AuthSetupError(format!(
                            "the metadata at {base}{well_known} names another issuer"
                        )));
                    }
                    let jwks_uri = metadata
                        .get("jwks_uri")
                        .and_then(Value::as_str)
                        .ok_or_else(|| AuthSetupError("the issuer names no `jwks_uri`".into()))?;
                    return Self::with_jwks_uri(issuer, audience, jwks_uri).await;
                }
                Err(error) => why.push(error),
            }
        }
        Err(AuthSetupError(format!(
            "no metadata for the issuer: {}",
            why.join("; ")
        )))
    }

    /// Tokens of `issuer` for `audience`, checked against the key set at `jwks_uri`.
    pub async fn with_jwks_uri(
        issuer: &str,
        audience: &str,
        jwks_uri: &str,
    ) -> Result<Self, AuthSetupError> {
        let http = reqwest::Client::new();
        let keys = fetch_keys(&http, jwks_uri).await.map_err(AuthSetupError)?;
        Ok(Self {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            jwks_uri: jwks_uri.to_owned(),
            http,
            keys: RwLock::new(keys),
            fetched: Mutex::new(Instant::now()),
            verified: Mutex::default(),
        })
    }

    /// The key set again, unless it was fetched less than 30 s ago; whether it was.
    async fn refetch(&self) -> bool {
        {
            let mut fetched = self.fetched.lock().unwrap_or_else(PoisonError::into_inner);
            if fetched.elapsed() < REFETCH_INTERVAL {
                return false;
            }
            *fetched = Instant::now();
        }
        match fetch_keys(&self.http, &self.jwks_uri).await {
            Ok(keys) => {
                *self.keys.write().unwrap_or_else(PoisonError::into_inner) = keys;
                // A key the issuer dropped may have signed some of them: check them again.
                self.verified
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clear();
                true
            }
            Err(error) => {
                tracing::warn!(%error, "the issuer's keys could not be fetched again");
                false
            }
        }
    }

    /// The key `kid` names (or the only one, when the token names none), usable for `alg`.
    fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let usable: Vec<_> = keys
            .keys
            .iter()
            // A symmetric key in a public set would let anyone sign.
            .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)))
            .filter(|jwk| match kid {
                Some(kid) => jwk.common.key_id.as_deref() == Some(kid),
                None => true,
            })
            .collect();
        let [jwk] = usable.as_slice() else {
            return None;
        };
        if let Some(said) = jwk.common.key_algorithm
            && format!("{said:?}") != format!("{alg:?}")
        {
            return None;
        }
        DecodingKey::from_jwk(jwk).ok()
    }

    /// The caller of a token; `Err(None)` when it names a key the set lacks (which a fetch may
    /// bring), `Err(Some(why))` when it is refused.
    fn check(&self, token: &str) -> Result<Caller, Option<TokenError>> {
        let header = decode_header(token)
            .map_err(|error| Some(TokenError::Invalid(format!("its header: {error}"))))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Some(TokenError::Invalid(format!(
                "{:?} is not an accepted algorithm",
                header.alg
            ))));
        }
        let key = self
            .key_for(header.kid.as_deref(), header.alg)
            .ok_or(None)?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECONDS;
        decode::<Map<String, Value>>(token, &key, &validation)
            .map(|data| Caller::from_claims(data.claims))
            .map_err(|error| Some(TokenError::Invalid(error.to_string())))
    }
}

impl JwtValidator {
    /// The caller of `token` if it passed before and is within its time still.
    fn already_verified(&self, token: &str) -> Option<Caller> {
        let verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = verified.get(&digest(token))?;
        let now = now_seconds();
        (kept.from..=kept.until)
            .contains(&now)
            .then(|| kept.caller.clone())
    }

    /// Keeps `caller`, who just passed with `token` (when full, the expired are swept, and if
    /// none was, all are forgotten), and returns it.
    fn keep_verified(&self, token: &str, caller: Caller) -> Caller {
        let seconds = |claim: &str| caller.claims.get(claim).and_then(Value::as_u64);
        // `exp` is required by the check; a token that says it in another form is not kept.
        let Some(expires) = seconds("exp") else {
            return caller;
        };
        let entry = Verified {
            caller: caller.clone(),
            from: seconds("nbf").map_or(0, |nbf| nbf.saturating_sub(LEEWAY_SECONDS)),
            until: expires.saturating_add(LEEWAY_SECONDS),
        };
        let mut verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        if verified.len() >= MAX_VERIFIED_TOKENS {
            let now = now_seconds();
            verified.retain(|_, kept| kept.until >= now);
            if verified.len() >= MAX_VERIFIED_TOKENS {
                verified.clear();
            }
        }
        verified.insert(digest(token), entry);
        caller
    }
}

fn digest(token: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes()).into()
}

async fn fetch_keys(http: &reqwest::Client, jwks_uri: &str) -> Result<JwkSet, String> {
    let document = fetch_json(http, jwks_uri).await?;
    serde_json::from_value(document).map_err(|error| format!("{jwks_uri}: {error}"))
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>> {
        Box::pin(async move {
            if token.len() > MAX_TOKEN_BYTES {
                return Err(TokenError::Invalid(format!(
                    "longer than {MAX_TOKEN_BYTES} bytes"
                )));
            }
            if let Some(caller) = self.already_verified(token) {
                return Ok(caller);
            }
            match self.check(token) {
                Ok(caller) => Ok(self.keep_verified(token, caller)),
                Err(Some(refused)) => Err(refused),
                // Maybe a key the issuer added since: fetched again, at most every 30 s.
                Err(None) => {
                    if self.refetch().await {
                        return self
                            .check(token)
                            .map(|caller| self.keep_verified(token, caller))
                            .map_err(|refused| {
                                refused.unwrap_or_else(|| {
                                    TokenError::Invalid("it names no key of the issuer's".into())
                                })
                            });
                    }
                    Err(TokenError::Invalid(
                        "it names no key of the issuer's".into(),
                    ))
                }
            }
        })
    }
}

/// Opaque tokens checked by asking the issuer (RFC 7662 introspection): a token is accepted
/// when the issuer says it is active, for this resource (`aud`), and not expired (`exp`, 30 s
/// leeway). Each request asks once, within 5 s.
pub struct IntrospectionValidator {
    endpoint: String,
    audience: String,
    credentials: Option<(String, String)>,
    http: reqwest::Client,
}

impl std::fmt::Debug for IntrospectionValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionValidator")
            .field("endpoint", &self.endpoint)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl IntrospectionValidator {
    /// Tokens for `audience` (this endpoint's URL), asked about at `endpoint`.
    pub fn new(endpoint: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            audience: audience.into(),
            credentials: None,
            http: reqwest::Client::new(),
        }
    }

    /// The same, authenticating to the endpoint as this client (HTTP Basic).
    #[must_use]
    pub fn with_client(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.credentials = Some((id.into(), secret.into()));
        self
    }

    async fn introspect(&self, token: &str) -> Result<Map<String, Value>, TokenError> {
        let unavailable = |error: String| TokenError::Unavailable(error);
        let mut request = self
            .http
            .post(&self.endpoint)
            .timeout(FETCH_TIMEOUT)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(format!(
                "token={}&token_type_hint=access_token",
                form_encode(token)
            ));
        if let Some((id, secret)) = &self.credentials {
            request = request.basic_auth(id, Some(secret));
        }
        let mut response = request
            .send()
            .await
            .map_err(|error| unavailable(error.to_string()))?;
        if !response.status().is_success() {
            return Err(unavailable(format!(
                "introspection answered {}",
                response.status()
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| unavailable(error.to_string()))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(unavailable("the introspection answer is too large".into()));
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice(&body) {
            Ok(Value::Object(answer)) => Ok(answer),
            _ => Err(unavailable(
                "the introspection answer is not a JSON object".into(),
            )),
        }
    }
}

/// Text as a form field's value (`application/x-www-form-urlencoded`).
fn form_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            let _ = std::fmt::Write::write_fmt(&mut encoded, format_args!("%{byte:02X}"));
        }
    }
    encoded
}

/// Seconds since the Unix epoch.
fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl TokenValidator for IntrospectionValidator {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>> {
        Box::pin(async move {
            if token.len() > MAX_TOKEN_BYTES {
                return Err(TokenError::Invalid(format!(
                    "longer than {MAX_TOKEN_BYTES} bytes"
                )));
            }
            let answer = self.introspect(token).await?;
            if answer.get("active") != Some(&Value::Bool(true)) {
                return Err(TokenError::Invalid(
                    "the issuer says it is not active".into(),
                ));
            }
            let for_us = match answer.get("aud") {
                Some(Value::String(audience)) => *audience == self.audience,
                Some(Value::Array(audiences)) => {
                    audiences.iter().any(|audience| *audience == *self.audience)
                }
                _ => false,
            };
            if !for_us {
                return Err(TokenError::Invalid("it is not for this resource".into()));
            }
            if let Some(expires) = answer.get("exp").and_then(Value::as_u64)
                && expires + LEEWAY_SECONDS < now_seconds()
            {
                return Err(TokenError::Invalid("it has expired".into()));
            }
            Ok(Caller::from_claims(answer))
        })
    }
}

/// What the HTTP endpoint asks of a request: a token a validator accepts for this resource,
/// and the scopes each tool needs.
pub struct Authorization {
    resource: String,
    issuers: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    validator: Arc<dyn TokenValidator>,
    /// The registry served, whose tools say the scopes they need (`#[tool(scopes = …)]`).
    registry: Option<toolprism::Registry>,
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("issuers", &self.issuers)
            .field("tool_scopes", &self.tool_scopes)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// Requests to `resource` (this endpoint's URL, as clients reach it and tokens name it)
    /// need a token `validator` accepts, issued by `authorization_server`.
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        validator: impl TokenValidator,
    ) -> Self {
        Self {
            resource: resource.into(),
            issuers: vec![authorization_server.into()],
            tool_scopes: HashMap::new(),
            validator: Arc::new(validator),
            registry: None,
        }
    }

    /// JWTs of `issuer` (its keys found through its metadata) for `resource`.
    pub async fn jwt(issuer: &str, resource: &str) -> Result<Self, AuthSetupError> {
        let validator = JwtValidator::discover(issuer, resource).await?;
        Ok(Self::new(resource, issuer, validator))
    }

    /// Calling `tool` needs `scope` too, besides those it says itself (`#[tool(scopes = …)]`);
    /// a caller without it gets `403 insufficient_scope` naming it, and a listing without the
    /// tool.
    #[must_use]
    pub fn require_scope(mut self, tool: &str, scope: &str) -> Self {
        self.tool_scopes
            .entry(tool.to_owned())
            .or_default()
            .push(scope.to_owned());
        self
    }

    /// The same, for the tools of `registry`.
    pub(crate) fn serving(mut self, registry: toolprism::Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// The scopes `caller` lacks to call `tool`: those the tool says and those required here.
    pub(crate) fn missing_scopes(&self, tool: &str, caller: &Caller) -> Vec<String> {
        let declared = self.registry.as_ref().and_then(|registry| {
            let snapshot = registry.snapshot();
            snapshot
                .definition(tool)
                .map(|definition| definition.about().scopes.clone())
        });
        let mut missing: Vec<String> = declared
            .into_iter()
            .flatten()
            .chain(self.tool_scopes.get(tool).into_iter().flatten().cloned())
            .filter(|scope| !caller.has_scope(scope))
            .collect();
        missing.sort();
        missing.dedup();
        missing
    }

    /// Every scope a tool needs: those the tools say and those required here.
    fn scopes_supported(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self.tool_scopes.values().flatten().cloned().collect();
        if let Some(registry) = &self.registry {
            let snapshot = registry.snapshot();
            for definition in snapshot.definitions() {
                scopes.extend(definition.about().scopes.iter().cloned());
            }
        }
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// Where the protected-resource metadata is: at the origin, under the endpoint's path.
    fn metadata_url(&self) -> String {
        let after_scheme = self.resource.find("://").map_or(0, |at| at + 3);
        let path_at = self.resource[after_scheme..]
            .find('/')
            .map_or(self.resource.len(), |at| after_scheme + at);
        let (origin, path) = self.resource.split_at(path_at);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The protected-resource metadata (RFC 9728).
    fn metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": self.issuers,
            "scopes_supported": self.scopes_supported(),
            "bearer_methods_supported": ["header"],
        })
    }

    /// `401`, saying where to learn how to get a token (and, for a token refused, that it
    /// was).
    fn unauthorized(&self, refused: bool) -> Response {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if refused {
            challenge.push_str(", error=\"invalid_token\"");
        }
        challenge_response(StatusCode::UNAUTHORIZED, &challenge)
    }

    /// `403 insufficient_scope`, naming the scopes the call needs.
    fn insufficient(&self, scopes: &[String]) -> Response {
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\"",
            scopes.join(" "),
            self.metadata_url()
        );
        challenge_response(StatusCode::FORBIDDEN, &challenge)
    }
}

fn challenge_response(status: StatusCode, challenge: &str) -> Response {
    let mut response = status.into_response();
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The routes of the protected-resource metadata: at the origin, and under the endpoint's
/// path (both, as clients look in either).
pub(crate) fn metadata_routes(auth: &Arc<Authorization>, mcp_path: &str) -> axum::Router {
    let metadata = auth.metadata().to_string();
    let serve = move || {
        let metadata = metadata.clone();
        async move { ([(header::CONTENT_TYPE, "application/json")], metadata) }
    };
    axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            axum::routing::get(serve.clone()),
        )
        .route(
            &format!("/.well-known/oauth-protected-resource{mcp_path}"),
            axum::routing::get(serve),
        )
}

/// The bearer token of a request, if it carries one (`Authorization: Bearer …`, the scheme in
/// any case).
fn bearer(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// The tool a JSON-RPC `tools/call` names, if the body is one. Read into the two fields it
/// needs (the rest skipped unbuilt): every POST passes here.
fn called_tool(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Message {
        method: String,
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        name: Option<String>,
    }
    let message: Message = serde_json::from_slice(body).ok()?;
    (message.method == "tools/call")
        .then_some(message.params?.name)
        .flatten()
}

/// The middleware in front of the endpoint: a request without a valid token is answered `401`,
/// a call without its tool's scopes `403`; an accepted request carries its [`Caller`].
pub(crate) async fn guard(
    State(auth): State<Arc<Authorization>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(&request) else {
        return auth.unauthorized(false);
    };
    let caller = match auth.validator.validate(token).await {
        Ok(caller) => caller,
        // Not the token's fault: the client may try again, with the same token.
        Err(error @ TokenError::Unavailable(_)) => {
            tracing::warn!(%error, "a request's token could not be checked");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
        Err(error) => {
            // The reason is the server's to read; the client learns only that it was refused.
            tracing::debug!(%error, "a request's token was refused");
            return auth.unauthorized(true);
        }
    };
    if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        // Read only now that the token passed: an anonymous client makes nobody wait on its
        // body.
        let bytes = match crate::door::read_body(body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        if let Some(tool) = called_tool(&bytes) {
            let missing = auth.missing_scopes(&tool, &caller);
            if !missing.is_empty() {
                return auth.insufficient(&missing);
            }
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    request.extensions_mut().insert(Arc::new(caller));
    next.run(request).await
}
