//! JWT access tokens, checked against the issuer's published keys; verified tokens kept by
//! digest until they expire.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};
use toolprism::BoxFuture;
use toolprism::access::Caller;

use super::token::{
    AuthSetupError, FETCH_TIMEOUT, LEEWAY_SECONDS, MAX_DOCUMENT_BYTES, MAX_TOKEN_BYTES, TokenError,
    TokenValidator, now_seconds,
};

/// How often an unknown key id may make the key set be fetched again.
const REFETCH_INTERVAL: Duration = Duration::from_secs(30);
/// How often, while the issuer's keys are unknown (it could not be reached), a request makes
/// them be looked for again; meanwhile a request with a token is answered `503`.
pub const ISSUER_RETRY_INTERVAL: Duration = Duration::from_secs(5);
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

/// JWT access tokens checked against an issuer's published keys: the signature (with an
/// algorithm of the allow-list, by the key the token names), `iss`, `aud` equal to this
/// resource, `exp` and `nbf` within 30 s. The key set is fetched when made and again, at most
/// every 30 s, when a token names a key it lacks. Made with
/// [`discover_lazily`](Self::discover_lazily), it also starts without keys when the issuer
/// cannot be reached, and looks for them again as requests come.
pub struct JwtValidator {
    issuer: String,
    audience: String,
    /// Where the issuer publishes its keys; `None` until its metadata said.
    jwks_uri: RwLock<Option<String>>,
    http: reqwest::Client,
    keys: RwLock<JwkSet>,
    /// When the keys (or the metadata) were last asked for.
    fetched: Mutex<Instant>,
    /// Whether the issuer could not be reached when last asked: an outage is logged once, as
    /// is its end.
    outage: AtomicBool,
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
            .field(
                "jwks_uri",
                &*self.jwks_uri.read().unwrap_or_else(PoisonError::into_inner),
            )
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
        let (jwks_uri, keys) = find_keys(&http, issuer).await.map_err(AuthSetupError)?;
        Ok(Self::made(issuer, audience, http, Some(jwks_uri), keys))
    }

    /// As [`discover`](Self::discover), but an issuer that cannot be reached now does not
    /// fail it: the validator starts without keys (the outage logged once), a request with a
    /// token is refused as [`TokenError::Unavailable`] (`503`), and the keys are looked for
    /// again at most every [`ISSUER_RETRY_INTERVAL`] as requests come, until they are found.
    pub async fn discover_lazily(issuer: &str, audience: &str) -> Result<Self, AuthSetupError> {
        let http = reqwest::Client::new();
        match find_keys(&http, issuer).await {
            Ok((jwks_uri, keys)) => Ok(Self::made(issuer, audience, http, Some(jwks_uri), keys)),
            Err(error) => {
                tracing::warn!(
                    %error,
                    "the issuer cannot be reached; requests with a token are answered 503 until it can"
                );
                let validator =
                    Self::made(issuer, audience, http, None, JwkSet { keys: Vec::new() });
                validator.outage.store(true, Ordering::Relaxed);
                Ok(validator)
            }
        }
    }

    /// Tokens of `issuer` for `audience`, checked against the key set at `jwks_uri`.
    pub async fn with_jwks_uri(
        issuer: &str,
        audience: &str,
        jwks_uri: &str,
    ) -> Result<Self, AuthSetupError> {
        let http = reqwest::Client::new();
        let keys = fetch_keys(&http, jwks_uri).await.map_err(AuthSetupError)?;
        Ok(Self::made(
            issuer,
            audience,
            http,
            Some(jwks_uri.to_owned()),
            keys,
        ))
    }

    fn made(
        issuer: &str,
        audience: &str,
        http: reqwest::Client,
        jwks_uri: Option<String>,
        keys: JwkSet,
    ) -> Self {
        Self {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            jwks_uri: RwLock::new(jwks_uri),
            http,
            keys: RwLock::new(keys),
            fetched: Mutex::new(Instant::now()),
            outage: AtomicBool::new(false),
            verified: Mutex::default(),
        }
    }

    /// Whether the issuer's keys are known: once its metadata was read.
    fn has_keys(&self) -> bool {
        self.jwks_uri
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Looks for the issuer's metadata and keys again, unless that was done less than
    /// [`ISSUER_RETRY_INTERVAL`] ago (one request looks; the others are answered `503`).
    async fn rediscover(&self) {
        {
            let mut fetched = self.fetched.lock().unwrap_or_else(PoisonError::into_inner);
            if fetched.elapsed() < ISSUER_RETRY_INTERVAL {
                return;
            }
            *fetched = Instant::now();
        }
        match find_keys(&self.http, &self.issuer).await {
            Ok((jwks_uri, keys)) => {
                *self.keys.write().unwrap_or_else(PoisonError::into_inner) = keys;
                *self
                    .jwks_uri
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = Some(jwks_uri);
                if self.outage.swap(false, Ordering::Relaxed) {
                    tracing::warn!("the issuer answers again; its tokens are checked");
                }
            }
            Err(error) => tracing::debug!(%error, "the issuer still cannot be reached"),
        }
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
        let Some(jwks_uri) = self
            .jwks_uri
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return false;
        };
        match fetch_keys(&self.http, &jwks_uri).await {
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

/// The issuer's `jwks_uri`, from its metadata, and the key set there.
async fn find_keys(http: &reqwest::Client, issuer: &str) -> Result<(String, JwkSet), String> {
    let base = issuer.trim_end_matches('/');
    let mut why = Vec::new();
    for well_known in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        match fetch_json(http, &format!("{base}{well_known}")).await {
            Ok(metadata) => {
                if metadata.get("issuer").and_then(Value::as_str) != Some(issuer) {
                    return Err(format!(
                        "the metadata at {base}{well_known} names another issuer"
                    ));
                }
                let jwks_uri = metadata
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| "the issuer names no `jwks_uri`".to_owned())?;
                let keys = fetch_keys(http, jwks_uri).await?;
                return Ok((jwks_uri.to_owned(), keys));
            }
            Err(error) => why.push(error),
        }
    }
    Err(format!("no metadata for the issuer: {}", why.join("; ")))
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
            if !self.has_keys() {
                self.rediscover().await;
                if !self.has_keys() {
                    return Err(TokenError::Unavailable(
                        "the issuer's keys are not known yet: it could not be reached".into(),
                    ));
                }
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
