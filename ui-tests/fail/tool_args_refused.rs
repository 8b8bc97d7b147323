// `#[tool_args]` takes a plain struct; each other shape is refused, at once, with its reason.
use toolprism::prelude::*;

#[tool_args]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    /// A name.
    pub full_name: String,
    #[serde(default)]
    pub count: u32,
}

#[tool_args]
pub struct Generic<T> {
    pub item: T,
}

#[tool_args]
pub struct Tuple(pub String);

#[tool_args]
pub struct Documented {
    #[doc = include_str!("tool_args_refused.rs")]
    pub text: String,
}

#[tool_args]
pub enum NotAStruct {
    One,
}

fn main() {}
