//! An MCP server of your own tools, over stdio (the default) or streamable HTTP:
//!
//! ```text
//! cargo run                                  # stdio, for a desktop host
//! cargo run -- --http 127.0.0.1:8765         # http://127.0.0.1:8765/mcp, stateless
//! ```
//!
//! Replace `Notes` with your own state and tools: each `#[tool]` method becomes one MCP tool,
//! its arguments and value checked against the schemas derived from their types.

use std::net::SocketAddr;
use std::sync::Mutex;

use toolprism::prelude::*;
use toolprism_mcp::{HttpMode, McpServer};

/// A note, as the tools return it.
#[derive(Clone, Serialize, Deserialize, JsonSchema)]
struct Note {
    /// The note's number, from 1.
    id: u64,
    /// What it says.
    text: String,
}

/// The server's state: every tool of the set shares it.
#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<Note>>,
}

#[toolset]
impl Notes {
    /// Adds a note and returns it with its number.
    #[tool]
    fn add_note(&self, #[arg(description = "What the note says.")] text: String) -> Result<Note, ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::new("a note needs some text").with_code("EMPTY_NOTE"));
        }
        let mut notes = self.notes.lock().map_err(|_| ToolError::new("the notes are unavailable"))?;
        let note = Note { id: notes.len() as u64 + 1, text };
        notes.push(note.clone());
        Ok(note)
    }

    /// Lists the notes, or those containing a word.
    #[tool]
    fn find_notes(&self, #[arg(description = "Only notes containing this word.")] word: Option<String>) -> Result<Vec<Note>, ToolError> {
        let notes = self.notes.lock().map_err(|_| ToolError::new("the notes are unavailable"))?;
        Ok(notes
            .iter()
            .filter(|note| word.as_ref().is_none_or(|word| note.text.contains(word.as_str())))
            .cloned()
            .collect())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder().toolset(Notes::default()).build()?;
    let server = McpServer::new(registry).with_implementation(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));

    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) => server.serve_stdio().await?,
        (Some("--http"), Some(addr)) => {
            let addr: SocketAddr = addr.parse()?;
            let running = server.serve_http(addr, HttpMode::Stateless).await?;
            eprintln!("serving at {}", running.url());
            running.wait().await?;
        }
        _ => return Err("usage: notes-mcp-server [--http ADDR]".into()),
    }
    Ok(())
}
