#![doc = include_str!("../../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod bound;
mod call;
mod card;
mod content;
pub mod depth;
mod dispatch;
mod error;
mod lossless;
pub mod lower;
mod meta;
mod outcome;
mod panic;
mod policy;
mod registry;
pub mod schema;
mod session;
mod store;
mod text;
mod tool;
mod value;
mod wrap;

pub use bound::{BoundLimits, Cut, count_lines, plan_cut, preview};
pub use call::{Surface, ToolCall, ToolContext};
pub use card::{
    Card, DiffCard, GenericCard, ReadCard, SearchCard, SearchMatch, TerminalCard, WebCard,
    present_call, present_result,
};
pub use content::{ContentBlock, IntoContent};
pub use error::{ErrorInfo, FailureError, ToolError, codes};
pub use lossless::{LosslessError, to_lossless_value};
pub use meta::{IntoMeta, Json, MetaError};
pub use outcome::{AdditionalContext, ToolFailure, ToolOutcome, ToolSuccess};
pub use policy::{
    Approval, ApprovalRequest, Approver, PostAction, PostDecision, PostExecutePolicy, PreDecision,
    PreExecutePolicy,
};
pub use registry::{
    MAX_TOOL_NAME_LEN, RegistrationError, Registry, RegistryBuilder, Snapshot, ToolDefinition,
    is_valid_tool_name,
};
pub use session::{
    CallEvent, LOG_FORMAT_VERSION, LogContents, LogOptions, LogProblem, MAX_EVENT_BYTES,
    NestedEvent, OpenReport, RecordError, ReplayedCall, ReplayedResult, ResultEvent, SessionEvent,
    SessionLog, replay,
};
pub use store::{
    CleanupReport, FsOutputStore, RetainError, RetainedOutput, RetentionRule, ToolOutputStore,
};
pub use tool::{
    BoxFuture, IntoToolDef, ToolArgs, ToolBuilder, ToolDef, ToolOutput, Toolset, TypedToolBuilder,
    WithArgs, WithSignature,
};
pub use value::FrozenValue;
pub use wrap::{ExecuteCall, Executed, Next, Wrapper};

/// Turns a function into a tool.
///
/// ```
/// use toolprism::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct ReadArgs {
///     /// File to read, relative to the workspace.
///     path: String,
/// }
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// struct ReadValue { path: String, lines: Vec<String> }
///
/// /// Reads a text file.
/// #[tool(render = render_read)]
/// async fn read(args: ReadArgs, cx: &ToolContext) -> Result<ReadValue, ToolError> {
///     Ok(ReadValue { path: args.path, lines: vec!["hello".into()] })
/// }
///
/// fn render_read(args: &ReadArgs, value: &ReadValue) -> String {
///     format!("{}:\n{}", args.path, value.lines.join("\n"))
/// }
///
/// /// Adds two integers.
/// #[tool]
/// fn add(#[arg(description = "The left operand.")] a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// let registry = Registry::builder().tool(Read).tool(Add).build().unwrap();
/// # let _ = registry;
/// ```
///
/// # Arguments
///
/// - **One args type**: a single parameter (besides the context) whose type implements
///   `Deserialize` and `JsonSchema` and describes a JSON object. Its schema is the input
///   schema.
/// - **A parameter list**: two or more parameters, or any parameter marked `#[arg]`. The macro
///   generates `{Name}Args` (e.g. `AddArgs`), one field per parameter, with
///   `#[serde(deny_unknown_fields)]`. `#[arg(description = "...")]` describes a parameter;
///   `#[serde(...)]` and `#[schemars(...)]` on a parameter are moved onto its field.
/// - Optionally `&ToolContext`, anywhere in the list: the call id, tool name and surface.
///
/// # Return
///
/// `T`, or `Result<T, E>` (any return type whose last path segment is `Result`, including
/// aliases like `std::io::Result<T>`), where `T: Serialize + JsonSchema` is the canonical value
/// (scalars, arrays, `Option`, `()` and enums included) and `E` converts into [`ToolError`].
///
/// # Options
///
/// | option | meaning |
/// |---|---|
/// | `name = "..."` | the registered name (default: the function's); must match `^[a-zA-Z0-9_-]{1,64}$` |
/// | `description = "..."` | what the model is told (default: the doc comment; one is required) |
/// | `render = path` | `fn(&Args, &T) -> impl IntoContent`: what the model sees |
/// | `meta = path` | `fn(&Args, &T) -> impl IntoMeta`: presentation metadata, direct calls only |
/// | `struct_name = "..."` | the generated unit struct (default: the function's name in `PascalCase`); the args struct becomes `{struct_name}Args` |
/// | `crate = "path"` | where the `toolprism` crate is, if renamed |
///
/// # What it expands to, roughly
///
/// The function stays as written (minus the `#[arg]` helpers), and beside it:
///
/// ```text
/// mod __toolprism_tool_add { pub struct Add; }      // unit struct, PascalCase of the fn name,
/// pub use __toolprism_tool_add::*;                  //   glob-imported (see below)
/// pub struct AddArgs { pub a: i64, pub b: i64 }     // parameter-list form only
/// impl IntoToolDef for __toolprism_tool_add::Add {
///     fn into_tool_def(self) -> ToolDef {
///         ToolDef::builder("add")
///             .description("Adds two integers.")
///             .args::<AddArgs>()                     // the argument type, named once
///             .returns::<i64>()                      // the value type, named once
///             .handler(|args, _| async move { Ok(add(args.a, args.b)) })
///             .build()
///     }
/// }
/// ```
///
/// Every path goes through `::toolprism::__private`, so shadowed prelude names do not
/// matter. When something is wrong, the function is still emitted with every problem
/// reported at once, each on the offending token.
///
/// The unit struct is glob-imported so that an item of the same name already in scope (your
/// `enum FileAction` beside `fn file_action`) hides it instead of clashing with it: the
/// expansion then fails once, saying that the name is taken and that `struct_name = "..."`
/// renames the struct. A name that would hide the prelude (`fn string` → `String`) is refused
/// the same way.
pub use toolprism_macros::tool;

