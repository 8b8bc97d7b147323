//! One turn, end to end: its calls dispatched (at most N at once, results in the calls'
//! order), then what the next request appends — the assistant's turn as the provider wants it
//! echoed, and the results lowered as [`lower`](crate::lower) lowers them.

use futures_util::StreamExt as _;
use serde_json::{Value, json};

use super::{Arguments, AssistantTurn, Caller, TurnError, TurnPart, set_in};
use crate::call::Surface;
use crate::lower::{Provider, lower_content};
use crate::outcome::ToolOutcome;
use crate::pipeline::{DispatchOptions, Snapshot};
use crate::session::{RecordError, SessionLog};

/// How a turn's calls are run.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RunOptions {
    /// Calls running at once (default 8; at least 1).
    pub max_concurrent: usize,
    /// A session log every call and its result go to, cut-off calls included (as the text
    /// they were).
    pub log: Option<SessionLog>,
    /// What every call is dispatched with: the caller it runs for (whose scopes are checked
    /// as for any call), the owner of what it retains, an answerer, a progress sink.
    pub dispatch: DispatchOptions,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            max_concurrent: 8,
            log: None,
            dispatch: DispatchOptions::default(),
        }
    }
}

impl RunOptions {
    /// At most `calls` at once.
    #[must_use]
    pub fn max_concurrent(mut self, calls: usize) -> Self {
        self.max_concurrent = calls;
        self
    }

    /// Logging every call and its result to `log`.
    #[must_use]
    pub fn log(mut self, log: SessionLog) -> Self {
        self.log = Some(log);
        self
    }

    /// Dispatching every call with `options` (a caller, say:
    /// [`DispatchOptions::caller`]).
    #[must_use]
    pub fn dispatch_options(mut self, options: DispatchOptions) -> Self {
        self.dispatch = options;
        self
    }
}

/// Dispatches a turn's calls through `snapshot` as the model's (direct) calls, at most
/// `options.max_concurrent` at once; one outcome per call, in the calls' order. A call that
/// must not run (cut off, over the size limit) is not dispatched: its outcome is the failure
/// the model is told.
///
/// With a log, a failure to write it is returned after every call has ended: the calls ran.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::lower::Provider;
/// use toolprism::turn::{RunOptions, read_response, run_calls};
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::builder().tool(Add).build().unwrap();
/// let body = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
///   "tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":1,\"b\":2}"}},
///                 {"id":"call_2","type":"function","function":{"name":"add","arguments":"{\"a\":1,"}}]}}]}"#;
/// let turn = read_response(Provider::OpenAiChat, body).unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let outcomes = run_calls(&registry.snapshot(), &turn, &RunOptions::default()).await.unwrap();
/// assert_eq!(outcomes[0].value().unwrap(), &serde_json::json!(3));
/// assert!(outcomes[1].error().unwrap().message.contains("not valid JSON"));
/// let next = turn.next_messages(&outcomes).unwrap(); // the assistant message, then one tool message per call
/// assert_eq!(next.len(), 3);
/// assert_eq!(next[2]["tool_call_id"], "call_2");
/// # });
/// ```
pub async fn run_calls(
    snapshot: &Snapshot,
    turn: &AssistantTurn,
    options: &RunOptions,
) -> Result<Vec<ToolOutcome>, RecordError> {
    let runs = turn.calls().iter().map(|call| async move {
        let log = options.log.as_ref();
        // A call the provider's program made goes to a tool programs may call.
        let dispatch = match call.caller() {
            Caller::Program { .. } => options.dispatch.clone().from_program(),
            _ => options.dispatch.clone(),
        };
        match (call.to_call(), log) {
            (Ok(tool_call), None) => Ok(snapshot
                .dispatch_with(tool_call, Surface::Direct, dispatch)
                .await),
            (Ok(tool_call), Some(log)) => {
                log.dispatch_with(snapshot, tool_call, Surface::Direct, dispatch)
                    .await
            }
            (Err(refused), None) => Ok(refused),
            (Err(refused), Some(log)) => {
                let received = match call.arguments() {
                    Arguments::CutOff { received, .. } => received.clone(),
                    _ => String::new(),
                };
                let logged = crate::ToolCall::from_raw_args(call.id(), call.name(), received);
                match log.record(&logged, &refused) {
                    Ok(()) => Ok(refused),
                    Err(source) => Err(RecordError {
                        outcome: Some(refused),
                        source,
                    }),
                }
            }
        }
    });
    let results: Vec<Result<ToolOutcome, RecordError>> = futures_util::stream::iter(runs)
        .buffered(options.max_concurrent.max(1))
        .collect()
        .await;
    results.into_iter().collect()
}

