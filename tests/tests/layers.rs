//! The runtime's modules import one another one way: no cycle between the top-level modules,
//! and none between the files of a folder. Read from the source (`use crate::…`, `crate::…`
//! paths, `use super::…`), so a type put in the wrong file fails here, naming the cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, as (module path, source), e.g. `("pipeline::wrap", …)`.
fn modules(dir: &Path, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .expect("the runtime's sources")
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            modules(&path, &inner, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let mut module = prefix.to_vec();
            if name != "mod" && name != "lib" {
                module.push(name);
            }
            out.push((module, fs::read_to_string(&path).expect("a source file")));
        }
    }
}

/// The code of a file without comments (doc examples name public paths, not imports) and
/// without its unit tests.
fn code(source: &str) -> String {
    let source = source.split("#[cfg(test)]").next().unwrap_or(source);
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file names: `crate::a::b…` and `super::…` (resolved against `module`),
/// with `use` groups expanded one level (`use crate::a::{b, c}` names `a::b` and `a::c`).
fn references(module: &[String], source: &str) -> Vec<Vec<String>> {
    let code = code(source);
    let mut found = Vec::new();
    for (marker, base) in [("crate::", Vec::new()), ("super::", parent(module))] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(marker) {
            let before = rest[..at].chars().last();
            rest = &rest[at + marker.len()..];
            if before.is_some_and(|ch| ch.is_alphanumeric() || ch == '_' || ch == ':') {
                continue;
            }
            let path: String = rest
                .chars()
                .take_while(|ch| ch.is_alphanumeric() || *ch == '_' || *ch == ':')
                .collect();
            let mut segments: Vec<String> = base.clone();
            for segment in path.split("::").filter(|segment| !segment.is_empty()) {
                segments.push(segment.to_owned());
            }
            if rest[path.len()..].starts_with('{') {
                // A group: the names inside are one level further down.
                let close = rest.find('}').unwrap_or(rest.len());
                let group = &rest[path.len() + 1..close];
                for name in group.split(',') {
                    let name = name.trim().split("::").next().unwrap_or("").trim();
                    if !name.is_empty() && name != "self" {
                        let mut inner = segments.clone();
                        inner.push(name.to_owned());
                        found.push(inner);
                    }
                }
            }
            found.push(segments);
        }
    }
    found
}

/// The module `super` names from a file: the parent of its module (for a folder's `mod.rs`,
/// the folder's parent).
fn parent(module: &[String]) -> Vec<String> {
    module[..module.len().saturating_sub(1)].to_vec()
}

/// The longest known module that is a prefix of `path`.
fn resolve(path: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|len| path[..len].to_vec())
        .find(|prefix| known.contains(prefix))
}

/// A cycle in `graph`, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let start = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, state, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node)
            && let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

fn graphs() -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, BTreeSet<String>>,
) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    let mut files = Vec::new();
    modules(&src, &[], &mut files);
    let known: BTreeSet<Vec<String>> = files.iter().map(|(module, _)| module.clone()).collect();
    let folder_roots: BTreeSet<Vec<String>> = known
        .iter()
        .filter(|module| {
            known
                .iter()
                .any(|other| other.len() > module.len() && other.starts_with(module))
        })
        .cloned()
        .collect();
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut within: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, source) in &files {
        // The crate root re-exports everything; it is above every layer.
        let Some(first) = module.first() else {
            continue;
        };
        let is_folder_root = folder_roots.contains(module);
        for reference in references(module, source) {
            let Some(target) = resolve(&reference, &known) else {
                continue; // An item of the crate root (`crate::BoxFuture`), or a dependency.
            };
            let Some(target_first) = target.first() else {
                continue;
            };
            if target_first != first {
                top.entry(first.clone())
                    .or_default()
                    .insert(target_first.clone());
            } else if target != *module && !(is_folder_root && target.starts_with(module)) {
                // Inside one folder: file to file (a folder's root declaring its files aside).
                within
                    .entry(module.join("::"))
                    .or_default()
                    .insert(target.join("::"));
            }
        }
    }
    (top, within)
}

#[test]
fn top_level_modules_import_one_way() {
    let (top, _) = graphs();
    assert!(top.len() > 8, "the source was read: {top:?}");
    if let Some(cycle) = find_cycle(&top) {
        panic!("modules import each other: {}", cycle.join(" → "));
    }
}

#[test]
fn files_within_a_folder_import_one_way() {
    let (_, within) = graphs();
    if let Some(cycle) = find_cycle(&within) {
        panic!("files import each other: {}", cycle.join(" → "));
    }
}

#[test]
fn the_checker_finds_a_cycle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&graph), None);
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let refs = references(
        &["pipeline".into(), "wrap".into()],
        "use crate::present::{Card, ContentBlock};\nuse super::Chain;\n// crate::ignored::x\n",
    );
    assert!(
        refs.contains(&vec!["present".to_owned(), "Card".to_owned()]),
        "{refs:?}"
    );
    assert!(
        refs.contains(&vec!["pipeline".to_owned(), "Chain".to_owned()]),
        "{refs:?}"
    );
    assert!(
        !refs
            .iter()
            .any(|r| r.first().is_some_and(|s| s == "ignored"))
    );
}
