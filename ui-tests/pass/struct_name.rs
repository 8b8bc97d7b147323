// `struct_name` resolves a collision; the generated struct is usable by its name wherever the
// function is visible, including from a function body and from another module.
#![deny(warnings)]

use toolprism::prelude::*;

#[derive(Debug)]
pub enum FileAction {
    Open,
}

/// Does something to a file.
#[tool(struct_name = "FileActionTool")]
fn file_action(path: String, action_count: u32) -> String {
    format!("{path} {action_count}")
}

/// Makes a string.
#[tool(struct_name = "StringTool")]
fn string(#[arg] n: u32) -> String {
    n.to_string()
}

mod nested {
    use toolprism::prelude::*;

    /// Visible to the crate.
    #[tool]
    pub(crate) fn shout(text: String, times: u8) -> String {
        text.repeat(times.into())
    }

    /// Visible to the parent module only.
    #[tool]
    pub(super) fn whisper(#[arg] text: String) -> String {
        text
    }
}

fn main() {
    /// Declared in a function body.
    #[tool]
    fn local(a: i64, b: i64) -> i64 {
        a + b
    }

    let registry = Registry::builder()
        .tool(FileActionTool)
        .tool(StringTool)
        .tool(nested::Shout)
        .tool(nested::Whisper)
        .tool(Local)
        .build()
        .unwrap();
    assert_eq!(registry.snapshot().definitions().len(), 5);
    let _ = (FileAction::Open, FileActionToolArgs { path: String::new(), action_count: 1 });
    let _ = format!("{:?}", FileActionTool);
}
