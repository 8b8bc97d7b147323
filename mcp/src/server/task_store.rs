//! Where tasks are kept: a record per task, and what callers send it (answers, a cancellation),
//! each under its own key so that no write overwrites another's. Behind a trait, so that a
//! task one replica runs is answered for by any other ([`ObjectTaskStore`]).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use toolprism::BoxFuture;

/// The most entries a [`MemoryTaskStore`] keeps (records, answers and cancellations).
pub const MAX_MEMORY_TASK_ENTRIES: usize = 100_000;

/// Why a task store could not keep or read an entry.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct TaskStoreError(pub String);

/// Keeps the entries of tasks, each for a time. Keys are ASCII letters, digits, `.` and `/`.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps `value` under `key` for `ttl`, replacing what was there.
    fn put<'a>(
        &'a self,
        key: &'a str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// What is kept under `key`, if it is and has not expired.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, TaskStoreError>>;
}

/// Tasks in this process's memory: what one server process, or replicas pinned to one
/// client, need. At most [`MAX_MEMORY_TASK_ENTRIES`] entries; an expired one is swept when
/// room is needed.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    entries: Mutex<HashMap<String, (Vec<u8>, Instant)>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TaskStore for MemoryTaskStore {
    fn put<'a>(
        &'a self,
        key: &'a str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_MEMORY_TASK_ENTRIES && !entries.contains_key(key) {
            entries.retain(|_, (_, expires)| *expires > now);
        }
        let result = if entries.len() >= MAX_MEMORY_TASK_ENTRIES && !entries.contains_key(key) {
            Err(TaskStoreError(format!(
                "the task store holds {MAX_MEMORY_TASK_ENTRIES} live entries, its most"
            )))
        } else {
            entries.insert(key.to_owned(), (value, now + ttl));
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, TaskStoreError>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let found = entries
            .get(key)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(value, _)| value.clone());
        Box::pin(std::future::ready(Ok(found)))
    }
}

#[cfg(feature = "object-store")]
pub use object::ObjectTaskStore;

#[cfg(feature = "object-store")]
mod object {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use object_store::path::Path;
    use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload};
    use toolprism::BoxFuture;

    use super::{TaskStore, TaskStoreError};

    /// Tasks in object storage (S3, GCS, Azure, a directory): every replica behind a load
    /// balancer reads and answers for the tasks any of them runs. An entry carries its expiry
    /// (milliseconds since the Unix epoch, 8 bytes big-endian, before the value); an expired one
    /// reads as absent, and a bucket lifecycle rule removes it.
    #[derive(Clone, Debug)]
    pub struct ObjectTaskStore {
        store: Arc<dyn ObjectStore>,
        prefix: String,
    }

    impl ObjectTaskStore {
        /// Tasks under `prefix` in `store`.
        pub fn new(store: Arc<dyn ObjectStore>, prefix: impl Into<String>) -> Self {
            Self {
                store,
                prefix: prefix.into().trim_matches('/').to_owned(),
            }
        }

        fn path(&self, key: &str) -> Path {
            if self.prefix.is_empty() {
                Path::from(key)
            } else {
                Path::from(format!("{}/{key}", self.prefix))
            }
        }
    }

    fn now_millis() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            })
    }

    fn store_error(error: object_store::Error) -> TaskStoreError {
        TaskStoreError(error.to_string())
    }

    impl TaskStore for ObjectTaskStore {
        fn put<'a>(
            &'a self,
            key: &'a str,
            value: Vec<u8>,
            ttl: Duration,
        ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
            Box::pin(async move {
                let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
                let expires = now_millis().saturating_add(ttl);
                let mut bytes = Vec::with_capacity(8 + value.len());
                bytes.extend_from_slice(&expires.to_be_bytes());
                bytes.extend_from_slice(&value);
                self.store
                    .put(&self.path(key), PutPayload::from(bytes))
                    .await
                    .map(drop)
                    .map_err(store_error)
            })
        }

        fn get<'a>(
            &'a self,
            key: &'a str,
        ) -> BoxFuture<'a, Result<Option<Vec<u8>>, TaskStoreError>> {
            Box::pin(async move {
                let bytes = match self.store.get(&self.path(key)).await {
                    Ok(found) => found.bytes().await.map_err(store_error)?,
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(error) => return Err(store_error(error)),
                };
                let Some((expires, value)) = bytes.split_first_chunk::<8>() else {
                    return Err(TaskStoreError(format!("the entry at `{key}` is cut short")));
                };
                if u64::from_be_bytes(*expires) <= now_millis() {
                    return Ok(None);
                }
                Ok(Some(value.to_vec()))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_memory_store_sweeps_what_expired_and_refuses_the_rest() {
        let store = MemoryTaskStore::new();
        let short = Duration::from_millis(1);
        let long = Duration::from_secs(60);
        for n in 0..MAX_MEMORY_TASK_ENTRIES {
            let ttl = if n % 2 == 0 { short } else { long };
            store.put(&format!("k{n}"), vec![1], ttl).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        // Full: the expired half is swept to make room.
        store.put("fresh", vec![2], long).await.unwrap();
        assert_eq!(store.get("fresh").await.unwrap(), Some(vec![2]));
        assert_eq!(store.get("k0").await.unwrap(), None);
        assert_eq!(store.get("k1").await.unwrap(), Some(vec![1]));
        // Half were swept and one added: room for one less than half.
        let mut refused = 0;
        for n in 0..MAX_MEMORY_TASK_ENTRIES / 2 {
            if store.put(&format!("more{n}"), vec![3], long).await.is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, 1);
        // Full of live entries: a new key is refused, a kept one still replaced.
        assert!(store.put("one too many", vec![4], long).await.is_err());
        store.put("k1", vec![5], long).await.unwrap();
        assert_eq!(store.get("k1").await.unwrap(), Some(vec![5]));
    }
}
