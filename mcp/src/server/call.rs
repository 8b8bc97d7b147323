//! `tools/call`: one dispatch on the direct surface, driven to its end with its progress sent
//! as it comes, and answered with its result, the next round of input it needs, or the
//! protocol error its failure stands for.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse, InputRequiredResult};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::Notify;
use toolprism::error::codes;
use toolprism::pipeline::DispatchOptions;
use toolprism::tool::TaskSupport;
use toolprism::{BoxFuture, Surface, ToolCall, ToolOutcome};

use super::input;
use super::peer::{McpPeer, TaskSlot};
use super::progress::{ProgressQueue, ProgressStream, reports_ready, send_progress};
#[cfg(feature = "auth")]
use super::request::caller_of;
use super::request::{call_id, is_current, takes_tasks};
use super::setup::McpServer;
use super::tasks;
use crate::wire::result::to_result;
use crate::wire::text::quoted_for_error;

impl McpServer {
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let snapshot = self.shared.registry.snapshot();
        let Some(tool) = snapshot.resolve(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", quoted_for_error(&request.name)),
                None,
            ));
        };
        let current = is_current(&context.meta, &context.peer);
        let takes_tasks = takes_tasks(&context.meta, &context.peer, current);
        let task_support = tool.definition().about().task;
        if task_support == TaskSupport::Required && !takes_tasks {
            return Err(tasks::tasks_required());
        }
        let wrapped = !tool.definition().output_is_object() && !current;
        let args = Value::Object(request.arguments.unwrap_or_default());
        let id = call_id(&context.id);
        // On 2026-07-28 a body that asks for input ends the round; its next state is bound to
        // these arguments, and a retry's answers are opened against them before it runs.
        let (kept_args, answers) = if current {
            let answers = self.answers_of(
                &request.name,
                &args,
                request.request_state.as_deref(),
                request.input_responses,
            )?;
            (Some(args.clone()), answers)
        } else {
            (None, BTreeMap::new())
        };

        // The request's peer is moved, not cloned: a clone is some ten reference counts to
        // raise and lower again on every call.
        #[cfg(feature = "auth")]
        let caller = caller_of(&context);
        let RequestContext { ct, meta, peer, .. } = context;
        let progress_token = meta.get_progress_token();
        let client = Arc::new(McpPeer {
            peer,
            session: self.session.clone(),
            progress: ProgressQueue::default(),
            meta,
            current,
            answers: Mutex::new(answers),
            answerer: OnceLock::new(),
            task: TaskSlot::default(),
        });
        let mut options = DispatchOptions::default()
            .shared_extension(client.clone())
            .shared_answerer(client.clone());
        #[cfg(feature = "auth")]
        if let Some(caller) = caller {
            options = options.shared_extension(caller);
        }
        // Progress is forwarded by this task, between polls of the dispatch: no task is spawned
        // per call. A call that may become a task keeps its reports without a token too: they
        // become the task's status message.
        let mut progress = None;
        if progress_token.is_some() || takes_tasks {
            options = options.shared_progress(client.clone());
        }
        if let Some(token) = progress_token {
            progress = Some((token, &client.progress));
        }
        let round = Round {
            name: &request.name,
            args: kept_args.as_ref(),
            wrapped,
        };

        if takes_tasks {
            // The body may become a task (from its start, if the tool says so): the dispatch
            // is boxed and owns its snapshot, so that it can run on after this request.
            let detached = Arc::new(Notify::new());
            let signal = self.detach_signal(&client, &detached);
            if task_support != TaskSupport::Never
                && !signal()
                && task_support == TaskSupport::Required
            {
                return Err(tasks::no_room());
            }
            let options = options.detachable(signal);
            let call = ToolCall::new(id, request.name.clone(), args);
            let mut dispatch: BoxFuture<'static, ToolOutcome> =
                Box::pin(
                    async move { snapshot.dispatch_with(call, Surface::Direct, options).await },
                );
            return match drive(
                dispatch.as_mut(),
                &ct,
                progress.as_ref(),
                &client,
                Some(&detached),
            )
            .await
            {
                Driven::Ended(outcome) => self.respond(&client, outcome, &round),
                Driven::Cancelled => Err(cancelled_by_client()),
                Driven::Detached => {
                    self.run_as_task(&client, dispatch, progress.as_ref(), wrapped)
                        .await
                }
            };
        }
        let mut dispatch = std::pin::pin!(tool.dispatch(id, args, Surface::Direct, options));
        match drive(dispatch.as_mut(), &ct, progress.as_ref(), &client, None).await {
            Driven::Ended(outcome) => self.respond(&client, outcome, &round),
            Driven::Cancelled | Driven::Detached => Err(cancelled_by_client()),
        }
    }

    /// The answers a 2026-07-28 retry carries (none for a first round).
    pub(super) fn answers_of(
        &self,
        tool: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<BTreeMap<String, Value>>,
    ) -> Result<BTreeMap<String, Value>, ErrorData> {
        if state.is_none() && responses.is_none() {
            return Ok(BTreeMap::new());
        }
        input::open_answers(&self.shared.settings.states, tool, args, state, responses)
    }

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
                && let Some((requests, state)) =
                    answerer.next_round(&self.shared.settings.states, round.name, args)?
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
    name: &'a str,
    /// The arguments a 2026-07-28 round's state is bound to.
    args: Option<&'a Value>,
    /// Whether a 2025-11-25 client reads the value wrapped in an object.
    wrapped: bool,
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
