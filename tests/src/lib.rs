//! Helpers shared by the integration tests in `tests/`. They panic on I/O errors: a test
//! that cannot set up must fail loudly.

#![allow(clippy::missing_panics_doc)]

use std::fs;
use std::path::{Path, PathBuf};

use toolprism::{ContentBlock, ToolOutcome};

/// A text: the type [`text_tool!`] names through `$crate`.
pub type Text = String;

/// Declares a tool whose parameter and value types are named through `$crate`: used from
/// another crate, the tool's expansion must keep `$crate` naming this one.
#[macro_export]
macro_rules! text_tool {
    ($name:ident) => {
        /// Repeats a text.
        #[::toolprism::tool]
        pub fn $name(text: $crate::Text, times: u8) -> $crate::Text {
            text.repeat(usize::from(times))
        }
    };
}

/// The failure code of an outcome, if it is a failure with one.
pub fn code(outcome: &ToolOutcome) -> Option<&str> {
    outcome.error().and_then(|error| error.code())
}

/// The text blocks of an outcome, joined by newlines.
pub fn text(outcome: &ToolOutcome) -> String {
    outcome
        .content()
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A fresh directory, removed (with everything in it) when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory named after `name` and this process.
    pub fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("toolprism-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create a temporary directory");
        Self(dir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The files directly inside it, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<_> = fs::read_dir(&self.0)
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// Writes a file below it, creating directories.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create directories");
        }
        fs::write(&path, contents).expect("write a file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Where the recorded provider responses and streams are (`../shared/wire-transcripts` beside
/// the checkout, or `$TOOLPRISM_WIRE_TRANSCRIPTS`). They are third-party data, read in place
/// and never copied into the repository (their provenance is in their `SOURCES.md`).
pub fn wire_transcripts() -> PathBuf {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/wire-transcripts");
    let candidates = std::env::var_os("TOOLPRISM_WIRE_TRANSCRIPTS")
        .map(PathBuf::from)
        .into_iter()
        .chain([beside, PathBuf::from("/work/shared/wire-transcripts")]);
    for candidate in candidates {
        if candidate.join("SOURCES.md").is_file() {
            return candidate;
        }
    }
    panic!(
        "the wire transcripts are not beside the checkout (../shared/wire-transcripts); set TOOLPRISM_WIRE_TRANSCRIPTS"
    )
}

/// Validates `cases` (`{"name", "type", "value"}`, types as `scripts/check_wire.py` names
/// them) against the providers' own Python SDK types; returns the report
/// `{"checked", "failures": [{"name", "type", "error"}]}`.
pub fn check_wire(file_name: &str, cases: &[serde_json::Value]) -> serde_json::Value {
    let path = std::env::temp_dir().join(format!("toolprism-{}-{file_name}", std::process::id()));
    fs::write(&path, serde_json::to_vec(cases).expect("cases serialize")).expect("write the cases");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check-wire");
    let output = std::process::Command::new(script)
        .arg(&path)
        .output()
        .expect("run scripts/check-wire");
    let _ = fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "check-wire printed no report:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}
