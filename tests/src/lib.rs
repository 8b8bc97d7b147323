//! Helpers shared by the integration tests in `tests/`. They panic on I/O errors: a test
//! that cannot set up must fail loudly.

#![allow(clippy::missing_panics_doc)]

use std::fs;
use std::path::{Path, PathBuf};

use toolprism::{ContentBlock, ToolOutcome};

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
