//! Asking for input while a call runs: a form for the person behind the client (elicitation),
//! a completion from the client's model (sampling), or the client's roots — MCP's three kinds.
//! A body asks through its [`ToolContext`](crate::ToolContext); whoever the host gave the
//! dispatch answers ([`Answerer`]): an MCP client (a live request on 2025-11-25, an
//! input-required result on 2026-07-28), the command line on its terminal, or the host's own.
//! Without one, asking fails with `INPUT_UNAVAILABLE`.
//!
//! Every answer is checked against what was asked before the body sees it: a form's content
//! against the form's schema, a completion and the roots against their shapes.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::{Value, json};
//! use toolprism::ask::{Answerer, AskError, Elicited, InputKind, InputRequest};
//! use toolprism::pipeline::DispatchOptions;
//! use toolprism::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Confirm { sure: bool }
//!
//! /// Deletes a file, once the user confirms.
//! #[tool]
//! async fn delete(#[arg] path: String, cx: &ToolContext) -> Result<String, ToolError> {
//!     match cx.elicit::<Confirm>("confirm", &format!("Delete {path}?")).await? {
//!         Elicited::Accepted(Confirm { sure: true }) => Ok(format!("deleted {path}")),
//!         _ => Ok(format!("kept {path}")),
//!     }
//! }
//!
//! /// Answers every form by accepting it.
//! struct Yes;
//!
//! impl Answerer for Yes {
//!     fn can_answer(&self, kind: InputKind) -> bool { kind == InputKind::Elicitation }
//!     fn answer<'a>(&'a self, _key: &'a str, _request: &'a InputRequest) -> toolprism::BoxFuture<'a, Result<Value, AskError>> {
//!         Box::pin(async { Ok(json!({"action": "accept", "content": {"sure": true}})) })
//!     }
//! }
//!
//! let registry = Registry::builder().tool(Delete).build().unwrap();
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let call = || ToolCall::new("c1", "delete", json!({"path": "a.txt"}));
//! let answered = registry.snapshot().dispatch_with(call(), Surface::Direct, DispatchOptions::default().answerer(Yes)).await;
//! assert_eq!(answered.value().unwrap(), &json!("deleted a.txt"));
//! let alone = registry.dispatch(call(), Surface::Direct).await;
//! assert_eq!(alone.error().unwrap().code(), Some("INPUT_UNAVAILABLE"));
//! # });
//! ```

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::BoxFuture;
use crate::depth::check_depth;
use crate::error::{FailureKind, ToolError};
use crate::schema::{
    InlineError, SchemaRole, compile, describe_violations, inline_refs, input_schema_for,
};

/// The longest key an ask may have, in bytes.
pub const MAX_KEY_BYTES: usize = 64;
/// The most roots an answer may list.
pub const MAX_ROOTS: usize = 1_000;

/// What kind of input is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InputKind {
    /// A form the person behind the client fills in (MCP `elicitation/create`).
    Elicitation,
    /// A completion from the client's model (MCP `sampling/createMessage`).
    Sampling,
    /// The client's roots: the directories or URIs it works in (MCP `roots/list`).
    Roots,
}

impl InputKind {
    /// The MCP method that asks for it.
    pub const fn method(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation/create",
            Self::Sampling => "sampling/createMessage",
            Self::Roots => "roots/list",
        }
    }

    /// The kind an MCP method asks for.
    pub fn from_method(method: &str) -> Option<Self> {
        [Self::Elicitation, Self::Sampling, Self::Roots]
            .into_iter()
            .find(|kind| kind.method() == method)
    }
}

/// One request for input: its kind and its parameters, as MCP words them
/// (`{"message", "requestedSchema"}`, `{"messages", "maxTokens", …}`, `{}`).
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequest {
    kind: InputKind,
    params: Value,
}

impl InputRequest {
    /// A form: a message, and the JSON Schema of its answer (an object of flat properties:
    /// strings, numbers, integers, booleans, enums of strings, arrays of such enums).
    pub fn elicit(message: impl Into<String>, schema: Value) -> Self {
        Self {
            kind: InputKind::Elicitation,
            params: json!({"message": message.into(), "requestedSchema": schema}),
        }
    }

    /// A completion from the client's model.
    pub fn sample(request: &SamplingRequest) -> Self {
        Self {
            kind: InputKind::Sampling,
            params: request.to_params(),
        }
    }

