//! Tools: the definition a tool is registered from ([`ToolDef`]), the builder that makes one
//! ([`ToolBuilder`] and its typed steps), what a type needs to be a tool's arguments or value
//! ([`ToolArgs`], [`ToolOutput`]), and what registration makes of it: the name checked, the
//! schemas compiled, and the [`AdvertisedTool`] every snapshot shows.

mod about;
mod builder;
mod compiled;
mod fingerprint;
mod handler;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::bound::BoundLimits;
use crate::depth;

pub use about::{Callers, Hints, Icon, IconTheme, Namespace, TaskSupport, ToolAbout};
#[doc(hidden)]
pub use builder::{Finish, Keep, KeepsVerbatim, ReadsBack, ValueKind};
pub use builder::{
    Presented, ToolArgs, ToolBuilder, ToolOutput, TypedToolBuilder, WithArgs, WithSignature,
};
pub use compiled::{AdvertisedTool, MAX_TOOL_NAME_LEN, RegistrationError, is_valid_tool_name};
pub(crate) use compiled::{CompiledTool, ToolTable};
pub use fingerprint::Fingerprint;
#[doc(hidden)]
pub use handler::BodyOutput;
pub(crate) use handler::{BodyError, Handler, Kept};

/// A tool, ready to register: name, description, input and output schemas, body, and the
/// `render` and `meta` projections of its value.
///
/// Build one with [`ToolDef::builder`], or let `#[tool]` build it. Schemas are checked and
/// compiled when the tool is registered, not here.
///
/// ```
/// use toolprism::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args { a: i64, b: i64 }
///
/// let add = ToolDef::builder("add")
///     .description("Adds two integers.")
///     .handler(|args: Args, _cx: ToolContext| async move { Ok::<_, ToolError>(args.a + args.b) })
///     .build();
/// assert_eq!(add.name(), "add");
/// assert_eq!(add.output_schema()["type"], "integer");
/// ```
///
/// A dynamic tool is the same type, with its schemas given as JSON and `Value` in and out:
///
/// ```
/// use toolprism::prelude::*;
/// use serde_json::{json, Value};
///
/// let echo = ToolDef::builder("echo")
///     .description("Echoes its text.")
///     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .output_schema(json!({"type": "string"}))
///     .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args["text"].clone()) })
///     .build();
/// assert_eq!(echo.input_schema()["required"][0], "text");
/// ```
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Value,
    pub(crate) handler: Arc<dyn Handler>,
    /// Advertised in place of `input_schema`, which arguments are still validated against.
    pub(crate) advertised_input_schema: Option<Value>,
    pub(crate) limits: Option<BoundLimits>,
    /// Host state the body takes as a parameter; registration checks the registry has it.
    pub(crate) required_state: Vec<RequiredState>,
    /// What the tool says about itself, checked at registration.
    pub(crate) about: ToolAbout,
    /// Its description for a caller, when it depends on what that caller may call.
    pub(crate) described_for: Option<CallerDescription>,
}

/// A description that depends on which tools the caller may call: Code Mode's `run_code`
/// declares only those ([`ToolDef::with_description_for_callers`]).
#[derive(Clone)]
pub struct CallerDescription(Arc<Describe>);

/// What describes a tool to a caller, given a test of whether the caller may call a tool.
type Describe = dyn Fn(&dyn Fn(&str) -> bool) -> String + Send + Sync;

impl CallerDescription {
    /// The description for a caller who may call the tools `may_call` says yes to.
    pub fn describe(&self, may_call: &dyn Fn(&str) -> bool) -> String {
        (self.0)(may_call)
    }
}

impl fmt::Debug for CallerDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallerDescription(…)")
    }
}

