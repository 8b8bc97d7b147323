//! What a dispatch returns: a success carrying the canonical value and its projections, or a
//! failure that carries no value at all.

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::FailureError;
use crate::present::ContentBlock;
use crate::value::FrozenValue;

/// The result of one dispatched call.
///
/// A success holds the frozen canonical value and the content and metadata projected from it;
/// a failure holds one error and no value, which the type makes impossible to get wrong.
/// Serialized (for logs and hosts) with an `is_error` discriminant:
///
/// ```
/// # use toolprism::prelude::*;
/// # use serde_json::json;
/// # async fn demo() {
/// /// Doubles a number.
/// #[tool]
/// fn double(#[arg] n: i64) -> i64 { n * 2 }
///
/// let registry = Registry::builder().tool(Double).build().unwrap();
/// let outcome = registry.dispatch(ToolCall::new("c1", "double", json!({"n": 21})), Surface::Direct).await;
/// assert_eq!(
///     serde_json::to_value(&outcome).unwrap(),
///     json!({"is_error": false, "value": 42, "content": [{"type": "text", "text": "42"}]}),
/// );
/// # }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(demo());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The call produced a valid value.
    Success(ToolSuccess),
    /// The call failed; the model sees the error.
    Failure(ToolFailure),
}

/// Extra text a host or policy injects beside a result (e.g. a reminder for the model).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AdditionalContext {
    /// The text.
    pub text: String,
}

impl AdditionalContext {
    /// A context of this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }
}

/// Identifies the dispatch that normalized a success. Private and unforgeable: a success
/// handed back by a wrapper is trusted as is only if it carries the running dispatch's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DispatchToken(NonZeroU64);

impl DispatchToken {
    pub(crate) fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NonZeroU64::MIN.saturating_add(NEXT.fetch_add(1, Ordering::Relaxed)))
    }
}

/// A successful call: the canonical value, and what the model and the UI see of it.
///
/// Only the dispatch pipeline makes one, so its content and metadata are always projections
/// of its value. Equality compares what is observable: value, content, metadata, contexts.
#[derive(Clone, Debug)]
pub struct ToolSuccess {
    pub(crate) value: FrozenValue,
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) meta: Option<Value>,
    pub(crate) additional_contexts: Vec<AdditionalContext>,
    pub(crate) token: DispatchToken,
}

impl PartialEq for ToolSuccess {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
            && self.content == other.content
            && self.meta == other.meta
            && self.additional_contexts == other.additional_contexts
    }
}

impl ToolSuccess {
    /// The canonical value, validated against the tool's output schema.
    pub fn value(&self) -> &FrozenValue {
        &self.value
    }

    /// The canonical value, keeping nothing else of the success.
    pub fn into_value(self) -> FrozenValue {
        self.value
    }

    /// What the model sees.
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// Presentation metadata, for direct calls of tools that declare it.
    pub fn meta(&self) -> Option<&Value> {
        self.meta.as_ref()
    }

    /// Text injected beside the result.
    pub fn additional_contexts(&self) -> &[AdditionalContext] {
        &self.additional_contexts
    }
}

/// A failed call: one error, the content the model sees of it, and no value.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolFailure {
    /// Boxed: failures are rare, and an outcome small enough to be copied inline is moved
    /// through every layer of a dispatch.
    pub(crate) error: Box<FailureError>,
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) meta: Option<Value>,
    pub(crate) additional_contexts: Vec<AdditionalContext>,
}

impl ToolFailure {
    /// A failure whose content is its message.
    pub fn new(error: FailureError) -> Self {
        Self {
            content: vec![ContentBlock::text(error.message.clone())],
            error: Box::new(error),
            meta: None,
            additional_contexts: Vec::new(),
        }
    }

    /// The error.
    pub fn error(&self) -> &FailureError {
        &self.error
    }

    /// What the model sees.
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// Presentation metadata, if any.
    pub fn meta(&self) -> Option<&Value> {
        self.meta.as_ref()
    }

    /// Text injected beside the result.
    pub fn additional_contexts(&self) -> &[AdditionalContext] {
        &self.additional_contexts
    }
}

