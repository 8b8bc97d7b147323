//! What an imported tool's server asks while a call runs, answered by whoever answers the local
//! call ([`toolprism::ask`]): on 2026-07-28 an input-required result is answered and the call
//! retried with the answers; a call the server made a task is polled to its end, its questions
//! answered with `tasks/update`, its status messages passed on as progress, and cancelled when
//! the local call is dropped; on 2025-11-25 a live request is answered for the one call in
//! flight.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, GetTaskParams, InputRequests, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use toolprism::ToolContext;
use toolprism::ask::InputRequest;
use toolprism::error::ToolError;

use super::error::{SERVER_ERROR, SERVER_UNAVAILABLE};
use super::progress::MAX_PROGRESS_MESSAGE;
use crate::wire::text::cut;

/// The most rounds of input-required results one call answers before giving up.
pub const MAX_INPUT_ROUNDS: usize = 10;
/// The most requests one round (or one poll of a task) may ask at once.
pub const MAX_INPUT_REQUESTS: usize = 32;
/// The most a server may ask during one call, however it asks (rounds, a task, live requests).
pub const MAX_INPUT_ASKS: usize = MAX_INPUT_ROUNDS * MAX_INPUT_REQUESTS;
/// The shortest and longest wait between two polls of a task, whatever the server asks.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(5));

/// Answers the server's requests with the local call's answerer; the answers by key.
pub(crate) async fn answer_all(
    name: &str,
    requests: &InputRequests,
    cx: &ToolContext,
) -> Result<BTreeMap<String, Value>, ToolError> {
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(ToolError::new(format!(
            "The MCP server behind `{name}` asked {} things at once, more than the {MAX_INPUT_REQUESTS} a call answers",
            requests.len()
        ))
        .with_code(SERVER_ERROR));
    }
    let mut answers = BTreeMap::new();
    for (key, request) in requests {
        let wire = serde_json::to_value(request).map_err(|error| {
            ToolError::new(format!("an input request could not be read: {error}"))
        })?;
        let request = InputRequest::from_json(&wire).map_err(|why| {
            ToolError::new(format!(
                "The MCP server behind `{name}` asked for input toolprism cannot take: {why}"
            ))
            .with_code(SERVER_ERROR)
        })?;
        answers.insert(key.clone(), cx.ask(key, &request).await?);
    }
    Ok(answers)
}

fn too_many_asks(name: &str) -> ToolError {
    ToolError::new(format!(
        "The MCP server behind `{name}` asked for input more than {MAX_INPUT_ASKS} times in one call"
    ))
    .with_code(SERVER_ERROR)
}

/// Follows a task to its end: its result, or why there is none. Dropped before then (the
/// local call cancelled or timed out), it cancels the task on the server.
pub(crate) async fn follow_task(
    peer: &Peer<RoleClient>,
    name: &str,
    created: CreateTaskResult,
    cx: &ToolContext,
) -> Result<CallToolResult, ToolError> {
    let id = created.task.task_id.clone();
    let mut cancel = CancelOnDrop {
        peer: peer.clone(),
        id: Some(id.clone()),
    };
    let poll = created
        .task
        .poll_interval_ms
        .map_or(Duration::from_millis(500), Duration::from_millis)
        .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
    let unavailable = |error: rmcp::ServiceError| {
        ToolError::new(format!(
            "The MCP server behind `{name}` could not be asked about its task: {error}"
        ))
        .with_code(SERVER_UNAVAILABLE)
    };
    let mut answered = HashSet::new();
    let (mut last_message, mut messages) = (None::<String>, 0.0);
    loop {
        if answered.len() > MAX_INPUT_ASKS {
            return Err(too_many_asks(name));
        }
        tokio::time::sleep(poll).await;
        let got = peer
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .map_err(unavailable)?;
        // A new status message is progress: the local call hears it, counted.
        if let Some(message) = &got.task.task.status_message
            && last_message.as_ref() != Some(message)
        {
            messages += 1.0;
            cx.progress(messages, None, &cut(message.chars(), MAX_PROGRESS_MESSAGE));
            last_message = Some(message.clone());
        }
        match got.task.payload {
            TaskPayload::InputRequired { input_requests } => {
                // What was answered may still show until the server reads it.
                let pending: InputRequests = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if pending.is_empty() {
                    continue;
                }
                let answers = answer_all(name, &pending, cx).await?;
                answered.extend(answers.keys().cloned());
                peer.update_task(UpdateTaskParams::new(id.clone(), answers))
                    .await
                    .map_err(unavailable)?;
            }
            payload => {
                if let Some(ended) = task_ended(name, payload) {
                    cancel.id = None;
                    return ended;
                }
            }
        }
    }
}

