use toolprism::prelude::*;

struct State;

impl State {
    /// Reads state.
    #[tool]
    fn peek(&self) -> u8 {
        1
    }
}

fn main() {}
