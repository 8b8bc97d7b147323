//! Calls that outlive their request (MCP's `io.modelcontextprotocol/tasks` extension,
//! SEP-2663): the request is answered at once with a task id; the call runs on in this process,
//! keeping its record in a [`TaskStore`]; the client polls `tasks/get`, answers what the task
//! asks with `tasks/update` and stops it with `tasks/cancel`, on any replica that shares the
//! store. A running task reads its answers and any cancellation from the store every
//! [`TASK_POLL`].
//!
//! A task belongs to the owner of the call that became it (the caller's token, else the HTTP
//! session): `tasks/get`, `tasks/update` and `tasks/cancel` by anyone else are answered exactly
//! as for an id that names no task, on every replica (the owner is kept in the record).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResult, ClientCapabilities, DetailedTask, ErrorData, GetTaskResult, JsonObject,
    ServerNotification, Task, TaskPayload, TaskStatus, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RoleServer};
use rmcp::task_manager::current_timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolprism::access::{Caller, Owner};
use toolprism::ask::{AskError, InputRequest};
use toolprism::depth::check_depth;

use super::input::{carried, once_per_key};
use super::task_store::TaskStore;

/// How long a task and its record last, unless the server says otherwise: a task still
/// running then is stopped and fails.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(600);
/// How often a running task first reads the store for its answers and a cancellation; it
/// waits twice as long after each read that finds nothing, up to [`TASK_POLL_MAX`].
pub const TASK_POLL: Duration = Duration::from_millis(200);
/// The longest a running task waits between two reads of the store.
pub const TASK_POLL_MAX: Duration = Duration::from_secs(2);
/// The most tasks one server runs at once; past that a call that may be a task is answered
/// when it ends, and one that must be is refused.
pub const MAX_RUNNING_TASKS: usize = 1_000;
/// How often a task's progress may change its status message.
const NOTE_INTERVAL: Duration = Duration::from_secs(1);
/// How many times a store that fails is tried again, waiting longer each time.
const STORE_RETRIES: u32 = 5;
/// How often a client is told to poll (`pollIntervalMs`).
const POLL_INTERVAL_MS: u64 = 500;

/// What a task keeps in the store under its id. Only the process running it writes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Record {
    task_id: String,
    /// Whose task it is ([`Owner::as_str`]); `None` for a request with no owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    /// The scopes calling its tool needs, which reading the task needs too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    status: TaskStatus,
    created_at: String,
    last_updated_at: String,
    ttl_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status_message: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    input_requests: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<JsonObject>,
}

impl Record {
    fn task(&self) -> Task {
        let task = Task::new(
            self.task_id.clone(),
            self.status,
            self.created_at.clone(),
            self.last_updated_at.clone(),
        )
        .with_ttl_ms(self.ttl_ms)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
        match &self.status_message {
            Some(message) => task.with_status_message(message.clone()),
            None => task,
        }
    }

    /// The task as `tasks/get` shows it, without the requests `answered` already answers: a
    /// task whose every request is answered is working again, though its runner has yet to
    /// read the answers.
    fn detailed(&self, answered: &[String]) -> DetailedTask {
        let all_answered = self.input_requests.keys().all(|key| answered.contains(key));
        let payload = match self.status {
            TaskStatus::InputRequired if all_answered => TaskPayload::Working,
            TaskStatus::InputRequired => {
                let pending = self
                    .input_requests
                    .iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .filter_map(|(key, request)| {
                        Some((key.clone(), serde_json::from_value(request.clone()).ok()?))
                    })
                    .collect();
                TaskPayload::InputRequired {
                    input_requests: pending,
                }
            }
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.result.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: self.error.clone().unwrap_or_default(),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        DetailedTask::new(self.task(), payload)
    }
}

/// Who asks about a task: the owner of the request, and its caller (whose scopes are checked).
#[derive(Clone, Copy)]
pub(crate) struct Asker<'a> {
    pub(crate) owner: Option<&'a Owner>,
    pub(crate) caller: Option<&'a Caller>,
}

