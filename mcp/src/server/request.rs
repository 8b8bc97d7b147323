//! What an MCP request says of itself: its protocol generation, whether its client takes
//! tasks, who made it, and its id as a call id.

use std::sync::Arc;

use rmcp::model::{ProtocolVersion, RequestMetaObject};
use rmcp::service::{RequestContext, RoleServer};
use toolprism::SmolStr;
use toolprism::access::{Caller, Owner};

use super::tasks::Asker;

/// Who a request is from: the caller the authorization in front of the endpoint found, and
/// the owner of what its calls keep (retained outputs, tasks) — the caller's; else, over HTTP
/// with sessions, the session's; else nobody's (stdio, whose one client is the host's own;
/// stateless HTTP without authorization, which anyone who reaches it may use).
#[derive(Clone, Default)]
pub(super) struct Requester {
    pub(super) caller: Option<Arc<Caller>>,
    pub(super) owner: Option<Owner>,
}

impl Requester {
    /// The requester as one asking about a task.
    pub(super) fn asker(&self) -> Asker<'_> {
        Asker {
            owner: self.owner.as_ref(),
            caller: self.caller.as_deref(),
        }
    }

    pub(super) fn of(context: &RequestContext<RoleServer>) -> Self {
        #[cfg(feature = "http-server")]
        if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
            let caller = parts.extensions.get::<Arc<Caller>>().cloned();
            let owner = match &caller {
                Some(caller) => Some(caller.owner()),
                None => parts
                    .headers
                    .get("mcp-session-id")
                    .and_then(|id| id.to_str().ok())
                    .map(|id| Owner::new(format!("session/{id}"))),
            };
            return Self { caller, owner };
        }
        let _ = context;
        Self::default()
    }
}

/// Whether the client takes tasks: it declared the extension in this request's `_meta`
/// (2026-07-28) or when it initialized (2025-11-25).
pub(super) fn takes_tasks(
    meta: &RequestMetaObject,
    peer: &rmcp::service::Peer<RoleServer>,
    current: bool,
) -> bool {
    if current {
        meta.client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
    } else {
        peer.peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks())
    }
}

/// The request id as a call id, without an allocation: a number is written out digit by digit
/// into the id's inline buffer (without the formatting machinery or an intermediate `String`),
/// a short string copied there, a long one shared.
pub(super) fn call_id(id: &rmcp::model::RequestId) -> SmolStr {
    match id {
        rmcp::model::NumberOrString::String(id) => SmolStr::from(id.clone()),
        rmcp::model::NumberOrString::Number(number) => {
            // `i64::MIN` is 20 characters.
            let mut digits = [0_u8; 20];
            let mut at = digits.len();
            let mut rest = number.unsigned_abs();
            loop {
                at -= 1;
                digits[at] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            if *number < 0 {
                at -= 1;
                digits[at] = b'-';
            }
            SmolStr::new(std::str::from_utf8(&digits[at..]).expect("digits are ASCII"))
        }
    }
}

/// Whether the request is of 2026-07-28 or later: its own `_meta` says, or else the session's
/// handshake (read in place: `RequestContext::protocol_version` clones it).
pub(super) fn is_current(meta: &RequestMetaObject, peer: &rmcp::service::Peer<RoleServer>) -> bool {
    let current = |version: &str| version >= ProtocolVersion::V_2026_07_28.as_str();
    match meta.protocol_version() {
        Some(version) => current(version.as_str()),
        None => peer
            .peer_info()
            .is_some_and(|info| current(info.protocol_version.as_str())),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::call_id;

    #[test]
    fn a_request_id_becomes_the_same_call_id_however_it_is_printed() {
        for number in [0, 7, 10, -1, -10, 1 << 53, i64::MAX, i64::MIN] {
            let id = NumberOrString::Number(number);
            assert_eq!(&*call_id(&id), id.to_string());
        }
        let short: std::sync::Arc<str> = "req-1/../é".into();
        let inline = call_id(&NumberOrString::String(short.clone()));
        assert_eq!(inline, *short);
        assert!(!inline.is_heap_allocated(), "a short id is held inline");
        let long: std::sync::Arc<str> = "a request id longer than twenty-three bytes".into();
        let shared = call_id(&NumberOrString::String(long.clone()));
        assert_eq!(shared, *long);
        assert_eq!(
            std::sync::Arc::strong_count(&long),
            2,
            "a long string id is shared, not copied"
        );
    }
}
