//! Serving over the process's stdin and stdout.

use super::setup::McpServer;

impl McpServer {
    /// Serves over the process's stdin and stdout until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        use rmcp::ServiceExt as _;
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| ServeError(error.to_string()))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| ServeError(error.to_string()))
    }
}

/// Why serving over a transport ended in error.
#[derive(Debug, thiserror::Error)]
#[error("MCP server: {0}")]
pub struct ServeError(String);
