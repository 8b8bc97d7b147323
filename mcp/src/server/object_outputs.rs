//! Retained output in object storage, shared by every replica behind a load balancer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload};
use toolprism::BoxFuture;
use toolprism::bound::{
    RetainError, Retained, RetainedOutput, Retention, SWEEP_INTERVAL, ToolOutputStore,
    fresh_handle, is_valid_handle,
};

/// How long a retained output is kept unless the store says otherwise.
pub const DEFAULT_OUTPUT_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The most a sweep deletes at once; what is left waits for the next.
const MAX_SWEPT: usize = 1_000;
/// The most an object's retention may weigh (an owner's key and a tool's scopes).
const MAX_RETENTION_BYTES: usize = 64 * 1024;

/// A [`ToolOutputStore`] over any [`ObjectStore`]: S3, GCS, Azure, local files or memory.
/// Outputs are written once under `<prefix>/<handle>` (never overwriting) and read back by
/// handle from any replica, with who may read them; wrap it in
/// [`OutputResources`](crate::OutputResources) so MCP clients read them as resources.
///
/// An object holds its expiry (milliseconds since the Unix epoch, 8 bytes big-endian), its
/// [`Retention`] (its length, 4 bytes big-endian, then JSON) and the text. An output past its
/// expiry reads as absent and is deleted; at most every
/// [`SWEEP_INTERVAL`](toolprism::bound::SWEEP_INTERVAL) a retain sweeps the prefix for
/// objects older than the TTL (a bucket lifecycle rule on the prefix does the same without
/// listing).
///
/// For S3 (feature `object-store-aws`), the usual environment configures it:
///
/// ```text
/// // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (and AWS_ENDPOINT for MinIO)
/// let s3 = object_store::aws::AmazonS3Builder::from_env()
///     .with_bucket_name("my-tool-output")
///     .build()?;
/// let store = ObjectOutputStore::new(Arc::new(s3), "toolprism/outputs");
/// ```
///
/// In memory (tests, one process):
///
/// ```
/// use std::sync::Arc;
/// use toolprism::bound::{Retention, ToolOutputStore};
/// use toolprism_mcp::ObjectOutputStore;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let store = ObjectOutputStore::new(Arc::new(object_store::memory::InMemory::new()), "outputs");
/// let kept = Retention::default();
/// let retained = store.retain("call-1", "grep", &["a", "b"], &kept).await.unwrap();
/// let read = store.read(&retained.handle).await.unwrap().unwrap();
/// assert_eq!((read.text.as_str(), read.retention), ("a\nb", kept));
/// assert_eq!(store.read("../secrets").await.unwrap(), None);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct ObjectOutputStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    ttl: Duration,
    /// When this store last swept its prefix, in seconds since the Unix epoch.
    swept: Arc<AtomicU64>,
}

impl ObjectOutputStore {
    /// Outputs go under `prefix` (a path of `/`-separated parts; may be empty) in `store`,
    /// each kept [`DEFAULT_OUTPUT_TTL`].
    pub fn new(store: Arc<dyn ObjectStore>, prefix: impl Into<String>) -> Self {
        Self {
            store,
            prefix: prefix.into().trim_matches('/').to_owned(),
            ttl: DEFAULT_OUTPUT_TTL,
            swept: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The same store, each output kept `ttl`.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    fn path(&self, handle: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(handle)
        } else {
            Path::from(format!("{}/{handle}", self.prefix))
        }
    }

    /// Deletes what is older than the TTL under the prefix, if the last sweep was
    /// [`SWEEP_INTERVAL`] ago: on a task of its own, so that no retain waits on it.
    fn sweep_if_due(&self) {
        let now = now_millis() / 1_000;
        let last = self.swept.load(Ordering::Relaxed);
        let due = now.saturating_sub(last) >= SWEEP_INTERVAL.as_secs();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if due
            && self
                .swept
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let this = self.clone();
            runtime.spawn(async move {
                if let Err(error) = this.sweep().await {
                    tracing::warn!(%error, "sweeping retained outputs failed");
                }
            });
        }
    }

    async fn sweep(&self) -> Result<(), object_store::Error> {
        let prefix = (!self.prefix.is_empty()).then(|| Path::from(self.prefix.as_str()));
        let cutoff = SystemTime::now()
            .checked_sub(self.ttl)
            .unwrap_or(UNIX_EPOCH);
        let mut listing = self.store.list(prefix.as_ref());
        let mut swept = 0;
        while let Some(object) = listing.next().await {
            let object = object?;
            let named_by_us = object.location.filename().is_some_and(is_valid_handle);
            if named_by_us && SystemTime::from(object.last_modified) < cutoff {
                delete_if_there(&*self.store, &object.location).await?;
                swept += 1;
                if swept >= MAX_SWEPT {
                    break;
                }
            }
        }
        Ok(())
    }
}

