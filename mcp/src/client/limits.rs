//! What a remote server can make the client hold: its listing, bounded in tools, pages and
//! bytes, and re-listed at most once a second.

use std::time::Duration;

/// The most tools imported from one server; a server that lists more is refused.
pub const MAX_IMPORTED_TOOLS: usize = 10_000;
/// The most `tools/list` pages read from one server in one listing.
pub(crate) const MAX_LIST_PAGES: usize = 1_000;
/// The most bytes of tool definitions (names, descriptions, schemas, as JSON) imported from one
/// server: every definition reaches the model on every turn, and each page of a listing may
/// be as large as the transport lets one message be.
pub const MAX_LISTING_BYTES: usize = 64 * 1024 * 1024;
/// The least time between two re-imports: a server announcing changes without pause makes
/// the client re-list once a second at most (announcements meanwhile become one re-list).
pub(super) const MIN_RELIST_INTERVAL: Duration = Duration::from_secs(1);
