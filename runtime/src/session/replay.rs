//! Replay: what a saved session showed, rebuilt from its events alone.

use super::events::{CallEvent, NestedEvent, SessionEvent};
use crate::error::FailureError;
use crate::present::{Card, ContentBlock, present_call, present_result};

/// One call of a replayed session, with everything the UI and the model were shown.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedCall {
    /// The call as logged.
    pub call: CallEvent,
    /// The call's card.
    pub call_card: Card,
    /// The result, if the log has one.
    pub result: Option<ReplayedResult>,
    /// Nested dispatches made during the call: rendered content and error flag only.
    pub nested: Vec<NestedEvent>,
}

/// A replayed result.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedResult {
    /// What the model saw.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The error of a failure.
    pub error: Option<FailureError>,
    /// The result's card.
    pub card: Card,
}

/// Rebuilds what a session showed, from its events alone: no tool runs. The cards come from
/// [`present_call`] and [`present_result`], the pure functions the live session used.
pub fn replay(events: &[SessionEvent]) -> Vec<ReplayedCall> {
    let mut calls: Vec<ReplayedCall> = Vec::new();
    for event in events {
        match event {
            SessionEvent::ToolCall(call) => {
                let replayed = ReplayedCall {
                    call_card: present_call(&call.name, &call.shown_args()),
                    call: call.clone(),
                    result: None,
                    nested: Vec::new(),
                };
                // A call that waited for a decision is logged again when it runs: one call.
                match calls.iter_mut().rev().find(|c| c.call.id == call.id) {
                    Some(waited)
                        if waited.result.is_none() && waited.call.repair == call.repair =>
                    {
                        *waited = replayed;
                    }
                    _ => calls.push(replayed),
                }
            }
            SessionEvent::ToolResult(result) => {
                if let Some(call) = calls.iter_mut().rev().find(|c| c.call.id == result.id) {
                    call.result = Some(ReplayedResult {
                        card: present_result(
                            &call.call.name,
                            &call.call.shown_args(),
                            &result.content,
                            result.is_error,
                            result.meta.as_ref(),
                        ),
                        content: result.content.clone(),
                        is_error: result.is_error,
                        error: result.error.clone(),
                    });
                }
            }
            SessionEvent::NestedResult(nested) => {
                if let Some(call) = calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.call.id == nested.parent_id)
                {
                    call.nested.push(nested.clone());
                }
            }
            // Decisions change what ran, and the results show it.
            SessionEvent::DecisionRequested(_) | SessionEvent::Decided(_) => {}
        }
    }
    calls
}
