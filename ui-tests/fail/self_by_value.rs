use toolprism::prelude::*;

struct State;

#[toolset]
impl State {
    /// Consumes the state.
    #[tool]
    fn consume(self) -> u8 {
        1
    }
}

fn main() {}
