//! Any HTTP API with an OpenAPI 3.0 or 3.1 document as toolprism tools.
//!
//! Each operation becomes a registry tool: its parameters and JSON body merged into one
//! argument object the runtime validates before any request is sent, its 2xx response schema
//! the output schema every response is validated against (an API that contradicts its
//! document is caught, not passed on), and hints derived from its method. Error statuses are
//! failures carrying the status and the API's body. An operation that cannot be represented
//! is skipped with its reason, never half-served.
//!
//! ```no_run
//! use toolprism::Registry;
//! use toolprism_openapi::{Credentials, Document, OpenApi, Secret};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let document = Document::from_file("petstore.yaml".as_ref())?;
//! let generated = OpenApi::new(document)
//!     .base_url("http://127.0.0.1:8000")
//!     .credentials(Credentials::new().with("bearerAuth", Secret::from_env("PETSTORE_TOKEN").unwrap()))
//!     .build()?;
//! for skipped in &generated.skipped {
//!     eprintln!("{} {} skipped: {}", skipped.method, skipped.path, skipped.reason);
//! }
//! let registry = Registry::builder().tools(generated.tools).build()?;
//! # let _ = registry;
//! # Ok(())
//! # }
//! ```

mod auth;
mod call;
pub mod document;
mod encode;
mod operation;
mod routes;
mod schema;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolprism::schema::{check_input_schema, check_output_schema};
use toolprism::tool::Hints;
use toolprism::{ToolContext, ToolDef};

pub use auth::{Credentials, MAX_SECURITY_ALTERNATIVES, Secret};
pub use call::{MAX_ERROR_BODY_BYTES, MAX_REDIRECTS};
pub use document::{Document, LoadError, Version};
pub use operation::{MAX_DESCRIPTION_BYTES, MAX_PARAMETERS};
pub use routes::{Method, RouteMap};
pub use schema::{MAX_DEFS, MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES};

/// How long a request may take, unless [`OpenApi::timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest response body read, unless [`OpenApi::max_response_bytes`] says otherwise.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 8 << 20;
/// The most operations one document may hold.
pub const MAX_OPERATIONS: usize = 20_000;
/// About the most the schemas of one document's tools may hold together (their text, and 64
/// bytes for each schema object): past it, further operations are skipped, since each tool
/// carries its own copy of the components it uses. GitHub's whole document needs about 18 MiB.
pub const MAX_TOTAL_SCHEMA_BYTES: usize = 128 << 20;
/// The longest a tool name may be (what every provider accepts).
const MAX_TOOL_NAME: usize = 64;

/// Turns a document's operations into tools: where to send requests, with which credentials,
/// which operations, and what each may claim.
#[derive(Debug)]
pub struct OpenApi {
    document: Document,
    base_url: Option<String>,
    routes: Vec<RouteMap>,
    credentials: Credentials,
    timeout: Duration,
    max_response_bytes: usize,
    hints: BTreeMap<String, Hints>,
}

/// Why no tools could be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No base URL was given and the document names no absolute server URL, or the one
    /// given is not an http(s) URL.
    #[error("{0}")]
    BaseUrl(String),
    /// The document holds more than [`MAX_OPERATIONS`] operations.
    #[error("the document holds more than {MAX_OPERATIONS} operations")]
    TooManyOperations,
}

/// An operation that became a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Operation {
    /// The tool's name.
    pub tool: String,
    pub method: Method,
    /// The path as the document writes it (`/items/{id}`).
    pub path: String,
    /// The document's `operationId`, when it gives one.
    pub operation_id: Option<String>,
    pub tags: Vec<String>,
}

/// An operation that did not become a tool, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    pub method: Method,
    pub path: String,
    pub operation_id: Option<String>,
    pub reason: String,
    /// Left out by a route map rather than for what it is.
    pub excluded: bool,
}

/// The tools made from a document, what each stands for, and what was skipped.
#[derive(Debug)]
#[non_exhaustive]
pub struct Generated {
    /// Registry tools, one per operation in [`operations`](Self::operations), in order.
    pub tools: Vec<ToolDef>,
    pub operations: Vec<Operation>,
    pub skipped: Vec<Skipped>,
}

impl OpenApi {
    /// Every operation of `document`, sent to its first server (relative to where the document
    /// was read from, when its URL is relative), without credentials.
    pub fn new(document: Document) -> Self {
        Self {
            document,
            base_url: None,
            routes: Vec::new(),
            credentials: Credentials::new(),
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            hints: BTreeMap::new(),
        }
    }

    /// Sends requests to this URL (`http(s)://host[:port][/prefix]`) rather than the
    /// document's first server.
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Adds a route map, after those added before (the first that matches decides).
    #[must_use]
    pub fn route(mut self, map: RouteMap) -> Self {
        self.routes.push(map);
        self
    }

    /// The secrets for the document's security schemes.
    #[must_use]
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// How long one request may take, connection included.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest response body read; a larger one is the call's failure.
    #[must_use]
    pub fn max_response_bytes(mut self, max: usize) -> Self {
        self.max_response_bytes = max;
        self
    }

