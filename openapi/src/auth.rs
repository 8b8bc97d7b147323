//! Credentials for a document's security schemes, from the host or the environment, and how
//! each scheme puts its secret on a request. A secret never appears in `Debug`, errors or
//! tool values: it goes into a header marked sensitive, a cookie or a query pair, and errors
//! are reported without the request's URL.

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;
use serde_json::Value;

use crate::document::{Document, quoted};

/// A secret: a token, an API key, or `user:password` for basic authentication.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A secret from its text.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret held in the environment variable `name`, when it is set and not empty.
    pub fn from_env(name: &str) -> Option<Self> {
        std::env::var(name)
            .ok()
            .filter(|value| !value.is_empty())
            .map(Self)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Secret(<redacted>)")
    }
}

/// Secrets by the name of the security scheme they are for (`components.securitySchemes`).
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    secrets: BTreeMap<String, Secret>,
}

impl Credentials {
    /// No secrets: operations that need one are called without it (and the API refuses).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the secret for the scheme named `scheme`.
    #[must_use]
    pub fn with(mut self, scheme: impl Into<String>, secret: Secret) -> Self {
        self.secrets.insert(scheme.into(), secret);
        self
    }

    pub(crate) fn get(&self, scheme: &str) -> Option<&Secret> {
        self.secrets.get(scheme)
    }
}

/// Where a scheme puts its secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// `Authorization: Bearer …` (HTTP bearer, OAuth 2, OpenID Connect: a token the host has).
    Bearer,
    /// `Authorization: Basic …`, the secret being `user:password`.
    Basic,
    Header(String),
    Query(String),
    Cookie(String),
}

/// One scheme of a requirement: its name and placement.
#[derive(Clone, Debug)]
pub(crate) struct Scheme {
    pub(crate) name: String,
    pub(crate) placement: Placement,
}

/// An operation's security: alternatives, each a set of schemes used together. Empty when
/// the operation needs none.
pub(crate) type Requirements = Vec<Vec<Scheme>>;

/// The most security alternatives an operation may list.
pub const MAX_SECURITY_ALTERNATIVES: usize = 32;

/// The requirements an operation declares (or the document's, when it declares none). An
/// alternative using a scheme this crate cannot apply is left out; an operation none of whose
/// alternatives can be applied is refused, with the first reason.
pub(crate) fn requirements(document: &Document, operation: &Value) -> Result<Requirements, String> {
    let declared = operation
        .get("security")
        .or_else(|| document.root.get("security"));
    let Some(Value::Array(alternatives)) = declared else {
        return Ok(Vec::new());
    };
    if alternatives.len() > MAX_SECURITY_ALTERNATIVES {
        return Err(format!(
            "it lists more than {MAX_SECURITY_ALTERNATIVES} security alternatives"
        ));
    }
    let mut out = Vec::new();
    let mut unusable = None;
    for alternative in alternatives {
        let Value::Object(schemes) = alternative else {
            return Err("a security requirement is not an object".to_owned());
        };
        // `{}`: calling without credentials is one of the choices.
        let all: Result<Vec<Scheme>, String> = schemes
            .keys()
            .map(|name| {
                Ok(Scheme {
                    name: name.clone(),
                    placement: placement(document, name)?,
                })
            })
            .collect();
        match all {
            Ok(all) => out.push(all),
            Err(reason) => {
                unusable.get_or_insert(reason);
            }
        }
    }
    match unusable {
        Some(reason) if out.is_empty() => Err(reason),
        _ => Ok(out),
    }
}

