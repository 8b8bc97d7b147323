//! Mending a call the model got wrong, before the model is told: the host's hook gets the bad
//! call and its error (which names the failing path, what was expected there and what was
//! given) and gives corrected arguments, or nothing. The corrected call is dispatched as the
//! same call, at most [`RunOptions::repair`](super::RunOptions::repair)'s attempts; with a log,
//! each repaired call is recorded after the original, under the same id, with its attempt.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::Arguments;
use crate::BoxFuture;
use crate::error::FailureError;

/// A call whose arguments were refused (`INVALID_TOOL_INPUT`), for a repair hook.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RepairRequest {
    /// The tool the model called.
    pub name: String,
    /// The arguments refused: JSON, or the text that was not JSON.
    pub arguments: Arguments,
    /// Why they were refused: the message names each failing path, what was expected there
    /// and what was given.
    pub error: FailureError,
    /// Which attempt this is, from 1.
    pub attempt: u32,
}

/// Mends a refused call: corrected arguments, or `None` to let the model be told. Any
/// `Fn(RepairRequest) -> impl Future<Output = Option<Value>>` is one (a rule, a smaller model).
pub trait Repair: Send + Sync + 'static {
    /// Corrected arguments for the call, or `None`.
    fn repair(&self, request: RepairRequest) -> BoxFuture<'_, Option<Value>>;
}

impl<F, Fut> Repair for F
where
    F: Fn(RepairRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<Value>> + Send + 'static,
{
    fn repair(&self, request: RepairRequest) -> BoxFuture<'_, Option<Value>> {
        Box::pin(self(request))
    }
}

/// A repair hook and how many attempts it gets per call.
#[derive(Clone)]
pub(super) struct Repairer {
    pub(super) hook: Arc<dyn Repair>,
    pub(super) attempts: u32,
}

impl fmt::Debug for Repairer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Repairer")
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}