    /// Replaces the hints derived from the method for one operation, named by its
    /// `operationId` or as `METHOD /path` (`DELETE /items/{id}`).
    #[must_use]
    pub fn hints(mut self, operation: impl Into<String>, hints: Hints) -> Self {
        self.hints.insert(operation.into(), hints);
        self
    }

    /// The tools, one per operation the route maps include and the runtime can represent.
    pub fn build(self) -> Result<Generated, BuildError> {
        let base = self.resolved_base()?;
        let connection = call::Connection::new(
            &base,
            self.credentials.clone(),
            self.timeout,
            self.max_response_bytes,
        )
        .map_err(BuildError::BaseUrl)?;
        let connection = Arc::new(connection);
        let mut generated = Generated {
            tools: Vec::new(),
            operations: Vec::new(),
            skipped: Vec::new(),
        };
        let mut names = Names::default();
        let mut footprint = 0;
        let document = &self.document;
        let Some(Value::Object(paths)) = document.root.get("paths") else {
            return Ok(generated);
        };
        let mut count = 0;
        for (path, item) in paths {
            let item = match document.resolve(item) {
                Ok(item) => item,
                Err(reason) => {
                    generated.skipped.push(Skipped {
                        method: Method::Get,
                        path: path.clone(),
                        operation_id: None,
                        reason: format!("its path item: {reason}"),
                        excluded: false,
                    });
                    continue;
                }
            };
            for method in Method::ALL {
                let Some(operation) = item.get(method.key()) else {
                    continue;
                };
                count += 1;
                if count > MAX_OPERATIONS {
                    return Err(BuildError::TooManyOperations);
                }
                self.add(
                    &mut generated,
                    (&mut names, &mut footprint),
                    &connection,
                    method,
                    path,
                    item,
                    operation,
                );
            }
        }
        Ok(generated)
    }

    /// The base URL given, or the document's first server (its variables at their defaults),
    /// taken relative to the URL the document was read from when it is relative.
    fn resolved_base(&self) -> Result<String, BuildError> {
        if let Some(base) = &self.base_url {
            return Ok(base.clone());
        }
        let server = self.document.server_url().unwrap_or("");
        let expanded = expand_server_variables(&self.document, server);
        if expanded.starts_with("http://") || expanded.starts_with("https://") {
            return Ok(expanded);
        }
        if let Some(source) = &self.document.source
            && let Ok(joined) = reqwest::Url::parse(source)
                .and_then(|source| source.join(if expanded.is_empty() { "/" } else { &expanded }))
        {
            return Ok(joined.to_string());
        }
        Err(BuildError::BaseUrl(format!(
            "the document names no absolute server URL ({}): give a base URL",
            document::quoted(server)
        )))
    }