fn placement(document: &Document, name: &str) -> Result<Placement, String> {
    let declared = document
        .root
        .pointer("/components/securitySchemes")
        .and_then(|schemes| schemes.get(name))
        .ok_or_else(|| format!("its security scheme {} is not declared", quoted(name)))?;
    let scheme = document.resolve(declared)?;
    let kind = scheme.get("type").and_then(Value::as_str).unwrap_or("");
    let field = |key: &str| scheme.get(key).and_then(Value::as_str).unwrap_or("");
    Ok(match kind {
        "http" if field("scheme").eq_ignore_ascii_case("bearer") => Placement::Bearer,
        "http" if field("scheme").eq_ignore_ascii_case("basic") => Placement::Basic,
        "oauth2" | "openIdConnect" => Placement::Bearer,
        "apiKey" => {
            let key = field("name").to_owned();
            if key.is_empty() {
                return Err(format!("its API key scheme {} names no key", quoted(name)));
            }
            match field("in") {
                "header" => Placement::Header(key),
                "query" => Placement::Query(key),
                "cookie" => Placement::Cookie(key),
                other => {
                    return Err(format!(
                        "its API key scheme {} is in {}",
                        quoted(name),
                        quoted(other)
                    ));
                }
            }
        }
        other => {
            return Err(format!(
                "its security scheme {} is of type {}, which is not supported",
                quoted(name),
                quoted(other)
            ));
        }
    })
}

/// What a request gets from the credentials: headers (marked sensitive), query pairs and
/// cookies. The first alternative that needs credentials and that the credentials satisfy is
/// used (before an anonymous `{}` one); none when none is.
#[derive(Default)]
pub(crate) struct Applied {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) cookies: Vec<(String, String)>,
}

pub(crate) fn apply(requirements: &Requirements, credentials: &Credentials) -> Applied {
    let mut applied = Applied::default();
    let chosen = requirements.iter().find(|alternative| {
        !alternative.is_empty()
            && alternative
                .iter()
                .all(|scheme| credentials.get(&scheme.name).is_some())
    });
    for scheme in chosen.into_iter().flatten() {
        let Some(secret) = credentials.get(&scheme.name) else {
            continue;
        };
        let secret = secret.expose();
        match &scheme.placement {
            Placement::Bearer => applied
                .headers
                .push(("authorization".to_owned(), format!("Bearer {secret}"))),
            Placement::Basic => applied.headers.push((
                "authorization".to_owned(),
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(secret)
                ),
            )),
            Placement::Header(name) => applied.headers.push((name.clone(), secret.to_owned())),
            Placement::Query(name) => applied.query.push((name.clone(), secret.to_owned())),
            Placement::Cookie(name) => applied.cookies.push((name.clone(), secret.to_owned())),
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document(security: Value) -> Document {
        Document::from_value(json!({
            "openapi": "3.1.0",
            "paths": {},
            "security": security,
            "components": {"securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "mtls": {"type": "mutualTLS"},
            }},
        }))
        .unwrap()
    }

    #[test]
    fn credentials_are_used_before_an_anonymous_alternative() {
        let document = document(json!([{}, {"key": []}]));
        let requirements = requirements(&document, &json!({})).unwrap();
        let credentials = Credentials::new().with("key", Secret::new("k"));
        let applied = apply(&requirements, &credentials);
        assert_eq!(applied.headers, [("X-Key".to_owned(), "k".to_owned())]);
        assert!(apply(&requirements, &Credentials::new()).headers.is_empty());
    }

    #[test]
    fn an_unsupported_scheme_drops_only_its_alternative() {
        let document = document(json!([{"mtls": []}, {"key": []}]));
        let requirements = requirements(&document, &json!({})).unwrap();
        assert_eq!(requirements.len(), 1);
        assert_eq!(requirements[0][0].name, "key");
        let only = self::document(json!([{"mtls": []}]));
        let error = requirements_error(&only);
        assert!(error.contains("mutualTLS"), "{error}");
        let many = self::document(Value::Array(vec![json!({}); 33]));
        assert!(requirements_error(&many).contains("more than 32"));
    }

    fn requirements_error(document: &Document) -> String {
        requirements(document, &json!({})).unwrap_err()
    }

    #[test]
    fn a_secret_never_shows_in_debug() {
        let credentials = Credentials::new().with("token", Secret::new("s3cr3t"));
        let shown = format!("{credentials:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("redacted"), "{shown}");
    }
}
