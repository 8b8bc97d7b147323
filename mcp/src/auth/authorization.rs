//! What an authorized endpoint asks of a request: a token a validator accepts for this
//! resource, the scopes each tool needs, and the protected-resource metadata (RFC 9728) that
//! says where to get a token.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::caller::Caller;
use super::jwt::JwtValidator;
use super::token::{AuthSetupError, TokenValidator};

/// What the HTTP endpoint asks of a request: a token a validator accepts for this resource,
/// and the scopes each tool needs.
pub struct Authorization {
    resource: String,
    issuers: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    pub(crate) validator: Arc<dyn TokenValidator>,
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
    pub(crate) fn metadata_url(&self) -> String {
        let after_scheme = self.resource.find("://").map_or(0, |at| at + 3);
        let path_at = self.resource[after_scheme..]
            .find('/')
            .map_or(self.resource.len(), |at| after_scheme + at);
        let (origin, path) = self.resource.split_at(path_at);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The protected-resource metadata (RFC 9728).
    pub(crate) fn metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": self.issuers,
            "scopes_supported": self.scopes_supported(),
            "bearer_methods_supported": ["header"],
        })
    }
}