    /// The hints given for the operation (by `operationId`, then `METHOD /path`), else its
    /// method's.
    fn hints_of(&self, operation_id: Option<&str>, method: Method, path: &str) -> Hints {
        operation_id
            .and_then(|id| self.hints.get(id))
            .or_else(|| self.hints.get(&format!("{method} {path}")))
            .copied()
            .unwrap_or_else(|| method_hints(method))
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        generated: &mut Generated,
        (names, footprint): (&mut Names, &mut usize),
        connection: &Arc<call::Connection>,
        method: Method,
        path: &str,
        item: &Value,
        operation: &Value,
    ) {
        let operation_id = operation
            .get("operationId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let tags = tags_of(operation);
        let skip = |reason: String, excluded: bool| Skipped {
            method,
            path: path.to_owned(),
            operation_id: operation_id.clone(),
            reason,
            excluded,
        };
        let renamed = match routes::route(&self.routes, method, path, &tags) {
            routes::Route::Exclude(at) => {
                generated
                    .skipped
                    .push(skip(format!("excluded by route map {at}"), true));
                return;
            }
            routes::Route::Include(renamed) => renamed,
        };
        let planned = checked_plan(&self.document, method, path, item, operation)
            .and_then(|plan| within_total(*footprint, plan));
        let plan = match planned {
            Ok(plan) => plan,
            Err(reason) => {
                generated.skipped.push(skip(reason, false));
                return;
            }
        };
        let wanted = renamed
            .or_else(|| operation_id.clone())
            .unwrap_or_else(|| format!("{}_{path}", method.key()));
        let plan_footprint = plan.footprint;
        let name = names.unique(&wanted);
        let hints = self.hints_of(operation_id.as_deref(), method, path);
        let def = match tool(
            Arc::clone(connection),
            name.clone(),
            plan,
            method,
            path,
            hints,
        ) {
            Ok(def) => def,
            Err(reason) => {
                generated.skipped.push(skip(reason, false));
                return;
            }
        };
        names.take(&name);
        *footprint += plan_footprint;
        generated.tools.push(def);
        generated.operations.push(Operation {
            tool: name,
            method,
            path: path.to_owned(),
            operation_id,
            tags,
        });
    }
}

/// An operation's tags (the first 64).
fn tags_of(operation: &Value) -> Vec<String> {
    operation
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .take(64)
        .map(str::to_owned)
        .collect()
}

/// The operation's plan, its schemas passed through the runtime's own checks.
fn checked_plan(
    document: &Document,
    method: Method,
    path: &str,
    item: &Value,
    operation: &Value,
) -> Result<operation::Plan, String> {
    let plan = operation::plan(document, method, path, item, operation)?;
    check_input_schema(&plan.input_schema).map_err(|error| format!("its input schema: {error}"))?;
    check_output_schema(&plan.output_schema)
        .map_err(|error| format!("its output schema: {error}"))?;
    Ok(plan)
}

/// The plan, when its schemas fit beside those of the tools made before it (`footprint`)
/// within [`MAX_TOTAL_SCHEMA_BYTES`].
fn within_total(footprint: usize, plan: operation::Plan) -> Result<operation::Plan, String> {
    if footprint + plan.footprint > MAX_TOTAL_SCHEMA_BYTES {
        return Err(format!(
            "the tools before it hold schemas of about {} MiB, and its own would pass the {} MiB all may hold",
            footprint >> 20,
            MAX_TOTAL_SCHEMA_BYTES >> 20
        ));
    }
    Ok(plan)
}

/// The registry tool calling the operation through `connection`.
fn tool(
    connection: Arc<call::Connection>,
    name: String,
    plan: operation::Plan,
    method: Method,
    path: &str,
    hints: Hints,
) -> Result<ToolDef, String> {
    let endpoint = Arc::new(call::Endpoint {
        method,
        path: path.to_owned(),
        arguments: plan.arguments,
        body_media: plan.body_media,
        body_required: plan.body_required,
        security: plan.security,
    });
    let def = ToolDef::builder(name)
        .description(plan.description)
        .input_schema(plan.input_schema)
        .output_schema(plan.output_schema)
        .handler(move |arguments: Value, _cx: ToolContext| {
            let (connection, endpoint) = (Arc::clone(&connection), Arc::clone(&endpoint));
            async move { connection.call(&endpoint, arguments).await }
        })
        .build();
    let mut about = def.about().clone();
    about.hints = hints;
    about.title = plan.title;
    about.check()?;
    Ok(def.with_about(about))
}

/// What HTTP says a method does: GET, HEAD, OPTIONS and TRACE change nothing; PUT and DELETE
/// are idempotent, and DELETE destroys; POST and PATCH are neither. Every one reaches a
/// service outside the host.
pub fn method_hints(method: Method) -> Hints {
    let mut hints = Hints::default();
    let (read_only, idempotent, destructive) = match method {
        Method::Get | Method::Head | Method::Options | Method::Trace => (true, true, false),
        Method::Put => (false, true, false),
        Method::Delete => (false, true, true),
        Method::Post | Method::Patch => (false, false, false),
    };
    hints.read_only = Some(read_only);
    hints.idempotent = Some(idempotent);
    hints.destructive = Some(destructive);
    hints.open_world = Some(true);
    hints
}

/// The tool names given so far, and the next number to try after each name.
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Names {
    /// `wanted` as a tool name every provider accepts (`[A-Za-z0-9_-]`, 1 to 64), runs of
    /// other characters as one `_`, unique among those taken (`_2`, `_3`, … when not).
    fn unique(&mut self, wanted: &str) -> String {
        let mut base = String::new();
        for ch in wanted.chars() {
            if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
                base.push(ch);
            } else if !base.ends_with('_') {
                base.push('_');
            }
        }
        let trimmed = base.trim_matches('_');
        let mut base: String = if trimmed.is_empty() {
            "operation"
        } else {
            trimmed
        }
        .chars()
        .take(MAX_TOOL_NAME)
        .collect();
        if !self.taken.contains(&base) {
            return base;
        }
        base.truncate(MAX_TOOL_NAME - 6);
        // Counting on from where the last search for this name stopped: no rescans.
        let next = self.next.entry(base.clone()).or_insert(2);
        loop {
            let name = format!("{base}_{next}");
            *next += 1;
            if !self.taken.contains(&name) {
                return name;
            }
        }
    }

    fn take(&mut self, name: &str) {
        self.taken.insert(name.to_owned());
    }
}

/// A server URL with its `{variables}` replaced by their defaults.
fn expand_server_variables(document: &Document, url: &str) -> String {
    let mut expanded = url.to_owned();
    if let Some(Value::Object(variables)) = document.root.pointer("/servers/0/variables") {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                expanded = expanded.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    expanded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_and_unique() {
        let mut names = Names::default();
        let mut name = |wanted: &str| {
            let name = names.unique(wanted);
            names.take(&name);
            name
        };
        assert_eq!(name("get_/items/{id}"), "get_items_id");
        assert_eq!(name("get items id"), "get_items_id_2");
        assert_eq!(name("///"), "operation");
        assert_eq!(name(&"x".repeat(100)).len(), 64);
        assert_eq!(name(&"x".repeat(100)), format!("{}_2", "x".repeat(58)));
        assert_eq!(name("get_items_id_3"), "get_items_id_3");
        assert_eq!(name("get_items_id"), "get_items_id_4");
    }
}