async fn delete_if_there(store: &dyn ObjectStore, path: &Path) -> Result<(), object_store::Error> {
    match store.delete(path).await {
        Err(object_store::Error::NotFound { .. }) => Ok(()),
        done => done,
    }
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

fn io_error(error: impl std::fmt::Display) -> RetainError {
    RetainError(std::io::Error::other(error.to_string()))
}

/// An object's bytes: expiry, retention, text.
fn encode(expires: u64, retention: &Retention, pieces: &[&str]) -> Result<Bytes, RetainError> {
    let kept = serde_json::to_vec(retention).map_err(io_error)?;
    let kept_len = u32::try_from(kept.len()).map_err(io_error)?;
    let text_len: usize = pieces.iter().map(|piece| piece.len() + 1).sum();
    let mut bytes = Vec::with_capacity(12 + kept.len() + text_len);
    bytes.extend_from_slice(&expires.to_be_bytes());
    bytes.extend_from_slice(&kept_len.to_be_bytes());
    bytes.extend_from_slice(&kept);
    for (at, piece) in pieces.iter().enumerate() {
        if at > 0 {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(piece.as_bytes());
    }
    Ok(Bytes::from(bytes))
}

/// An object's expiry, retention and text; why not, for an object cut short or garbled.
fn decode(bytes: &[u8]) -> Result<(u64, Retention, String), String> {
    let (expires, rest) = bytes
        .split_first_chunk::<8>()
        .ok_or("it is cut short before its expiry")?;
    let (kept_len, rest) = rest
        .split_first_chunk::<4>()
        .ok_or("it is cut short before its retention")?;
    let kept_len = u32::from_be_bytes(*kept_len) as usize;
    if kept_len > MAX_RETENTION_BYTES || kept_len > rest.len() {
        return Err("its retention is longer than it can be".to_owned());
    }
    let (kept, text) = rest.split_at(kept_len);
    let retention = serde_json::from_slice(kept).map_err(|error| error.to_string())?;
    let text = String::from_utf8(text.to_vec()).map_err(|error| error.to_string())?;
    Ok((u64::from_be_bytes(*expires), retention, text))
}

impl ToolOutputStore for ObjectOutputStore {
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        _tool: &'a str,
        pieces: &'a [&'a str],
        retention: &'a Retention,
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>> {
        Box::pin(async move {
            self.sweep_if_due();
            let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
            let object = encode(now_millis().saturating_add(ttl), retention, pieces)?;
            // A clash (another replica, same name) is answered with another name.
            for _ in 0..8 {
                let handle = fresh_handle(call_id).map_err(RetainError)?;
                let path = self.path(&handle);
                let options = PutOptions {
                    mode: PutMode::Create,
                    ..PutOptions::default()
                };
                match self
                    .store
                    .put_opts(&path, PutPayload::from_bytes(object.clone()), options)
                    .await
                {
                    Ok(_) => {
                        return Ok(RetainedOutput {
                            location: format!("{}/{path}", self.store),
                            handle,
                        });
                    }
                    Err(object_store::Error::AlreadyExists { .. }) => {}
                    Err(error) => return Err(io_error(error)),
                }
            }
            Err(RetainError(std::io::Error::other(
                "eight fresh names in a row were taken",
            )))
        })
    }

    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<Retained>, RetainError>> {
        Box::pin(async move {
            if !is_valid_handle(handle) {
                return Ok(None);
            }
            let path = self.path(handle);
            let bytes = match self.store.get(&path).await {
                Ok(found) => found.bytes().await.map_err(io_error)?,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(error) => return Err(io_error(error)),
            };
            let (expires, retention, text) = decode(&bytes)
                .map_err(|why| io_error(format!("the output `{handle}` is unreadable: {why}")))?;
            if expires <= now_millis() {
                // Gone for every reader; removing it now spares the sweep.
                let _ = delete_if_there(&*self.store, &path).await;
                return Ok(None);
            }
            Ok(Some(Retained::new(text, retention)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_holds_its_expiry_retention_and_text_and_a_garbled_one_is_refused() {
        let kept = Retention::new(None, vec!["shell:run".into()]);
        let bytes = encode(42, &kept, &["a", "b"]).unwrap();
        assert_eq!(decode(&bytes).unwrap(), (42, kept, "a\nb".to_owned()));
        for cut in 0..12 {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = bytes.to_vec();
        long[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(decode(&long).is_err());
    }
}
