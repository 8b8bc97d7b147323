//! Spilled output as MCP resources: a remote client reads a bounded result's full text with
//! `resources/read`, by the URI the bounding marker names.

use std::sync::Arc;

use rmcp::ErrorData;
use serde_json::json;
use toolprism::BoxFuture;
use toolprism::bound::{RetainError, Retained, RetainedOutput, Retention, ToolOutputStore};

use crate::wire::text::quoted_for_error;

/// The URI prefix of retained outputs: `toolprism://output/<handle>`.
pub const OUTPUT_URI_PREFIX: &str = "toolprism://output/";

/// The resource URI of a retained output.
pub fn output_uri(handle: &str) -> String {
    format!("{OUTPUT_URI_PREFIX}{handle}")
}

/// The handle a resource URI names, if it names a retained output.
pub(crate) fn handle_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(OUTPUT_URI_PREFIX)
}

/// A [`ToolOutputStore`] whose outputs are named by resource URIs an MCP client can read,
/// instead of paths on the server's disk: give it to the registry an [`McpServer`] serves.
///
/// [`McpServer`]: crate::McpServer
///
/// ```
/// use toolprism::bound::{BoundLimits, FsOutputStore};
/// use toolprism::prelude::*;
/// use toolprism_mcp::OutputResources;
///
/// let dir = std::env::temp_dir().join(format!("toolprism-mcp-doc-{}", std::process::id()));
/// let registry = Registry::builder()
///     .limits(BoundLimits::new(100, 4096))
///     .output_store(OutputResources::new(FsOutputStore::new(&dir)))
///     .build()
///     .unwrap();
/// # let _ = registry;
/// ```
#[derive(Clone, Debug)]
pub struct OutputResources<S> {
    inner: Arc<S>,
}

impl<S: ToolOutputStore> OutputResources<S> {
    /// Wraps a store.
    pub fn new(inner: S) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }
}

impl<S: ToolOutputStore> ToolOutputStore for OutputResources<S> {
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        pieces: &'a [&'a str],
        retention: &'a Retention,
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>> {
        Box::pin(async move {
            let retained = self.inner.retain(call_id, tool, pieces, retention).await?;
            Ok(RetainedOutput {
                location: output_uri(&retained.handle),
                handle: retained.handle,
            })
        })
    }

    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<Retained>, RetainError>> {
        self.inner.read(handle)
    }
}
/// How long a client may keep a retained output it read: what a handle names never changes.
pub(super) const RETAINED_OUTPUT_TTL_MS: u64 = 3_600_000;

/// `-32602` naming the URI, as 2026-07-28 asks of an unknown resource.
pub(super) fn resource_not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource at {}", quoted_for_error(uri)),
        Some(json!({ "uri": uri })),
    )
}
