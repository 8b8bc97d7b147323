#![doc = include_str!("../README.md")]
//!
//! # Where things are
//!
//! The root holds what a tool author and a host touch first: the macros, [`Registry`] and its
//! [`RegistryBuilder`], the [`Snapshot`] a request dispatches through, [`ToolDef`],
//! [`ToolCall`], [`ToolContext`], [`Surface`], [`ToolOutcome`] and its two sides,
//! [`ContentBlock`], [`ToolError`], [`FrozenValue`] and [`RegistrationError`]. The rest is in
//! modules named for their concern; imports between them point one way, top to bottom:
//!
//! | module | what it is for |
//! |---|---|
//! | [`turn`] | a model's turn read back from a provider's response, whole or streamed, and the next request built from it |
//! | [`session`] | the durable session log, and replay of what a session showed |
//! | [`lower`] | tool definitions and results in each provider's wire format |
//! | `registry` (root) | the registry: tools and stages, handing out snapshots |
//! | [`pipeline`] | one call's way through: snapshots, wrappers, pre- and post-execute policies, the approver, panic containment |
//! | [`tool`](mod@tool) | defining tools: the builder, what a type needs to be arguments or a value, what registration makes of a tool |
//! | [`context`] | what a body reaches during a call: host state, progress, nested dispatch |
//! | [`ask`] | asking for input while a call runs: a form, a completion, the client's roots |
//! | [`bound`] | bounding what the model reads, and the stores that keep the full text |
//! | [`present`] | projections: content blocks, cards, presentation metadata |
//! | [`search`] | finding a tool among many: BM25, meaning (the host's embedding model) and regular expressions over a snapshot's tools |
//! | [`schema`] | JSON Schemas: generation, the supported subset and its limits, validation cost |
//! | [`value`] | the canonical value: the lossless snapshot, the frozen value |
//! | [`error`] | failure kinds and codes, and the error a body returns |
//! | [`depth`] | the one nesting limit, and disposal of values past it |
//!
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod access;
pub mod ask;
pub mod bound;
mod call;
pub mod context;
pub mod depth;
pub mod effects;
pub mod error;
pub mod integrity;
pub mod lower;
mod outcome;
mod panic;
mod params;
pub mod pipeline;
pub mod present;
mod registry;
pub mod schema;
pub mod search;
pub mod session;
pub mod telemetry;
mod text;
pub mod tool;
pub mod turn;
pub mod value;

use std::future::Future;
use std::pin::Pin;

#[doc(inline)]
pub use call::{MAX_RAW_ARGS_BYTES, SmolStr, Surface, ToolCall};
#[doc(inline)]
pub use context::ToolContext;
#[doc(inline)]
pub use error::ToolError;
#[doc(inline)]
pub use outcome::{OutcomeParts, ToolFailure, ToolOutcome, ToolSuccess};
#[doc(inline)]
pub use pipeline::Snapshot;
#[doc(inline)]
pub use present::ContentBlock;
#[doc(inline)]
pub use registry::{ChangeListener, Registry, RegistryBuilder};
#[doc(inline)]
pub use tool::{RegistrationError, ToolDef};
#[doc(inline)]
pub use value::FrozenValue;

