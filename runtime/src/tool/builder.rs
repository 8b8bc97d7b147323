//! Building a [`ToolDef`]: name and description, then the argument and value types (each
//! named once, where its bounds are checked), then the body, `render` and `presentation_meta`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::depth::{self, MAX_DEPTH};
use crate::error::ToolError;
use crate::present::{ContentBlock, IntoContent, IntoMeta};
use crate::schema::{Plan, deserialize_schema_for, input_schema_for, output_schema_for};
use crate::value::{Checked, LosslessError, from_json, to_checked_value};

use super::handler::{
    Body, BodyError, BodyOutput, FromJson, Kept, Produced, Project, Projections, TypedHandler,
    not_deserialized,
};
use super::{Handler, RequiredState, ToolDef};

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
    pub(super) fn new(name: String) -> Self {
        Self {
            name,
            description: String::new(),
            input_schema: None,
            output_schema: None,
        }
    }

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

    /// Sets a body that returns its value together with the content made for it elsewhere —
    /// an MCP server's own rendering of a remote tool's result, say. Arguments and value are
    /// untyped JSON, checked against the schemas given with [`input_schema`](Self::input_schema)
    /// and [`output_schema`](Self::output_schema) (a tool with no output schema takes any
    /// value). The value is validated and frozen like any other; the content takes the place
    /// of `render` and is bounded like rendered content.
    ///
    /// ```
    /// use toolprism::prelude::*;
    /// use toolprism::tool::Presented;
    /// use serde_json::{json, Value};
    ///
    /// let remote = ToolDef::builder("weather")
    ///     .description("Asks a remote service.")
    ///     .output_schema(json!({"type": "object"}))
    ///     .presented_handler(|_args: Value, _cx: ToolContext| async move {
    ///         Ok::<_, ToolError>(Presented::new(
    ///             json!({"celsius": 21}),
    ///             vec![ContentBlock::text("21 °C and sunny")],
    ///         ))
    ///     })
    ///     .build();
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let registry = Registry::builder().tool(remote).build().unwrap();
    /// let outcome = registry.dispatch(ToolCall::new("c1", "weather", json!({})), Surface::Direct).await;
    /// assert_eq!(outcome.value().unwrap(), &json!({"celsius": 21}));
    /// assert_eq!(outcome.content(), [ContentBlock::text("21 °C and sunny")]);
    /// # });
    /// ```
    pub fn presented_handler<E, F, Fut>(self, body: F) -> TypedToolBuilder<Value, Value>
    where
        E: Into<ToolError>,
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Presented, E>> + Send + 'static,
    {
        self.args::<Value>()
            .returns::<Value>()
            .with_body(move |args, cx| {
                let future = body(args, cx);
                Box::pin(async move {
                    BodyOutput(match future.await {
                        Ok(Presented { value, content }) => snapshot(value, None)
                            .map(|(value, _)| Produced {
                                value,
                                content: Some(content),
                                judged: None,
                                kept: None,
                            })
                            .map_err(BodyError::Output),
                        Err(error) => Err(BodyError::Failed(error.into())),
                    })
                })
            })
    }

    /// Names the argument type explicitly, before the body. `#[tool]` builds this way, so a
    /// type missing a trait is reported once, on that type.
    pub fn args<A: ToolArgs>(self) -> WithArgs<A> {
        WithArgs {
            head: self,
            args: ArgsCodec {
                schema: input_schema_for::<A>,
                deserialize: from_json::<A>,
            },
        }
    }
}

/// A value with the content made for it elsewhere: what a
/// [`presented_handler`](ToolBuilder::presented_handler) body returns.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Presented {
    /// The canonical value, validated against the tool's output schema.
    pub value: Value,
    /// What the model sees of it, as made where the value was made.
    pub content: Vec<ContentBlock>,
}

impl Presented {
    /// A value and its content.
    pub fn new(value: Value, content: Vec<ContentBlock>) -> Self {
        Self { value, content }
    }
}