/// The tasks of one server: where they are kept, for how long, and room for how many.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    ttl: Duration,
    room: Arc<Semaphore>,
}

/// A task id: 32 lowercase hex digits (128 random bits), so that it names a key and nothing
/// else.
fn is_task_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

fn fresh_id() -> String {
    let mut bytes = [0u8; 16];
    // A machine without entropy cannot run tasks safely; the id would be guessable.
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    hex(&bytes)
}

/// Bytes as lowercase hex digits.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

/// The keys of a task's entries all begin with its id and a `/` (in object storage, a
/// directory of its own).
fn record_key(id: &str) -> String {
    format!("{id}/record")
}

fn cancel_key(id: &str) -> String {
    format!("{id}/cancel")
}

/// An answer's key within the store: the request key (printable ASCII) in hex.
fn answer_key(id: &str, key: &str) -> String {
    format!("{id}/answer/{}", hex(key.as_bytes()))
}

fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no task {}", crate::wire::text::quoted_for_error(id)),
        None,
    )
}

fn store_failed(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(format!("the task store failed: {error}"), None)
}

/// A call that must be a task, when the server runs its most.
pub(crate) fn no_room() -> ErrorData {
    ErrorData::internal_error(
        format!("this server runs {MAX_RUNNING_TASKS} tasks, its most; call again later"),
        None,
    )
}

/// `-32021`: a call that must be a task, from a client that did not opt in.
pub(crate) fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, ttl: Duration) -> Self {
        Self {
            store,
            ttl,
            room: Arc::new(Semaphore::new(MAX_RUNNING_TASKS)),
        }
    }

    /// Room for one more task, held until it ends; `None` when the server runs its most.
    pub(crate) fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        self.room.clone().try_acquire_owned().ok()
    }

    /// The TTL every entry of a task is kept for: the task's own, and as long again after
    /// it ends, so that its result can be read.
    fn keep(&self) -> Duration {
        self.ttl.saturating_mul(2)
    }

    /// The record of task `id`, for `asker`: another owner's, or one whose tool needs a scope
    /// the asker's token lacks, is answered as none is.
    async fn record(&self, id: &str, asker: Asker<'_>) -> Result<Record, ErrorData> {
        if !is_task_id(id) {
            return Err(unknown_task(id));
        }
        let bytes = self
            .store
            .get(&record_key(id))
            .await
            .map_err(store_failed)?
            .ok_or_else(|| unknown_task(id))?;
        let record: Record = serde_json::from_slice(&bytes).map_err(store_failed)?;
        let scoped = asker
            .caller
            .is_none_or(|caller| record.scopes.iter().all(|scope| caller.has_scope(scope)));
        if record.owner.as_deref() != asker.owner.map(Owner::as_str) || !scoped {
            return Err(unknown_task(id));
        }
        Ok(record)
    }

    async fn save(&self, record: &Record) -> Result<(), ErrorData> {
        let bytes = serde_json::to_vec(record).map_err(store_failed)?;
        self.store
            .put(&record_key(&record.task_id), bytes, self.keep())
            .await
            .map_err(store_failed)
    }

    /// A new task, working, kept before its id is given out: a `tasks/get` right after the
    /// answer finds it.
    pub(crate) async fn create(
        self: &Arc<Self>,
        told: Option<Peer<RoleServer>>,
        owner: Option<Owner>,
        scopes: Vec<String>,
    ) -> Result<Arc<Running>, ErrorData> {
        let now = current_timestamp();
        let record = Record {
            task_id: fresh_id(),
            owner: owner.map(|owner| owner.as_str().to_owned()),
            scopes,
            status: TaskStatus::Working,
            created_at: now.clone(),
            last_updated_at: now,
            ttl_ms: u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX),
            status_message: None,
            input_requests: BTreeMap::new(),
            result: None,
            error: None,
        };
        self.save(&record).await?;
        Ok(Arc::new(Running {
            tasks: self.clone(),
            record: Mutex::new(record),
            saving: tokio::sync::Mutex::new(()),
            told,
            seen: Mutex::default(),
            noted: Mutex::new(None),
        }))
    }

    /// `tasks/get`, by `asker`.
    pub(crate) async fn get(&self, id: &str, asker: Asker<'_>) -> Result<GetTaskResult, ErrorData> {
        let record = self.record(id, asker).await?;
        let mut answered = Vec::new();
        for key in record.input_requests.keys() {
            if self
                .store
                .get(&answer_key(id, key))
                .await
                .map_err(store_failed)?
                .is_some()
            {
                answered.push(key.clone());
            }
        }
        Ok(GetTaskResult::new(record.detailed(&answered)))
    }

    /// `tasks/update`: each answer to a request the task has pending is kept for it; an answer
    /// to anything else is ignored, as the extension says.
    pub(crate) async fn update(
        &self,
        id: &str,
        asker: Asker<'_>,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        let record = self.record(id, asker).await?;
        for (key, answer) in responses {
            if record.input_requests.contains_key(&key) {
                let bytes = serde_json::to_vec(&answer).map_err(store_failed)?;
                self.store
                    .put(&answer_key(id, &key), bytes, self.keep())
                    .await
                    .map_err(store_failed)?;
            }
        }
        Ok(())
    }

    /// `tasks/cancel`: marks the task for its runner to stop; a task already ended is left as
    /// it is, and acknowledged the same.
    pub(crate) async fn cancel(&self, id: &str, asker: Asker<'_>) -> Result<(), ErrorData> {
        let record = self.record(id, asker).await?;
        if !record.status.is_terminal() {
            self.store
                .put(&cancel_key(id), Vec::new(), self.keep())
                .await
                .map_err(store_failed)?;
        }
        Ok(())
    }
}

