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

// Boxed, not shared: the handler that owns them is. (An `Arc` per closure would be one more
// drop glue per closure type, per tool, in every crate of tools.)
pub(super) type Body<A> =
    Box<dyn Fn(A, ToolContext) -> BoxFuture<'static, Result<Produced, BodyError>> + Send + Sync>;
pub(super) type Render<A, T> =
    Box<dyn Fn(&A, &T) -> Result<Vec<ContentBlock>, String> + Send + Sync>;
pub(super) type Meta<A, T> = Box<dyn Fn(&A, &T) -> Result<Option<Value>, MetaError> + Send + Sync>;

/// A tool's `render` and `meta`, with what they need to see the frozen value as `T`.
pub(super) struct Projections<A, T> {
    /// Set whenever `render` or `meta` is: both take the value typed.
    pub(super) value_back: Option<ValueBack<A, T>>,
    pub(super) render: Option<Render<A, T>>,
    pub(super) meta: Option<Meta<A, T>>,
}

/// How the frozen value is read back as `T` for `render` and `meta`, and what runs them.
pub(super) struct ValueBack<A, T> {
    pub(super) deserialize: FromJson<T>,
    pub(super) type_name: &'static str,
    /// [`project_typed`]: made only here, so a tool with neither `render` nor `meta` never
    /// instantiates it.
    pub(super) project: ProjectFn<A, T>,
}

/// [`Handler::project`] on a typed handler.
pub(super) type ProjectFn<A, T> =
    fn(&TypedHandler<A, T>, &Value, &Value, bool, Option<Kept>) -> Result<Projected, String>;

/// The value a body returned, kept beside its JSON for `render` and `meta` when its type is
/// [`Verbatim`](crate::value::Verbatim): reading the JSON back would give a value equal to it.
pub(crate) type Kept = Box<dyn Any + Send>;

impl<A, T: DeserializeOwned + 'static> ValueBack<A, T> {
    pub(super) fn of() -> Self {
        Self {
            deserialize: from_json::<T>,
            type_name: std::any::type_name::<T>(),
            project: project_typed::<A, T>,
        }
    }
}

/// [`Handler::project`] for a tool with `render` or `meta`.
fn project_typed<A, T: 'static>(
    handler: &TypedHandler<A, T>,
    args: &Value,
    value: &Value,
    with_meta: bool,
    kept: Option<Kept>,
) -> Result<Projected, String> {
    let Projections {
        value_back,
        render,
        meta,
    } = &handler.projections;
    let meta = meta.as_ref().filter(|_| with_meta);
    let (Some(value_back), true) = (value_back, render.is_some() || meta.is_some()) else {
        return Ok(Projected {
            content: None,
            meta: None,
        });
    };
    // Only the deserializing and the calls are generic; what surrounds them is shared by
    // every tool (`args_not_deserialized`, `value_not_deserialized`, `rendered`, `projected`).
    let typed_args = (handler.deserialize_args)(args).map_err(args_not_deserialized)?;
    let kept = kept.and_then(|kept| kept.downcast::<T>().ok());
    let read_back;
    let typed_value = if let Some(kept) = &kept {
        &**kept
    } else {
        read_back = (value_back.deserialize)(value)
            .map_err(|error| value_not_deserialized(value_back.type_name, &error))?;
        &read_back
    };
    Ok(Projected {
        content: render
            .as_ref()
            .map(|render| rendered(&|| render(&typed_args, typed_value))),
        meta: meta.map(|meta| projected(&|| meta(&typed_args, typed_value))),
    })
}

#[cold]
fn not_deserialized(error: &TypedError) -> BoxFuture<'static, Result<Produced, BodyError>> {
    Box::pin(std::future::ready(Err(BodyError::Input(error.to_string()))))
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
    fn call(
        &self,
        args: &Value,
        cx: ToolContext,
    ) -> BoxFuture<'static, Result<Produced, BodyError>>;
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

pub(super) struct TypedHandler<A, T> {
    pub(super) deserialize_args: FromJson<A>,
    /// The value type's serialize and deserialize schemas, as derived.
    pub(super) value_schemas: [fn() -> Value; 2],
    pub(super) body: Body<A>,
    pub(super) projections: Projections<A, T>,
}

impl<A: 'static, T: 'static> Handler for TypedHandler<A, T> {
    fn call(
        &self,
        args: &Value,
        cx: ToolContext,
    ) -> BoxFuture<'static, Result<Produced, BodyError>> {
        match (self.deserialize_args)(args) {
            Ok(args) => (self.body)(args, cx),
            Err(error) => not_deserialized(&error),
        }
    }

    fn project(
        &self,
        args: &Value,
        value: &Value,
        with_meta: bool,
        kept: Option<Kept>,
    ) -> Result<Projected, String> {
        match &self.projections.value_back {
            Some(value_back) => (value_back.project)(self, args, value, with_meta, kept),
            None => Ok(Projected {
                content: None,
                meta: None,
            }),
        }
    }

    fn has_meta(&self) -> bool {
        self.projections.meta.is_some()
    }

    fn value_round_trip_gap(&self) -> Option<String> {
        let value_back = self.projections.value_back.as_ref()?;
        round_trip_gap(value_back.type_name, self.value_schemas)
    }
}

/// [`Handler::value_round_trip_gap`], apart from what depends on the types.
fn round_trip_gap(type_name: &str, [serialize, deserialize]: [fn() -> Value; 2]) -> Option<String> {
    let gap = crate::schema::serialized_gaps(&serialize(), &deserialize())?;
    Some(format!(
        "its value type `{type_name}` does not deserialize from what it serializes, and `render`/`meta` see the value as deserialized from its JSON: {gap}; give it `#[serde(default)]`"
    ))
}