    /// The client's roots.
    pub fn roots() -> Self {
        Self {
            kind: InputKind::Roots,
            params: json!({}),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// Its parameters, as MCP words them.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// It as an MCP input request: `{"method", "params"}`.
    pub fn to_json(&self) -> Value {
        json!({"method": self.kind.method(), "params": self.params})
    }

    /// An MCP input request as it came (from a remote server): `{"method", "params"}` with one
    /// of the three methods and parameters that are an object (or none, for roots). The
    /// parameters are kept as sent: whoever answers reads them, and the server checks the
    /// answer.
    pub fn from_json(request: &Value) -> Result<Self, String> {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .ok_or("it names no `method`")?;
        let kind = InputKind::from_method(method).ok_or_else(|| {
            format!(
                "`{}` is none of elicitation/create, sampling/createMessage, roots/list",
                crate::text::printable(method, 80)
            )
        })?;
        let params = match request.get("params") {
            Some(Value::Object(params)) => Value::Object(params.clone()),
            None | Some(Value::Null) if kind == InputKind::Roots => json!({}),
            _ => return Err(format!("the parameters of `{method}` are not an object")),
        };
        Ok(Self { kind, params })
    }
}

/// A completion to ask the client's model for.
///
/// ```
/// use toolprism::ask::SamplingRequest;
///
/// let request = SamplingRequest::user("What is the capital of France?").max_tokens(100);
/// assert_eq!(request.to_params()["messages"][0]["content"]["text"], "What is the capital of France?");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingRequest {
    messages: Vec<(Role, String)>,
    system_prompt: Option<String>,
    max_tokens: u32,
}

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

impl SamplingRequest {
    /// A completion of one user message, at most 1,000 tokens.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            messages: vec![(Role::User, text.into())],
            system_prompt: None,
            max_tokens: 1_000,
        }
    }

    /// With another message after the others.
    #[must_use]
    pub fn then(mut self, role: Role, text: impl Into<String>) -> Self {
        self.messages.push((role, text.into()));
        self
    }

    /// With a system prompt.
    #[must_use]
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system_prompt = Some(text.into());
        self
    }

    /// At most this many tokens.
    #[must_use]
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// The parameters of MCP's `sampling/createMessage`.
    pub fn to_params(&self) -> Value {
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|(role, text)| json!({"role": role, "content": {"type": "text", "text": text}}))
            .collect();
        let mut params = json!({"messages": messages, "maxTokens": self.max_tokens});
        if let Some(system) = &self.system_prompt {
            params["systemPrompt"] = json!(system);
        }
        params
    }
}

/// What a form came back as: MCP's three actions, all of them (a body matches them without a
/// wildcard).
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited<T> {
    /// Filled in and sent: the content, checked against the form's schema.
    Accepted(T),
    /// Refused.
    Declined,
    /// Dismissed without a choice.
    Cancelled,
}

/// A completion the client's model made.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// The model's text, when the completion is text.
    pub text: Option<String>,
    /// The completion's content, as MCP words it.
    pub content: Value,
    /// The model that made it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, …), if said.
    pub stop_reason: Option<String>,
}

/// One of the client's roots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file:///home/ada/project`).
    pub uri: String,
    /// Its name, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Why an answerer gave no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskError {
    /// It cannot answer this kind here (a client that did not declare it, a host without a
    /// terminal): the call fails with `INPUT_UNAVAILABLE`.
    Unavailable(String),
    /// The answer comes on the call's next round (MCP 2026-07-28's input-required result):
    /// the call ends now with `INPUT_REQUIRED`, and runs again with the answer.
    Suspended,
    /// Asking failed (the client answered with an error, the connection closed).
    Failed(String),
}

/// Whoever answers a call's requests for input. The host attaches one to a dispatch
/// ([`DispatchOptions::answerer`](crate::pipeline::DispatchOptions::answerer)); the calls
/// that dispatch makes (a program's) ask it too.
pub trait Answerer: Send + Sync + 'static {
    /// Whether it can answer this kind at all; a body checks before it asks
    /// ([`ToolContext::can_ask`](crate::ToolContext::can_ask)).
    fn can_answer(&self, kind: InputKind) -> bool;

    /// The answer to `request`, as MCP words it (or [`AskError::Unavailable`] for a kind it
    /// cannot answer): an `ElicitResult`
    /// (`{"action", "content"?}`), a `CreateMessageResult` (`{"role", "content", "model",
    /// "stopReason"?}`) or a `ListRootsResult` (`{"roots"}`). `key` names the request within
    /// the call; a body asks each key once per run.
    fn answer<'a>(
        &'a self,
        key: &'a str,
        request: &'a InputRequest,
    ) -> BoxFuture<'a, Result<Value, AskError>>;
}