/// How the pipeline handles an argument type. Captured where `A: ToolArgs` is proven, so
/// later builder steps need no bounds on `A` (and report nothing more when it is missing).
struct ArgsCodec<A> {
    schema: fn() -> Value,
    deserialize: FromJson<A>,
}

/// How the pipeline handles a value type, captured where `T: ToolOutput` is proven.
struct ValueCodec<T> {
    schema: fn() -> Value,
    /// What `T` deserializes from: compared with `schema` when render or meta need the value
    /// back as `T`.
    deserialize_schema: fn() -> Value,
    /// [`snapshotted`], or for a [`Verbatim`](crate::value::Verbatim) type whose tool has
    /// `render` or `meta`, [`kept`]: the snapshot that keeps the value for them.
    finish: KeepFn<T>,
}

/// The lossless JSON of a value, and whether `plan` accepted it on the way. A `Value` (a
/// dynamic tool's) is JSON already: it is measured, not serialized again (and judged after),
/// and one nested too deep is taken apart without recursion.
fn snapshot<T: Serialize + 'static>(
    value: T,
    plan: Option<&Plan>,
) -> Result<(Value, Option<bool>), LosslessError> {
    let mut slot = Some(value);
    if let Some(json) = (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<Value>>()
        .and_then(Option::take)
    {
        return measured(json);
    }
    checked_json(slot.as_ref(), plan)
}

/// The lossless JSON of `Some(value)` — which serializes as `value` does — checked against
/// `plan` on the way. Everything but this one generic call is shared by every value type, and
/// [`snapshot`] and [`kept`] share its instantiation.
fn checked_json<T: Serialize>(
    slot: Option<&T>,
    plan: Option<&Plan>,
) -> Result<(Value, Option<bool>), LosslessError> {
    let checked = Checked::new(plan);
    checked.finish(to_checked_value(&slot, checked.expect()))
}

/// What a typed body produced, once snapshotted: shared by every value type.
fn produced(snapshot: Result<(Value, Option<bool>), LosslessError>) -> Result<Produced, BodyError> {
    let (value, judged) = snapshot.map_err(BodyError::Output)?;
    Ok(Produced {
        value,
        content: None,
        judged,
        kept: None,
    })
}

/// What a typed body produced, from its value: [`snapshotted`] or [`kept`], for one value type.
type KeepFn<T> = fn(T, Option<&Plan>) -> Result<Produced, BodyError>;

/// The snapshot of a value, checked against `plan` on the way.
fn snapshotted<T: Serialize + 'static>(
    value: T,
    plan: Option<&Plan>,
) -> Result<Produced, BodyError> {
    produced(snapshot(value, plan))
}

/// How a body's value becomes what the pipeline takes ([`snapshotted`] or [`kept`]), handed to
/// the body with each call. `#[tool]`'s body calls it inside its own future, so that future is
/// the only type made for a tool's body: the generic code the tool instantiates never names it,
/// and an edit of the body recompiles none of that code.
#[doc(hidden)]
pub struct Finish<T>(KeepFn<T>);

impl<T> Clone for Finish<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Finish<T> {}

impl<T> fmt::Debug for Finish<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Finish")
    }
}

impl<T> Finish<T> {
    /// What the body produced from `value`, checked against the plan of the call in `cx`.
    #[doc(hidden)]
    pub fn value(self, value: T, cx: &ToolContext) -> BodyOutput {
        BodyOutput((self.0)(value, cx.output_plan()))
    }
}

/// The snapshot of a [`Verbatim`](crate::value::Verbatim) value, which keeps the value for
/// `render` and `meta`.
fn kept<T: Serialize + Send + 'static>(
    value: T,
    plan: Option<&Plan>,
) -> Result<Produced, BodyError> {
    let slot = Some(value);
    let mut produced = produced(checked_json(slot.as_ref(), plan))?;
    produced.kept = slot.map(|value| Box::new(value) as Kept);
    Ok(produced)
}

