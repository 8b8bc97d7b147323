//! Tool definitions: one `ToolDef` type for tools written in Rust (by hand or by `#[tool]`)
//! and for dynamic tools built at run time from JSON Schemas.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bound::BoundLimits;
use crate::call::ToolContext;
use crate::content::{ContentBlock, IntoContent};
use crate::depth::{self, MAX_DEPTH};
use crate::error::ToolError;
use crate::lossless::{LosslessError, to_lossless_value};
use crate::meta::{IntoMeta, MetaError};
use crate::panic::catch;
use crate::schema::{deserialize_schema_for, input_schema_for, output_schema_for};

/// Deserializes a type from a borrowed JSON value.
type FromJson<T> = fn(&Value) -> Result<T, serde_json::Error>;
/// Says why a JSON value does not deserialize into a type, and where in the value.
type Explain = fn(&Value) -> String;

/// A boxed, `Send` future: what wrappers and approvers return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
    pub(crate) limits: Option<BoundLimits>,
}

impl ToolDef {
    /// Starts a tool definition under this name.
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder {
            name: name.into(),
            description: String::new(),
            input_schema: None,
            output_schema: None,
        }
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
    /// # use toolprism::BoundLimits;
    /// /// Prints a log.
    /// #[tool]
    /// fn log() -> String { String::new() }
    ///
    /// let def = Log.into_tool_def().with_limits(BoundLimits::new(200, 16 * 1024));
    /// assert_eq!(def.limits().unwrap().max_lines, 200);
    /// # use toolprism::IntoToolDef;
    /// ```
    #[must_use]
    pub fn with_limits(mut self, limits: BoundLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// This tool's own limits, if it has any.
    pub fn limits(&self) -> Option<&BoundLimits> {
        self.limits.as_ref()
    }
}

impl Drop for ToolDef {
    /// A schema from a peer may be nested past what `Drop`'s recursion survives: one that is
    /// is taken apart with a loop. (Registration takes the schemas out first.)
    fn drop(&mut self) {
        depth::dispose_checked(std::mem::take(&mut self.input_schema));
        depth::dispose_checked(std::mem::take(&mut self.output_schema));
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

/// The first step of [`ToolDef::builder`]: name, description and optional explicit schemas.
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `handler(…).build()`"]
pub struct ToolBuilder {
    name: String,
    description: String,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
}

impl ToolBuilder {
    /// What the model is told the tool does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Uses this JSON Schema for the arguments instead of the one derived from the args type.
    /// Arguments are validated against it, then deserialized into the args type.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// Uses this JSON Schema for the value instead of the one derived from the value type.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the body: an async function of the arguments and the call context that returns
    /// the canonical value or a [`ToolError`] (or anything that converts into one). The
    /// argument and value types are inferred from it.
    pub fn handler<A, T, E, F, Fut>(self, body: F) -> TypedToolBuilder<A, T>
    where
        A: ToolArgs,
        T: ToolOutput,
        E: Into<ToolError>,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
    {
        self.args::<A>().returns::<T>().handler(body)
    }

    /// Names the argument type explicitly, before the body. `#[tool]` builds this way, so a
    /// type missing a trait is reported once, on that type.
    pub fn args<A: ToolArgs>(self) -> WithArgs<A> {
        WithArgs {
            head: self,
            args: ArgsCodec {
                schema: input_schema_for::<A>,
                deserialize: |value| A::deserialize(value),
                explain: explain::<A>,
            },
        }
    }
}

/// How the pipeline handles an argument type. Captured where `A: ToolArgs` is proven, so
/// later builder steps need no bounds on `A` (and report nothing more when it is missing).
struct ArgsCodec<A> {
    schema: fn() -> Value,
    deserialize: FromJson<A>,
    explain: Explain,
}

/// How the pipeline handles a value type, captured where `T: ToolOutput` is proven.
struct ValueCodec<T> {
    schema: fn() -> Value,
    /// What `T` deserializes from: compared with `schema` when render or meta need the value
    /// back as `T`.
    deserialize_schema: fn() -> Value,
    snapshot: fn(T) -> Result<Value, LosslessError>,
}

/// Why `value` does not deserialize into `T`, naming the place in the value (a JSON Pointer).
fn explain<T: DeserializeOwned>(value: &Value) -> String {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => "it deserializes now; it did not a moment ago".to_owned(),
        Err(error) => {
            let mut at = String::new();
            for segment in error.path() {
                at.push('/');
                match segment {
                    serde_path_to_error::Segment::Seq { index } => at.push_str(&index.to_string()),
                    serde_path_to_error::Segment::Map { key } => {
                        at.push_str(
                            &crate::text::truncate(key, 80)
                                .replace('~', "~0")
                                .replace('/', "~1"),
                        );
                    }
                    serde_path_to_error::Segment::Enum { variant } => at.push_str(variant),
                    serde_path_to_error::Segment::Unknown => at.push('?'),
                }
            }
            let at = if at.is_empty() {
                "(root)".to_owned()
            } else {
                at
            };
            format!("at `{at}`: {}", error.into_inner())
        }
    }
}

/// The lossless JSON of a value. A `Value` (a dynamic tool's) is JSON already: it is measured,
/// not serialized again, and one nested too deep is taken apart without recursion.
fn snapshot<T: Serialize + 'static>(value: T) -> Result<Value, LosslessError> {
    let mut slot = Some(value);
    if let Some(json) = (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<Value>>()
        .and_then(Option::take)
    {
        return match depth::check_depth(&json) {
            Ok(()) => Ok(json),
            Err(error) => {
                depth::dispose(json);
                Err(LosslessError::new(
                    error.at,
                    format!("the value nests deeper than {MAX_DEPTH} levels of arrays and objects"),
                ))
            }
        };
    }
    match slot {
        Some(value) => to_lossless_value(&value),
        None => Ok(Value::Null),
    }
}

/// A [`ToolBuilder`] whose argument type is named: name the value type with
/// [`returns`](Self::returns).
#[must_use = "a builder does nothing until `build()`"]
pub struct WithArgs<A> {
    head: ToolBuilder,
    args: ArgsCodec<A>,
}

impl<A> fmt::Debug for WithArgs<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithArgs")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

impl<A> WithArgs<A> {
    /// Names the value type explicitly.
    pub fn returns<T: ToolOutput>(self) -> WithSignature<A, T> {
        WithSignature {
            head: self.head,
            args: self.args,
            value: ValueCodec {
                schema: output_schema_for::<T>,
                deserialize_schema: deserialize_schema_for::<T>,
                snapshot: snapshot::<T>,
            },
        }
    }
}

/// A [`ToolBuilder`] whose argument and value types are named: set the body with
/// [`handler`](Self::handler).
#[must_use = "a builder does nothing until `build()`"]
pub struct WithSignature<A, T> {
    head: ToolBuilder,
    args: ArgsCodec<A>,
    value: ValueCodec<T>,
}

impl<A, T> fmt::Debug for WithSignature<A, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithSignature")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

impl<A: 'static, T: 'static> WithSignature<A, T> {
    /// Sets the body.
    pub fn handler<E, F, Fut>(self, body: F) -> TypedToolBuilder<A, T>
    where
        E: Into<ToolError>,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
    {
        let snapshot = self.value.snapshot;
        TypedToolBuilder {
            head: self.head,
            args: self.args,
            value: self.value,
            // One boxed future per call: the body, then the lossless snapshot of its value.
            body: Arc::new(move |args, cx| {
                let future = body(args, cx);
                Box::pin(async move {
                    let value = future
                        .await
                        .map_err(|error| BodyError::Failed(error.into()))?;
                    snapshot(value).map_err(BodyError::Output)
                })
            }),
            projections: Projections {
                value_back: None,
                render: None,
                meta: None,
            },
        }
    }
}

/// Marker for types a tool can take as its arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's arguments",
    label = "tool arguments must implement `Deserialize` and `JsonSchema`",
    note = "derive both: `#[derive(Deserialize, JsonSchema)]`"
)]
pub trait ToolArgs: DeserializeOwned + JsonSchema + Send + 'static {}

