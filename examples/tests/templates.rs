//! "Copy this file" is never a lie: each first-party tool, with exactly what its `To adapt:`
//! line names and the crates its `Crates:` line lists, is copied into a fresh crate outside
//! the workspace that depends on the runtime by path, and built; so is each template in
//! `templates/`, with only its dependencies on toolprism's crates pointed at this checkout.
//!
//! The copies share one target directory (`target/templates`), so the dependencies are built
//! once; each copy keeps its own features, so a feature a tool needs but does not list fails
//! its build.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use toml::{Table, Value};

/// The crates of this workspace, by package name and directory.
const OWN_CRATES: [(&str, &str); 5] = [
    ("toolprism", "runtime"),
    ("toolprism-macros", "macros"),
    ("toolprism-mcp", "mcp"),
    ("toolprism-codemode", "codemode"),
    ("toolprism-cli", "cli"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the examples crate is in the workspace")
        .to_owned()
}

/// The workspace's `[workspace.dependencies]`: where a copy takes each crate's version from.
fn workspace_dependencies() -> Table {
    let manifest: Table = fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    manifest["workspace"]["dependencies"]
        .as_table()
        .unwrap()
        .clone()
}

/// A file's leading `//!` lines, as one text.
fn header(source: &str) -> String {
    source
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.trim_start_matches("//!").trim())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paragraph of a header that starts with `label`, joined into one line.
fn paragraph(header: &str, label: &str) -> Option<String> {
    header
        .split("\n\n")
        .find(|paragraph| paragraph.starts_with(label))
        .map(|paragraph| paragraph.replace('\n', " "))
}

/// The `.rs` files a `To adapt:` paragraph names (in backquotes).
fn files_named(to_adapt: &str) -> Vec<String> {
    to_adapt
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| Path::new(name).extension().is_some_and(|ext| ext == "rs"))
        .map(str::to_owned)
        .collect()
}

/// The crates a `Crates:` paragraph lists, each with the features named after it:
/// `` `tokio` (features `fs`, `rt`), `base64` ``.
fn crates_listed(crates: &str) -> BTreeMap<String, Vec<String>> {
    let mut listed = BTreeMap::new();
    let body = crates.trim_start_matches("Crates:");
    let mut current = None;
    let mut in_features = false;
    for (index, piece) in body.split('`').enumerate() {
        if index % 2 == 1 {
            if in_features {
                let name: &String = current.as_ref().expect("features follow a crate");
                listed
                    .entry(name.clone())
                    .or_insert_with(Vec::new)
                    .push(piece.to_owned());
            } else {
                listed.insert(piece.to_owned(), Vec::new());
                current = Some(piece.to_owned());
            }
        } else {
            if piece.contains('(') {
                in_features = true;
            }
            if piece.contains(')') {
                in_features = false;
            }
        }
    }
    listed
}

/// A dependency entry for `name` with these extra features: a path for the workspace's own
/// crates, else the workspace's version and settings.
fn dependency(name: &str, features: &[String], workspace: &Table) -> Value {
    let mut entry = Table::new();
    if let Some((_, dir)) = OWN_CRATES
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
    {
        entry.insert(
            "path".into(),
            Value::String(root().join(dir).display().to_string()),
        );
    } else {
        match workspace.get(name).unwrap_or_else(|| {
            panic!("`{name}` is not a workspace dependency: add it there or fix the `Crates:` line")
        }) {
            Value::String(version) => {
                entry.insert("version".into(), Value::String(version.clone()));
            }
            Value::Table(table) => {
                for key in ["version", "default-features", "features"] {
                    if let Some(value) = table.get(key) {
                        entry.insert(key.into(), value.clone());
                    }
                }
            }
            other => panic!("unexpected workspace dependency `{name}`: {other}"),
        }
    }
    if !features.is_empty() {
        let mut all: Vec<Value> = entry
            .get("features")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        all.extend(features.iter().cloned().map(Value::String));
        entry.insert("features".into(), Value::Array(all));
    }
    Value::Table(entry)
}

