//! Sessions of 2025-11-25 over HTTP, bound to the caller that opened them: a request naming a
//! session another caller opened — to post to it, replay its stream or delete it — is answered
//! `404`, exactly as for a session that does not exist. Sessions are capped, in all and per
//! caller, and one left idle is closed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use http_body_util::BodyExt as _;
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use toolprism::access::{Caller, Owner};

/// The most sessions open at once.
pub const MAX_SESSIONS: usize = 1_000;
/// The most sessions one authenticated caller has open at once (without authorization there
/// is no caller to count by: only [`MAX_SESSIONS`] holds).
pub const MAX_SESSIONS_PER_CALLER: usize = 32;
/// How long a session may go without a request, and without a stream open, before it is
/// closed.
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// How often, at most, idle sessions are looked for (when a session is opened).
const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The sessions of one endpoint: who opened each, and when it was last used.
pub(crate) struct Sessions {
    manager: Arc<LocalSessionManager>,
    open: Mutex<Open>,
}

struct Open {
    by_id: HashMap<String, Session>,
    swept: Instant,
}

struct Session {
    owner: Option<Owner>,
    used: Instant,
    /// Streams open on it (`GET`): a client that only listens is using it.
    streams: usize,
}

impl Sessions {
    pub(crate) fn new(manager: Arc<LocalSessionManager>) -> Arc<Self> {
        Arc::new(Self {
            manager,
            open: Mutex::new(Open {
                by_id: HashMap::new(),
                swept: Instant::now(),
            }),
        })
    }

    /// Whether session `id` is open and `owner`'s; marks it used if so.
    fn use_as(&self, id: &str, owner: Option<&Owner>) -> bool {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        match open.by_id.get_mut(id) {
            Some(session) if session.owner.as_ref() == owner => {
                session.used = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Records a session just opened for `owner`; false when that is one too many (in all, or
    /// for the owner). Sessions idle past the timeout are forgotten first, and returned to be
    /// closed.
    fn record(&self, id: &str, owner: Option<Owner>) -> (bool, Vec<String>) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let mut idle = Vec::new();
        if open.swept.elapsed() >= SWEEP_EVERY || open.by_id.len() >= MAX_SESSIONS {
            open.swept = Instant::now();
            open.by_id.retain(|id, session| {
                let keep = session.streams > 0 || session.used.elapsed() < SESSION_IDLE_TIMEOUT;
                if !keep {
                    idle.push(id.clone());
                }
                keep
            });
        }
        let of_owner = open
            .by_id
            .values()
            .filter(|session| session.owner == owner)
            .count();
        let room = open.by_id.len() < MAX_SESSIONS
            && (owner.is_none() || of_owner < MAX_SESSIONS_PER_CALLER);
        if room {
            open.by_id.insert(
                id.to_owned(),
                Session {
                    owner,
                    used: Instant::now(),
                    streams: 0,
                },
            );
        }
        (room, idle)
    }

    /// Counts a stream open on session `id` (`open`) or one that ended.
    fn stream(&self, id: &str, open: bool) {
        let mut sessions = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = sessions.by_id.get_mut(id) {
            session.used = Instant::now();
            session.streams = if open {
                session.streams + 1
            } else {
                session.streams.saturating_sub(1)
            };
        }
    }

    fn forget(&self, id: &str) {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_id
            .remove(id);
    }

    async fn close(&self, ids: impl IntoIterator<Item = String>) {
        for id in ids {
            if let Err(error) = self.manager.close_session(&id.into()).await {
                tracing::debug!(%error, "a session could not be closed");
            }
        }
    }
}

/// The middleware in front of the endpoint (inside the authorization, which found the caller).
pub(crate) async fn bind(
    State(sessions): State<Arc<Sessions>>,
    request: Request,
    next: Next,
) -> Response {
    let owner = request
        .extensions()
        .get::<Arc<Caller>>()
        .map(|caller| caller.owner());
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .map(|id| id.to_str().map(str::to_owned));
    match named {
        Some(Ok(id)) => {
            if !sessions.use_as(&id, owner.as_ref()) {
                return not_found();
            }
            let method = request.method().clone();
            let response = next.run(request).await;
            if method == Method::DELETE && response.status().is_success() {
                sessions.forget(&id);
            } else if method == Method::GET && response.status().is_success() {
                // Used as long as the stream is open: counted until its body is dropped.
                sessions.stream(&id, true);
                let open = OpenStream { sessions, id };
                return response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _open = &open;
                        frame
                    }))
                });
            }
            response
        }
        Some(Err(_)) => not_found(),
        None => {
            let response = next.run(request).await;
            let Some(Ok(opened)) = response
                .headers()
                .get(SESSION_HEADER)
                .map(|id| id.to_str().map(str::to_owned))
            else {
                return response;
            };
            let (room, idle) = sessions.record(&opened, owner);
            sessions.close(idle).await;
            if room {
                return response;
            }
            sessions.close([opened]).await;
            let mut refused = (
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions are open",
            )
                .into_response();
            refused
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
            refused
        }
    }
}

/// A stream open on a session, counted until dropped.
struct OpenStream {
    sessions: Arc<Sessions>,
    id: String,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.sessions.stream(&self.id, false);
    }
}

/// What a request naming an unknown session is answered, whoever opened it: rmcp's own
/// answer, byte for byte.
fn not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
