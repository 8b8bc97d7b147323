#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod ast;
mod attr;
mod errors;
mod expand;
mod fallback;
mod json;
mod tool_args;
mod unit;
mod valid;
mod verbatim;

use proc_macro::TokenStream;

/// Turns a function into a tool. Documented in the `toolprism` crate.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into a tool set. Documented in the
/// `toolprism` crate.
#[proc_macro_attribute]
pub fn toolset(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::toolset(attr.into(), item.into()).into()
}

/// `Deserialize` and `JsonSchema` for a tool's argument struct. Documented in the `toolprism`
/// crate.
#[proc_macro_attribute]
pub fn tool_args(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool_args::tool_args(attr.into(), item.into()).into()
}

/// Derives `Serialize` and `Deserialize` for a type whose JSON is all of it, and implements
/// `Verbatim`. Documented in the `toolprism` crate.
#[proc_macro_attribute]
pub fn verbatim(attr: TokenStream, item: TokenStream) -> TokenStream {
    verbatim::verbatim(attr.into(), item.into()).into()
}