impl PartialEq for CallerDescription {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A type of host state a tool needs ([`State<T>`](crate::context::State)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RequiredState {
    pub(crate) id: std::any::TypeId,
    pub(crate) name: &'static str,
}

impl ToolDef {
    /// Starts a tool definition under this name.
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder::new(name.into())
    }

    /// The name the tool is registered and advertised under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the model is told the tool does.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the canonical value.
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    /// Whether the tool declares presentation metadata.
    pub fn has_meta(&self) -> bool {
        self.handler.has_meta()
    }

    /// Bounds this tool's model text by these limits instead of the registry's.
    ///
    /// ```
    /// # use toolprism::prelude::*;
    /// # use toolprism::bound::BoundLimits;
    /// /// Prints a log.
    /// #[tool]
    /// fn log() -> String { String::new() }
    ///
    /// let def = Log.into_tool_def().with_limits(BoundLimits::new(200, 16 * 1024));
    /// assert_eq!(def.limits().unwrap().max_lines, 200);
    /// # use toolprism::tool::IntoToolDef;
    /// ```
    #[must_use]
    pub fn with_limits(mut self, limits: BoundLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Advertises `schema` as the tool's input schema, while arguments are validated against
    /// the schema the tool was built with. For a tool whose real schema is beyond what this
    /// crate validates — an imported MCP tool whose server validates its own arguments — built
    /// with a looser schema such as `{"type": "object"}`: the model still sees the real one.
    /// The advertised schema is checked for depth at registration, and never compiled.
    ///
    /// ```
    /// use toolprism::prelude::*;
    /// use serde_json::{json, Value};
    ///
    /// let remote = ToolDef::builder("lookup")
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(json!(1)) })
    ///     .build()
    ///     .with_advertised_input_schema(json!({"type": "object", "$ref": "https://example.com/s.json"}));
    /// let registry = Registry::builder().tool(remote).build().unwrap();
    /// let snapshot = registry.snapshot();
    /// assert_eq!(snapshot.definition("lookup").unwrap().input_schema()["$ref"], "https://example.com/s.json");
    /// ```
    #[must_use]
    pub fn with_advertised_input_schema(mut self, schema: Value) -> Self {
        self.advertised_input_schema = Some(schema);
        self
    }

    /// The host state types the tool takes ([`State<T>`](crate::context::State)).
    pub fn required_state(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.required_state.iter().map(|state| state.name)
    }

    /// This tool's own limits, if it has any.
    pub fn limits(&self) -> Option<&BoundLimits> {
        self.limits.as_ref()
    }

    /// What the tool says about itself.
    pub fn about(&self) -> &ToolAbout {
        &self.about
    }