/// How `#[tool]` learns whether a value type is [`Verbatim`](crate::value::Verbatim) without a
/// bound: `(&ValueKind::<T>::new()).keep()` finds [`KeepsVerbatim`] when it is, and
/// [`ReadsBack`] otherwise (method lookup tries `ValueKind<T>` before `&ValueKind<T>`).
#[doc(hidden)]
pub struct ValueKind<T>(std::marker::PhantomData<fn() -> T>);

impl<T> ValueKind<T> {
    #[doc(hidden)]
    pub fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<T> fmt::Debug for ValueKind<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ValueKind")
    }
}

/// A snapshot that keeps the value: what [`ValueKind`] finds for a `Verbatim` type.
#[doc(hidden)]
pub struct Keep<T>(KeepFn<T>);

impl<T> fmt::Debug for Keep<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Keep")
    }
}

#[doc(hidden)]
pub trait KeepsVerbatim<T> {
    fn keep(&self) -> Option<Keep<T>>;
}

impl<T: crate::value::Verbatim> KeepsVerbatim<T> for ValueKind<T> {
    fn keep(&self) -> Option<Keep<T>> {
        Some(Keep(kept::<T>))
    }
}

#[doc(hidden)]
pub trait ReadsBack<T> {
    fn keep(&self) -> Option<Keep<T>>;
}

impl<T> ReadsBack<T> for &ValueKind<T> {
    fn keep(&self) -> Option<Keep<T>> {
        None
    }
}

