//! Who a call runs for, and what they may reach.
//!
//! A host that authenticates its callers (an MCP server behind OAuth) attaches the [`Caller`]
//! to every dispatch ([`DispatchOptions::caller`](crate::pipeline::DispatchOptions::caller)).
//! It travels with the call: nested calls, Code Mode programs and tasks inherit it, and
//! dispatch checks it against the scopes the tool declares (`#[tool(scopes = …)]`) and those
//! the host requires of it ([`ScopeRules`]), whoever made the call. A dispatch with no caller
//! is the host's own (a local command line, a stdio server), and is not checked.
//!
//! What a call retains (a spilled output) belongs to its [`Owner`], and is readable only by the
//! same owner holding the scopes the tool that made it needs
//! ([`Retention::admits`](crate::bound::Retention::admits)).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// Who a call runs for, as the host authenticated them: an access token's subject, client and
/// scopes.
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
    ///
    /// ```
    /// use toolprism::access::Caller;
    ///
    /// let claims = serde_json::json!({"sub": "ada", "azp": "cli", "scope": "files:read shell:run"});
    /// let caller = Caller::from_claims(claims.as_object().unwrap().clone());
    /// assert_eq!(caller.subject.as_deref(), Some("ada"));
    /// assert_eq!(caller.client_id.as_deref(), Some("cli"));
    /// assert!(caller.has_scope("shell:run") && !caller.has_scope("files:write"));
    /// ```
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

    /// The owner of what this caller's calls retain: its subject and client together (two
    /// clients of one user own apart, as two users of one client do).
    pub fn owner(&self) -> Owner {
        let part = |text: &Option<String>| {
            text.as_deref()
                .map_or_else(|| "-".to_owned(), |text| format!("{}:{text}", text.len()))
        };
        Owner(format!(
            "caller/{}/{}",
            part(&self.subject),
            part(&self.client_id)
        ))
    }
}

/// Whose retained things are whose: a key the host gives each dispatch
/// ([`DispatchOptions::owner`](crate::pipeline::DispatchOptions::owner)) — an authenticated
/// caller's ([`Caller::owner`]), or a session's when there is no authentication. Opaque: two
/// owners are the same when their keys are equal.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner(String);

impl Owner {
    /// An owner of the host's own naming (`"session/…"`, say).
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A subject may be an e-mail address: not for every log line.
        write!(f, "Owner({} bytes)", self.0.len())
    }
}

/// The scopes a host requires of some tools beyond those the tools declare, checked in
/// dispatch like theirs ([`DispatchOptions::scope_rules`](crate::pipeline::DispatchOptions::scope_rules)).
///
/// ```
/// use toolprism::access::ScopeRules;
///
/// let rules = ScopeRules::new().require("write", "files:write");
/// assert_eq!(rules.of("write").collect::<Vec<_>>(), ["files:write"]);
/// assert!(rules.check_tools(["read", "write"]).is_ok());
/// let unknown = rules.check_tools(["read"]).unwrap_err();
/// assert_eq!(unknown.to_string(), "a scope is required of `write`, which the registry lacks (its tools: `read`)");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScopeRules {
    by_tool: BTreeMap<String, BTreeSet<String>>,
}

impl ScopeRules {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same rules, and calling `tool` needs `scope` too.
    #[must_use]
    pub fn require(mut self, tool: &str, scope: &str) -> Self {
        self.by_tool
            .entry(tool.to_owned())
            .or_default()
            .insert(scope.to_owned());
        self
    }

    /// The scopes required of `tool` here.
    pub fn of(&self, tool: &str) -> impl Iterator<Item = &str> {
        self.by_tool
            .get(tool)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Every tool a rule names, with its scopes.
    pub fn tools(&self) -> impl Iterator<Item = (&str, impl Iterator<Item = &str>)> {
        self.by_tool
            .iter()
            .map(|(tool, scopes)| (tool.as_str(), scopes.iter().map(String::as_str)))
    }

    /// Refuses rules naming a tool `known` lacks: a mistyped name would protect nothing.
    pub fn check_tools<'a>(
        &self,
        known: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), UnknownRuleTool> {
        let known: BTreeSet<&str> = known.into_iter().collect();
        match self
            .by_tool
            .keys()
            .find(|tool| !known.contains(tool.as_str()))
        {
            None => Ok(()),
            Some(tool) => Err(UnknownRuleTool {
                tool: tool.clone(),
                known: known.into_iter().map(str::to_owned).collect(),
            }),
        }
    }
}

