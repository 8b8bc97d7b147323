#![doc = include_str!("../../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod call;
mod content;
mod dispatch;
mod error;
mod lossless;
mod meta;
mod outcome;
mod panic;
mod registry;
pub mod schema;
mod text;
mod tool;
mod value;

pub use call::{Surface, ToolCall, ToolContext};
pub use content::{ContentBlock, IntoContent};
pub use error::{ErrorInfo, FailureError, ToolError, codes};
pub use lossless::{LosslessError, to_lossless_value};
pub use meta::{IntoMeta, Json, MetaError};
pub use outcome::{AdditionalContext, ToolFailure, ToolOutcome, ToolSuccess};
pub use registry::{
    MAX_TOOL_NAME_LEN, RegistrationError, Registry, RegistryBuilder, Snapshot, ToolDefinition,
    is_valid_tool_name,
};
pub use tool::{
    IntoToolDef, ToolArgs, ToolBuilder, ToolDef, ToolOutput, Toolset, TypedToolBuilder, WithArgs,
    WithSignature,
};
pub use value::FrozenValue;

pub use toolprism_macros::{tool, toolset};

/// What a tool author needs: `use toolprism::prelude::*;`.
///
/// It also brings serde's `Serialize`/`Deserialize` and schemars' `JsonSchema` (traits and
/// derives); the derives expand to paths into `serde` and `schemars`, so a crate that derives
/// them depends on those two crates as well.
pub mod prelude {
    pub use crate::{
        ContentBlock, Json, Registry, Surface, ToolCall, ToolContext, ToolDef, ToolError,
        ToolOutcome, tool, toolset,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// What `#[tool]` and `#[toolset]` expand to. Not public API: names here change without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::call::ToolContext;
    pub use crate::error::ToolError;
    pub use crate::tool::{IntoToolDef, ToolArgs, ToolDef, ToolOutput, Toolset};
    pub use schemars;
    pub use serde;
    pub use std::sync::Arc;

    /// Converts a body's error; spanned on the user's error type, so a missing conversion is
    /// reported there.
    pub fn into_tool_error<E: IntoToolError>(error: E) -> ToolError {
        error.into()
    }

    /// The bound on a tool body's error type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's error",
        label = "a tool's error type must convert into `toolprism::ToolError`",
        note = "any `std::error::Error + Send + Sync + 'static` converts, as does `ToolError` itself"
    )]
    pub trait IntoToolError: Into<ToolError> {}

    impl<E: Into<ToolError>> IntoToolError for E {}
}
