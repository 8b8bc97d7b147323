//! The MCP client a call came from, as the call sees it: where its progress waits to be sent,
//! how its requests for input are answered (on the request, or on the task it became), and
//! the logging level its connection asked for.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::RequestMetaObject;
use rmcp::service::RoleServer;
use serde_json::Value;
use tokio::sync::watch;
use toolprism::ask::{Answerer, AskError, InputKind, InputRequest};
use toolprism::context::{Progress, ProgressSink};

use super::input::{Declared, McpAnswerer};
use super::progress::ProgressQueue;
use super::tasks::Running;

/// The MCP client a call came from, attached by [`McpServer`](crate::McpServer) to every dispatch it makes: a
/// tool that asks the client something (elicitation, sampling on 2025-11-25) or logs to it
/// reads it with [`ToolContext::extension`](toolprism::ToolContext::extension). `None` there
/// when the tool is called any other way, so such a tool should do without, or fail saying
/// why.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism_mcp::McpPeer;
///
/// /// Says whether an MCP client is on the line.
/// #[tool]
/// fn over_mcp(cx: &ToolContext) -> bool {
///     cx.extension::<McpPeer>().is_some()
/// }
/// ```
///
/// It is also where the call's progress reports wait for the server to send them as
/// `notifications/progress` (when the client asked for progress): one allocation per call
/// serves both.
pub struct McpPeer {
    pub(crate) peer: rmcp::service::Peer<RoleServer>,
    /// Whose the call's task is, if it becomes one.
    pub(crate) owner: Option<toolprism::access::Owner>,
    pub(crate) session: Arc<Session>,
    pub(crate) progress: ProgressQueue<Progress>,
    /// The request's `_meta`: the client's capabilities, on 2026-07-28.
    pub(crate) meta: RequestMetaObject,
    /// Whether the request is of 2026-07-28 or later.
    pub(crate) current: bool,
    /// The answers a 2026-07-28 retry carried, until the answerer takes them.
    pub(crate) answers: Mutex<BTreeMap<String, Value>>,
    /// How the body's requests for input are answered: made when it first asks.
    pub(crate) answerer: OnceLock<McpAnswerer>,
    /// The task the call became, if it did.
    pub(crate) task: TaskSlot,
}

/// Whether a call detached, and the task it runs on once that task is made.
#[derive(Default)]
pub(crate) struct TaskSlot {
    /// The server's room for the task, held while it runs.
    pub(crate) room: Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
    pub(crate) detached: AtomicBool,
    pub(crate) running: watch::Sender<Option<Arc<Running>>>,
}

impl std::fmt::Debug for McpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPeer")
            .field("peer", &self.peer)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// Progress the call's body reports is queued, and sent by the task serving the request.
impl ProgressSink for McpPeer {
    fn report(&self, progress: &Progress) {
        self.progress.report(progress);
    }
}

/// A body's requests for input go to the client: see [`toolprism::ask`], and the module
/// `input` for how each protocol generation carries them.
impl Answerer for McpPeer {
    fn can_answer(&self, kind: InputKind) -> bool {
        if self.task.detached.load(Ordering::Acquire) {
            return self.answerer().declares(kind);
        }
        self.answerer().can_answer(kind)
    }

    fn answer<'a>(
        &'a self,
        key: &'a str,
        request: &'a InputRequest,
    ) -> toolprism::BoxFuture<'a, Result<Value, AskError>> {
        if !self.task.detached.load(Ordering::Acquire) {
            return self.answerer().answer(key, request);
        }
        // After it detached, a call asks on its task (made just after the body asked to
        // detach): `tasks/get` shows the request, `tasks/update` answers it.
        Box::pin(async move {
            let answerer = self.answerer();
            if !answerer.declares(request.kind()) {
                return Err(answerer.undeclared(key, request.kind()));
            }
            let mut made = self.task.running.subscribe();
            let running = made
                .wait_for(Option::is_some)
                .await
                .map_err(|_| AskError::Failed("the call's task was never made".into()))?
                .clone();
            match running {
                Some(running) => running.ask(key, request).await,
                None => Err(AskError::Failed("the call's task was never made".into())),
            }
        })
    }
}

impl McpPeer {
    pub(crate) fn answerer(&self) -> &McpAnswerer {
        self.answerer.get_or_init(|| {
            if self.current {
                let declared = Declared::of(self.meta.client_capabilities().as_ref());
                let answers = std::mem::take(
                    &mut *self.answers.lock().unwrap_or_else(PoisonError::into_inner),
                );
                McpAnswerer::round(declared, answers)
            } else {
                let info = self.peer.peer_info();
                let declared = Declared::of(info.as_ref().map(|info| &info.capabilities));
                if self.session.stateless {
                    McpAnswerer::closed(declared)
                } else {
                    McpAnswerer::live(declared, self.peer.clone())
                }
            }
        })
    }

    /// The rmcp peer: requests and notifications to the client.
    pub fn peer(&self) -> &rmcp::service::Peer<RoleServer> {
        &self.peer
    }

    /// Sends a log message (`notifications/message`), unless the client asked
    /// (`logging/setLevel`) for more severe ones only. On 2026-07-28 the request's `_meta`
    /// names the level (`io.modelcontextprotocol/logLevel`), and a request naming none is sent
    /// no log.
    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    pub async fn log(
        &self,
        level: rmcp::model::LoggingLevel,
        data: Value,
    ) -> Result<(), rmcp::service::ServiceError> {
        if self.current {
            // 2026-07-28: each request says the level it wants; one that says none wants none.
            match self.meta.log_level() {
                Some(wanted) if level as u8 >= wanted as u8 => {}
                _ => return Ok(()),
            }
        } else {
            let wanted = self
                .session
                .log_level
                .load(std::sync::atomic::Ordering::Relaxed);
            if wanted != u8::MAX && (level as u8) < wanted {
                return Ok(());
            }
        }
        self.peer
            .notify_logging_message(rmcp::model::LoggingMessageNotificationParam::new(
                level, data,
            ))
            .await
    }
}

/// The state one client sets on its connection.
#[derive(Debug)]
pub(crate) struct Session {
    /// The least severe `LoggingLevel` (as its index) the client wants; `u8::MAX` before it
    /// said, when everything is sent.
    pub(crate) log_level: std::sync::atomic::AtomicU8,
    /// A request of stateless HTTP, which takes no answer to a request of the server's.
    pub(crate) stateless: bool,
}

impl Session {
    pub(crate) fn new(stateless: bool) -> Arc<Self> {
        Arc::new(Self {
            log_level: std::sync::atomic::AtomicU8::new(u8::MAX),
            stateless,
        })
    }
}
