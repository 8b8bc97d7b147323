//! The canonical value: snapshotted from a Rust value without loss ([`to_lossless_value`]),
//! then frozen — shared, immutable, and only ever lent out as `&Value` ([`FrozenValue`]).

mod canonical;
mod checked;
mod lossless;
mod typed;
mod verbatim;

pub use canonical::canonical_json;
pub(crate) use checked::Checked;
pub(crate) use lossless::to_checked_value;
pub use lossless::{LosslessError, to_lossless_value};
pub(crate) use typed::{TypedError, from_json};
pub use verbatim::{NotNull, Verbatim};

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The name under which `serde_json`'s `RawValue` (with its `raw_value` feature) serializes
/// its JSON text and asks to be deserialized: honoured here as `serde_json` honours it.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A tool's canonical value after it was snapshotted and validated against the tool's
/// output schema.
///
/// Cloning is an `Arc` clone. There is no way to get a `&mut Value` out of it, so every
/// holder sees the value that was validated.
///
/// ```
/// # use toolprism::FrozenValue;
/// fn total(value: &FrozenValue) -> Option<u64> {
///     value.get("total_lines")?.as_u64()
/// }
/// ```
#[derive(Clone, PartialEq)]
pub struct FrozenValue(Arc<Value>);

impl FrozenValue {
    pub(crate) fn freeze(value: Value) -> Self {
        Self(Arc::new(value))
    }

    /// The value.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The value, owned: moved out when this is its only holder, copied otherwise. For a host
    /// that hands the value on (an MCP server putting it in `structuredContent`).
    ///
    /// ```
    /// # use toolprism::prelude::*;
    /// # use serde_json::json;
    /// /// Adds.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    /// # let registry = Registry::builder().tool(Add).build().unwrap();
    /// # let outcome = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(
    /// #     registry.dispatch(ToolCall::new("c", "add", json!({"a": 1, "b": 2})), Surface::Direct));
    /// let ToolOutcome::Success(success) = outcome else { panic!("add adds") };
    /// assert_eq!(success.into_value().into_value(), json!(3));
    /// ```
    pub fn into_value(self) -> Value {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| Value::clone(&shared))
    }

    /// Deserializes the value into a Rust type, e.g. the tool's own output type.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&*self.0)
    }
}

impl Deref for FrozenValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0
    }
}

impl AsRef<Value> for FrozenValue {
    fn as_ref(&self) -> &Value {
        &self.0
    }
}

impl PartialEq<Value> for FrozenValue {
    fn eq(&self, other: &Value) -> bool {
        *self.0 == *other
    }
}

impl fmt::Debug for FrozenValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for FrozenValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for FrozenValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// For `#[serde(deserialize_with = "…")]` on an `Option<Value>` field with `default`: a field
/// that is present, even as `null`, reads back as `Some` — `Option`'s own `Deserialize` would
/// read a written `Some(Value::Null)` back as `None`, and a round trip would lose it.
///
/// ```
/// use serde::Deserialize;
/// use serde_json::{Value, json};
///
/// #[derive(Deserialize)]
/// struct Reply {
///     #[serde(default, deserialize_with = "toolprism::value::present_json")]
///     result: Option<Value>,
/// }
///
/// let null: Reply = serde_json::from_value(json!({"result": null})).unwrap();
/// assert_eq!(null.result, Some(Value::Null));
/// let absent: Reply = serde_json::from_value(json!({})).unwrap();
/// assert_eq!(absent.result, None);
/// ```
pub fn present_json<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}