/// How a task ended.
pub(crate) enum Ending {
    Completed(CallToolResult),
    Failed(ErrorData),
    Cancelled,
}

/// A task this process runs: its record, kept current in the store.
pub(crate) struct Running {
    tasks: Arc<Tasks>,
    record: Mutex<Record>,
    /// One save at a time, so that the store sees the record's changes in order.
    saving: tokio::sync::Mutex<()>,
    /// A client told of each change (`notifications/tasks`): one whose connection stays open
    /// (stdio, a 2025-11-25 session). Over stateless HTTP there is no channel, and clients poll.
    told: Option<Peer<RoleServer>>,
    /// What each key asked, so that a key names one request.
    seen: Mutex<BTreeMap<String, InputRequest>>,
    /// When progress last changed the status message.
    noted: Mutex<Option<Instant>>,
}

/// Waits between reads of the store: [`TASK_POLL`], then twice as long each time, up to
/// [`TASK_POLL_MAX`].
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Self(TASK_POLL)
    }

    async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(TASK_POLL_MAX);
    }
}

impl Running {
    pub(crate) fn task(&self) -> Task {
        self.lock().task()
    }

    pub(crate) fn ttl(&self) -> Duration {
        self.tasks.ttl
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the record and saves it; the record as saved.
    async fn change(&self, change: impl FnOnce(&mut Record)) -> Result<Record, ErrorData> {
        let record = {
            let _order = self.saving.lock().await;
            let record = {
                let mut record = self.lock();
                change(&mut record);
                record.last_updated_at = current_timestamp();
                record.clone()
            };
            self.tasks.save(&record).await?;
            record
        };
        // Told after the save, outside the lock: a slow client holds up no later change.
        if let Some(peer) = &self.told {
            let params = TaskStatusNotificationParams::new(record.detailed(&[]));
            let notification = TaskStatusNotification::new(params);
            // Telling is best effort: a client that has gone still finds the task by polling.
            let _ = peer
                .send_notification(ServerNotification::TaskStatusNotification(notification))
                .await;
        }
        Ok(record)
    }

    /// Asks on the task: the request is shown by `tasks/get` (status `input_required`) until a
    /// `tasks/update` answers it. A key asked again for the same request gets the same answer.
    pub(crate) async fn ask(&self, key: &str, request: &InputRequest) -> Result<Value, AskError> {
        let failed = |error: ErrorData| AskError::Failed(error.message.into_owned());
        let typed = carried(request).map_err(AskError::Failed)?;
        let wire =
            serde_json::to_value(typed).map_err(|error| AskError::Failed(error.to_string()))?;
        once_per_key(&self.seen, key, request)?;
        let id = self.lock().task_id.clone();
        let answer_at = answer_key(&id, key);
        if let Some(answer) = self.read_answer(&answer_at).await? {
            return Ok(answer);
        }
        self.change(|record| {
            record.input_requests.insert(key.to_owned(), wire);
            record.status = TaskStatus::InputRequired;
        })
        .await
        .map_err(failed)?;
        let mut backoff = Backoff::new();
        let answer = loop {
            if let Some(answer) = self.read_answer(&answer_at).await? {
                break answer;
            }
            backoff.wait().await;
        };
        self.change(|record| {
            record.input_requests.remove(key);
            if record.input_requests.is_empty() {
                record.status = TaskStatus::Working;
            }
        })
        .await
        .map_err(failed)?;
        Ok(answer)
    }

    /// The answer kept at `key`, if any; a store that fails is tried again a few times.
    async fn read_answer(&self, key: &str) -> Result<Option<Value>, AskError> {
        let mut backoff = Backoff::new();
        let mut tries = 0;
        loop {
            match self.tasks.store.get(key).await {
                Ok(None) => return Ok(None),
                Ok(Some(bytes)) => {
                    let answer: Value = serde_json::from_slice(&bytes)
                        .map_err(|error| AskError::Failed(error.to_string()))?;
                    check_depth(&answer)
                        .map_err(|error| AskError::Failed(format!("the answer nests {error}")))?;
                    return Ok(Some(answer));
                }
                Err(error) if tries >= STORE_RETRIES => {
                    return Err(AskError::Failed(error.to_string()));
                }
                Err(error) => {
                    tracing::debug!(%error, "a task's answer could not be read; trying again");
                    tries += 1;
                    backoff.wait().await;
                }
            }
        }
    }

    /// Shows the latest progress message as the task's status message, at most once a second.
    pub(crate) async fn note(&self, message: String) {
        {
            let mut noted = self.noted.lock().unwrap_or_else(PoisonError::into_inner);
            if noted.is_some_and(|at| at.elapsed() < NOTE_INTERVAL) {
                return;
            }
            *noted = Some(Instant::now());
        }
        if let Err(error) = self
            .change(|record| record.status_message = Some(message))
            .await
        {
            tracing::debug!(%error, "a task's progress could not be recorded");
        }
    }

    /// Resolves once a `tasks/cancel` has marked the task (a store that fails is read again).
    pub(crate) async fn cancel_requested(&self) {
        let key = cancel_key(&self.lock().task_id);
        let mut backoff = Backoff::new();
        loop {
            if let Ok(Some(_)) = self.tasks.store.get(&key).await {
                return;
            }
            backoff.wait().await;
        }
    }

    /// Records how the task ended, trying a failing store again a few times.
    pub(super) async fn end(&self, ending: Ending) -> Result<(), ErrorData> {
        let mut backoff = Backoff::new();
        let mut tries = 0;
        loop {
            match self.record_end(&ending).await {
                Err(error) if tries < STORE_RETRIES => {
                    tracing::debug!(%error, "a task's ending could not be recorded; trying again");
                    tries += 1;
                    backoff.wait().await;
                }
                done => return done,
            }
        }
    }

    async fn record_end(&self, ending: &Ending) -> Result<(), ErrorData> {
        let to_object = |value: Result<Value, serde_json::Error>| match value {
            Ok(Value::Object(object)) => object,
            _ => JsonObject::new(),
        };
        self.change(|record| {
            record.input_requests.clear();
            match ending {
                Ending::Completed(result) => {
                    record.status = TaskStatus::Completed;
                    record.result = Some(to_object(serde_json::to_value(result)));
                }
                Ending::Failed(error) => {
                    record.status = TaskStatus::Failed;
                    record.error = Some(to_object(serde_json::to_value(error)));
                }
                Ending::Cancelled => record.status = TaskStatus::Cancelled,
            }
        })
        .await
        .map(drop)
    }
}
