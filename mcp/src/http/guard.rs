//! The authorization in front of the HTTP endpoint: a request without a valid token is
//! answered `401` with where to get one, a call without its tool's scopes `403
//! insufficient_scope`; an accepted request carries its caller. Serves the
//! protected-resource metadata.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::authorization::Authorization;
use crate::auth::token::TokenError;

impl Authorization {
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

/// What a POST body calls: `Ok(Some(tool))` for a `tools/call`, `Ok(None)` for any other
/// message. Read into the two fields it needs (the rest skipped unbuilt): every POST passes
/// here. `Err` for a body that cannot be read so — not a JSON object, a field it reads given
/// twice, a `tools/call` that names no tool — which is refused rather than handed on unread.
fn called_tool(body: &[u8]) -> Result<Option<String>, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        name: Option<String>,
    }
    let message: Message = serde_json::from_slice(body)?;
    if message.method.as_deref() != Some("tools/call") {
        return Ok(None);
    }
    match message.params.and_then(|params| params.name) {
        Some(tool) => Ok(Some(tool)),
        None => Err(serde::de::Error::custom("a tools/call that names no tool")),
    }
}

/// `503`, with how long to wait: the issuer could not be asked about the token (the same token
/// may pass then).
fn unavailable() -> Response {
    let mut response = StatusCode::SERVICE_UNAVAILABLE.into_response();
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(crate::auth::jwt::ISSUER_RETRY_INTERVAL.as_secs()),
    );
    response
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
            tracing::debug!(%error, "a request's token could not be checked");
            return unavailable();
        }
        Err(error) => {
            // The reason is the server's to read; the client learns only that it was refused.
            tracing::debug!(%error, "a request's token was refused");
            return auth.unauthorized(true);
        }
    };
    // What a caller keeps is keyed by its subject and client: a token naming neither would
    // share it with every other such token.
    if caller.subject.is_none() && caller.client_id.is_none() {
        tracing::debug!("a token naming no subject nor client was refused");
        return auth.unauthorized(true);
    }
    if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        // Read only now that the token passed: an anonymous client makes nobody wait on its
        // body.
        let bytes = match crate::http::door::read_body(body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        // The scopes are checked again where the call runs: this answer is the one a client
        // steps up on (`403 insufficient_scope`).
        match called_tool(&bytes) {
            Ok(Some(tool)) => {
                let missing = auth.missing_scopes(&tool, &caller);
                if !missing.is_empty() {
                    return auth.insufficient(&missing);
                }
            }
            Ok(None) => {}
            Err(error) => {
                tracing::debug!(%error, "a request's body could not be read");
                return (
                    StatusCode::BAD_REQUEST,
                    "the body is not a JSON-RPC message this endpoint reads",
                )
                    .into_response();
            }
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    request.extensions_mut().insert(Arc::new(caller));
    next.run(request).await
}
