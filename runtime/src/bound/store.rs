//! Managed storage for tool output that was too big for the model: the full text is retained
//! here, byte for byte, before a bounded preview is published.
//!
//! # Naming
//!
//! A handle is read back by whoever holds it (an MCP client's `resources/read`), so it cannot
//! be guessed: `tool_` + at most 48 of the call id's ASCII letters, digits, `-` and `_` + 128
//! bits from the operating system's random source, and nothing derived from the time, the
//! process or a counter. A call id comes from a model or a remote peer (it may hold `../`,
//! `/`, NUL, or be 10 KB long), so only those characters are kept; files are created with
//! `create_new`, so no name escapes the directory and no file is ever overwritten.
//!
//! # Who may read it back
//!
//! Each output is kept with its [`Retention`]: the [`Owner`](crate::access::Owner) of the call
//! that made it and the scopes its tool needs. A reader who is not that owner, or lacks a
//! scope, is answered as for a handle that names nothing
//! ([`Snapshot::read_retained`](crate::Snapshot::read_retained)).
//!
//! # Expiry
//!
//! [`FsOutputStore`] applies a [`RetentionRule`] (default: 7 days and 1 GiB): an output older
//! than `max_age` reads as absent, and at most every [`SWEEP_INTERVAL`] a retain sweeps the
//! directory ([`FsOutputStore::cleanup`]: first every file older than `max_age` goes, then the
//! oldest go until the total is at most `max_total_bytes`). Only files this store named
//! (`tool_*`) are touched.

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::BoxFuture;
use crate::access::{Caller, Owner};

/// How often, at most, a store sweeps what expired, on the next retain after it is due.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(10 * 60);

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

/// Who may read a retained output back, kept with it: the owner of the call that made it, and
/// the scopes calling the tool that made it needs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Retention {
    /// The owner's key ([`Owner::as_str`]); `None` for an output of the host's own call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The scopes its tool needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

impl Retention {
    /// Kept for `owner`, readable with `scopes`.
    pub fn new(owner: Option<&Owner>, scopes: Vec<String>) -> Self {
        Self {
            owner: owner.map(|owner| owner.as_str().to_owned()),
            scopes,
        }
    }

    /// Whether a reader may read the output: the same owner (no owner for no owner), holding
    /// every scope its tool needs — unless the reader has no caller, the host's own read.
    ///
    /// ```
    /// use toolprism::access::{Caller, Owner};
    /// use toolprism::bound::Retention;
    ///
    /// let claims = serde_json::json!({"sub": "ada", "scope": "shell:run"});
    /// let ada = Caller::from_claims(claims.as_object().unwrap().clone());
    /// let kept = Retention::new(Some(&ada.owner()), vec!["shell:run".into()]);
    /// assert!(kept.admits(Some(&ada.owner()), Some(&ada)));
    /// assert!(!kept.admits(Some(&Owner::new("session/other")), None));
    /// assert!(!kept.admits(None, None));
    /// ```
    pub fn admits(&self, owner: Option<&Owner>, caller: Option<&Caller>) -> bool {
        self.owner.as_deref() == owner.map(Owner::as_str)
            && caller.is_none_or(|caller| self.scopes.iter().all(|scope| caller.has_scope(scope)))
    }
}

/// A retained output read back, with who may read it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retained {
    /// The full text.
    pub text: String,
    /// Who may read it.
    pub retention: Retention,
}

impl Retained {
    /// `text`, kept with `retention`.
    pub fn new(text: String, retention: Retention) -> Self {
        Self { text, retention }
    }
}