/// The tools a search found: its outcome's tool references.
fn found_names(outcome: &ToolOutcome) -> Vec<&str> {
    outcome
        .content()
        .iter()
        .filter_map(|block| match block {
            crate::ContentBlock::ToolReference { name } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

/// Responses' answer to its client-side tool search: the definitions found.
fn tool_search_output(
    call_id: &str,
    outcome: &ToolOutcome,
    tools: &[Value],
) -> Result<Value, TurnError> {
    let names = found_names(outcome);
    if !names.is_empty() && tools.is_empty() {
        return Err(TurnError::ToolSearchWithoutTools);
    }
    let mut found: Vec<Value> = Vec::new();
    for name in &names {
        let has_the_name = |tool: &&Value| tool.get("name").and_then(Value::as_str) == Some(name);
        if let Some(tool) = tools
            .iter()
            .filter(|tool| tool["type"] != "namespace")
            .find(has_the_name)
        {
            found.push(tool.clone());
            continue;
        }
        // A tool of a namespace is sent in its group, with the group's other found tools.
        let group = tools
            .iter()
            .filter(|tool| tool["type"] == "namespace")
            .find_map(|group| {
                let members = group.get("tools")?.as_array()?;
                members.iter().find(has_the_name).map(|tool| (group, tool))
            });
        let Some((group, tool)) = group else { continue };
        let sent = found
            .iter_mut()
            .find(|sent| sent["type"] == "namespace" && sent["name"] == group["name"])
            .and_then(|sent| sent.get_mut("tools"))
            .and_then(Value::as_array_mut);
        match sent {
            Some(members) => members.push(tool.clone()),
            None => found.push(json!({
                "type": "namespace",
                "name": group["name"],
                "description": group["description"],
                "tools": [tool],
            })),
        }
    }
    Ok(json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": found,
    }))
}

impl AssistantTurn {
    /// The assistant's turn as the provider wants it echoed in the next request, in order,
    /// with every signature, reasoning item and server-side use where it came:
    ///
    /// - OpenAI Chat: one `assistant` message with its `tool_calls`;
    /// - OpenAI Responses: the output items (reasoning, messages, calls, server-side items);
    /// - Anthropic: one `assistant` message of content blocks;
    /// - Gemini: one `model` content of parts.
    ///
    /// A call whose arguments are not a JSON object is echoed with `{}` where the provider
    /// takes an object (Anthropic, Gemini) and as the text it was where it takes text; its
    /// result says why it did not run.
    pub fn echo(&self) -> Vec<Value> {
        match self.provider {
            Provider::OpenAiChat => vec![self.chat_message()],
            Provider::OpenAiResponses => self.elements(),
            Provider::Anthropic => vec![json!({"role": "assistant", "content": self.elements()})],
            Provider::Gemini => vec![json!({"role": "model", "parts": self.elements()})],
        }
    }

    /// The results of the turn's calls — one outcome per call, in the calls' order — lowered
    /// for the provider from the content the model is shown:
    ///
    /// - OpenAI Chat: one `tool` message per call, then a `user` message for any images;
    /// - OpenAI Responses: one `function_call_output` item per call;
    /// - Anthropic: one `user` message of `tool_result` blocks;
    /// - Gemini: one `user` content of `functionResponse` parts (with the call's id only when
    ///   the provider sent one).
    ///
    /// OpenAI Responses' client-side tool search (a `tool_search_call`) is answered with a
    /// `tool_search_output` holding the definitions of the tools found (the outcome's
    /// [`ToolReference`](crate::ContentBlock::ToolReference) blocks), taken from `tools`: the
    /// definitions as lowered for Responses ([`Conversation`](super::Conversation) passes its
    /// own). A tool search answered without them is [`TurnError::ToolSearchWithoutTools`].
    pub fn results(&self, outcomes: &[ToolOutcome]) -> Result<Vec<Value>, TurnError> {
        self.results_with_tools(outcomes, &[])
    }

    /// [`results`](Self::results), with the lowered definitions a tool search's output
    /// carries.
    pub fn results_with_tools(
        &self,
        outcomes: &[ToolOutcome],
        tools: &[Value],
    ) -> Result<Vec<Value>, TurnError> {
        if outcomes.len() != self.calls.len() {
            return Err(TurnError::Outcomes {
                calls: self.calls.len(),
                outcomes: outcomes.len(),
            });
        }
        let mut lowered = Vec::new();
        let mut after = Vec::new();
        for (call, outcome) in self.calls.iter().zip(outcomes) {
            if self.provider == Provider::OpenAiResponses
                && call.wire.get("type").and_then(Value::as_str) == Some("tool_search_call")
            {
                lowered.push(tool_search_output(call.id(), outcome, tools)?);
                // A `tool_search_output` carries tools, never a message: a failed search (a
                // pattern refused) is told to the model after the outputs.
                if outcome.is_error() {
                    let text = crate::lower::text_of(outcome.content(), true, true);
                    after.push(json!({"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": text}]}));
                }
                continue;
            }
            let mut values = lower_content(
                self.provider,
                call.id(),
                call.name(),
                outcome.content(),
                outcome.is_error(),
            );
            if self.provider == Provider::Gemini && call.provider_id().is_none() {
                // An id toolprism made up is never sent back.
                for part in &mut values {
                    if let Some(Value::Object(response)) = part.get_mut("functionResponse") {
                        response.remove("id");
                    }
                }
            }
            if self.provider == Provider::OpenAiChat {
                // Tool messages first, all of them: a user message between two would break
                // their pairing with the assistant message.
                let (tool, user): (Vec<Value>, Vec<Value>) = values
                    .into_iter()
                    .partition(|message| message["role"] == "tool");
                lowered.extend(tool);
                after.extend(user);
            } else {
                lowered.extend(values);
            }
        }
        lowered.extend(after);
        Ok(match self.provider {
            Provider::OpenAiChat | Provider::OpenAiResponses => lowered,
            Provider::Anthropic => vec![json!({"role": "user", "content": lowered})],
            Provider::Gemini => vec![json!({"role": "user", "parts": lowered})],
        })
    }

    /// What the next request appends: [`echo`](Self::echo), then
    /// [`results`](Self::results). (Anthropic: a turn with a code execution
    /// [`container`](Self::container) needs it named at the top of the request too.)
    pub fn next_messages(&self, outcomes: &[ToolOutcome]) -> Result<Vec<Value>, TurnError> {
        self.next_messages_with_tools(outcomes, &[])
    }

    /// [`next_messages`](Self::next_messages), with the lowered definitions a tool search's
    /// output carries ([`results_with_tools`](Self::results_with_tools)).
    pub fn next_messages_with_tools(
        &self,
        outcomes: &[ToolOutcome],
        tools: &[Value],
    ) -> Result<Vec<Value>, TurnError> {
        let mut messages = self.echo();
        if !self.calls.is_empty() {
            messages.extend(self.results_with_tools(outcomes, tools)?);
        }
        Ok(messages)
    }

    /// OpenAI Chat's assistant message.
    fn chat_message(&self) -> Value {
        let text = self.text();
        let mut message = json!({
            "role": "assistant",
            "content": if text.is_empty() { Value::Null } else { Value::String(text) },
        });
        if let Value::Object(object) = &mut message {
            if !self.calls.is_empty() {
                let calls = self.calls.iter().map(|call| call.wire.clone()).collect();
                object.insert("tool_calls".to_owned(), Value::Array(calls));
            }
            object.extend(self.message_extra.clone());
        }
        message
    }

    /// The turn's elements in order (items, blocks or parts), each as it is echoed.
    fn elements(&self) -> Vec<Value> {
        let mut wires = self.text_wire.iter().peekable();
        let mut elements = Vec::with_capacity(self.parts.len());
        for (at, part) in self.parts.iter().enumerate() {
            let element = match part {
                TurnPart::Text(text) => {
                    let own = wires.next_if(|(position, _)| *position == at);
                    match (own, self.provider) {
                        (Some((_, wire)), _) => wire.clone(),
                        (None, Provider::OpenAiResponses) => json!({
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": text, "annotations": []}],
                        }),
                        (None, Provider::Gemini) => json!({"text": text}),
                        (None, _) => json!({"type": "text", "text": text}),
                    }
                }
                TurnPart::Call(index) => self.call_element(*index),
                TurnPart::Kept(kept) => kept.wire.clone(),
            };
            elements.push(element);
        }
        elements
    }

    /// A call as it is echoed: its wire element, its arguments as read.
    fn call_element(&self, index: usize) -> Value {
        let call = &self.calls[index];
        let mut wire = call.wire.clone();
        match self.provider {
            Provider::Anthropic => set_in(&mut wire, &["input"], call.arguments.echo_object()),
            Provider::Gemini => set_in(
                &mut wire,
                &["functionCall", "args"],
                call.arguments.echo_object(),
            ),
            Provider::OpenAiResponses => {
                let received = wire.get("arguments").and_then(Value::as_str);
                // Arguments as text: kept as received, but never empty (`{}` for none) and,
                // for arguments that are not JSON, the text they were.
                if !matches!(call.arguments, Arguments::Json(_)) || received == Some("") {
                    set_in(
                        &mut wire,
                        &["arguments"],
                        Value::String(call.arguments.echo_text()),
                    );
                }
            }
            Provider::OpenAiChat => {}
        }
        wire
    }
}