/// Turns the `#[tool]` methods of an impl block into a set of tools that share the state.
///
/// The methods take `&self` (or no receiver). The generated [`Toolset`] impl captures the
/// value once, as an `Arc<Self>`, when the set is registered with
/// [`RegistryBuilder::toolset`]; every call of every tool sees that same state.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use toolprism::prelude::*;
///
/// struct Counter { hits: AtomicU64 }
///
/// #[toolset]
/// impl Counter {
///     /// Counts a hit and returns the total.
///     #[tool]
///     fn hit(&self) -> u64 {
///         self.hits.fetch_add(1, Ordering::Relaxed) + 1
///     }
/// }
///
/// let registry = Registry::builder().toolset(Counter { hits: AtomicU64::new(0) }).build().unwrap();
/// assert_eq!(registry.snapshot().definitions().len(), 1);
/// ```
///
/// A parameter-list method gets an args struct named `{Type}{Method}Args` (e.g.
/// `CounterHitArgs`). `#[toolset(crate = "...")]` sets the crate path for all its tools.
pub use toolprism_macros::toolset;

/// What a tool author needs: `use toolprism::prelude::*;`.
///
/// It also brings serde's `Serialize`/`Deserialize` and schemars' `JsonSchema` (traits and
/// derives); the derives expand to paths into `serde` and `schemars`, so a crate that derives
/// them depends on those two crates as well.
pub mod prelude {
    pub use crate::{
        Card, ContentBlock, Json, Registry, Surface, ToolCall, ToolContext, ToolDef, ToolError,
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

    /// Implemented by the unit struct `#[tool]` generates, and by nothing else.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` here is not the unit struct `#[tool]` generated: another item of that name hides it",
        label = "`#[tool]` generates a unit struct of this name",
        note = "rename the generated struct with `#[tool(struct_name = \"...\")]`, or rename the other item"
    )]
    pub trait GeneratedTool {}

    /// Fails to compile, with the message of [`GeneratedTool`], when the name `#[tool]` gave its
    /// struct resolves to something else.
    pub const fn assert_generated_tool<T: GeneratedTool>() {}

    /// The bound on a tool body's error type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's error",
        label = "a tool's error type must convert into `toolprism::ToolError`",
        note = "any `std::error::Error + Send + Sync + 'static` converts, as does `ToolError` itself"
    )]
    pub trait IntoToolError: Into<ToolError> {}

    impl<E: Into<ToolError>> IntoToolError for E {}
}
