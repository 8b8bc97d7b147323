//! The server's listing, imported into a registry and kept current as the server announces
//! changes.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher as _, Hasher};
use std::sync::{Arc, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, ServerNotification, SubscriptionFilter, Tool};
use rmcp::service::{Peer, RoleClient};
use toolprism::bound::json_len_within;
use toolprism::{Registry, ToolDef};

use super::define::remote_tool_def;
use super::error::ClientError;
use super::limits::{MAX_IMPORTED_TOOLS, MAX_LIST_PAGES, MAX_LISTING_BYTES, MIN_RELIST_INTERVAL};
use super::shared::{ClientShared, RemoteTool};
use crate::wire::names::{NameError, provider_safe_name};

pub(super) fn tools_filter() -> SubscriptionFilter {
    SubscriptionFilter::builder().tools_list_changed().build()
}

/// Re-imports on every change the server announces, until the client is dropped or closed.
pub(super) async fn keep_current(
    shared: Weak<ClientShared>,
    registry: Registry,
    mut subscription: Option<rmcp::service::Subscription>,
    mut listing: Listing,
) {
    loop {
        let refresh = match shared.upgrade() {
            Some(shared) => shared.refresh.clone(),
            None => return,
        };
        let changed = async {
            match subscription.as_mut() {
                Some(subscription) => loop {
                    match subscription.next().await {
                        Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                            return true;
                        }
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => return false,
                    }
                },
                None => std::future::pending().await,
            }
        };
        let keep_going = tokio::select! {
            () = refresh.notified() => true,
            changed = changed => changed,
            // Nothing tells this task the connection closed: look now and then.
            () = tokio::time::sleep(Duration::from_secs(5)) => {
                match shared.upgrade() {
                    Some(shared) if !shared.peer.is_transport_closed() => continue,
                    _ => return,
                }
            }
        };
        if !keep_going {
            // The stream ended: the server went away or closed it; plain notifications may
            // still come.
            subscription = None;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if keep_going {
            match sync_tools(&shared, &registry, Some(listing)).await {
                Ok((_, listed)) => listing = listed,
                Err(error) => tracing::warn!(%error, "re-importing the MCP server's tools failed"),
            }
        }
        if shared.peer.is_transport_closed() {
            return;
        }
        drop(shared);
        if keep_going {
            tokio::time::sleep(MIN_RELIST_INTERVAL).await;
        }
    }
}

/// A keyed hash of one listing of a server's tools, as JSON.
pub(super) type Listing = u64;

/// Lists the remote tools and makes the registry's imported tools exactly those, unless the
/// listing is `unchanged_from` the one imported last: a server announcing changes it did not
/// make then changes nothing here (nor for whoever listens to the registry).
pub(super) async fn sync_tools(
    shared: &Arc<ClientShared>,
    registry: &Registry,
    unchanged_from: Option<Listing>,
) -> Result<(Vec<RemoteTool>, Listing), ClientError> {
    let timeout = shared.options.connect_timeout;
    let tools = tokio::time::timeout(timeout, list_bounded(&shared.peer))
        .await
        .map_err(|_| ClientError::Timeout(timeout))??;
    let listing = fingerprint(&tools, &shared.listing_keys);
    if unchanged_from == Some(listing) {
        let imported = shared
            .imported
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        return Ok((imported, listing));
    }

    let previous: HashSet<String> = shared
        .imported
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|tool| tool.local_name.clone())
        .collect();
    let snapshot = registry.snapshot();
    let mut taken: HashMap<String, String> = HashMap::new();
    let mut defs = Vec::with_capacity(tools.len());
    for tool in tools {
        let local = provider_safe_name(&shared.options.prefix, &tool.name)?;
        if let Some(other) = taken.get(&local) {
            return Err(NameError::Collision {
                remote: tool.name.to_string(),
                local,
                taken_by: format!("remote tool `{other}`"),
            }
            .into());
        }
        if !previous.contains(&local) && snapshot.definition(&local).is_some() {
            return Err(NameError::Collision {
                remote: tool.name.to_string(),
                local,
                taken_by: "a tool in the registry".to_owned(),
            }
            .into());
        }
        taken.insert(local.clone(), tool.name.to_string());
        defs.push(remote_tool_def(local, tool, shared));
    }

    // One change of the registry, all or nothing: a snapshot taken meanwhile sees every
    // tool of the old list or every tool of the new one, and a refused tool leaves the old.
    let (imported, defs): (Vec<RemoteTool>, Vec<ToolDef>) = defs.into_iter().unzip();
    registry
        .replace(previous.iter().map(String::as_str), defs)
        .map_err(|source| ClientError::Register {
            remote: taken
                .get(source.tool_name())
                .cloned()
                .unwrap_or_else(|| source.tool_name().to_owned()),
            source,
        })?;
    shared
        .imported
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone_from(&imported);
    Ok((imported, listing))
}

/// `tools` as JSON, hashed under the client's own keys (a server cannot make two listings
/// collide without knowing them).
pub(super) fn fingerprint(tools: &[Tool], keys: &RandomState) -> Listing {
    struct Hashing<H>(H);
    impl<H: Hasher> std::io::Write for Hashing<H> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hashing = Hashing(keys.build_hasher());
    // A listing serializes: it was counted as JSON when it was read.
    let _ = serde_json::to_writer(&mut hashing, tools);
    hashing.0.finish()
}

/// Every page of the server's tools, refused past [`MAX_IMPORTED_TOOLS`] tools,
/// [`MAX_LIST_PAGES`] pages or [`MAX_LISTING_BYTES`]: a server cannot make the client hold an
/// unbounded list (at most the limit and one page, which the transport bounds).
pub(super) async fn list_bounded(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ClientError> {
    let mut tools = Vec::new();
    let mut bytes = 0_usize;
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer.list_tools(Some(params)).await?;
        for tool in &page.tools {
            bytes += json_len_within(tool, MAX_LISTING_BYTES - bytes)
                .ok_or(ClientError::ListingTooLarge)?;
        }
        tools.extend(page.tools);
        if tools.len() > MAX_IMPORTED_TOOLS {
            return Err(ClientError::TooManyTools);
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(tools),
        }
    }
    Err(ClientError::TooManyTools)
}
