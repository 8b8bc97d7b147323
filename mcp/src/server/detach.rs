//! A call that becomes a task: room taken for it, the request answered with the task, and the
//! rest of the call run on the task to its end.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CreateTaskResult};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolprism::access::required_scopes;
use toolprism::error::codes;
use toolprism::pipeline::DispatchOptions;
use toolprism::tool::TaskSupport;
use toolprism::{BoxFuture, Snapshot, Surface, ToolCall, ToolOutcome};

use super::drive::{Driven, Round, cancelled_by_client, drive};
use super::input::McpAnswerer;
use super::peer::McpPeer;
use super::progress::{ProgressStream, send_progress};
use super::setup::McpServer;
use super::tasks::{self, Ending, Running};
use crate::wire::result::to_result;

/// A call that may become a task: its dispatch is boxed and owns its snapshot, so that it can
/// run on after the request.
pub(super) struct Detachable {
    pub(super) snapshot: Snapshot,
    pub(super) call: ToolCall,
    pub(super) options: DispatchOptions,
    pub(super) support: TaskSupport,
}

impl McpServer {
    /// Drives a call the body may detach (from its start, if the tool says so): answered with
    /// its result when it ends first, with a task when it detaches first.
    pub(super) async fn call_detachable(
        &self,
        detachable: Detachable,
        client: &Arc<McpPeer>,
        ct: &CancellationToken,
        progress: Option<&ProgressStream<'_>>,
        round: &Round<'_>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Detachable {
            snapshot,
            call,
            options,
            support,
        } = detachable;
        // Reading the task needs what calling its tool needs.
        let scopes = snapshot
            .definition(call.name())
            .map_or_else(Vec::new, |definition| {
                required_scopes(
                    &definition.about().scopes,
                    call.name(),
                    self.scope_rules().as_deref(),
                )
            });
        let detached = Arc::new(Notify::new());
        let signal = self.detach_signal(client, &detached);
        if support != TaskSupport::Never && !signal() && support == TaskSupport::Required {
            return Err(tasks::no_room());
        }
        let options = options.detachable(signal);
        let mut dispatch: BoxFuture<'static, ToolOutcome> =
            Box::pin(async move { snapshot.dispatch_with(call, Surface::Direct, options).await });
        match drive(dispatch.as_mut(), ct, progress, client, Some(&detached)).await {
            Driven::Ended(outcome) => self.respond(client, outcome, round),
            Driven::Cancelled => Err(cancelled_by_client()),
            Driven::Detached => {
                self.run_as_task(client, dispatch, progress, round.wrapped, scopes)
                    .await
            }
        }
    }

    /// What a body calls to detach: it takes room for a task (false if there is none) and
    /// wakes the request's driver.
    fn detach_signal(
        &self,
        client: &Arc<McpPeer>,
        detached: &Arc<Notify>,
    ) -> impl Fn() -> bool + Send + Sync + 'static {
        let (client, detached) = (client.clone(), detached.clone());
        let tasks = self.shared.settings.tasks.clone();
        move || {
            // A call detaches once, and only while the server has room for a task.
            let mut room = client
                .task
                .room
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if room.is_none() {
                let Some(reserved) = tasks.reserve() else {
                    return false;
                };
                *room = Some(reserved);
                client.task.detached.store(true, Ordering::Release);
                detached.notify_one();
            }
            true
        }
    }

    /// Answers the request with a new task and runs the rest of the call on it. What the body
    /// reported so far reaches the client before the task's id.
    async fn run_as_task(
        &self,
        client: &Arc<McpPeer>,
        dispatch: BoxFuture<'static, ToolOutcome>,
        progress: Option<&ProgressStream<'_>>,
        wrapped: bool,
        scopes: Vec<String>,
    ) -> Result<CallToolResponse, ErrorData> {
        if progress.is_some_and(|(_, queue)| queue.has_reports()) {
            Box::pin(send_progress(&client.peer, progress)).await;
        }
        let told = (!self.session.stateless).then(|| client.peer.clone());
        let running = self
            .shared
            .settings
            .tasks
            .create(told, client.owner.clone(), scopes)
            .await?;
        client.task.running.send_replace(Some(running.clone()));
        let created = CreateTaskResult::new(running.task());
        tokio::spawn(run(running, dispatch, client.clone(), wrapped));
        Ok(CallToolResponse::Task(created))
    }
}

/// Runs a detached call to its end as a task: its result (or the protocol error its failure
/// stands for) recorded, unless a `tasks/cancel` or the task's TTL stops it first. The body's
/// progress becomes the task's status message. The call's client is held until then.
pub(crate) async fn run(
    running: Arc<Running>,
    mut dispatch: BoxFuture<'static, ToolOutcome>,
    client: Arc<McpPeer>,
    wrapped: bool,
) {
    let deadline = tokio::time::sleep(running.ttl());
    let cancelled = running.cancel_requested();
    tokio::pin!(deadline, cancelled);
    let ending = loop {
        tokio::select! {
            outcome = &mut dispatch => break ending_of(outcome, &client, wrapped),
            () = &mut cancelled => break Ending::Cancelled,
            () = &mut deadline => break Ending::Failed(ErrorData::internal_error(
                "the task ran longer than its TTL and was stopped",
                None,
            )),
            () = client.progress.ready() => {
                let latest = client.progress.take().into_iter().rev().find_map(|report| report.message);
                if let Some(message) = latest {
                    running.note(message).await;
                }
            }
        }
    };
    if let Err(error) = running.end(ending).await {
        tracing::warn!(%error, "a task's ending could not be recorded");
    }
}

/// How a task's call ended: a tool error is a completed task whose result says so; a failure
/// of toolprism's own (a body that panicked), of the client's answers, or for a kind of input
/// the client did not declare fails the task.
pub(super) fn ending_of(outcome: ToolOutcome, client: &McpPeer, wrapped: bool) -> Ending {
    if let Some(error) = outcome.error() {
        let code = error.code();
        if code == Some(codes::INPUT_UNAVAILABLE)
            && let Some(missing) = client
                .answerer
                .get()
                .and_then(McpAnswerer::missing_capability)
        {
            return Ending::Failed(missing);
        }
        if code == Some(codes::INVALID_INPUT_ANSWER) {
            return Ending::Failed(ErrorData::invalid_params(error.message.clone(), None));
        }
        if code == Some(codes::TOOL_PANICKED) {
            return Ending::Failed(ErrorData::internal_error(error.message.clone(), None));
        }
    }
    Ending::Completed(to_result(outcome, wrapped))
}
