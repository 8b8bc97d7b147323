//! What a tool body can reach during a call: the call's id, the tool's name and the surface.

use std::sync::Arc;

use crate::call::Surface;

/// What a tool body may know about its call: the call id, the tool's name and the surface.
///
/// A `#[tool]` function takes it as an optional `&ToolContext` parameter.
///
/// ```
/// use toolprism::prelude::*;
///
/// /// Says which call this is.
/// #[tool]
/// fn whoami(cx: &ToolContext) -> String {
///     format!("{} called as {}", cx.tool_name(), cx.call_id())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct ToolContext {
    call_id: Arc<str>,
    tool_name: Arc<str>,
    surface: Surface,
}

impl ToolContext {
    pub(crate) fn new(call_id: Arc<str>, tool_name: Arc<str>, surface: Surface) -> Self {
        Self {
            call_id,
            tool_name,
            surface,
        }
    }

    /// The id of this call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The registered name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// Whether a model or a program made this call.
    pub fn surface(&self) -> Surface {
        self.surface
    }
}