/// The answerer a dispatch carries, as an extension.
pub(crate) struct AnswererSlot(pub(crate) Arc<dyn Answerer>);

/// A failure of asking, with its kind's code.
fn failure(kind: FailureKind, message: String) -> ToolError {
    ToolError::new(message)
        .with_code(kind.code())
        .with_name(kind.name())
}

fn invalid_answer(key: &str, why: &str) -> ToolError {
    failure(
        FailureKind::InvalidAnswer,
        format!("The answer to `{key}` is not what was asked for: {why}"),
    )
}

/// Whether a key names a request: 1 to 64 printable ASCII bytes.
fn valid_key(key: &str) -> bool {
    (1..=MAX_KEY_BYTES).contains(&key.len()) && key.bytes().all(|byte| byte.is_ascii_graphic())
}

/// Asks `answerer` (if any) for `request`; the answer's JSON, within the depth limit.
pub(crate) async fn ask(
    answerer: Option<Arc<AnswererSlot>>,
    key: &str,
    request: &InputRequest,
) -> Result<Value, ToolError> {
    if !valid_key(key) {
        return Err(ToolError::new(format!(
            "An ask's key must be 1 to {MAX_KEY_BYTES} printable ASCII characters: `{}`",
            crate::text::printable(key, 80)
        )));
    }
    let Some(answerer) = answerer else {
        return Err(failure(
            FailureKind::InputUnavailable,
            format!(
                "This call needs input (`{key}`, {}) and nobody can answer it here.",
                request.kind.method()
            ),
        ));
    };
    match answerer.0.answer(key, request).await {
        Ok(answer) => {
            check_depth(&answer)
                .map_err(|error| invalid_answer(key, &format!("it nests {error}")))?;
            Ok(answer)
        }
        Err(AskError::Unavailable(why)) => Err(failure(FailureKind::InputUnavailable, why)),
        Err(AskError::Suspended) => Err(failure(
            FailureKind::InputRequired,
            format!("This call waits for input (`{key}`); it runs again once it is given."),
        )),
        Err(AskError::Failed(why)) => {
            Err(ToolError::new(format!("Asking for `{key}` failed: {why}")))
        }
    }
}

/// The form schema for `T`: an object of flat properties, references inlined, an optional
/// property's `null` left out (a form leaves it out instead).
pub(crate) fn form_schema_for<T: JsonSchema>() -> Result<Value, String> {
    let schema = input_schema_for::<T>();
    let mut inlined = match inline_refs(&schema, false, 10_000) {
        Ok(inlined) => inlined,
        Err(InlineError::Recursive { reference }) => {
            return Err(format!(
                "its type refers to itself (`{reference}`), and a form is flat"
            ));
        }
        Err(other) => return Err(other.to_string()),
    };
    if let Value::Object(root) = &mut inlined {
        // A form's schema is MCP's restricted one: what else the type's schema says
        // (`$schema`, `$defs`) has no place there.
        root.retain(|key, _| {
            matches!(
                key.as_str(),
                "type" | "title" | "description" | "properties" | "required"
            )
        });
        if let Some(Value::Object(properties)) = root.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                drop_null(property);
                if !is_flat(property) {
                    return Err(format!(
                        "its property `{name}` is not a string, number, boolean or enum"
                    ));
                }
                keep_form_keywords(property);
            }
        }
    }
    Ok(inlined)
}

/// Keeps of a property what MCP's form schemas carry for its type. A number's `format`
/// (schemars' `uint8`, `int32`) goes: its range is in `minimum` and `maximum`, which stay.
fn keep_form_keywords(property: &mut Value) {
    let Value::Object(map) = property else { return };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    map.retain(|key, value| match key.as_str() {
        "type" | "title" | "description" | "default" => true,
        "minimum" | "maximum" => matches!(kind.as_str(), "number" | "integer"),
        "minLength" | "maxLength" => kind == "string",
        // A Rust enum's choices may come without a `type` (a `oneOf` of documented consts).
        "enum" | "enumNames" | "oneOf" => kind == "string" || kind.is_empty(),
        "format" => {
            kind == "string"
                && matches!(value.as_str(), Some("email" | "uri" | "date" | "date-time"))
        }
        "minItems" | "maxItems" | "items" => kind == "array",
        _ => false,
    });
}