/// A boxed, `Send` future: what wrappers, approvers and output stores return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
///   schema. A plain struct written with [`#[tool_args]`](macro@tool_args) in place of the two
///   derives reads and describes itself as the derive with `deny_unknown_fields` would, and an
///   edit of a tool above it does not make rustc check its impls again.
/// - **A parameter list**: two or more parameters, or any parameter marked `#[arg]`. The macro
///   generates `{Name}Args` (e.g. `AddArgs`), one field per parameter, with
///   `#[serde(deny_unknown_fields)]`. `#[arg(description = "...")]` describes a parameter;
///   `#[serde(...)]` and `#[schemars(...)]` on a parameter are moved onto its field.
/// - Optionally `&ToolContext`, anywhere in the list: the call id, tool name and surface, host
///   state, progress, nested dispatch (see [`ToolContext`]).
/// - Any number of `State<T>` parameters: host state registered with
///   [`RegistryBuilder::state`]; the tool is refused at registration if the registry has none.
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
/// | `presentation_meta = path` | `fn(&Args, &T) -> impl IntoMeta`: presentation metadata (a UI card), direct calls only |
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
/// pub struct AddArgs { pub a: i64, pub b: i64 }     // parameter-list form only; its
///                                                   //   Deserialize and JsonSchema call
///                                                   //   the runtime's shared code
/// impl IntoToolDef for __toolprism_tool_add::Add {
///     fn into_tool_def(self) -> ToolDef {
///         ToolDef::builder("add")
///             .description("Adds two integers.")
///             .args::<AddArgs>()                     // the argument type, named once
///             .returns::<i64>()                      // the value type, named once
///             .erased_body(|args, cx, finish| {     // the body: its future boxed here, so
///                 sync_body(move || finish.value(add(args.a, args.b), &cx)) // no generic code
///             })                                     // names it; an `async fn`'s future is
///                                                    // `tool_body_must_be_send(async move …)`
///             .build()                               // + .requires_state::<T>() per State<T>,
///                                                    //   .render(…), .presentation_meta(…)
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
///
/// The generated code has the syntax context of the function (so that an edit above a tool
/// does not make rustc check its expansion again): it follows the crate's edition, 2018 or
/// later.
///
/// ```edition2018
/// use toolprism::prelude::*;
///
/// /// Greets, in a crate of edition 2018.
/// #[tool]
/// async fn greet(cx: &ToolContext, #[arg(description = "Who.")] name: String, times: u8) -> Result<String, ToolError> {
///     Ok(format!("{} from {}", name.repeat(usize::from(times)), cx.tool_name()))
/// }
///
/// let registry = Registry::builder().tool(Greet).build().unwrap();
/// let call = ToolCall::new("c", "greet", serde_json::json!({"name": "a", "times": 2}));
/// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let outcome = runtime.block_on(registry.dispatch(call, Surface::Direct));
/// assert_eq!(outcome.value().unwrap(), &serde_json::json!("aa from greet"));
/// ```
///
/// ```edition2021
/// use toolprism::prelude::*;
///
/// struct Counter(u64);
///
/// #[toolset]
/// impl Counter {
///     /// Adds to the count, in a crate of edition 2021.
///     #[tool]
///     fn bump(&self, by: u64, note: Option<String>) -> u64 {
///         drop(note);
///         self.0 + by
///     }
/// }
///
/// let registry = Registry::builder().toolset(Counter(1)).build().unwrap();
/// let call = ToolCall::new("c", "bump", serde_json::json!({"by": 2}));
/// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let outcome = runtime.block_on(registry.dispatch(call, Surface::Direct));
/// assert_eq!(outcome.value().unwrap(), &serde_json::json!(3));
/// ```
pub use toolprism_macros::tool;

/// Turns the `#[tool]` methods of an impl block into a set of tools that share the state.
///
/// The methods take `&self` (or no receiver). The generated [`Toolset`](tool::Toolset) impl captures the
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

