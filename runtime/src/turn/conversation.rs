//! A conversation with one provider, as the requests that carry it: the messages so far, the
//! tools lowered once, and each request's address, headers and body. Pure data: the host's
//! HTTP client sends them.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::{AssistantTurn, TurnError};
use crate::lower::{
    LowerError, Provider, ToolChoice, ToolChoiceError, ToolOptions, lower_tool_choice, lower_tools,
};
use crate::outcome::ToolOutcome;
use crate::pipeline::Snapshot;
use crate::present::ContentBlock;
use crate::tool::AdvertisedTool;

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
    /// The tools as registered, and how they are lowered.
    definitions: Vec<AdvertisedTool>,
    options: ToolOptions,
    /// Deferred tools a tool search has found: sent from then on where a provider has no
    /// deferral of its own.
    found: HashSet<String>,
    tool_choice: Option<Value>,
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
            definitions: Vec::new(),
            options: ToolOptions::default(),
            found: HashSet::new(),
            tool_choice: None,
            container: None,
            max_tokens: 4_096,
        }
    }

    /// The snapshot's tools. Anthropic and OpenAI Responses get every tool, a deferred one
    /// marked `defer_loading`; OpenAI Chat and Gemini, which cannot defer, get a deferred tool
    /// once a tool search found it (a [`ContentBlock::ToolReference`] in a result). Refused if a
    /// tool cannot be lowered for the provider.
    pub fn with_tools(
        mut self,
        snapshot: &Snapshot,
        options: ToolOptions,
    ) -> Result<Self, LowerError> {
        self.definitions = snapshot.definitions().cloned().collect();
        self.options = options;
        lower_tools(self.provider, &self.definitions, options)?;
        Ok(self)
    }

    /// Which tools the model may or must call, from the next request on; refused where the
    /// provider cannot say it.
    pub fn with_tool_choice(mut self, choice: &ToolChoice) -> Result<Self, ToolChoiceError> {
        self.tool_choice = Some(lower_tool_choice(self.provider, choice)?);
        Ok(self)
    }

    /// The provider it is held with.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The tools the next request offers, lowered.
    pub fn tools(&self) -> Vec<Value> {
        let defers = matches!(
            self.provider,
            Provider::Anthropic | Provider::OpenAiResponses
        );
        let offered = self.definitions.iter().filter(|tool| {
            defers || !tool.about().defer_loading || self.found.contains(tool.name())
        });
        // Every definition was lowered once already, when the tools were given.
        lower_tools(self.provider, offered, self.options).unwrap_or_default()
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

    /// Continues a conversation from its saved [`messages`](Self::messages) (a host that
    /// stopped while a call waited for a decision, say). Deferred tools a search had found are
    /// offered again once a search finds them again.
    #[must_use]
    pub fn with_messages(mut self, messages: Vec<Value>) -> Self {
        self.messages = messages;
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
        // Only a Responses tool search's output carries definitions.
        let answers_a_search = turn
            .calls()
            .iter()
            .any(|call| call.wire["type"] == "tool_search_call");
        let all = if answers_a_search {
            lower_tools(self.provider, &self.definitions, self.options).unwrap_or_default()
        } else {
            Vec::new()
        };
        self.messages
            .extend(turn.next_messages_with_tools(outcomes, &all)?);
        for outcome in outcomes {
            for block in outcome.content() {
                if let ContentBlock::ToolReference { name } = block {
                    self.found.insert(name.clone());
                }
            }
        }
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
        let (url, mut body) = match self.provider {
            Provider::OpenAiChat => {
                headers.push(("authorization", format!("Bearer {key}")));
                let mut messages = Vec::new();
                if let Some(system) = &self.system {
                    messages.push(json!({"role": "system", "content": system}));
                }
                messages.extend(self.messages.iter().cloned());
                let body = json!({"model": self.model, "messages": messages, "stream": stream});
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
        let tools = self.tools();
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if let Some(choice) = &self.tool_choice {
            let key = if self.provider == Provider::Gemini {
                "toolConfig"
            } else {
                "tool_choice"
            };
            body[key] = choice.clone();
        }
        ProviderRequest { url, headers, body }
    }
}
