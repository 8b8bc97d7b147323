//! Managed storage for tool output that was too big for the model: the full text is retained
//! here, byte for byte, before a bounded preview is published.
//!
//! # Naming
//!
//! A call id comes from a model or a remote peer: it may hold `../`, `/`, NUL, or be 10 KB
//! long. File names are therefore derived, never taken: `tool_` + at most 48 of the id's
//! ASCII letters, digits, `-` and `_` + a hash of the whole id + the time + a counter, and
//! created with `create_new`, so no name escapes the directory and no file is ever
//! overwritten.
//!
//! # Cleanup
//!
//! Retained files are not deleted on their own. [`FsOutputStore::cleanup`] applies a
//! [`RetentionRule`]: first every file older than `max_age` goes, then the oldest go until the
//! total is at most `max_total_bytes`. Only files this store named (`tool_*`) are touched.
//! The default rule keeps 7 days and 1 GiB.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::BoxFuture;

/// Where a full output was retained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetainedOutput {
    /// The name of the retained output in its store.
    pub handle: String,
    /// Where to read it: for [`FsOutputStore`], the file's absolute path. Shown to the model.
    pub location: String,
}

/// Why a full output could not be retained. The call then fails: a preview is never
/// published without its full text.
#[derive(Debug, thiserror::Error)]
#[error("cannot retain the full output: {0}")]
pub struct RetainError(#[from] pub io::Error);

/// Keeps full outputs that were too big for the model.
pub trait ToolOutputStore: Send + Sync + 'static {
    /// Retains `pieces` joined by `"\n"` (the text blocks of one result), for the call with this
    /// (untrusted) id, made to `tool`.
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        pieces: &'a [&'a str],
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>>;

    /// Reads back the output retained under `handle`, which comes from a remote reader and is
    /// untrusted: `Ok(None)` when this store has no output of that name. A store that cannot
    /// read back keeps this default, which says so.
    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<String>, RetainError>> {
        let _ = handle;
        Box::pin(std::future::ready(Err(RetainError(io::Error::new(
            io::ErrorKind::Unsupported,
            "this output store cannot read retained outputs back",
        )))))
    }
}

/// Whether `handle` is a name a store of this crate gives (`tool_` then at most 200 ASCII
/// letters, digits, `-` and `_`): anything else — `../`, `/`, NUL, a URL — names nothing.
pub fn is_valid_handle(handle: &str) -> bool {
    handle.len() <= PREFIX.len() + 200
        && handle.strip_prefix(PREFIX).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        })
}

/// A [`ToolOutputStore`] in a directory of the host's choosing.
///
/// Writes are synchronous: a host on a multi-threaded runtime that retains very large
/// outputs often may implement [`ToolOutputStore`] over this with its own `spawn_blocking`.
///
/// ```
/// use toolprism::bound::FsOutputStore;
///
/// let dir = std::env::temp_dir().join(format!("toolprism-doc-{}", std::process::id()));
/// let store = FsOutputStore::new(&dir);
/// let retained = store.retain_now("call/../../etc/passwd", "grep", &["a", "b"]).unwrap();
/// assert!(retained.handle.starts_with("tool_call-etc-passwd-"));
/// assert_eq!(std::fs::read_to_string(&retained.location).unwrap(), "a\nb");
/// assert_eq!(store.read_now(&retained.handle).unwrap().as_deref(), Some("a\nb"));
/// assert_eq!(store.read_now("../../etc/passwd").unwrap(), None);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct FsOutputStore {
    dir: PathBuf,
}

impl Default for FsOutputStore {
    /// `$XDG_CACHE_HOME/toolprism/tool-output`, else `$HOME/.cache/toolprism/tool-output`,
    /// else `toolprism-tool-output` in the temporary directory.
    fn default() -> Self {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|home| home.is_absolute())
                    .map(|home| home.join(".cache"))
            });
        Self::new(cache.map_or_else(
            || std::env::temp_dir().join("toolprism-tool-output"),
            |cache| cache.join("toolprism").join("tool-output"),
        ))
    }
}

/// Longest part of a call id kept in a file name.
const MAX_ID_IN_NAME: usize = 48;
const PREFIX: &str = "tool_";

impl FsOutputStore {
    /// A store in `dir`, created (owner-only on Unix) on first use.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Retains `pieces` joined by `"\n"` now, blocking.
    pub fn retain_now(
        &self,
        call_id: &str,
        tool: &str,
        pieces: &[&str],
    ) -> Result<RetainedOutput, RetainError> {
        self.ensure_dir()?;
        let (handle, mut file) = self.create_unique(call_id, tool)?;
        for (at, piece) in pieces.iter().enumerate() {
            if at > 0 {
                file.write_all(b"\n")?;
            }
            file.write_all(piece.as_bytes())?;
        }
        // Written through to the page cache, not fsynced: retention guards against a lossy
        // preview, not against a machine crash, and must keep up with the text it bounds.
        file.flush()?;
        let location = self.dir.join(&handle);
        let location = fs::canonicalize(&location).unwrap_or(location);
        Ok(RetainedOutput {
            handle,
            location: location.to_string_lossy().into_owned(),
        })
    }

