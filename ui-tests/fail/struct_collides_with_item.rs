use toolprism::prelude::*;

// The user's own type has the name `#[tool]` would give its struct: one error, saying how to
// rename the generated struct.
#[derive(Clone, Debug)]
pub enum FileAction {
    Open,
}

/// Does something to a file.
#[tool]
fn file_action(path: String, times: u32) -> String {
    path.repeat(times as usize)
}

fn main() {
    let _ = FileAction::Open;
}