/// `["T", "null"]` as `T`, and a `null` branch of `anyOf` left out.
fn drop_null(property: &mut Value) {
    let Value::Object(map) = property else { return };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|kind| kind != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        let kept: Vec<Value> = branches
            .iter()
            .filter(|branch| branch.get("type") != Some(&json!("null")))
            .cloned()
            .collect();
        if kept.len() == 1 {
            map.remove("anyOf");
            if let Value::Object(only) = &kept[0] {
                for (key, value) in only {
                    map.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
}

/// Whether a property is one a form can hold.
fn is_flat(property: &Value) -> bool {
    let kind = property.get("type").and_then(Value::as_str);
    match kind {
        Some("string" | "number" | "integer" | "boolean") => true,
        Some("array") => property
            .get("items")
            .is_some_and(|items| items.get("enum").is_some() || items.get("anyOf").is_some()),
        _ => property.get("enum").is_some() || property.get("oneOf").is_some(),
    }
}

/// A form's answer: its action, and for `accept` its content checked against `schema`.
pub(crate) fn read_elicited(
    key: &str,
    answer: &Value,
    schema: &Value,
) -> Result<Elicited<Value>, ToolError> {
    match answer.get("action").and_then(Value::as_str) {
        Some("decline") => Ok(Elicited::Declined),
        Some("cancel") => Ok(Elicited::Cancelled),
        Some("accept") => {
            let content = answer
                .get("content")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            let compiled = compile(schema, SchemaRole::Input).map_err(|error| {
                ToolError::new(format!(
                    "The form asked as `{key}` has a schema toolprism cannot check: {error}"
                ))
            })?;
            if !compiled.validator.is_valid(&content) {
                return Err(invalid_answer(
                    key,
                    &describe_violations(&compiled.validator, &content),
                ));
            }
            Ok(Elicited::Accepted(content))
        }
        _ => Err(invalid_answer(
            key,
            "it has no `action` of accept, decline or cancel",
        )),
    }
}

/// A completion's answer.
pub(crate) fn read_sampled(key: &str, answer: &Value) -> Result<Sampled, ToolError> {
    let content = answer
        .get("content")
        .cloned()
        .ok_or_else(|| invalid_answer(key, "it has no `content`"))?;
    let model = answer
        .get("model")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_answer(key, "it names no `model`"))?
        .to_owned();
    let text_of = |block: &Value| {
        (block.get("type") == Some(&json!("text")))
            .then(|| block.get("text").and_then(Value::as_str))
            .flatten()
            .map(str::to_owned)
    };
    let text = match &content {
        Value::Array(blocks) => {
            let texts: Vec<String> = blocks.iter().filter_map(text_of).collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        block => text_of(block),
    };
    Ok(Sampled {
        text,
        content,
        model,
        stop_reason: answer
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// A roots answer.
pub(crate) fn read_roots(key: &str, answer: &Value) -> Result<Vec<Root>, ToolError> {
    let Some(roots) = answer.get("roots").and_then(Value::as_array) else {
        return Err(invalid_answer(key, "it has no `roots` list"));
    };
    if roots.len() > MAX_ROOTS {
        return Err(invalid_answer(
            key,
            &format!("it lists more than {MAX_ROOTS} roots"),
        ));
    }
    roots
        .iter()
        .map(|root| {
            Root::deserialize(root).map_err(|error| {
                invalid_answer(key, &format!("a root is not `{{uri, name?}}`: {error}"))
            })
        })
        .collect()
}

/// A form's accepted content, as `T`.
pub(crate) fn typed<T: DeserializeOwned>(
    key: &str,
    elicited: Elicited<Value>,
) -> Result<Elicited<T>, ToolError> {
    Ok(match elicited {
        Elicited::Accepted(content) => Elicited::Accepted(
            T::deserialize(&content).map_err(|error| invalid_answer(key, &error.to_string()))?,
        ),
        Elicited::Declined => Elicited::Declined,
        Elicited::Cancelled => Elicited::Cancelled,
    })
}
