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

#[tool_args]
#[derive(Deserialize)]
pub struct Derived {
    #[cfg(any())]
    pub gone: String,
    #[cfg_attr(all(), doc = "Behind cfg_attr.")]
    pub shown: String,
}

// The enum is still there, with its errors only: using it reports nothing more.
pub fn uses(_: NotAStruct) {}

fn main() {}
