//! What both sides of MCP read and write: content blocks, output schemas across protocol
//! generations, provider-safe names, tool results and their `_meta` keys, and text quoted back
//! to a peer. Nothing here knows a server or a client.

pub(crate) mod content;
pub(crate) mod names;
pub(crate) mod result;
pub mod schema;
pub(crate) mod text;
