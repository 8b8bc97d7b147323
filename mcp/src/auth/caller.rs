//! Who made a request, as its access token says: what a tool reads with
//! `cx.extension::<Caller>()`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

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
