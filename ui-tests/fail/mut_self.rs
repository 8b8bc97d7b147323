use toolprism::prelude::*;

struct State {
    count: u32,
}

#[toolset]
impl State {
    /// Counts.
    #[tool]
    fn bump(&mut self) -> u32 {
        self.count += 1;
        self.count
    }
}

fn main() {}
