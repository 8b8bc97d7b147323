//! The type-erased tool the pipeline runs: deserialize the arguments, run the body, snapshot
//! the value; and project a frozen value through `render` and `presentation_meta`.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::BoxFuture;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::panic::catch;
use crate::present::{ContentBlock, MetaError};
use crate::value::{LosslessError, TypedError, from_json};

/// Deserializes a type from a borrowed JSON value.
pub(super) type FromJson<T> = fn(&Value) -> Result<T, TypedError>;

// Boxed, not shared: the handler that owns it is. It takes the arguments as JSON, and the
// projections are behind `dyn Project`, so no type in the handler names a tool's types: what
// a tool instantiates is its own closures and its `Projections`, not a copy of the handler's
// drop glue and vtables per argument type.
pub(super) type Body =
    Box<dyn Fn(&Value, ToolContext) -> BoxFuture<'static, BodyOutput> + Send + Sync>;
pub(super) type Render<A, T> =
    Box<dyn Fn(&A, &T) -> Result<Vec<ContentBlock>, String> + Send + Sync>;
pub(super) type Meta<A, T> = Box<dyn Fn(&A, &T) -> Result<Option<Value>, MetaError> + Send + Sync>;

/// A tool's `render` and `meta`, with what they need to see the frozen value as `T`. Made
/// only for a tool with either, so a tool with neither instantiates none of it.
pub(super) struct Projections<A, T> {
    pub(super) deserialize_args: FromJson<A>,
    pub(super) deserialize_value: FromJson<T>,
    /// The value type's serialize and deserialize schemas, as derived.
    pub(super) value_schemas: [fn() -> Value; 2],
    pub(super) render: Option<Render<A, T>>,
    pub(super) meta: Option<Meta<A, T>>,
}

/// [`Projections`], erased.
pub(super) trait Project: Send + Sync {
    /// [`Handler::project`].
    fn project(
        &self,
        args: &Value,
        value: &Value,
        with_meta: bool,
        kept: Option<Kept>,
    ) -> Result<Projected, String>;
    fn has_render(&self) -> bool;
    fn has_meta(&self) -> bool;
    /// [`Handler::value_round_trip_gap`].
    fn round_trip_gap(&self) -> Option<String>;
    /// For the builder, which adds `render` and `meta` one at a time.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// The value a body returned, kept beside its JSON for `render` and `meta` when its type is
/// [`Verbatim`](crate::value::Verbatim): reading the JSON back would give a value equal to it.
pub(crate) type Kept = Box<dyn Any + Send>;

impl<A: 'static, T: DeserializeOwned + 'static> Projections<A, T> {
    pub(super) fn new(deserialize_args: FromJson<A>, value_schemas: [fn() -> Value; 2]) -> Self {
        Self {
            deserialize_args,
            deserialize_value: from_json::<T>,
            value_schemas,
            render: None,
            meta: None,
        }
    }
}

impl<A: 'static, T: 'static> Project for Projections<A, T> {
    fn project(
        &self,
        args: &Value,
        value: &Value,
        with_meta: bool,
        kept: Option<Kept>,
    ) -> Result<Projected, String> {
        let meta = self.meta.as_ref().filter(|_| with_meta);
        if self.render.is_none() && meta.is_none() {
            return Ok(Projected {
                content: None,
                meta: None,
            });
        }
        // Only the deserializing and the calls are generic; what surrounds them is shared by
        // every tool (`args_not_deserialized`, `value_not_deserialized`, `rendered`, `projected`).
        let typed_args = (self.deserialize_args)(args).map_err(args_not_deserialized)?;
        let kept = kept.and_then(|kept| kept.downcast::<T>().ok());
        let read_back;
        let typed_value = if let Some(kept) = &kept {
            &**kept
        } else {
            read_back = (self.deserialize_value)(value)
                .map_err(|error| value_not_deserialized(std::any::type_name::<T>(), &error))?;
            &read_back
        };
        Ok(Projected {
            content: self
                .render
                .as_ref()
                .map(|render| rendered(&|| render(&typed_args, typed_value))),
            meta: meta.map(|meta| projected(&|| meta(&typed_args, typed_value))),
        })
    }

    fn has_render(&self) -> bool {
        self.render.is_some()
    }

    fn has_meta(&self) -> bool {
        self.meta.is_some()
    }

