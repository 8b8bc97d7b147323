//! Telling the sessions of 2025-11-25 that the tools changed (`notifications/tools/list_changed`):
//! one task for all the sessions of a server, which also forgets those that closed, instead of
//! a task and a timer per session.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};
use tokio::sync::watch;

/// How often sessions that closed are forgotten when nothing changes.
const PRUNE_EVERY: Duration = Duration::from_secs(30);

/// The sessions told of every change, and whether the task telling them runs.
#[derive(Default)]
pub(crate) struct Announcer {
    sessions: Mutex<Sessions>,
}

#[derive(Default)]
struct Sessions {
    peers: Vec<Peer<RoleServer>>,
    telling: bool,
}

impl Announcer {
    /// Tells `peer` of every change from now until its session closes; the first session
    /// starts the task (on the runtime the session runs on).
    pub(crate) fn add(self: &Arc<Self>, peer: Peer<RoleServer>, changes: &watch::Receiver<u64>) {
        let start = {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            sessions.peers.push(peer);
            !std::mem::replace(&mut sessions.telling, true)
        };
        if start {
            let mut changes = changes.clone();
            changes.mark_unchanged();
            tokio::spawn(tell(Arc::downgrade(self), changes));
        }
    }

    /// The sessions still open (those closed are forgotten).
    fn open(&self) -> Vec<Peer<RoleServer>> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.peers.retain(|peer| !peer.is_transport_closed());
        sessions.peers.clone()
    }
}

/// Tells every open session of each change, until the server is dropped.
async fn tell(announcer: Weak<Announcer>, mut registry: watch::Receiver<u64>) {
    loop {
        let changed = tokio::select! {
            seen = registry.changed() => seen.is_ok(),
            () = tokio::time::sleep(PRUNE_EVERY) => false,
        };
        let Some(announcer) = announcer.upgrade() else {
            return;
        };
        let open = announcer.open();
        drop(announcer);
        if changed {
            for peer in open {
                // A session that went away meanwhile needs no telling.
                let _ = peer.notify_tool_list_changed().await;
            }
        } else if registry.has_changed().is_err() {
            // The registry's listener is gone with the server.
            return;
        }
    }
}