/// A scope rule names a tool the registry lacks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a scope is required of `{tool}`, which the registry lacks (its tools: {})",
    known_list(known)
)]
#[non_exhaustive]
pub struct UnknownRuleTool {
    /// The tool the rule names.
    pub tool: String,
    /// The tools the registry has.
    pub known: Vec<String>,
}

fn known_list(known: &[String]) -> String {
    const SHOWN: usize = 40;
    let mut list: Vec<String> = known
        .iter()
        .take(SHOWN)
        .map(|name| format!("`{}`", crate::text::printable(name, 80)))
        .collect();
    if known.len() > SHOWN {
        list.push(format!("and {} more", known.len() - SHOWN));
    }
    if list.is_empty() {
        return "none".to_owned();
    }
    list.join(", ")
}

/// Whether `scope` is one a token can carry and a `WWW-Authenticate` challenge can name:
/// printable ASCII, without spaces, `"` or `\`.
pub fn is_valid_scope(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\')
}

/// Every scope calling a tool needs: those it declares and those `rules` add, sorted, once
/// each.
pub fn required_scopes(declared: &[String], tool: &str, rules: Option<&ScopeRules>) -> Vec<String> {
    let mut scopes: Vec<String> = declared
        .iter()
        .map(String::as_str)
        .chain(rules.into_iter().flat_map(|rules| rules.of(tool)))
        .map(str::to_owned)
        .collect();
    scopes.sort();
    scopes.dedup();
    scopes
}

/// The scopes `caller` lacks to call a tool that declares `declared`, under `rules`.
pub fn missing_scopes(
    declared: &[String],
    tool: &str,
    rules: Option<&ScopeRules>,
    caller: &Caller,
) -> Vec<String> {
    let mut missing = required_scopes(declared, tool, rules);
    missing.retain(|scope| !caller.has_scope(scope));
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(subject: Option<&str>, client: Option<&str>, scopes: &[&str]) -> Caller {
        let mut claims = Map::new();
        if let Some(subject) = subject {
            claims.insert("sub".into(), subject.into());
        }
        if let Some(client) = client {
            claims.insert("client_id".into(), client.into());
        }
        claims.insert("scope".into(), scopes.join(" ").into());
        Caller::from_claims(claims)
    }

    #[test]
    fn owners_differ_by_subject_and_client_and_cannot_be_forged_by_either() {
        let ada_cli = caller(Some("ada"), Some("cli"), &[]).owner();
        assert_eq!(ada_cli, caller(Some("ada"), Some("cli"), &["x"]).owner());
        assert_ne!(ada_cli, caller(Some("ada"), Some("web"), &[]).owner());
        assert_ne!(ada_cli, caller(Some("bob"), Some("cli"), &[]).owner());
        assert_ne!(ada_cli, caller(None, Some("cli"), &[]).owner());
        // A separator inside a subject cannot make it another's.
        assert_ne!(
            caller(Some("a/1:b"), Some("c"), &[]).owner(),
            caller(Some("a"), Some("b/1:c"), &[]).owner()
        );
        assert!(!format!("{ada_cli:?}").contains("ada"));
    }

    #[test]
    fn the_scopes_missing_are_the_declared_and_the_required_less_the_granted() {
        let rules = ScopeRules::new()
            .require("bash", "audit")
            .require("bash", "shell:run");
        let declared = vec!["shell:run".to_owned()];
        assert_eq!(
            required_scopes(&declared, "bash", Some(&rules)),
            ["audit", "shell:run"]
        );
        let some = caller(Some("ada"), None, &["shell:run"]);
        assert_eq!(
            missing_scopes(&declared, "bash", Some(&rules), &some),
            ["audit"]
        );
        assert!(missing_scopes(&declared, "bash", None, &some).is_empty());
        assert!(missing_scopes(&[], "read", Some(&rules), &some).is_empty());
    }
}
