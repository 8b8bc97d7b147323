use toolprism::prelude::*;

struct Counter;

// Every problem of the block is reported at once: the unknown option, the duplicate `crate`,
// and each method's own.
#[toolset(colour = "red", crate = "toolprism", crate = "toolprism")]
impl Counter {
    /// Counts.
    #[tool(bogus)]
    fn count(&self) -> u64 {
        0
    }

    #[tool]
    fn undocumented(&self) -> u64 {
        0
    }
}

fn main() {}
