//! The pipeline of one call: the [`Snapshot`] it is dispatched through; resolving the name,
//! validating the arguments, the pre-execute policies ([`PreExecutePolicy`], the
//! [`Approver`]); the [`Wrapper`]s around the body, and the normalization of every value into
//! a frozen canonical value and its projections; the post-execute policies
//! ([`PostExecutePolicy`]); then bounding. Panics of user code are contained at every step.
//!
//! Files, each importing only those below it: `snapshot`, `dispatch` (one call, start to end),
//! `chain` (wrappers, body, normalization), `stages`, `policy`, `wrap` (what wrappers and
//! policies see). Step numbers in comments are those of `docs/pipeline.md`.

mod approve;
mod chain;
mod dispatch;
mod policy;
mod snapshot;
mod stages;
mod wrap;

pub use crate::outcome::AdditionalContext;
pub(crate) use approve::{checked_arguments, checked_result};
pub use dispatch::DispatchOptions;
pub(crate) use dispatch::{NestedRecorder, NestedRecording};
pub use policy::{
    Approval, ApprovalRequest, Approver, PostAction, PostDecision, PostExecutePolicy, PreDecision,
    PreExecutePolicy,
};
pub use snapshot::{ResolvedTool, Snapshot};
pub(crate) use stages::Stages;
pub use wrap::{ExecuteCall, Executed, Next, Wrapper};