/// An outcome taken apart, for a host that hands its parts on (a bridge to another protocol)
/// and keeps nothing: no part is copied.
///
/// ```
/// # use toolprism::prelude::*;
/// # use toolprism::OutcomeParts;
/// # /// Says hello.
/// # #[tool] fn hello() -> String { "hi".into() }
/// # let registry = Registry::builder().tool(Hello).build().unwrap();
/// # let outcome = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(
/// #     registry.dispatch(ToolCall::new("c1", "hello", serde_json::json!({})), Surface::Direct));
/// let OutcomeParts { result, content, .. } = outcome.into_parts();
/// assert_eq!(result.unwrap().as_value(), &serde_json::json!("hi"));
/// assert_eq!(content[0].as_text(), Some("hi"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct OutcomeParts {
    /// The canonical value of a success, or the error of a failure.
    pub result: Result<FrozenValue, FailureError>,
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Presentation metadata, if any.
    pub meta: Option<Value>,
    /// Text injected beside the result.
    pub additional_contexts: Vec<AdditionalContext>,
}

impl ToolOutcome {
    /// An outcome given back from a session log: what the model was shown, with the value of
    /// a success (checked within the depth limit when the log was read).
    pub(crate) fn from_log(
        content: Vec<ContentBlock>,
        meta: Option<Value>,
        result: Result<Value, FailureError>,
    ) -> Self {
        match result {
            Ok(value) => Self::Success(ToolSuccess {
                value: FrozenValue::freeze(value),
                content,
                meta,
                additional_contexts: Vec::new(),
                token: DispatchToken::fresh(),
            }),
            Err(error) => Self::Failure(ToolFailure {
                error: Box::new(error),
                content,
                meta,
                additional_contexts: Vec::new(),
            }),
        }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Failure(_))
    }

    /// The canonical value of a success; `None` for a failure.
    pub fn value(&self) -> Option<&FrozenValue> {
        match self {
            Self::Success(success) => Some(&success.value),
            Self::Failure(_) => None,
        }
    }

    /// The error of a failure; `None` for a success.
    pub fn error(&self) -> Option<&FailureError> {
        match self {
            Self::Success(_) => None,
            Self::Failure(failure) => Some(&failure.error),
        }
    }

    /// What the model sees.
    pub fn content(&self) -> &[ContentBlock] {
        match self {
            Self::Success(success) => &success.content,
            Self::Failure(failure) => &failure.content,
        }
    }

    /// Presentation metadata, if any.
    pub fn meta(&self) -> Option<&Value> {
        match self {
            Self::Success(success) => success.meta.as_ref(),
            Self::Failure(failure) => failure.meta.as_ref(),
        }
    }

    /// Text injected beside the result.
    pub fn additional_contexts(&self) -> &[AdditionalContext] {
        match self {
            Self::Success(success) => &success.additional_contexts,
            Self::Failure(failure) => &failure.additional_contexts,
        }
    }

    /// The outcome taken apart, moving each part out.
    pub fn into_parts(self) -> OutcomeParts {
        match self {
            Self::Success(success) => OutcomeParts {
                result: Ok(success.value),
                content: success.content,
                meta: success.meta,
                additional_contexts: success.additional_contexts,
            },
            Self::Failure(failure) => OutcomeParts {
                result: Err(*failure.error),
                content: failure.content,
                meta: failure.meta,
                additional_contexts: failure.additional_contexts,
            },
        }
    }

    pub(crate) fn additional_contexts_mut(&mut self) -> &mut Vec<AdditionalContext> {
        match self {
            Self::Success(success) => &mut success.additional_contexts,
            Self::Failure(failure) => &mut failure.additional_contexts,
        }
    }

    pub(crate) fn content_mut(&mut self) -> &mut Vec<ContentBlock> {
        match self {
            Self::Success(success) => &mut success.content,
            Self::Failure(failure) => &mut failure.content,
        }
    }
}

#[derive(Serialize)]
struct OutcomeView<'a> {
    is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a FrozenValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a FailureError>,
    content: &'a [ContentBlock],
    #[serde(skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Value>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    additional_contexts: &'a [AdditionalContext],
}

impl Serialize for ToolOutcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        OutcomeView {
            is_error: self.is_error(),
            value: self.value(),
            error: self.error(),
            content: self.content(),
            meta: self.meta(),
            additional_contexts: self.additional_contexts(),
        }
        .serialize(serializer)
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// An outcome is moved through every layer of a dispatch: at this size the moves are a
    /// few vector stores each, not calls to `memcpy` (a failure's error is boxed for it).
    #[test]
    fn an_outcome_is_small_enough_to_move_inline() {
        assert!(
            size_of::<ToolOutcome>() <= 96,
            "{}",
            size_of::<ToolOutcome>()
        );
    }
}
