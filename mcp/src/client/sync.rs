//! The server's listing, imported into a registry and kept current as the server announces
//! changes.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher as _, Hasher};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, ServerNotification, SubscriptionFilter, Tool};
use rmcp::service::{Peer, RoleClient};
use toolprism::bound::json_len_within;
use toolprism::{Registry, ToolDef};

use super::define::remote_tool_def;
use super::error::ClientError;
use super::inspect::{Poisoned, RefusedTool, escaped, inspect, reads_as};
use super::limits::{MAX_IMPORTED_TOOLS, MAX_LIST_PAGES, MAX_LISTING_BYTES, MIN_RELIST_INTERVAL};
use super::pins::{HeldTool, PinError, PinFile, Pins, Verdict, judge};
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
                    // Another process (`tools pins accept`) changed the pins: import again.
                    Some(shared) if pins_changed(&shared) => {
                        shared.force.store(true, Ordering::Relaxed);
                        true
                    }
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
    let forced = shared.force.swap(false, Ordering::Relaxed);
    if unchanged_from == Some(listing) && !forced {
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
    let locals = read_as(&snapshot, &previous);
    let mut taken: HashMap<String, String> = HashMap::new();
    let mut defs = Vec::with_capacity(tools.len());
    let mut refused = Vec::new();
    let mut pins = PinsAtHand::load(shared)?;
    for tool in tools {
        let local = provider_safe_name(&shared.options.prefix, &tool.name)?;
        if let Err(reason) = poisoned(&tool, &local, &locals, shared.options.max_description_bytes)
        {
            tracing::warn!(tool = %escaped(&tool.name), %reason, "refused a poisoned MCP tool definition");
            refused.push(RefusedTool {
                remote_name: escaped(&tool.name),
                reason,
            });
            continue;
        }
        claim(&mut taken, &previous, &snapshot, &local, &tool.name)?;
        if let Some((tool, held)) = pins.judge(shared, tool) {
            defs.push(remote_tool_def(local, tool, shared, held));
        } else {
            tracing::warn!(tool = %local, "a new MCP tool waits to be accepted");
        }
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
    *shared
        .refused
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = refused;
    pins.settle(shared)?;
    Ok((imported, listing))
}

/// What each local tool (not one of this server's) reads as, for lookalikes.
fn read_as(snapshot: &toolprism::Snapshot, previous: &HashSet<String>) -> HashMap<String, String> {
    snapshot
        .definitions()
        .filter(|tool| !previous.contains(tool.name()))
        .map(|tool| (reads_as(tool.name()), tool.name().to_owned()))
        .collect()
}

/// Takes the local name `local` for the remote tool `remote`, refused if another remote tool
/// has it, or a tool of the registry that is not this server's.
fn claim(
    taken: &mut HashMap<String, String>,
    previous: &HashSet<String>,
    snapshot: &toolprism::Snapshot,
    local: &str,
    remote: &str,
) -> Result<(), NameError> {
    let taken_by = if let Some(other) = taken.get(local) {
        format!("remote tool `{other}`")
    } else if !previous.contains(local) && snapshot.definition(local).is_some() {
        "a tool in the registry".to_owned()
    } else {
        taken.insert(local.to_owned(), remote.to_owned());
        return Ok(());
    };
    Err(NameError::Collision {
        remote: remote.to_owned(),
        local: local.to_owned(),
        taken_by,
    })
}

/// The pins of one listing: read before it is judged, written after if it changed them.
struct PinsAtHand {
    pins: Option<(Pins, PinFile)>,
    changed: bool,
    /// The tools held whose pending definition is new with this listing.
    newly_held: Vec<String>,
}

impl PinsAtHand {
    fn load(shared: &ClientShared) -> Result<Self, PinError> {
        let pins = match &shared.options.pins {
            Some(file) => {
                *shared
                    .pins_seen
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = file.digest();
                Some((Pins::load(file.path())?, file.clone()))
            }
            None => None,
        };
        Ok(Self {
            pins,
            changed: false,
            newly_held: Vec::new(),
        })
    }

    /// The definition to import a listed tool with, and the refusal its calls get when it is
    /// held; `None` for a new tool that waits.
    fn judge(&mut self, shared: &ClientShared, tool: Tool) -> Option<(Tool, Option<String>)> {
        let Some((pins, file)) = &mut self.pins else {
            return Some((tool, None));
        };
        let (verdict, changed) = judge(pins, &shared.identity, &tool, file.new_tools_policy());
        self.changed |= changed;
        match verdict {
            Verdict::Trusted => Some((tool, None)),
            Verdict::Held(shown) => {
                if changed {
                    self.newly_held.push(tool.name.to_string());
                }
                let refusal = format!(
                    "The tool `{}` changed on its server since it was pinned; it is not called until the new definition is accepted.",
                    escaped(&tool.name)
                );
                shown.map(|pinned| (pinned, Some(refusal)))
            }
        }
    }

    /// Writes the pins if the listing changed them, and tells the host of each tool held anew.
    fn settle(self, shared: &ClientShared) -> Result<(), PinError> {
        let Some((pins, file)) = self.pins else {
            return Ok(());
        };
        if self.changed {
            pins.save(file.path())?;
            *shared
                .pins_seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = file.digest();
        }
        let held: Vec<HeldTool> = pins
            .held()
            .into_iter()
            .filter(|held| held.server == shared.identity)
            .collect();
        for tool in held
            .iter()
            .filter(|held| self.newly_held.contains(&held.remote_name))
        {
            tracing::warn!(server = %shared.identity, tool = %escaped(&tool.remote_name), diff = %tool.diff(), "an MCP tool's definition changed since it was pinned: held");
            // Nobody listening is fine: `McpClient::held` still says it.
            let _ = shared.held_events.send(tool.clone());
        }
        *shared.held.lock().unwrap_or_else(PoisonError::into_inner) = held;
        Ok(())
    }
}

/// Whether the pin file changed since it was last read or written (another process accepted
/// a change): read every few seconds, as long as the connection lasts.
fn pins_changed(shared: &ClientShared) -> bool {
    let Some(file) = &shared.options.pins else {
        return false;
    };
    let seen = *shared
        .pins_seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    file.digest() != seen
}

/// Why a listed tool may not be imported: what its definition carries, or a name that reads as
/// a local tool's (the remote name or the local one made of it).
fn poisoned(
    tool: &Tool,
    local: &str,
    locals: &HashMap<String, String>,
    limit: usize,
) -> Result<(), Poisoned> {
    inspect(tool, limit)?;
    for name in [tool.name.as_ref(), local] {
        if let Some(imitated) = locals.get(&reads_as(name))
            && imitated != local
        {
            return Err(Poisoned::Lookalike {
                name: escaped(&tool.name),
                local: imitated.clone(),
            });
        }
    }
    Ok(())
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