    /// Reads back the output retained under `handle`, blocking; `None` when `handle` is not a
    /// name this store gives or no such output is kept.
    pub fn read_now(&self, handle: &str) -> Result<Option<String>, RetainError> {
        if !is_valid_handle(handle) {
            return Ok(None);
        }
        let path = self.dir.join(handle);
        match fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_file() => Ok(Some(fs::read_to_string(&path)?)),
            Ok(_) => Ok(None),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    fn ensure_dir(&self) -> io::Result<()> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.dir)?;
        // A symlink planted where the directory should be would send output elsewhere.
        if fs::symlink_metadata(&self.dir)?.file_type().is_symlink() {
            return Err(io::Error::other(format!(
                "{} is a symbolic link; refusing to write through it",
                self.dir.display()
            )));
        }
        Ok(())
    }

    fn create_unique(&self, call_id: &str, tool: &str) -> io::Result<(String, fs::File)> {
        loop {
            let handle = fresh_handle(call_id, tool);
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(self.dir.join(&handle))
            {
                Ok(file) => return Ok((handle, file)),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// Applies a retention rule: deletes what is older than `max_age`, then the oldest files
    /// until the total is at most `max_total_bytes`. Only files this store named are touched.
    pub fn cleanup(&self, rule: &RetentionRule) -> io::Result<CleanupReport> {
        let mut files = Vec::new();
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(CleanupReport::default());
            }
            Err(error) => return Err(error),
        };
        for entry in entries {
            let entry = entry?;
            let named_by_us = entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(PREFIX));
            let metadata = entry.metadata()?;
            if named_by_us && metadata.is_file() {
                let modified = metadata.modified().unwrap_or(UNIX_EPOCH);
                files.push((modified, metadata.len(), entry.path()));
            }
        }
        files.sort();
        let now = SystemTime::now();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        let mut report = CleanupReport::default();
        for (modified, len, path) in files {
            let too_old = now.duration_since(modified).unwrap_or_default() > rule.max_age;
            if too_old || total > rule.max_total_bytes {
                fs::remove_file(&path)?;
                total -= len;
                report.removed_files += 1;
                report.removed_bytes += len;
            } else {
                report.kept_files += 1;
            }
        }
        report.kept_bytes = total;
        Ok(report)
    }
}

impl ToolOutputStore for FsOutputStore {
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        pieces: &'a [&'a str],
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>> {
        Box::pin(async move { self.retain_now(call_id, tool, pieces) })
    }

    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<String>, RetainError>> {
        Box::pin(async move { self.read_now(handle) })
    }
}

/// A new handle for an output of the call with this (untrusted) id made to `tool`: only
/// `[A-Za-z0-9_-]`, bounded in length, valid for [`is_valid_handle`], and distinct from every
/// other this process makes — the time, the process id and a counter are in it, so stores
/// shared by several processes see distinct names too (they still create without
/// overwriting, and take another on a clash).
pub fn fresh_handle(call_id: &str, tool: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "{}-{nanos:x}-{:x}-{count:x}",
        base_name(call_id, tool),
        std::process::id()
    )
}

/// `tool_<safe part of the id>-<hash of id and tool>`: only `[A-Za-z0-9_-]`, bounded length.
fn base_name(call_id: &str, tool: &str) -> String {
    let mut safe = String::with_capacity(MAX_ID_IN_NAME);
    let mut last_dash = true;
    for ch in call_id.chars() {
        if safe.len() >= MAX_ID_IN_NAME {
            break;
        }
        if ch.is_ascii_alphanumeric() || ch == '_' {
            safe.push(ch);
            last_dash = false;
        } else if !last_dash {
            safe.push('-');
            last_dash = true;
        }
    }
    let mut hasher = DefaultHasher::new();
    (call_id, tool).hash(&mut hasher);
    format!(
        "{PREFIX}{}-{:016x}",
        safe.trim_end_matches('-'),
        hasher.finish()
    )
}

/// When retained outputs are deleted by [`FsOutputStore::cleanup`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetentionRule {
    /// Files older than this go.
    pub max_age: Duration,
    /// Then the oldest go until the total is at most this.
    pub max_total_bytes: u64,
}

impl Default for RetentionRule {
    /// 7 days, 1 GiB.
    fn default() -> Self {
        Self {
            max_age: Duration::from_secs(7 * 24 * 60 * 60),
            max_total_bytes: 1 << 30,
        }
    }
}

/// What a cleanup did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CleanupReport {
    /// Files deleted.
    pub removed_files: usize,
    /// Bytes deleted.
    pub removed_bytes: u64,
    /// Files kept.
    pub kept_files: usize,
    /// Bytes kept.
    pub kept_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_and_bounded() {
        for hostile in [
            "../../etc/passwd",
            "/abs/path",
            "a\0b",
            "..",
            ".",
            "",
            "ünï/cödé",
        ] {
            let name = base_name(hostile, "t");
            assert!(name.starts_with(PREFIX), "{name}");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{name}"
            );
        }
        let long = "x".repeat(10_000);
        assert!(base_name(&long, "t").len() < 100);
        // Ids that sanitize alike still differ by their hash.
        assert_ne!(base_name("a/b", "t"), base_name("a?b", "t"));
        assert_ne!(base_name("a", "t"), base_name("a", "u"));
    }
}
