//! GitHub's published OpenAPI document (npm `@octokit/openapi`, installed by
//! `scripts/octokit-openapi`), loaded whole: its operations become tools, the rest are
//! skipped each with its reason, and tool search finds the right ones among them.
//! `cargo run --release -p toolprism-openapi --example load_report -- $(scripts/octokit-openapi)`
//! reports the same with time and memory.

use std::path::Path;

use toolprism::Registry;
use toolprism::search::ToolIndex;
use toolprism_openapi::{Document, OpenApi, Version};

#[test]
fn githubs_document_loads_whole_and_its_tools_are_found_by_search() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = std::process::Command::new(root.join("scripts/octokit-openapi"))
        .output()
        .expect("scripts/octokit-openapi runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = String::from_utf8(output.stdout).unwrap();
    let document = Document::from_file(path.trim().as_ref()).expect("the document loads");
    assert_eq!(document.version(), Version::V3_0);

    let generated = OpenApi::new(document)
        .build()
        .expect("its server URL is the base");
    let operations = generated.tools.len() + generated.skipped.len();
    assert!(operations > 1_000, "{operations} operations");
    // Every operation of this document is representable but the two whose body is not JSON
    // (one of which is also sent to its own upload server).
    assert!(
        generated.tools.len() >= operations - 2,
        "{:#?}",
        generated.skipped
    );
    assert!(
        generated.skipped.iter().all(|skipped| {
            skipped.reason.contains("not JSON") || skipped.reason.contains("its own server")
        }),
        "{:#?}",
        generated.skipped
    );
    let create = generated
        .operations
        .iter()
        .find(|op| op.operation_id.as_deref() == Some("issues/create-comment"))
        .expect("issues/create-comment");
    assert_eq!(create.tool, "issues_create-comment");

    let registry = Registry::builder()
        .tools(generated.tools)
        .build()
        .expect("every tool registers");
    let snapshot = registry.snapshot();
    let index = ToolIndex::new(snapshot.definitions());
    // Ten requests as a user would word them; the tool each means among the first five.
    let queries = [
        ("create a comment on an issue", "issues_create-comment"),
        ("list pull requests", "pulls_list"),
        (
            "star a repository",
            "activity_star-repo-for-authenticated-user",
        ),
        ("create a release", "repos_create-release"),
        (
            "delete a branch protection",
            "repos_delete-branch-protection",
        ),
        ("get the contents of a file", "repos_get-content"),
        ("list workflow runs", "actions_list-workflow-runs-for-repo"),
        ("merge a pull request", "pulls_merge"),
        ("create a gist", "gists_create"),
        ("add labels to an issue", "issues_add-labels"),
    ];
    let missed: Vec<(&str, Vec<&str>)> = queries
        .iter()
        .filter_map(|(query, expected)| {
            let found: Vec<&str> = index
                .search(query, 5)
                .iter()
                .map(|tool| tool.name())
                .collect();
            (!found.contains(expected)).then_some((*query, found))
        })
        .collect();
    // "list pull requests" ranks `pulls_list` below tools whose names repeat "pull request".
    assert!(missed.len() <= 1, "{missed:#?}");
}
