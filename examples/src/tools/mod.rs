//! The first-party coding tools, each a template of how a toolprism tool is written: a
//! canonical value designed first, a `render` that is the model's view of it, and a card for
//! the UI, all from the same validated value.

pub mod bash;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod read;
pub mod todo;
pub mod web;
pub mod workspace;
pub mod write;

use toolprism::RegistryBuilder;

pub use workspace::Workspace;

/// Adds every coding tool over `workspace` to a registry.
pub fn register_all(builder: RegistryBuilder, workspace: &Workspace) -> RegistryBuilder {
    builder
        .toolset(read::ReadTool::new(workspace.clone()))
        .toolset(write::WriteTool::new(workspace.clone()))
        .toolset(edit::EditTool::new(workspace.clone()))
        .toolset(glob::GlobTool::new(workspace.clone()))
        .toolset(grep::GrepTool::new(workspace.clone()))
        .toolset(bash::BashTool::new(workspace.clone()))
        .toolset(todo::TodoTool::default())
        .tool(web::WebFetch)
}
