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
