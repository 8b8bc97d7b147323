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

pub use todo::TodoList;
pub use workspace::Workspace;

/// Adds every coding tool to a registry, with the host state they take: the `workspace` the
/// file tools are confined to, and an empty task list.
pub fn register_all(builder: RegistryBuilder, workspace: &Workspace) -> RegistryBuilder {
    builder
        .state(workspace.clone())
        .state(TodoList::default())
        .tool(read::Read)
        .tool(write::Write)
        .tool(edit::Edit)
        .tool(glob::Glob)
        .tool(grep::Grep)
        .tool(bash::Bash)
        .tool(todo::TodoWrite)
        .tool(web::WebFetch)
}