/// Builds the crate in `dir` with the shared target directory; the build's output on failure.
fn build(dir: &Path) -> Result<(), String> {
    // The workspace's lock file: the copy resolves to the versions the workspace is tested with.
    fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let output = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--all-targets"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", root().join("target").join("templates"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn each_first_party_tool_builds_alone_with_what_its_header_names() {
    let workspace = workspace_dependencies();
    let tools_dir = root().join("examples/src/tools");
    let scratch = tempfile::tempdir().unwrap();
    let mut tools: Vec<_> = fs::read_dir(&tools_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| {
            Path::new(name).extension().is_some_and(|ext| ext == "rs")
                && name != "mod.rs"
                && name != "workspace.rs"
        })
        .collect();
    tools.sort();
    assert_eq!(tools.len(), 8, "the coding tools: {tools:?}");

    let mut failures = Vec::new();
    for file in &tools {
        let tool = file.trim_end_matches(".rs");
        let source = fs::read_to_string(tools_dir.join(file)).unwrap();
        let mut files = vec![file.clone()];
        if let Some(to_adapt) = paragraph(&header(&source), "To adapt:") {
            files.extend(files_named(&to_adapt));
        }
        let mut crates = BTreeMap::new();
        for copied in &files {
            let text = fs::read_to_string(tools_dir.join(copied)).unwrap_or_else(|_| {
                panic!("{file} names `{copied}`, which is not in examples/src/tools")
            });
            let listed = paragraph(&header(&text), "Crates:")
                .unwrap_or_else(|| panic!("{copied} has no `Crates:` line"));
            for (name, features) in crates_listed(&listed) {
                crates.entry(name).or_insert_with(Vec::new).extend(features);
            }
        }

        let dir = scratch.path().join(tool);
        fs::create_dir_all(dir.join("src/tools")).unwrap();
        let mut dependencies = Table::new();
        for (name, features) in &crates {
            dependencies.insert(name.clone(), dependency(name, features, &workspace));
        }
        let mut package = Table::new();
        package.insert("name".into(), Value::String(format!("copied-{tool}")));
        package.insert("version".into(), Value::String("0.1.0".into()));
        package.insert("edition".into(), Value::String("2024".into()));
        package.insert("publish".into(), Value::Boolean(false));
        let mut manifest = Table::new();
        manifest.insert("package".into(), Value::Table(package));
        manifest.insert("dependencies".into(), Value::Table(dependencies));
        fs::write(dir.join("Cargo.toml"), toml::to_string(&manifest).unwrap()).unwrap();

        let mut lib = String::from("#![deny(warnings)]\npub mod tools {\n");
        for copied in &files {
            fs::copy(tools_dir.join(copied), dir.join("src/tools").join(copied)).unwrap();
            writeln!(lib, "    pub mod {};", copied.trim_end_matches(".rs")).unwrap();
        }
        lib.push_str("}\n");
        fs::write(dir.join("src/lib.rs"), lib).unwrap();

        if let Err(output) = build(&dir) {
            failures.push(format!("{file} with {files:?} and {crates:?}:\n{output}"));
        }
    }
    assert!(
        failures.is_empty(),
        "copies that do not build:\n{}",
        failures.join("\n")
    );
}

#[test]
fn each_template_builds_outside_the_workspace() {
    let templates = root().join("templates");
    let scratch = tempfile::tempdir().unwrap();
    let mut names: Vec<_> = fs::read_dir(&templates)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.len() >= 2, "the templates: {names:?}");

    let mut failures = Vec::new();
    for name in &names {
        let dir = scratch.path().join(name);
        copy_dir(&templates.join(name), &dir);
        // As published, the template names toolprism's crates by version; here they are this
        // checkout's, by path.
        let mut manifest: Table = fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let dependencies = manifest["dependencies"].as_table_mut().unwrap();
        for (crate_name, crate_dir) in OWN_CRATES {
            if let Some(Value::Table(entry)) = dependencies.get_mut(crate_name) {
                entry.remove("version");
                entry.insert(
                    "path".into(),
                    Value::String(root().join(crate_dir).display().to_string()),
                );
            } else if dependencies.contains_key(crate_name) {
                let mut entry = Table::new();
                entry.insert(
                    "path".into(),
                    Value::String(root().join(crate_dir).display().to_string()),
                );
                dependencies.insert(crate_name.into(), Value::Table(entry));
            }
        }
        fs::write(dir.join("Cargo.toml"), toml::to_string(&manifest).unwrap()).unwrap();
        if let Err(output) = build(&dir) {
            failures.push(format!("templates/{name}:\n{output}"));
        }
    }
    assert!(
        failures.is_empty(),
        "templates that do not build:\n{}",
        failures.join("\n")
    );
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            // A template built in place leaves its `target/`; it is not part of the template.
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn a_crates_line_is_read_with_its_features() {
    let listed = crates_listed(
        "Crates: `toolprism`, `tokio` (features `process`, `io-util`), `nix` (features `signal`; Unix only), `base64`.",
    );
    let expected: BTreeMap<String, Vec<String>> = [
        ("toolprism", vec![]),
        ("tokio", vec!["process", "io-util"]),
        ("nix", vec!["signal"]),
        ("base64", vec![]),
    ]
    .into_iter()
    .map(|(name, features)| {
        (
            name.to_owned(),
            features.into_iter().map(str::to_owned).collect(),
        )
    })
    .collect();
    assert_eq!(listed, expected);
    assert_eq!(
        files_named(
            "To adapt: this file uses `Workspace` (copy `workspace.rs` along) and `text.rs`."
        ),
        ["workspace.rs", "text.rs"]
    );
}
