//! Presentation metadata: what a tool's `meta` projection may return.

use serde::Serialize;
use serde_json::Value;

use crate::depth::{check_depth, dispose};
use crate::value::to_lossless_value;

use super::card::{Card, is_invalid_card};

/// What a `meta` function may return: a JSON [`Value`], any serializable type wrapped in
/// [`Json`], an `Option` of those (`None`: no metadata for this call), or a `Result` of those
/// whose error becomes an `INVALID_TOOL_OUTPUT` failure.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::present::Json;
///
/// #[derive(Serialize)]
/// struct Card { title: String }
///
/// fn card(_args: &serde_json::Value, value: &String) -> Json<Card> {
///     Json(Card { title: value.clone() })
/// }
/// # let _ = card;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not something a meta function can return",
    label = "a meta function returns a `serde_json::Value`, `Json<impl Serialize>`, or an `Option` or `Result` of those",
    note = "wrap a serializable type in `toolprism::present::Json`"
)]
pub trait IntoMeta {
    /// Converts into metadata (`None` for none), or why there is none.
    fn into_meta(self) -> Result<Option<Value>, MetaError>;
}

/// Why a `meta` projection gave no metadata.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetaError {
    /// The projection itself failed (returned an error): the call fails with
    /// `INVALID_TOOL_OUTPUT`, as when `render` fails.
    #[error("{0}")]
    Failed(String),
    /// The projection produced something that is not valid metadata (not lossless JSON):
    /// the metadata is dropped with a warning and the call still succeeds.
    #[error("{0}")]
    Invalid(String),
}

/// Wraps a serializable type to return it as presentation metadata.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoMeta for Json<T> {
    fn into_meta(self) -> Result<Option<Value>, MetaError> {
        to_lossless_value(&self.0)
            .map_err(|error| MetaError::Invalid(error.to_string()))?
            .into_meta()
    }
}

impl IntoMeta for Value {
    /// Untyped metadata must be within [`MAX_DEPTH`](crate::depth::MAX_DEPTH) (an over-deep
    /// value is taken apart without recursion), and if it claims to be a card (has a `card`
    /// key) it must be a valid one.
    fn into_meta(self) -> Result<Option<Value>, MetaError> {
        if let Err(error) = check_depth(&self) {
            dispose(self);
            return Err(MetaError::Invalid(format!("it nests {error}")));
        }
        if is_invalid_card(&self) {
            return Err(MetaError::Invalid(
                "it has a `card` key but is not a valid card".to_owned(),
            ));
        }
        Ok(Some(self))
    }
}

impl<M: IntoMeta> IntoMeta for Option<M> {
    fn into_meta(self) -> Result<Option<Value>, MetaError> {
        self.map_or(Ok(None), IntoMeta::into_meta)
    }
}

impl<M: IntoMeta, E: std::fmt::Display> IntoMeta for Result<M, E> {
    fn into_meta(self) -> Result<Option<Value>, MetaError> {
        self.map_err(|error| MetaError::Failed(error.to_string()))?
            .into_meta()
    }
}

impl IntoMeta for Card {
    fn into_meta(self) -> Result<Option<Value>, MetaError> {
        to_lossless_value(&self)
            .map(Some)
            .map_err(|error| MetaError::Invalid(error.to_string()))
    }
}
