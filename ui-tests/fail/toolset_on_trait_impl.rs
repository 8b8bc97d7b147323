use toolprism::prelude::*;

struct State;

#[toolset]
impl Clone for State {
    /// Clones.
    #[tool]
    fn clone(&self) -> Self {
        State
    }
}

fn main() {}
