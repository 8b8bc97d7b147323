//! Schemas are compiled at registration only: not per snapshot, per listing or per call.
//!
//! Alone in its own test binary, so no other test registers tools while it counts.

use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism::schema::compiled_schemas;

fn echo(name: &str) -> ToolDef {
    ToolDef::builder(name)
        .description("Echoes.")
        .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
        .build()
}

#[tokio::test]
async fn snapshots_listings_and_calls_compile_no_schema() {
    let before = compiled_schemas();
    let registry = Registry::builder().tool(echo("first")).build().unwrap();
    assert_eq!(
        compiled_schemas(),
        before + 2,
        "input and output, once each"
    );
    registry.register(echo("second")).unwrap();
    assert_eq!(compiled_schemas(), before + 4);

    let registered = compiled_schemas();
    for _ in 0..100 {
        let snapshot = registry.snapshot();
        assert_eq!(snapshot.definitions().count(), 2);
        let outcome = snapshot
            .dispatch(
                ToolCall::new("c", "first", json!({"x": 1})),
                Surface::Direct,
            )
            .await;
        assert!(!outcome.is_error());
    }
    assert_eq!(
        compiled_schemas(),
        registered,
        "nothing was compiled after registration"
    );
}
