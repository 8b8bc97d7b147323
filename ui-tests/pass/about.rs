use std::time::Duration;

use toolprism::prelude::*;
use toolprism::tool::{Callers, IconTheme};

/// Reads a file.
#[tool(
    title = "Read file",
    read_only,
    open_world = false,
    icon(src = "https://example.com/read.png", mime_type = "image/png", size = "48x48", size = "96x96", theme = "light"),
    examples = [r#"{"path": "a.txt"}"#, r##"{"path": "# b.md"}"##],
    timeout = "1500ms",
    defer_loading,
    callers = "both",
    resource = "file:{path}"
)]
fn read(#[arg] path: String) -> String {
    path
}

struct Files;

#[toolset]
impl Files {
    /// Deletes a file.
    #[tool(destructive, idempotent, callers = "programs", timeout = "2m")]
    fn delete(&self, #[arg] path: String) -> String {
        path
    }
}

fn main() {
    let registry = Registry::builder().tool(Read).toolset(Files).build().unwrap();
    let snapshot = registry.snapshot();
    let read = snapshot.definition("read").unwrap().about();
    assert_eq!(read.title.as_deref(), Some("Read file"));
    assert_eq!(read.icons[0].sizes, ["48x48", "96x96"]);
    assert_eq!(read.icons[0].theme, Some(IconTheme::Light));
    assert_eq!(read.examples.len(), 2);
    assert_eq!(read.timeout, Some(Duration::from_millis(1500)));
    assert!(read.defer_loading);
    let template = read.resource.as_ref().unwrap();
    assert_eq!(template.resource(&serde_json::json!({"path": "a.txt"})).as_deref(), Some("file:a.txt"));
    let delete = snapshot.definition("delete").unwrap().about();
    assert_eq!(delete.callers, Callers::Programs);
    assert_eq!(delete.timeout, Some(Duration::from_secs(120)));
}
