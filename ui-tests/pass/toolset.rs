use std::sync::atomic::{AtomicU64, Ordering};

use toolprism::prelude::*;

pub struct Store {
    hits: AtomicU64,
}

#[derive(Deserialize, JsonSchema)]
pub struct GetArgs {
    key: String,
}

#[toolset]
impl Store {
    /// Gets a key.
    #[tool(render = Self::render_get)]
    pub async fn get(&self, args: GetArgs, cx: &ToolContext) -> Result<String, ToolError> {
        self.hits.fetch_add(1, Ordering::Relaxed);
        Ok(format!("{}@{}", args.key, cx.call_id()))
    }

    /// Counts hits.
    #[tool]
    fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Stateless, in the same set.
    #[tool]
    fn version() -> &'static str {
        "1"
    }

    /// Sets with a parameter list.
    #[tool]
    fn set(&self, #[arg(description = "The key.")] key: String, value: String) -> (String, String) {
        (key, value)
    }

    fn render_get(_args: &GetArgs, value: &String) -> String {
        value.clone()
    }

    // Not a tool: left alone.
    pub fn reset(&self) {
        self.hits.store(0, Ordering::Relaxed);
    }
}

fn main() {
    let store = Store { hits: AtomicU64::new(0) };
    store.reset();
    let registry = Registry::builder().toolset(store).build().unwrap();
    assert_eq!(registry.snapshot().definitions().len(), 4);
    let _args = StoreSetArgs { key: String::new(), value: String::new() };
}