/// A value that is JSON already, if it is within the depth limit (and then judged like any
/// value made elsewhere); one that is not is taken apart without recursion.
fn measured(json: Value) -> Result<(Value, Option<bool>), LosslessError> {
    match depth::check_depth(&json) {
        Ok(()) => Ok((json, None)),
        Err(error) => {
            depth::dispose(json);
            Err(LosslessError::new(
                error.at,
                format!("the value nests deeper than {MAX_DEPTH} levels of arrays and objects"),
            ))
        }
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
                finish: snapshotted::<T>,
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
    /// Lets `render` and `meta` borrow the value the body returned when `kind` finds its type
    /// [`Verbatim`](crate::value::Verbatim) (`#[tool]` writes this step for a tool with either).
    #[doc(hidden)]
    pub fn keep_if_verbatim(mut self, kind: impl FnOnce(ValueKind<T>) -> Option<Keep<T>>) -> Self {
        if let Some(Keep(keep)) = kind(ValueKind::new()) {
            self.value.finish = keep;
        }
        self
    }

    /// Sets the body.
    pub fn handler<E, F, Fut>(self, body: F) -> TypedToolBuilder<A, T>
    where
        E: Into<ToolError>,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
    {
        // One boxed future per call: the body, then the lossless snapshot of its value, checked
        // against the output schema's plan (reached through the context) as it is built.
        self.erased_body(move |args, cx, finish| {
            let scope = cx.clone();
            let future = body(args, cx);
            Box::pin(async move {
                match future.await {
                    Ok(value) => finish.value(value, &scope),
                    Err(error) => BodyOutput::failed(error.into()),
                }
            })
        })
    }

    /// Sets a body that boxes its own future and finishes its own value (what `#[tool]`
    /// writes): no generic code here names the body's future.
    #[doc(hidden)]
    pub fn erased_body<F>(self, body: F) -> TypedToolBuilder<A, T>
    where
        F: Fn(A, ToolContext, Finish<T>) -> crate::BoxFuture<'static, BodyOutput>
            + Send
            + Sync
            + 'static,
    {
        let finish = Finish(self.value.finish);
        self.with_body(move |args, cx| body(args, cx, finish))
    }

    /// The body, behind one that deserializes its arguments.
    fn with_body<F>(self, body: F) -> TypedToolBuilder<A, T>
    where
        F: Fn(A, ToolContext) -> crate::BoxFuture<'static, BodyOutput> + Send + Sync + 'static,
    {
        let deserialize = self.args.deserialize;
        TypedToolBuilder {
            head: self.head,
            args: self.args,
            value: self.value,
            body: Box::new(move |args, cx| match deserialize(args) {
                Ok(args) => body(args, cx),
                Err(error) => not_deserialized(&error),
            }),
            projections: None,
            required_state: Vec::new(),
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

/// A [`ToolBuilder`] with its body: add `render` and `meta`, then `build`.
#[must_use = "a builder does nothing until `build()`"]
pub struct TypedToolBuilder<A, T> {
    head: ToolBuilder,
    args: ArgsCodec<A>,
    value: ValueCodec<T>,
    body: Body,
    /// A [`Projections<A, T>`], once `render` or `presentation_meta` is set.
    projections: Option<Box<dyn Project>>,
    required_state: Vec<RequiredState>,
}

impl<A, T> fmt::Debug for TypedToolBuilder<A, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedToolBuilder")
            .field("head", &self.head)
            .field(
                "render",
                &self.projections.as_ref().is_some_and(|p| p.has_render()),
            )
            .field(
                "meta",
                &self.projections.as_ref().is_some_and(|p| p.has_meta()),
            )
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
        let mut projections = self.typed_projections();
        projections.render = Some(Box::new(move |args, value| {
            render(args, value).into_content()
        }));
        self.projections = Some(Box::new(projections));
        self
    }

    /// Sets the pure projection from arguments and value to presentation metadata (for a
    /// UI card). It runs for direct calls only, on the same validated value as `render`.
    pub fn presentation_meta<F, R>(mut self, meta: F) -> Self
    where
        T: DeserializeOwned,
        F: Fn(&A, &T) -> R + Send + Sync + 'static,
        R: IntoMeta,
    {
        let mut projections = self.typed_projections();
        projections.meta = Some(Box::new(move |args, value| meta(args, value).into_meta()));
        self.projections = Some(Box::new(projections));
        self
    }

    /// The projections set so far, typed, or none yet.
    fn typed_projections(&mut self) -> Projections<A, T>
    where
        T: DeserializeOwned,
    {
        self.projections
            .take()
            .and_then(|projections| projections.into_any().downcast().ok())
            .map_or_else(
                || {
                    Projections::new(
                        self.args.deserialize,
                        [self.value.schema, self.value.deserialize_schema],
                    )
                },
                |projections| *projections,
            )
    }

    /// Declares that the body takes host state of type `T` (as `#[tool]` does for a
    /// `State<T>` parameter): registration refuses the tool if the registry has none.
    pub fn requires_state<S: Send + Sync + 'static>(mut self) -> Self {
        let state = RequiredState {
            id: std::any::TypeId::of::<S>(),
            name: std::any::type_name::<S>(),
        };
        if !self.required_state.contains(&state) {
            self.required_state.push(state);
        }
        self
    }

    /// Finishes the definition, deriving any schema not given explicitly.
    pub fn build(self) -> ToolDef {
        let handler = Arc::new(TypedHandler {
            body: self.body,
            projections: self.projections,
        });
        finish(
            self.head,
            [self.args.schema, self.value.schema],
            handler,
            self.required_state,
        )
    }
}

/// The definition around a typed handler; not generic, so each tool does not copy it.
fn finish(
    head: ToolBuilder,
    [input_schema, output_schema]: [fn() -> Value; 2],
    handler: Arc<dyn Handler>,
    required_state: Vec<RequiredState>,
) -> ToolDef {
    ToolDef {
        input_schema: head.input_schema.unwrap_or_else(input_schema),
        output_schema: head.output_schema.unwrap_or_else(output_schema),
        name: head.name,
        description: head.description,
        handler,
        advertised_input_schema: None,
        limits: None,
        required_state,
        about: super::ToolAbout::default(),
        described_for: None,
    }
}
