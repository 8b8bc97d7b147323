//! What the next request appends after a turn's calls have run ([`run_calls`](super::run_calls)):
//! the assistant's turn as the provider wants it echoed, and the results lowered as
//! [`lower`](crate::lower) lowers them.

use serde_json::{Value, json};

use super::{Arguments, AssistantTurn, TurnError, TurnPart, set_in};
use crate::error::FailureKind;
use crate::lower::{Provider, lower_content};
use crate::outcome::ToolOutcome;

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
        // A call that waits for a decision has no answer for the model yet.
        if let Some((call, _)) = self.calls.iter().zip(outcomes).find(|(_, outcome)| {
            outcome
                .error()
                .is_some_and(|error| error.kind() == Some(FailureKind::DecisionPending))
        }) {
            return Err(TurnError::DecisionPending {
                id: call.id().to_owned(),
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
