//! The type-erased tool the pipeline runs: deserialize the arguments, run the body, snapshot
//! the value; and project a frozen value through `render` and `presentation_meta`.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::BoxFuture;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::panic::catch;
use crate::present::{ContentBlock, MetaError};
use crate::value::LosslessError;

/// Deserializes a type from a borrowed JSON value.
pub(super) type FromJson<T> = fn(&Value) -> Result<T, serde_json::Error>;
/// Says why a JSON value does not deserialize into a type, and where in the value.
pub(super) type Explain = fn(&Value) -> String;

pub(super) type Body<A> =
    Arc<dyn Fn(A, ToolContext) -> BoxFuture<'static, Result<Produced, BodyError>> + Send + Sync>;
pub(super) type Render<A, T> =
    Arc<dyn Fn(&A, &T) -> Result<Vec<ContentBlock>, String> + Send + Sync>;
pub(super) type Meta<A, T> = Arc<dyn Fn(&A, &T) -> Result<Option<Value>, MetaError> + Send + Sync>;

/// A tool's `render` and `meta`, with what they need to see the frozen value as `T`.
pub(super) struct Projections<A, T> {
    /// Set whenever `render` or `meta` is: both take the value typed.
    pub(super) value_back: Option<ValueBack<T>>,
    pub(super) render: Option<Render<A, T>>,
    pub(super) meta: Option<Meta<A, T>>,
}

/// How the frozen value is read back as `T` for `render` and `meta`.
pub(super) struct ValueBack<T> {
    pub(super) deserialize: FromJson<T>,
    pub(super) explain: Explain,
    pub(super) type_name: &'static str,
}

impl<T: DeserializeOwned> ValueBack<T> {
    pub(super) fn of() -> Self {
        Self {
            deserialize: |value| T::deserialize(value),
            explain: explain::<T>,
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// Why `value` does not deserialize into `T`, naming the place in the value (a JSON Pointer).
pub(super) fn explain<T: DeserializeOwned>(value: &Value) -> String {
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

/// What a body produced: the lossless JSON of its value and, for a tool presented elsewhere
/// (an MCP server's), the content made for that value there.
#[derive(Debug)]
pub(crate) struct Produced {
    pub(crate) value: Value,
    pub(crate) content: Option<Vec<ContentBlock>>,
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
    /// arguments and the value once for both. `Err` when they do not deserialize.
    fn project(&self, args: &Value, value: &Value, with_meta: bool) -> Result<Projected, String>;
    fn has_meta(&self) -> bool;
    /// Why `render`/`meta` could never see the value, if the value type's two schemas show
    /// it: a property it requires to deserialize and never serializes. Checked at registration.
    fn value_round_trip_gap(&self) -> Option<String>;
}

pub(super) struct TypedHandler<A, T> {
    pub(super) deserialize_args: FromJson<A>,
    pub(super) explain_args: Explain,
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