/// Keeps full outputs that were too big for the model.
pub trait ToolOutputStore: Send + Sync + 'static {
    /// Retains `pieces` joined by `"\n"` (the text blocks of one result), for the call with this
    /// (untrusted) id, made to `tool`, with who may read it back.
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        pieces: &'a [&'a str],
        retention: &'a Retention,
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>>;

    /// Reads back the output retained under `handle`, which comes from a remote reader and is
    /// untrusted, with its retention: `Ok(None)` when this store has no output of that name
    /// (or it expired). A store that cannot read back keeps this default, which says so.
    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<Retained>, RetainError>> {
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
/// Each output is a file of its own, the full text byte for byte (its path is what the model
/// is shown), beside a `.retention` file saying who may read it back. An output whose
/// retention file is missing reads as absent.
///
/// Writes are synchronous: a host on a multi-threaded runtime that retains very large
/// outputs often may implement [`ToolOutputStore`] over this with its own `spawn_blocking`.
///
/// ```
/// use toolprism::bound::{FsOutputStore, Retention};
///
/// let dir = std::env::temp_dir().join(format!("toolprism-doc-{}", std::process::id()));
/// let store = FsOutputStore::new(&dir);
/// let kept = Retention::default();
/// let retained = store.retain_now("call/../../etc/passwd", &["a", "b"], &kept).unwrap();
/// assert!(retained.handle.starts_with("tool_call-etc-passwd-"));
/// assert_eq!(std::fs::read_to_string(&retained.location).unwrap(), "a\nb");
/// let read = store.read_now(&retained.handle).unwrap().unwrap();
/// assert_eq!((read.text.as_str(), read.retention), ("a\nb", kept));
/// assert_eq!(store.read_now("../../etc/passwd").unwrap(), None);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct FsOutputStore {
    dir: PathBuf,
    rule: RetentionRule,
    /// When the directory was last swept, in seconds since the Unix epoch.
    swept: Arc<AtomicU64>,
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
/// What follows an output's file name for the file of its retention.
const RETENTION_SUFFIX: &str = ".retention";
/// The most a retention file may weigh (an owner's key and a tool's scopes).
const MAX_RETENTION_BYTES: u64 = 64 * 1024;

impl FsOutputStore {
    /// A store in `dir`, created (owner-only on Unix) on first use, keeping outputs as the
    /// default [`RetentionRule`] says.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            rule: RetentionRule::default(),
            swept: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The same store, keeping outputs as `rule` says.
    #[must_use]
    pub fn with_retention(mut self, rule: RetentionRule) -> Self {
        self.rule = rule;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Retains `pieces` joined by `"\n"` now, blocking, readable back as `retention` says.
    pub fn retain_now(
        &self,
        call_id: &str,
        pieces: &[&str],
        retention: &Retention,
    ) -> Result<RetainedOutput, RetainError> {
        self.ensure_dir()?;
        self.sweep_if_due();
        let (handle, mut file) = self.create_unique(call_id)?;
        for (at, piece) in pieces.iter().enumerate() {
            if at > 0 {
                file.write_all(b"\n")?;
            }
            file.write_all(piece.as_bytes())?;
        }
        // Written through to the page cache, not fsynced: retention guards against a lossy
        // preview, not against a machine crash, and must keep up with the text it bounds.
        file.flush()?;
        // Last: until it is there, the output reads as absent (never as anyone's).
        let mut kept = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.retention_path(&handle))?;
        kept.write_all(&serde_json::to_vec(retention).map_err(io::Error::other)?)?;
        let location = self.dir.join(&handle);
        let location = fs::canonicalize(&location).unwrap_or(location);
        Ok(RetainedOutput {
            handle,
            location: location.to_string_lossy().into_owned(),
        })
    }

    /// Reads back the output retained under `handle`, blocking, with its retention; `None`
    /// when `handle` is not a name this store gives, no such output is kept, or it expired.
    pub fn read_now(&self, handle: &str) -> Result<Option<Retained>, RetainError> {
        if !is_valid_handle(handle) {
            return Ok(None);
        }
        let path = self.dir.join(handle);
        let metadata = match fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_file() => metadata,
            Ok(_) => return Ok(None),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let age = SystemTime::now()
            .duration_since(metadata.modified().unwrap_or(UNIX_EPOCH))
            .unwrap_or_default();
        if age > self.rule.max_age {
            return Ok(None);
        }
        let Some(retention) = self.read_retention(handle)? else {
            return Ok(None);
        };
        Ok(Some(Retained::new(fs::read_to_string(&path)?, retention)))
    }

    fn retention_path(&self, handle: &str) -> PathBuf {
        self.dir.join(format!("{handle}{RETENTION_SUFFIX}"))
    }

    /// An output's retention; `None` when its file is missing, not a file, or unreadable as one.
    fn read_retention(&self, handle: &str) -> io::Result<Option<Retention>> {
        let path = self.retention_path(handle);
        match fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_file() && metadata.len() <= MAX_RETENTION_BYTES => {}
            Ok(_) => return Ok(None),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        }
        Ok(serde_json::from_slice(&fs::read(&path)?).ok())
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

    fn create_unique(&self, call_id: &str) -> io::Result<(String, fs::File)> {
        loop {
            let handle = fresh_handle(call_id)?;
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

    /// Cleans up as the store's rule says, if the last sweep was [`SWEEP_INTERVAL`] ago; a
    /// sweep that fails is logged, and never fails the retain.
    fn sweep_if_due(&self) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let last = self.swept.load(Ordering::Relaxed);
        let due = now.saturating_sub(last) >= SWEEP_INTERVAL.as_secs();
        // One retain sweeps; the others go on.
        if due
            && self
                .swept
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            && let Err(error) = self.cleanup(&self.rule)
        {
            tracing::warn!(%error, dir = %self.dir.display(), "sweeping retained outputs failed");
        }
    }

    /// Applies a retention rule: deletes what is older than `max_age`, then the oldest outputs
    /// until the total is at most `max_total_bytes`; each output's retention file goes with
    /// it, and one whose output is gone goes too. Only files this store named are touched.
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
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let metadata = entry.metadata()?;
            if !metadata.is_file() || !name.starts_with(PREFIX) {
                continue;
            }
            if let Some(handle) = name.strip_suffix(RETENTION_SUFFIX) {
                if !self.dir.join(handle).exists() {
                    remove_if_there(&entry.path())?;
                }
            } else {
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
                remove_if_there(&path)?;
                let mut kept = path.into_os_string();
                kept.push(RETENTION_SUFFIX);
                remove_if_there(Path::new(&kept))?;
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

/// Removes a file, unless another sweep got there first.
fn remove_if_there(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

impl ToolOutputStore for FsOutputStore {
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        _tool: &'a str,
        pieces: &'a [&'a str],
        retention: &'a Retention,
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>> {
        Box::pin(async move { self.retain_now(call_id, pieces, retention) })
    }

    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<Retained>, RetainError>> {
        Box::pin(async move { self.read_now(handle) })
    }
}

/// A new handle for an output of the call with this (untrusted) id: only `[A-Za-z0-9_-]`,
/// bounded in length, valid for [`is_valid_handle`], and unguessable — 128 bits from the
/// operating system's random source, and nothing of the time, the process or a counter.
/// Fails only when the operating system gives no randomness.
pub fn fresh_handle(call_id: &str) -> io::Result<String> {
    let mut random = [0_u8; 16];
    getrandom::fill(&mut random)
        .map_err(|error| io::Error::other(format!("no randomness for a handle: {error}")))?;
    let mut handle = base_name(call_id);
    handle.push('-');
    for byte in random {
        let _ = write!(handle, "{byte:02x}");
    }
    Ok(handle)
}

/// `tool_<safe part of the id>`: only `[A-Za-z0-9_-]`, bounded length.
fn base_name(call_id: &str) -> String {
    let mut safe = String::with_capacity(PREFIX.len() + MAX_ID_IN_NAME + 33);
    safe.push_str(PREFIX);
    let mut last_dash = true;
    for ch in call_id.chars() {
        if safe.len() >= PREFIX.len() + MAX_ID_IN_NAME {
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
    let kept = safe.trim_end_matches('-').len();
    safe.truncate(kept);
    safe
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
    fn names_are_safe_bounded_and_random() {
        for hostile in [
            "../../etc/passwd",
            "/abs/path",
            "a\0b",
            "..",
            ".",
            "",
            "ünï/cödé",
        ] {
            let name = fresh_handle(hostile).unwrap();
            assert!(is_valid_handle(&name), "{name}");
        }
        let long = "x".repeat(10_000);
        assert!(fresh_handle(&long).unwrap().len() < 100);
        // The same id twice: 128 random bits apart, sharing nothing past the id.
        let (one, two) = (fresh_handle("c1").unwrap(), fresh_handle("c1").unwrap());
        let (one, two) = (&one["tool_c1-".len()..], &two["tool_c1-".len()..]);
        assert_eq!((one.len(), two.len()), (32, 32));
        assert_ne!(one, two);
        assert!(one.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
