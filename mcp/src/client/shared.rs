//! What a connection and the tools it imported share: the running service, its peer, the
//! options, what the server's notifications are routed to, and what was imported.

use std::collections::hash_map::RandomState;
use std::sync::{Arc, Mutex};

use rmcp::service::{Peer, RoleClient, RunningService};
use tokio::sync::Notify;

use super::events::ClientEvents;
use super::input::InFlight;
use super::options::ImportOptions;
use super::progress::ProgressRoutes;

/// What one connection holds, shared by the client and every tool it imported.
pub(super) struct ClientShared {
    pub(super) service: Mutex<Option<RunningService<RoleClient, ClientEvents>>>,
    pub(super) peer: Peer<RoleClient>,
    pub(super) options: ImportOptions,
    pub(super) refresh: Arc<Notify>,
    pub(super) progress: Arc<ProgressRoutes>,
    /// The calls in flight, for what a 2025-11-25 server asks during one.
    pub(super) in_flight: Arc<InFlight>,
    pub(super) imported: Mutex<Vec<RemoteTool>>,
    /// The tools of the last listing refused at import.
    pub(super) refused: Mutex<Vec<super::inspect::RefusedTool>>,
    /// The server's identity for its pins: `name endpoint`.
    pub(super) identity: String,
    /// The digest of the pin file as last read or written (to see another process's
    /// acceptance).
    pub(super) pins_seen: Mutex<Option<[u8; 32]>>,
    /// The tools held by their pins, as of the last listing.
    pub(super) held: Mutex<Vec<super::pins::HeldTool>>,
    /// Where each tool held anew is told ([`McpClient::held_events`](crate::McpClient::held_events)).
    pub(super) held_events: tokio::sync::broadcast::Sender<super::pins::HeldTool>,
    /// Import the next listing even if it is the last one (the pins changed).
    pub(super) force: std::sync::atomic::AtomicBool,
    /// The keys listings are hashed under, to tell an unchanged one.
    pub(super) listing_keys: RandomState,
}

/// One imported tool: its local and remote names, and whether its schemas are enforced here.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteTool {
    /// The name the registry advertises.
    pub local_name: String,
    /// The name on the wire.
    pub remote_name: String,
    /// Whether arguments are validated here against the server's `inputSchema` (otherwise
    /// only as an object, and by the server).
    pub input_validated: bool,
    /// Whether `structuredContent` is validated here against the server's `outputSchema`.
    pub output_validated: bool,
}