/// What a task that ended answers the local call: its result, or why there is none; `None`
/// while it still works.
fn task_ended(name: &str, payload: TaskPayload) -> Option<Result<CallToolResult, ToolError>> {
    match payload {
        TaskPayload::Completed { result } => Some(
            serde_json::from_value(Value::Object(result)).map_err(|error| {
                ToolError::new(format!(
                    "The MCP server behind `{name}` ended its task with something other than a tool result: {error}"
                ))
                .with_code(SERVER_ERROR)
            }),
        ),
        TaskPayload::Failed { error } => {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            Some(Err(ToolError::new(format!(
                "The MCP server's task for `{name}` failed: {message}"
            ))
            .with_code(SERVER_ERROR)))
        }
        TaskPayload::Cancelled => Some(Err(ToolError::new(format!(
            "The MCP server cancelled its task for `{name}`"
        ))
        .with_code(SERVER_ERROR))),
        // Working: poll again.
        _ => None,
    }
}

/// A task still running: dropped armed, it asks the server to cancel it.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            // A server that went away needs no telling.
            let _ = peer.cancel_task(CancelTaskParams::new(id)).await;
        });
    }
}

/// The local calls in flight on one connection, for a 2025-11-25 server's live requests,
/// which say nothing of the call they belong to: one call in flight is the one asking.
#[derive(Default)]
pub(crate) struct InFlight {
    /// Each call in flight: its number, its context, and how many live requests it answered.
    calls: Mutex<Vec<(u64, ToolContext, usize)>>,
    next: std::sync::atomic::AtomicU64,
}

/// Answers a 2025-11-25 server's live request (`method`, `params`) for the one call in
/// flight: its answer as MCP words it, or why there is none.
pub(crate) async fn answer_live(
    in_flight: &InFlight,
    method: &str,
    params: Value,
) -> Result<Value, rmcp::ErrorData> {
    let refused = |why: String| rmcp::ErrorData::internal_error(why, None);
    let cx = in_flight.only_counted().map_err(refused)?;
    let request = InputRequest::from_json(&serde_json::json!({"method": method, "params": params}))
        .map_err(|why| rmcp::ErrorData::invalid_params(why, None))?;
    // Keys name a request within the local call: each live request gets its own.
    let key = format!(
        "live-{}",
        in_flight
            .next
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    cx.ask(&key, &request)
        .await
        .map_err(|error| refused(error.message().to_owned()))
}

impl InFlight {
    /// Records a call until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, cx: &ToolContext) -> Leave {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push((id, cx.clone(), 0));
        Leave {
            calls: self.clone(),
            id,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, ToolContext, usize)>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The one call in flight, if there is exactly one and it has answered fewer than
    /// [`MAX_INPUT_ASKS`] live requests; counts this one.
    pub(crate) fn only_counted(&self) -> Result<ToolContext, String> {
        match self.lock().as_mut_slice() {
            [(_, _, asked)] if *asked >= MAX_INPUT_ASKS => Err(format!(
                "the server asked for input more than {MAX_INPUT_ASKS} times in one call"
            )),
            [(_, cx, asked)] => {
                *asked += 1;
                Ok(cx.clone())
            }
            [] => Err("no call is in flight to answer it".into()),
            calls => Err(format!(
                "{} calls are in flight, and the request does not say which it is for",
                calls.len()
            )),
        }
    }
}

/// Removes a call from [`InFlight`] when dropped.
pub(crate) struct Leave {
    calls: Arc<InFlight>,
    id: u64,
}

impl Drop for Leave {
    fn drop(&mut self) {
        self.calls.lock().retain(|(id, _, _)| *id != self.id);
    }
}