    fn round_trip_gap(&self) -> Option<String> {
        round_trip_gap(std::any::type_name::<T>(), self.value_schemas)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cold]
pub(super) fn not_deserialized(error: &TypedError) -> BoxFuture<'static, BodyOutput> {
    Box::pin(std::future::ready(BodyOutput(Err(BodyError::Input(
        error.to_string(),
    )))))
}

#[cold]
fn args_not_deserialized(error: TypedError) -> String {
    format!("its arguments do not deserialize: {error}")
}

#[cold]
fn value_not_deserialized(type_name: &str, error: &TypedError) -> String {
    format!(
        "its value does not deserialize back into `{type_name}` {error}. `render` and `meta` see the value as deserialized from its JSON, so that nothing its `Serialize` skips reaches the model: a field skipped when serializing needs `#[serde(default)]`",
    )
}

/// Runs a tool's `render`, its panic contained.
fn rendered(
    render: &dyn Fn() -> Result<Vec<ContentBlock>, String>,
) -> Result<Vec<ContentBlock>, String> {
    match catch(render) {
        Ok(content) => content.map_err(|error| format!("its render failed: {error}")),
        Err(panic) => Err(format!("its render panicked: {panic}")),
    }
}

/// Runs a tool's `meta`, its panic contained.
fn projected(
    meta: &dyn Fn() -> Result<Option<Value>, MetaError>,
) -> Result<Option<Value>, MetaError> {
    match catch(meta) {
        Ok(Err(MetaError::Failed(error))) => Err(MetaError::Failed(format!(
            "its meta projection failed: {error}"
        ))),
        Ok(meta) => meta,
        Err(panic) => Err(MetaError::Failed(format!(
            "its meta projection panicked: {panic}"
        ))),
    }
}

/// What a body produced: the lossless JSON of its value and, for a tool presented elsewhere
/// (an MCP server's), the content made for that value there.
#[derive(Debug)]
pub(crate) struct Produced {
    pub(crate) value: Value,
    pub(crate) content: Option<Vec<ContentBlock>>,
    /// Whether the output schema's plan accepted the value while it was snapshotted (`None`:
    /// it did not judge it). Accepted, the validator need not walk it.
    pub(crate) judged: Option<bool>,
    /// The value itself, when `render` and `meta` may borrow it.
    pub(crate) kept: Option<Kept>,
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

/// What a body's future gives: what it produced, or why it produced nothing. Public (and
/// hidden) because `#[tool]`'s generated body names it; only the runtime looks inside.
#[doc(hidden)]
#[derive(Debug)]
pub struct BodyOutput(pub(crate) Result<Produced, BodyError>);

impl BodyOutput {
    /// The body failed with this error.
    #[doc(hidden)]
    pub fn failed(error: ToolError) -> Self {
        Self(Err(BodyError::Failed(error)))
    }
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
    fn call(&self, args: &Value, cx: ToolContext) -> BoxFuture<'static, BodyOutput>;
    /// Runs `render` and, when `with_meta`, `meta` on the frozen value, deserializing the
    /// arguments and the value once for both (the value only when it was not `kept`). `Err`
    /// when they do not deserialize.
    fn project(
        &self,
        args: &Value,
        value: &Value,
        with_meta: bool,
        kept: Option<Kept>,
    ) -> Result<Projected, String>;
    fn has_meta(&self) -> bool;
    /// Why `render`/`meta` could never see the value, if the value type's two schemas show
    /// it: a property it requires to deserialize and never serializes. Checked at registration.
    fn value_round_trip_gap(&self) -> Option<String>;
}

/// The handler of every typed tool: its body and, if it has `render` or `meta`, its
/// projections.
pub(super) struct TypedHandler {
    pub(super) body: Body,
    pub(super) projections: Option<Box<dyn Project>>,
}

impl Handler for TypedHandler {
    fn call(&self, args: &Value, cx: ToolContext) -> BoxFuture<'static, BodyOutput> {
        (self.body)(args, cx)
    }

    fn project(
        &self,
        args: &Value,
        value: &Value,
        with_meta: bool,
        kept: Option<Kept>,
    ) -> Result<Projected, String> {
        match &self.projections {
            Some(projections) => projections.project(args, value, with_meta, kept),
            None => Ok(Projected {
                content: None,
                meta: None,
            }),
        }
    }

    fn has_meta(&self) -> bool {
        self.projections
            .as_ref()
            .is_some_and(|projections| projections.has_meta())
    }

    fn value_round_trip_gap(&self) -> Option<String> {
        self.projections.as_ref()?.round_trip_gap()
    }
}

/// [`Handler::value_round_trip_gap`], apart from what depends on the types.
fn round_trip_gap(type_name: &str, [serialize, deserialize]: [fn() -> Value; 2]) -> Option<String> {
    let gap = crate::schema::serialized_gaps(&serialize(), &deserialize())?;
    Some(format!(
        "its value type `{type_name}` does not deserialize from what it serializes, and `render`/`meta` see the value as deserialized from its JSON: {gap}; give it `#[serde(default)]`"
    ))
}
