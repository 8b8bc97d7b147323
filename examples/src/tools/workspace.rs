//! The workspace every file tool is confined to.
//!
//! A path from the model is resolved against the root; `..`, absolute paths outside the root,
//! and symbolic links that lead outside are refused with `OUTSIDE_WORKSPACE`. The check is on
//! the canonical path (symlinks resolved), so no spelling gets around it.
//!
//! Crates: `toolprism`, `ignore`.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use toolprism::ToolError;

// Failure codes this tool sets, for a host or a test to match on.
/// The path is not a usable path.
pub const INVALID_PATH: &str = "INVALID_PATH";
/// The path does not exist.
pub const NOT_FOUND: &str = "NOT_FOUND";

/// The failure code of a path outside the workspace.
pub const OUTSIDE_WORKSPACE: &str = "OUTSIDE_WORKSPACE";

/// A directory the tools may touch, plus directories they may only read (such as the store
/// where oversized outputs are retained).
#[derive(Clone, Debug)]
pub struct Workspace {
    root: Arc<PathBuf>,
    readable: Arc<Vec<PathBuf>>,
}

impl Workspace {
    /// A workspace rooted at `root`, which must exist.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self {
            root: Arc::new(root.as_ref().canonicalize()?),
            readable: Arc::default(),
        })
    }

    /// Also lets the read-only tools read below `dir` (created if missing).
    pub fn with_readable(mut self, dir: impl AsRef<Path>) -> io::Result<Self> {
        std::fs::create_dir_all(dir.as_ref())?;
        let mut readable = (*self.readable).clone();
        readable.push(dir.as_ref().canonicalize()?);
        self.readable = Arc::new(readable);
        Ok(self)
    }

    /// The root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path to read: it must exist, inside the root or a readable directory.
    pub fn resolve_existing(&self, path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(path)?;
        let canonical = joined
            .canonicalize()
            .map_err(|error| not_found(path, &error))?;
        if canonical.starts_with(&*self.root)
            || self.readable.iter().any(|dir| canonical.starts_with(dir))
        {
            Ok(canonical)
        } else {
            Err(outside(path, &self.root))
        }
    }

    /// Resolves a path to write: inside the root; it may not exist yet, but whatever part of
    /// it exists is resolved (symlinks included) and must stay inside.
    pub fn resolve_writable(&self, path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(path)?;
        // The deepest ancestor that exists decides where the path really goes.
        let mut existing = joined.as_path();
        let mut rest = Vec::new();
        while existing.symlink_metadata().is_err() {
            let Some(name) = existing.file_name() else {
                return Err(outside(path, &self.root));
            };
            rest.push(name.to_owned());
            existing = existing.parent().ok_or_else(|| outside(path, &self.root))?;
        }
        let mut resolved = existing
            .canonicalize()
            .map_err(|error| not_found(path, &error))?;
        for name in rest.iter().rev() {
            resolved.push(name);
        }
        if resolved.starts_with(&*self.root) && resolved != *self.root {
            Ok(resolved)
        } else {
            Err(outside(path, &self.root))
        }
    }

    /// `path` as the model should see it: relative to the root when inside it.
    pub fn display(&self, path: &Path) -> String {
        path.strip_prefix(&*self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// Joins a model's path to the root, refusing `..` outright: a path that needs it to stay
    /// inside can be written without it.
    fn join(&self, path: &str) -> Result<PathBuf, ToolError> {
        if path.contains('\0') {
            return Err(ToolError::new("a path cannot contain NUL").with_code(INVALID_PATH));
        }
        let given = Path::new(path);
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(outside(path, &self.root));
        }
        Ok(if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        })
    }
}

/// The files below `dir` that `.gitignore` (in or out of a git repository) and the hidden-file
/// rule do not exclude, in walk order: what `glob` and `grep` search.
pub fn searchable_files(dir: &Path) -> impl Iterator<Item = Result<ignore::DirEntry, ToolError>> {
    ignore::WalkBuilder::new(dir)
        .require_git(false)
        .build()
        .filter_map(|entry| match entry {
            Ok(entry) if entry.file_type().is_some_and(|kind| kind.is_file()) => Some(Ok(entry)),
            Ok(_) => None,
            Err(error) => Some(Err(ToolError::new(error.to_string()))),
        })
}

fn outside(path: &str, root: &Path) -> ToolError {
    ToolError::new(format!(
        "`{path}` is outside the workspace `{}`: use a path inside it, relative to it",
        root.display()
    ))
    .with_code(OUTSIDE_WORKSPACE)
}

fn not_found(path: &str, error: &io::Error) -> ToolError {
    ToolError::new(format!("cannot open `{path}`: {error}")).with_code(NOT_FOUND)
}
