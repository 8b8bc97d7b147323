use toolprism::prelude::*;

struct State;

#[toolset]
impl State {
    fn helper(&self) -> u8 {
        1
    }
}

fn main() {}