impl<A: DeserializeOwned + JsonSchema + Send + 'static> ToolArgs for A {}

/// Marker for types a tool can return as its canonical value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's value",
    label = "a tool's value must implement `Serialize` and `JsonSchema`",
    note = "derive both: `#[derive(Serialize, JsonSchema)]`"
)]
pub trait ToolOutput: Serialize + JsonSchema + Send + 'static {}

impl<T: Serialize + JsonSchema + Send + 'static> ToolOutput for T {}

type Body<A> =
    Arc<dyn Fn(A, ToolContext) -> BoxFuture<'static, Result<Value, BodyError>> + Send + Sync>;
type Render<A, T> = Arc<dyn Fn(&A, &T) -> Result<Vec<ContentBlock>, String> + Send + Sync>;
type Meta<A, T> = Arc<dyn Fn(&A, &T) -> Result<Option<Value>, MetaError> + Send + Sync>;

/// A [`ToolBuilder`] with its body: add `render` and `meta`, then `build`.
#[must_use = "a builder does nothing until `build()`"]
pub struct TypedToolBuilder<A, T> {
    head: ToolBuilder,
    args: ArgsCodec<A>,
    value: ValueCodec<T>,
    body: Body<A>,
    projections: Projections<A, T>,
}

impl<A, T> fmt::Debug for TypedToolBuilder<A, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedToolBuilder")
            .field("head", &self.head)
            .field("render", &self.projections.render.is_some())
            .field("meta", &self.projections.meta.is_some())
            .finish_non_exhaustive()
    }
}