    /// A human-readable name for a UI (`"Read file"`); the tool is still called by its name.
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolprism::prelude::*;
    /// use toolprism::tool::{Callers, Icon, IntoToolDef};
    ///
    /// /// Reads a file.
    /// #[tool]
    /// fn read(#[arg] path: String) -> String { path }
    ///
    /// let read = Read
    ///     .into_tool_def()
    ///     .with_title("Read file")
    ///     .read_only(true)
    ///     .open_world(false)
    ///     .with_icon(Icon::new("https://example.com/read.png").with_mime_type("image/png"))
    ///     .with_example(json!({"path": "README.md"}))
    ///     .with_timeout(Duration::from_secs(5))
    ///     .with_callers(Callers::Both);
    /// let registry = Registry::builder().tool(read).build().unwrap();
    /// let snapshot = registry.snapshot();
    /// let about = snapshot.definition("read").unwrap().about();
    /// assert_eq!(about.title.as_deref(), Some("Read file"));
    /// assert_eq!(about.hints.read_only, Some(true));
    /// ```
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.about.title = Some(title.into());
        self
    }

    /// Says whether calling it changes nothing (MCP's `readOnlyHint`).
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.about.hints.read_only = Some(read_only);
        self
    }

    /// Says whether it may destroy or overwrite something (`destructiveHint`). A tool that
    /// says it is both read-only and destructive is refused at registration.
    #[must_use]
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.about.hints.destructive = Some(destructive);
        self
    }

    /// Says whether calling it twice with the same arguments does what once does
    /// (`idempotentHint`).
    #[must_use]
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.about.hints.idempotent = Some(idempotent);
        self
    }

    /// Says whether it reaches beyond a closed set of things (`openWorldHint`).
    #[must_use]
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.about.hints.open_world = Some(open_world);
        self
    }

    /// Adds an icon.
    #[must_use]
    pub fn with_icon(mut self, icon: Icon) -> Self {
        self.about.icons.push(icon);
        self
    }

    /// Adds example arguments, which registration checks against the input schema (an
    /// example the schema refuses refuses the tool, naming the example and the violation).
    #[must_use]
    pub fn with_example(mut self, arguments: serde_json::Value) -> Self {
        self.about.examples.push(arguments);
        self
    }

    /// Drops the body and fails the call with `TOOL_TIMEOUT` after this long (nested calls
    /// included); instead of the registry's default, if it has one. The body is dropped where
    /// it awaits: a synchronous body (a `fn`, or an `async fn` that never awaits) runs to its
    /// end, and a thread it started runs on.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.about.timeout = Some(timeout);
        self
    }

    /// Leaves the tool out of the first request: the model finds it through tool search
    /// (`toolprism::search`). It stays callable all along.
    #[must_use]
    pub fn with_defer_loading(mut self, defer: bool) -> Self {
        self.about.defer_loading = defer;
        self
    }

    /// Who may call it: the model, programs, or both (the default).
    #[must_use]
    pub fn with_callers(mut self, callers: Callers) -> Self {
        self.about.callers = callers;
        self
    }

    /// Adds an OAuth scope a caller needs (see [`ToolAbout::scopes`]).
    #[must_use]
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.about.scopes.push(scope.into());
        self
    }

    /// Names the resource a call touches, from its arguments
    /// ([`effects`](crate::effects)): `ResourceTemplate::parse("file:{path}")`. Each argument
    /// it names must be a property of the input schema (checked at registration).
    #[must_use]
    pub fn with_resource(mut self, template: crate::effects::ResourceTemplate) -> Self {
        self.about.resource = Some(template);
        self
    }

    /// Whether a call may run on as a task its caller polls (MCP tasks); never, by default.
    #[must_use]
    pub fn with_task(mut self, task: TaskSupport) -> Self {
        self.about.task = task;
        self
    }

    /// Shows it in a group for OpenAI Responses: every tool of a namespace must describe it
    /// the same way (registration refuses two descriptions of one name).
    #[must_use]
    pub fn with_namespace(mut self, namespace: Namespace) -> Self {
        self.about.namespace = Some(namespace);
        self
    }

    /// Describes the tool to each caller by what that caller may call: `describe` is given a
    /// test of whether the caller may call a tool (by name), and returns the description that
    /// caller is shown in place of the registered one (which the host's own listings keep).
    /// For a tool that lists other tools, such as Code Mode's `run_code`, so that a caller is
    /// never told of a tool it may not call.
    #[must_use]
    pub fn with_description_for_callers(
        mut self,
        describe: impl Fn(&dyn Fn(&str) -> bool) -> String + Send + Sync + 'static,
    ) -> Self {
        self.described_for = Some(CallerDescription(Arc::new(describe)));
        self
    }

    /// Replaces everything the tool says about itself at once (an imported tool's account).
    #[must_use]
    pub fn with_about(mut self, about: ToolAbout) -> Self {
        self.about = about;
        self
    }
}

impl Drop for ToolDef {
    /// A schema from a peer may be nested past what `Drop`'s recursion survives: one that is
    /// is taken apart with a loop. (Registration takes the schemas out first.)
    fn drop(&mut self) {
        depth::dispose_checked(std::mem::take(&mut self.input_schema));
        depth::dispose_checked(std::mem::take(&mut self.output_schema));
        if let Some(advertised) = self.advertised_input_schema.take() {
            depth::dispose_checked(advertised);
        }
    }
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("input_schema", &self.input_schema)
            .field("output_schema", &self.output_schema)
            .finish_non_exhaustive()
    }
}

/// Anything that becomes one tool definition: a [`ToolDef`], or the unit struct `#[tool]`
/// generates for a function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "expected a `ToolDef` or a type generated by `#[tool]`",
    note = "`#[tool] fn read_file(…)` generates the unit struct `ReadFile`: register that"
)]
pub trait IntoToolDef {
    /// Builds the definition.
    fn into_tool_def(self) -> ToolDef;
}

impl IntoToolDef for ToolDef {
    fn into_tool_def(self) -> ToolDef {
        self
    }
}

impl<A: 'static, T: 'static> IntoToolDef for TypedToolBuilder<A, T> {
    fn into_tool_def(self) -> ToolDef {
        self.build()
    }
}

/// A type whose `&self` methods are tools, made by `#[toolset]` on an impl block. The state
/// is captured (as an `Arc`) when the tool set is built.
pub trait Toolset: Send + Sync + 'static {
    /// The tool definitions, each holding a clone of `self`.
    fn tool_defs(self: Arc<Self>) -> Vec<ToolDef>;
}
