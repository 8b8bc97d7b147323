//! A remote server's progress, passed on to the local call it belongs to: rmcp sends a progress
//! token with every request, and the server's `notifications/progress` name it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use toolprism::ToolContext;

use crate::wire::text::cut;

/// The most characters of an imported tool's progress message passed on to the local call
/// (the cut marked with `…`): a server's message is shown as it comes, and a host may keep many
/// of them (an MCP server here buffers 256 per call).
///
/// ```
/// assert_eq!(toolprism_mcp::MAX_PROGRESS_MESSAGE, 1024);
/// ```
pub const MAX_PROGRESS_MESSAGE: usize = 1024;

/// The calls waiting on a server, by the progress token their request carried.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    calls: Mutex<HashMap<ProgressToken, ToolContext>>,
}

impl ProgressRoutes {
    /// Sends `token`'s reports to `cx` until the returned guard is dropped.
    pub(crate) fn route(self: &Arc<Self>, token: ProgressToken, cx: ToolContext) -> Route {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), cx);
        Route {
            routes: self.clone(),
            token,
        }
    }

    /// Passes a report on to its call; one for no call waiting (late, or made up) is dropped.
    pub(crate) fn report(&self, progress: &ProgressNotificationParam) {
        let cx = self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&progress.progress_token)
            .cloned();
        if let Some(cx) = cx {
            let message = progress
                .message
                .as_deref()
                .map_or_else(String::new, bounded);
            cx.progress(progress.progress, progress.total, &message);
        }
    }
}

/// A call's place in [`ProgressRoutes`], given up when the call ends (or is dropped).
pub(crate) struct Route {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

/// `message`, cut at [`MAX_PROGRESS_MESSAGE`] characters.
fn bounded(message: &str) -> String {
    cut(message.chars(), MAX_PROGRESS_MESSAGE)
}

#[cfg(test)]
mod tests {
    use super::{MAX_PROGRESS_MESSAGE, bounded};

    #[test]
    fn a_long_message_is_cut_and_says_so() {
        assert_eq!(bounded("halfway"), "halfway");
        let exact = "é".repeat(MAX_PROGRESS_MESSAGE);
        assert_eq!(bounded(&exact), exact);
        let long = bounded(&"é".repeat(MAX_PROGRESS_MESSAGE + 1));
        assert_eq!(long.chars().count(), MAX_PROGRESS_MESSAGE + 1);
        assert!(long.ends_with('…'));
    }
}