/// `Deserialize` and `JsonSchema` for a tool's argument struct, in place of
/// `#[derive(Deserialize, JsonSchema)]`: the schema and the reading of the derive with
/// `#[serde(deny_unknown_fields)]` (each field's doc comment its description, an `Option` field
/// optional, a field the struct does not have refused, not ignored), as for a parameter list.
///
/// What it changes is the edit loop. rustc checks a derive's output again whenever an edit above
/// the struct moves it, so with a struct beside each tool, a one-line edit of one tool checks the
/// derives of every struct below it again; this attribute's output is written in the struct's
/// own spans, which an edit above does not make rustc check again (`docs/performance.md`,
/// "Compile time", has the figures).
///
/// ```
/// use toolprism::prelude::*;
///
/// /// The arguments of `greet`.
/// #[tool_args]
/// pub struct GreetArgs {
///     /// Who to greet.
///     pub name: String,
///     /// How many times; once if left out.
///     pub times: Option<u32>,
/// }
///
/// /// Greets.
/// #[tool]
/// async fn greet(args: GreetArgs) -> Result<String, ToolError> {
///     Ok(format!("hello {}", args.name).repeat(args.times.unwrap_or(1) as usize))
/// }
///
/// let registry = Registry::builder().tool(Greet).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = ToolCall::new("c1", "greet", serde_json::json!({"name": "Ada"}));
/// let outcome = registry.dispatch(call, Surface::Direct).await;
/// assert_eq!(outcome.content(), [ContentBlock::text("hello Ada")]);
/// let call = ToolCall::new("c2", "greet", serde_json::json!({"name": "Ada", "time": 2}));
/// assert!(registry.dispatch(call, Surface::Direct).await.is_error());
/// # });
/// ```
///
/// It takes a struct with named fields, no generic parameters, at most 12 fields, no
/// `#[serde]`, `#[schemars]` or `#[cfg_attr]` attributes, no field behind `#[cfg]` and its docs
/// written out, each field's type `Deserialize` and `JsonSchema`; for any other, derive the two
/// traits (each refusal says why). `#[tool_args(crate = "path")]` names a renamed
/// `toolprism`.
pub use toolprism_macros::tool_args;

/// Derives `Serialize` and `Deserialize` for a struct or an enum whose JSON is all of it, and
/// implements [`Verbatim`](value::Verbatim) for it: a tool returning it lets `render` and
/// `presentation_meta` borrow the value the body returned, instead of deserializing a copy back
/// from its JSON (a tenth of a call for a 50-line read result), with the same guarantee — they
/// see nothing programs do not get.
///
/// Write it in place of `#[derive(Serialize, Deserialize)]` (deriving them as well is refused);
/// `#[derive(JsonSchema)]` and the `#[serde]` attributes that rename stay as they are:
///
/// ```
/// use toolprism::prelude::*;
///
/// #[verbatim]
/// #[derive(JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Listing { dir_path: String, entries: Vec<Entry>, truncated: Option<u32> }
///
/// #[verbatim]
/// #[derive(JsonSchema)]
/// #[serde(tag = "kind", rename_all = "snake_case")]
/// enum Entry { File { name: String, bytes: u64 }, Dir { name: String } }
///
/// /// Lists a directory.
/// #[tool(render = render_listing)]
/// fn list(#[arg(description = "The directory.")] dir_path: String) -> Listing {
///     let entries = vec![Entry::Dir { name: "src".into() }];
///     Listing { dir_path, entries, truncated: None }
/// }
///
/// // Borrows the `Listing` that `list` returned.
/// fn render_listing(_args: &ListArgs, listing: &Listing) -> String {
///     format!("{}: {} entries", listing.dir_path, listing.entries.len())
/// }
///
/// let registry = Registry::builder().tool(List).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = ToolCall::new("c1", "list", serde_json::json!({"dir_path": "."}));
/// let outcome = registry.dispatch(call, Surface::Direct).await;
/// assert_eq!(outcome.content(), [ContentBlock::text(".: 1 entries")]);
/// assert_eq!(outcome.value().unwrap()["entries"][0], serde_json::json!({"kind": "dir", "name": "src"}));
/// # });
/// ```
///
/// It refuses, each with the reason, what would make the JSON less than the value: `skip`,
/// `skip_serializing(_if)`, `skip_deserializing`, `with`, `serialize_with`, `deserialize_with`,
/// `getter`, `from`, `into`, `try_from`, `remote`, `flatten`, `untagged`, `other`,
/// `transparent`, a rename that differs between serializing and deserializing, a `#[serde]`
/// behind `cfg_attr`, and lifetimes. Every field's type must be `Verbatim` (the error names the
/// field's type otherwise): the standard types that round-trip through JSON are, and so is
/// every `#[verbatim]` type. `#[verbatim(crate = "path")]` names a renamed `toolprism`.
///
/// It checks the attributes it is given: another attribute macro on the type runs after it
/// when written below it, and could add a `#[serde]` attribute it never saw — write
/// `#[verbatim]` below any other attribute macro (derives and inert attributes may go anywhere).
pub use toolprism_macros::verbatim;