impl<A: 'static, T: 'static> TypedToolBuilder<A, T> {
    /// Uses this JSON Schema for the arguments instead of the derived one.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.head.input_schema = Some(schema);
        self
    }

    /// Uses this JSON Schema for the value instead of the derived one.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.head.output_schema = Some(schema);
        self
    }

    /// Sets the pure projection from arguments and value to what the model sees.
    ///
    /// It receives the value as validated (deserialized back from the frozen JSON), so what
    /// it renders is a projection of what programs get: a field the value's `Serialize`
    /// skips cannot leak into the text. It must be deterministic: a session log replays it.
    /// Without one, a string value becomes one text block and any other value is serialized
    /// once.
    pub fn render<F, R>(mut self, render: F) -> Self
    where
        T: DeserializeOwned,
        F: Fn(&A, &T) -> R + Send + Sync + 'static,
        R: IntoContent,
    {
        self.projections.value_back = Some(ValueBack::<T>::of());
        self.projections.render = Some(Arc::new(move |args, value| {
            render(args, value).into_content()
        }));
        self
    }

    /// Sets the pure projection from arguments and value to presentation metadata (for a
    /// UI card). It runs for direct calls only, on the same validated value as `render`.
    pub fn meta<F, R>(mut self, meta: F) -> Self
    where
        T: DeserializeOwned,
        F: Fn(&A, &T) -> R + Send + Sync + 'static,
        R: IntoMeta,
    {
        self.projections.value_back = Some(ValueBack::<T>::of());
        self.projections.meta = Some(Arc::new(move |args, value| meta(args, value).into_meta()));
        self
    }

    /// Finishes the definition, deriving any schema not given explicitly.
    pub fn build(self) -> ToolDef {
        let head = self.head;
        ToolDef {
            input_schema: head.input_schema.unwrap_or_else(self.args.schema),
            output_schema: head.output_schema.unwrap_or_else(self.value.schema),
            name: head.name,
            description: head.description,
            handler: Arc::new(TypedHandler {
                deserialize_args: self.args.deserialize,
                explain_args: self.args.explain,
                value_schemas: [self.value.schema, self.value.deserialize_schema],
                body: self.body,
                projections: self.projections,
            }),
            limits: None,
        }
    }
}

/// A tool's `render` and `meta`, with what they need to see the frozen value as `T`.
struct Projections<A, T> {
    /// Set whenever `render` or `meta` is: both take the value typed.
    value_back: Option<ValueBack<T>>,
    render: Option<Render<A, T>>,
    meta: Option<Meta<A, T>>,
}

/// How the frozen value is read back as `T` for `render` and `meta`.
struct ValueBack<T> {
    deserialize: FromJson<T>,
    explain: Explain,
    type_name: &'static str,
}

