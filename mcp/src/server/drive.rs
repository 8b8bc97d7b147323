//! A dispatch driven for its request: its progress sent as it comes, the client's
//! cancellation, a body that detaches; and what the request answers when the call ends (its
//! result, the next round of input it needs, or the protocol error its failure stands for).

use std::sync::atomic::Ordering;
use std::task::Poll;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputRequiredResult};
use serde_json::Value;
use tokio::sync::Notify;
use toolprism::ToolOutcome;
use toolprism::error::codes;

use super::peer::McpPeer;
use super::progress::{ProgressStream, reports_ready, send_progress};
use super::setup::McpServer;
use crate::wire::result::to_result;

impl McpServer {
    /// What a call that ended answers: its result, the next round of input it needs
    /// (2026-07-28), or the protocol error its failure stands for.
    pub(super) fn respond(
        &self,
        client: &McpPeer,
        outcome: ToolOutcome,
        round: &Round<'_>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(answerer) = client.answerer.get() {
            let code = outcome.error().and_then(|error| error.code());
            if code == Some(codes::INPUT_UNAVAILABLE)
                && let Some(missing) = answerer.missing_capability()
            {
                return Err(missing);
            }
            // An answer of the wrong shape is the client's protocol error, not the tool's.
            if client.current
                && code == Some(codes::INVALID_INPUT_ANSWER)
                && let Some(error) = outcome.error()
            {
                return Err(ErrorData::invalid_params(error.message.clone(), None));
            }
            if let Some(args) = round.args
                && let Some((requests, state)) = answerer.next_round(
                    &self.shared.settings.states,
                    client.owner.as_ref(),
                    round.name,
                    args,
                )?
            {
                return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                    Some(requests),
                    Some(state),
                )));
            }
        }
        Ok(CallToolResponse::Complete(to_result(
            outcome,
            round.wrapped,
        )))
    }
}

/// The request a call answers, for what it answers when it ends.
pub(super) struct Round<'a> {
    pub(super) name: &'a str,
    /// The arguments a 2026-07-28 round's state is bound to.
    pub(super) args: Option<&'a Value>,
    /// Whether a 2025-11-25 client reads the value wrapped in an object.
    pub(super) wrapped: bool,
}

/// How driving a dispatch for its request ended.
pub(super) enum Driven {
    Ended(ToolOutcome),
    Cancelled,
    /// The body asked to run on as a task.
    Detached,
}

/// Polls a dispatch to its end, sending its progress as it comes, unless the client cancels
/// the request or (with `detached`) the body asks to run on as a task.
pub(super) async fn drive<F: Future<Output = ToolOutcome> + ?Sized>(
    mut dispatch: std::pin::Pin<&mut F>,
    ct: &tokio_util::sync::CancellationToken,
    progress: Option<&ProgressStream<'_>>,
    client: &McpPeer,
    detached: Option<&Notify>,
) -> Driven {
    if let Some(detached) = detached
        && client.task.detached.load(Ordering::Acquire)
    {
        detached.notified().await;
        return Driven::Detached;
    }
    // A call that ends on its first poll (most do) never makes the futures that wait for
    // cancellation or progress.
    let first = std::future::poll_fn(|cx| Poll::Ready(dispatch.as_mut().poll(cx))).await;
    let outcome = match first {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => loop {
            tokio::select! {
                biased;
                outcome = &mut dispatch => break outcome,
                () = ct.cancelled() => return Driven::Cancelled,
                () = async {
                    match detached {
                        Some(detached) => detached.notified().await,
                        None => std::future::pending().await,
                    }
                } => return Driven::Detached,
                () = reports_ready(progress) => {
                    Box::pin(send_progress(&client.peer, progress)).await;
                }
            }
        },
    };
    // Every report reaches the client before the result does. (Sending is boxed, here and
    // above: most calls send none, and the future of one carried inline would make every
    // call's task larger to spawn.)
    if progress.is_some_and(|(_, queue)| queue.has_reports()) {
        Box::pin(send_progress(&client.peer, progress)).await;
    }
    Driven::Ended(outcome)
}

pub(super) fn cancelled_by_client() -> ErrorData {
    // Dropping the dispatch drops the body where it stands.
    ErrorData::internal_error("the call was cancelled by the client", None)
}
