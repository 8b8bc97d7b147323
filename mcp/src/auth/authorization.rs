//! What an authorized endpoint asks of a request: a token a validator accepts for this
//! resource, the scopes each tool needs, and the protected-resource metadata (RFC 9728) that
//! says where to get a token.

use std::sync::Arc;

use serde_json::{Value, json};
use toolprism::access::{Caller, ScopeRules, is_valid_scope, missing_scopes};

use super::jwt::JwtValidator;
use super::token::{AuthSetupError, TokenValidator};

/// What the HTTP endpoint asks of a request: a token a validator accepts for this resource,
/// and the scopes each tool needs.
pub struct Authorization {
    resource: String,
    issuers: Vec<String>,
    rules: Arc<ScopeRules>,
    pub(crate) validator: Arc<dyn TokenValidator>,
    /// The registry served, whose tools say the scopes they need (`#[tool(scopes = …)]`).
    registry: Option<toolprism::Registry>,
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("issuers", &self.issuers)
            .field("rules", &self.rules)
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
            rules: Arc::new(ScopeRules::new()),
            validator: Arc::new(validator),
            registry: None,
        }
    }

    /// JWTs of `issuer` (its keys found through its metadata) for `resource`. An issuer that
    /// cannot be reached yet does not fail this: its keys are looked for again as requests
    /// come ([`JwtValidator::discover_lazily`]), and until they are found a request with a
    /// token is answered `503` with `Retry-After`.
    pub async fn jwt(issuer: &str, resource: &str) -> Result<Self, AuthSetupError> {
        let validator = JwtValidator::discover_lazily(issuer, resource).await?;
        Ok(Self::new(resource, issuer, validator))
    }

    /// Calling `tool` needs `scope` too, besides those it says itself (`#[tool(scopes = …)]`):
    /// checked wherever the call runs (a nested call and a Code Mode program included); a
    /// direct call without it gets `403 insufficient_scope` naming it, and a listing without
    /// the tool. A tool the served registry lacks is refused by
    /// [`McpServer::with_authorization`](crate::McpServer::with_authorization).
    #[must_use]
    pub fn require_scope(mut self, tool: &str, scope: &str) -> Self {
        self.rules = Arc::new(Arc::unwrap_or_clone(self.rules).require(tool, scope));
        self
    }

    /// The same, for the tools of `registry`; refused when a scope is required of a tool it
    /// lacks, or a required scope is not one a token can carry.
    pub(crate) fn serving(mut self, registry: toolprism::Registry) -> Result<Self, AuthSetupError> {
        {
            let snapshot = registry.snapshot();
            self.rules
                .check_tools(
                    snapshot
                        .definitions()
                        .map(toolprism::tool::AdvertisedTool::name),
                )
                .map_err(|unknown| AuthSetupError(unknown.to_string()))?;
        }
        for (tool, scopes) in self.rules.tools() {
            for scope in scopes {
                if !is_valid_scope(scope) {
                    return Err(AuthSetupError(format!(
                        "the scope required of `{tool}` is not printable ASCII without spaces, `\"` or `\\`"
                    )));
                }
            }
        }
        self.registry = Some(registry);
        Ok(self)
    }

    /// The resource: this endpoint's URL, as clients reach it and tokens name it.
    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    /// The scopes required here beyond those the tools declare.
    pub(crate) fn rules(&self) -> &Arc<ScopeRules> {
        &self.rules
    }

    /// The scopes `caller` lacks to call `tool`: those the tool says and those required here.
    pub(crate) fn missing_scopes(&self, tool: &str, caller: &Caller) -> Vec<String> {
        let declared = self.registry.as_ref().and_then(|registry| {
            let snapshot = registry.snapshot();
            snapshot
                .definition(tool)
                .map(|definition| definition.about().scopes.clone())
        });
        missing_scopes(
            declared.as_deref().unwrap_or_default(),
            tool,
            Some(&self.rules),
            caller,
        )
    }

    /// Every scope a tool needs: those the tools say and those required here.
    fn scopes_supported(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .rules
            .tools()
            .flat_map(|(_, scopes)| scopes.map(str::to_owned))
            .collect();
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
