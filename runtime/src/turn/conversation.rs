//! A conversation with one provider, as the requests that carry it: the messages so far, the
//! tools lowered once, and each request's address, headers and body. Pure data: the host's
//! HTTP client sends them.

use serde_json::{Value, json};

use super::{AssistantTurn, TurnError};
use crate::lower::{LowerError, Provider, ToolOptions, lower_tools};
use crate::outcome::ToolOutcome;
use crate::pipeline::Snapshot;

/// The requests of a conversation with `provider`'s API.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::lower::{Provider, ToolOptions};
/// use toolprism::turn::{Conversation, read_response};
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::builder().tool(Add).build().unwrap();
/// let snapshot = registry.snapshot();
/// let mut conversation = Conversation::new(Provider::Anthropic, "claude-sonnet-4-5")
///     .with_tools(&snapshot, ToolOptions::default())
///     .unwrap();
/// conversation.user("What is 1 + 2?");
/// let request = conversation.request("https://api.anthropic.com", "sk-…", true);
/// assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
/// assert_eq!(request.body["tools"][0]["name"], "add");
/// assert_eq!(request.body["stream"], true);
/// ```
#[derive(Clone, Debug)]
pub struct Conversation {
    provider: Provider,
    model: String,
    system: Option<String>,
    messages: Vec<Value>,
    tools: Vec<Value>,
    container: Option<String>,
    max_tokens: u32,
}

/// One request: where it goes, its headers and its JSON body.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ProviderRequest {
    /// The address, from the base URL the host gave.
    pub url: String,
    /// Headers: the content type and the key as the provider takes it.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Value,
}

impl Conversation {
    /// A conversation with `model` of `provider`, with no tools and no messages yet.
    pub fn new(provider: Provider, model: impl Into<String>) -> Self {
        Self {
            provider,
            model: model.into(),
            system: None,
            messages: Vec::new(),
            tools: Vec::new(),
            container: None,
            max_tokens: 4_096,
        }
    }

    /// The snapshot's tools, lowered for the provider once.
    pub fn with_tools(
        mut self,
        snapshot: &Snapshot,
        options: ToolOptions,
    ) -> Result<Self, LowerError> {
        self.tools = lower_tools(self.provider, snapshot.definitions(), options)?;
        Ok(self)
    }

    /// The system prompt.
    #[must_use]
    pub fn with_system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    /// The most tokens a turn may take (Anthropic requires it; 4,096 by default).
    #[must_use]
    pub fn with_max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Appends the user's message.
    pub fn user(&mut self, text: &str) {
        self.messages.push(match self.provider {
            Provider::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
            _ => json!({"role": "user", "content": text}),
        });
    }

    /// Appends a turn the model took and its calls' outcomes (one per call, in order): what
    /// [`AssistantTurn::next_messages`] builds.
    pub fn push_turn(
        &mut self,
        turn: &AssistantTurn,
        outcomes: &[ToolOutcome],
    ) -> Result<(), TurnError> {
        self.messages.extend(turn.next_messages(outcomes)?);
        if let Some(container) = turn.container() {
            self.container = Some(container.to_owned());
        }
        Ok(())
    }

    /// The messages (or input items, or contents) so far.
    pub fn messages(&self) -> &[Value] {
        &self.messages
    }

    /// The next request to `base_url` (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com`, `https://generativelanguage.googleapis.com`), streamed or
    /// not, authorized with `key`.
    pub fn request(&self, base_url: &str, key: &str, stream: bool) -> ProviderRequest {
        let base = base_url.trim_end_matches('/');
        let mut headers = vec![("content-type", "application/json".to_owned())];
        let (url, body) = match self.provider {
            Provider::OpenAiChat => {
                headers.push(("authorization", format!("Bearer {key}")));
                let mut messages = Vec::new();
                if let Some(system) = &self.system {
                    messages.push(json!({"role": "system", "content": system}));
                }
                messages.extend(self.messages.iter().cloned());
                let mut body = json!({"model": self.model, "messages": messages, "stream": stream});
                if !self.tools.is_empty() {
                    body["tools"] = Value::Array(self.tools.clone());
                }
                (format!("{base}/chat/completions"), body)
            }
            Provider::OpenAiResponses => {
                headers.push(("authorization", format!("Bearer {key}")));
                // Stateless: reasoning comes back encrypted, to be echoed with the turn.
                let mut body = json!({
                    "model": self.model,
                    "input": self.messages,
                    "stream": stream,
                    "store": false,
                    "include": ["reasoning.encrypted_content"],
                });
                if !self.tools.is_empty() {
                    body["tools"] = Value::Array(self.tools.clone());
                }
                if let Some(system) = &self.system {
                    body["instructions"] = json!(system);
                }
                (format!("{base}/responses"), body)
            }
            Provider::Anthropic => {
                headers.push(("x-api-key", key.to_owned()));
                headers.push(("anthropic-version", "2023-06-01".to_owned()));
                let mut body = json!({
                    "model": self.model,
                    "max_tokens": self.max_tokens,
                    "messages": self.messages,
                    "stream": stream,
                });
                if !self.tools.is_empty() {
                    body["tools"] = Value::Array(self.tools.clone());
                }
                if let Some(system) = &self.system {
                    body["system"] = json!(system);
                }
                if let Some(container) = &self.container {
                    body["container"] = json!(container);
                }
                (format!("{base}/v1/messages"), body)
            }
            Provider::Gemini => {
                headers.push(("x-goog-api-key", key.to_owned()));
                let mut body = json!({"contents": self.messages});
                if !self.tools.is_empty() {
                    body["tools"] = Value::Array(self.tools.clone());
                }
                if let Some(system) = &self.system {
                    body["systemInstruction"] = json!({"parts": [{"text": system}]});
                }
                let method = if stream {
                    "streamGenerateContent?alt=sse"
                } else {
                    "generateContent"
                };
                (
                    format!("{base}/v1beta/models/{}:{method}", self.model),
                    body,
                )
            }
        };
        ProviderRequest { url, headers, body }
    }
}
