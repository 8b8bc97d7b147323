//! Retained output in object storage, shared by every replica behind a load balancer.

use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload};
use toolprism::BoxFuture;
use toolprism::bound::{
    RetainError, RetainedOutput, ToolOutputStore, fresh_handle, is_valid_handle,
};

/// A [`ToolOutputStore`] over any [`ObjectStore`]: S3, GCS, Azure, local files or memory.
/// Outputs are written once under `<prefix>/<handle>` (never overwriting) and read back by
/// handle from any replica; wrap it in [`OutputResources`](crate::OutputResources) so MCP
/// clients read them as resources.
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
/// use toolprism::bound::ToolOutputStore;
/// use toolprism_mcp::ObjectOutputStore;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = ObjectOutputStore::new(Arc::new(object_store::memory::InMemory::new()), "outputs");
/// let retained = store.retain("call-1", "grep", &["a", "b"]).await.unwrap();
/// assert_eq!(store.read(&retained.handle).await.unwrap().as_deref(), Some("a\nb"));
/// assert_eq!(store.read("../secrets").await.unwrap(), None);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct ObjectOutputStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
}

impl ObjectOutputStore {
    /// Outputs go under `prefix` (a path of `/`-separated parts; may be empty) in `store`.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: impl Into<String>) -> Self {
        Self {
            store,
            prefix: prefix.into().trim_matches('/').to_owned(),
        }
    }

    fn path(&self, handle: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(handle)
        } else {
            Path::from(format!("{}/{handle}", self.prefix))
        }
    }
}

fn io_error(error: object_store::Error) -> RetainError {
    RetainError(std::io::Error::other(error))
}

impl ToolOutputStore for ObjectOutputStore {
    fn retain<'a>(
        &'a self,
        call_id: &'a str,
        tool: &'a str,
        pieces: &'a [&'a str],
    ) -> BoxFuture<'a, Result<RetainedOutput, RetainError>> {
        Box::pin(async move {
            let joined = Bytes::from(pieces.join("\n"));
            // A clash (another replica, same name) is answered with another name.
            for _ in 0..8 {
                let handle = fresh_handle(call_id, tool);
                let path = self.path(&handle);
                let options = PutOptions {
                    mode: PutMode::Create,
                    ..PutOptions::default()
                };
                match self
                    .store
                    .put_opts(&path, PutPayload::from_bytes(joined.clone()), options)
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

    fn read<'a>(&'a self, handle: &'a str) -> BoxFuture<'a, Result<Option<String>, RetainError>> {
        Box::pin(async move {
            if !is_valid_handle(handle) {
                return Ok(None);
            }
            let bytes = match self.store.get(&self.path(handle)).await {
                Ok(found) => found.bytes().await.map_err(io_error)?,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(error) => return Err(io_error(error)),
            };
            String::from_utf8(bytes.to_vec())
                .map(Some)
                .map_err(|error| RetainError(std::io::Error::other(error)))
        })
    }
}
