//! The stages a registry runs around every body: wrappers, policies, the approver, the bounds
//! and the store for what is bounded away.

use crate::bound::{BoundLimits, FsOutputStore, ToolOutputStore};
use crate::context::StateMap;

use super::policy::{Approver, PostExecutePolicy, PreExecutePolicy};
use super::wrap::Wrapper;

/// The stages a registry runs around every body, fixed when the registry is built.
pub(crate) struct Stages {
    pub(crate) wrappers: Vec<Box<dyn Wrapper>>,
    pub(crate) pre: Vec<Box<dyn PreExecutePolicy>>,
    pub(crate) post: Vec<Box<dyn PostExecutePolicy>>,
    pub(crate) approver: Option<Box<dyn Approver>>,
    pub(crate) limits: BoundLimits,
    pub(crate) store: Box<dyn ToolOutputStore>,
    /// The host's state, reachable from every body.
    pub(crate) state: StateMap,
    /// How long a body may run when its tool says nothing of its own.
    pub(crate) default_timeout: Option<std::time::Duration>,
}

impl Default for Stages {
    fn default() -> Self {
        Self {
            wrappers: Vec::new(),
            pre: Vec::new(),
            post: Vec::new(),
            approver: None,
            limits: BoundLimits::default(),
            store: Box::new(FsOutputStore::default()),
            state: StateMap::default(),
            default_timeout: None,
        }
    }
}