impl<T: DeserializeOwned> ValueBack<T> {
    fn of() -> Self {
        Self {
            deserialize: |value| T::deserialize(value),
            explain: explain::<T>,
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// Why a body produced no value.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The arguments passed the schema but not the args type's `Deserialize`: where and why.
    Input(String),
    /// The body returned an error.
    Failed(ToolError),
    /// The value is not lossless JSON.
    Output(LosslessError),
}

/// What the projections of one frozen value gave. A panic in either is contained and
/// reported as its error.
pub(crate) struct Projected {
    /// `None`: the tool has no `render`, use the default.
    pub(crate) content: Option<Result<Vec<ContentBlock>, String>>,
    /// `None`: no metadata was asked for, or the tool declares none.
    pub(crate) meta: Option<Result<Option<Value>, MetaError>>,
}

/// The type-erased tool the registry runs.
pub(crate) trait Handler: Send + Sync + 'static {
    /// Deserializes the (already validated) arguments, runs the body and snapshots its value.
    fn call(&self, args: &Value, cx: ToolContext) -> BoxFuture<'static, Result<Value, BodyError>>;
    /// Runs `render` and, when `with_meta`, `meta` on the frozen value, deserializing the
    /// arguments and the value once for both. `Err` when they do not deserialize.
    fn project(&self, args: &Value, value: &Value, with_meta: bool) -> Result<Projected, String>;
    fn has_meta(&self) -> bool;
    /// Why `render`/`meta` could never see the value, if the value type's two schemas show
    /// it: a property it requires to deserialize and never serializes. Checked at registration.
    fn value_round_trip_gap(&self) -> Option<String>;
}

struct TypedHandler<A, T> {
    deserialize_args: FromJson<A>,
    explain_args: Explain,
    /// The value type's serialize and deserialize schemas, as derived.
    value_schemas: [fn() -> Value; 2],
    body: Body<A>,
    projections: Projections<A, T>,
}

impl<A: 'static, T: 'static> Handler for TypedHandler<A, T> {
    fn call(&self, args: &Value, cx: ToolContext) -> BoxFuture<'static, Result<Value, BodyError>> {
        let Ok(args) = (self.deserialize_args)(args) else {
            let why = (self.explain_args)(args);
            return Box::pin(std::future::ready(Err(BodyError::Input(why))));
        };
        (self.body)(args, cx)
    }

    fn project(&self, args: &Value, value: &Value, with_meta: bool) -> Result<Projected, String> {
        let Projections {
            value_back,
            render,
            meta,
        } = &self.projections;
        let meta = meta.as_ref().filter(|_| with_meta);
        let (Some(value_back), true) = (value_back, render.is_some() || meta.is_some()) else {
            return Ok(Projected {
                content: None,
                meta: None,
            });
        };
        let args = (self.deserialize_args)(args).map_err(|_| {
            format!(
                "its arguments do not deserialize: {}",
                (self.explain_args)(args)
            )
        })?;
        let value = (value_back.deserialize)(value).map_err(|_| {
            format!(
                "its value does not deserialize back into `{}` {}. `render` and `meta` see the value as deserialized from its JSON, so that nothing its `Serialize` skips reaches the model: a field skipped when serializing needs `#[serde(default)]`",
                value_back.type_name,
                (value_back.explain)(value),
            )
        })?;
        Ok(Projected {
            content: render
                .as_ref()
                .map(|render| match catch(|| render(&args, &value)) {
                    Ok(content) => content.map_err(|error| format!("its render failed: {error}")),
                    Err(panic) => Err(format!("its render panicked: {panic}")),
                }),
            meta: meta.map(|meta| match catch(|| meta(&args, &value)) {
                Ok(Err(MetaError::Failed(error))) => Err(MetaError::Failed(format!(
                    "its meta projection failed: {error}"
                ))),
                Ok(meta) => meta,
                Err(panic) => Err(MetaError::Failed(format!(
                    "its meta projection panicked: {panic}"
                ))),
            }),
        })
    }

    fn has_meta(&self) -> bool {
        self.projections.meta.is_some()
    }

    fn value_round_trip_gap(&self) -> Option<String> {
        let value_back = self.projections.value_back.as_ref()?;
        let [serialize, deserialize] = self.value_schemas;
        let gap = crate::schema::serialized_gaps(&serialize(), &deserialize())?;
        Some(format!(
            "its value type `{}` does not deserialize from what it serializes, and `render`/`meta` see the value as deserialized from its JSON: {gap}; give it `#[serde(default)]`",
            value_back.type_name
        ))
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
