//! Opaque access tokens, checked by asking the issuer (RFC 7662 introspection).

use axum::http::header;
use serde_json::{Map, Value};
use toolprism::BoxFuture;

use super::token::{
    FETCH_TIMEOUT, LEEWAY_SECONDS, MAX_DOCUMENT_BYTES, MAX_TOKEN_BYTES, TokenError, TokenValidator,
    now_seconds,
};
use toolprism::access::Caller;

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