/// What a tool author needs: `use toolprism::prelude::*;`.
///
/// It also brings serde's `Serialize`/`Deserialize` and schemars' `JsonSchema` (traits and
/// derives); the derives expand to paths into `serde` and `schemars`, so a crate that derives
/// them depends on those two crates as well.
pub mod prelude {
    pub use crate::present::{Card, Json};
    pub use crate::{
        ContentBlock, Registry, Surface, ToolCall, ToolContext, ToolDef, ToolError, ToolOutcome,
        tool, tool_args, toolset, verbatim,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// What `#[tool]` and `#[toolset]` expand to. Not public API: names here change without notice.
#[doc(hidden)]
pub mod __private {
    use std::future::Future;

    use crate::BoxFuture;
    pub use crate::context::{State, ToolContext};
    pub use crate::error::ToolError;
    pub use crate::params::{
        FieldSchemas, FieldTypes, deserialize_params, params_schema, schema_id,
    };
    use crate::tool::is_valid_tool_name;
    pub use crate::tool::{
        BodyOutput, Finish, IntoToolDef, KeepsVerbatim, ReadsBack, ToolArgs, ToolDef, ToolOutput,
        Toolset, ValueKind,
    };
    pub use crate::tool::{Callers, Icon, IconTheme, TaskSupport};
    pub use schemars;
    pub use serde;
    pub use std::sync::Arc;

    /// Boxes a body's future. Named for what its bound checks: a body whose future is not
    /// `Send` is reported on the user's function as "required by a bound in
    /// `tool_body_must_be_send`".
    pub fn tool_body_must_be_send<F>(body: F) -> BoxFuture<'static, BodyOutput>
    where
        F: Future<Output = BodyOutput> + Send + 'static,
    {
        Box::pin(body)
    }

    /// A synchronous body, run when its future is first polled (as an `async` body starts),
    /// so a synchronous tool makes no future of its own: `F` is the tool's closure, whose type
    /// an edit of the body leaves as it is.
    pub fn sync_body<F>(body: F) -> BoxFuture<'static, BodyOutput>
    where
        F: FnOnce() -> BodyOutput + Send + 'static,
    {
        Box::pin(SyncBody(Some(body)))
    }

    /// The future of [`sync_body`].
    struct SyncBody<F>(Option<F>);

    // The body is moved out, never pinned.
    impl<F> Unpin for SyncBody<F> {}

    impl<F: FnOnce() -> BodyOutput> Future for SyncBody<F> {
        type Output = BodyOutput;

        fn poll(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<BodyOutput> {
            std::task::Poll::Ready(match self.get_mut().0.take() {
                Some(body) => body(),
                None => BodyOutput::failed(ToolError::new("the body was polled after it ended")),
            })
        }
    }

    /// The host state a `State<T>` parameter takes. Registration refuses a tool whose state
    /// the registry lacks, so the error is for a context made some other way.
    pub fn state<T: Send + Sync + 'static>(cx: &ToolContext) -> Result<State<T>, ToolError> {
        cx.state::<T>().map(State).ok_or_else(|| {
            ToolError::new(format!(
                "host state `{}` is missing from this registry",
                std::any::type_name::<T>()
            ))
        })
    }

    /// Pins the macro's name rule to the runtime's: fails to compile if a name `#[tool]`
    /// accepted is one registration refuses.
    pub const fn assert_tool_name(name: &str) {
        assert!(
            is_valid_tool_name(name),
            "`#[tool]` accepted a tool name that registration refuses: the macro's name rule and the runtime's disagree"
        );
    }

    /// An example's arguments. The macro checked that the text is a JSON object; text it let
    /// through that does not parse (a bug) is `null`, which registration then refuses.
    pub fn example(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
    }

    /// A resource template the macro checked. One it let through that does not parse (a bug
    /// in the macro) panics here, where the tool is defined.
    pub fn resource(text: &str) -> crate::effects::ResourceTemplate {
        match crate::effects::ResourceTemplate::parse(text) {
            Ok(template) => template,
            Err(error) => panic!("#[tool(resource)] let through a template it should not: {error}"),
        }
    }

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
