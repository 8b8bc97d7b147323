//! The README and the guides stay what a newcomer can read: every guide is compiled as a
//! doctest (listed in `src/guides.rs`), every guide is linked from the README, every local link
//! leads somewhere, the README fits on a page, and no document tells history.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn guides() -> Vec<String> {
    let mut guides: Vec<String> = fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| Path::new(name).extension().is_some_and(|ext| ext == "md"))
        .collect();
    guides.sort();
    guides
}

#[test]
fn every_guide_is_compiled_and_linked_from_the_readme() {
    let compiled = fs::read_to_string(root().join("examples/src/guides.rs")).unwrap();
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    assert!(compiled.contains(r#"include_str!("../../README.md")"#));
    let guides = guides();
    assert!(guides.len() >= 12, "{guides:?}");
    for guide in &guides {
        assert!(
            compiled.contains(&format!(r#"include_str!("../../docs/{guide}")"#)),
            "docs/{guide} is not compiled: add it to examples/src/guides.rs"
        );
        assert!(
            readme.contains(&format!("(docs/{guide})")),
            "the README does not link docs/{guide}"
        );
    }
}

#[test]
fn the_readme_fits_on_a_page_and_starts_with_the_two_commands() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: detail goes to the guide for its concern"
    );
    let commands: Vec<&str> = readme
        .lines()
        .skip_while(|line| *line != "```sh")
        .skip(1)
        .take_while(|line| *line != "```")
        .collect();
    assert!(
        commands[0].starts_with("cargo run -p toolprism-examples --bin demo"),
        "{commands:?}"
    );
    assert!(
        commands[1].starts_with("cargo test --workspace"),
        "{commands:?}"
    );
}

/// Every `](path)` link in a document that is not a URL or an anchor names a file that exists.
#[test]
fn every_local_link_leads_somewhere() {
    let mut documents = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    documents.extend(guides().iter().map(|guide| root().join("docs").join(guide)));
    for crate_dir in ["runtime", "macros", "mcp", "codemode", "cli"] {
        documents.push(root().join(crate_dir).join("README.md"));
    }
    let mut broken = Vec::new();
    for document in &documents {
        let text = fs::read_to_string(document).unwrap();
        for rest in text.match_indices("](").map(|(at, _)| &text[at + 2..]) {
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.starts_with("http") || target.starts_with('#') || target.contains(' ') {
                continue;
            }
            let path = document
                .parent()
                .unwrap()
                .join(target.split('#').next().unwrap());
            if !path.exists() {
                broken.push(format!("{}: {target}", document.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

/// Documents say what is true now; the git log keeps the past.
#[test]
fn no_document_tells_history() {
    let phrases = [
        "the round before",
        "rounds before",
        "round before",
        "this round",
        "the last round",
        "earlier round",
        "in an earlier run",
        "before this round",
        "used to be",
    ];
    let mut documents = vec![root().join("README.md")];
    documents.extend(guides().iter().map(|guide| root().join("docs").join(guide)));
    let mut found = Vec::new();
    for document in &documents {
        let text = fs::read_to_string(document).unwrap().to_lowercase();
        for phrase in phrases {
            if text.contains(phrase) {
                found.push(format!("{}: \"{phrase}\"", document.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "history in the docs:\n{}",
        found.join("\n")
    );
}
