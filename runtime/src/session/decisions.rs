//! Durable decisions: a call a policy asks about waits as a record in the session log, and
//! any process holding the log and the registry decides it.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::events::{Decision, DecisionEvent, DecisionRequest, SessionEvent};
use super::log::SessionLog;
use crate::BoxFuture;
use crate::pipeline::{
    Approval, ApprovalRequest, Approver, Snapshot, checked_arguments, checked_result,
};
use crate::tool::Fingerprint;

/// The decisions of one session log, and the [`Approver`] that answers from them.
///
/// Install it as the registry's approver. A call a policy asks about is then logged as a
/// [`DecisionRequest`]. When the call carries an answerer that takes forms (an MCP client
/// that declared elicitation, the terminal), the person behind it is asked to approve or
/// reject, and their answer is logged before it holds; on MCP 2026-07-28 the form goes out as
/// an input request, and a task waits in `input_required` for it. Otherwise the call fails
/// with `DECISION_PENDING`, which a host's loop keeps from the model
/// ([`run_calls`](crate::turn::run_calls) returns it; `next_messages` refuses it). Any
/// process holding the log and the registry lists what waits ([`pending`](Self::pending)),
/// decides ([`decide`](Self::decide)), and runs the turn again with
/// [`RunOptions::resume`](crate::turn::RunOptions::resume): the calls that ran already are
/// answered from the log, and the decided ones run as decided.
///
/// A decision holds for the call it was asked about: the same call id, tool, arguments and
/// policy, and the same tool definition ([`Fingerprint`]). A call whose tool changed since is
/// asked about again, never run on the old answer.
///
/// Cloning it is an `Arc` clone. Decisions made in another process are seen once the log is
/// opened again ([`open`](Self::open)).
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::error::codes;
/// use toolprism::pipeline::{ExecuteCall, PreDecision};
/// use toolprism::session::{Decision, Decisions, LogOptions, SessionLog};
/// use serde_json::json;
///
/// /// Deletes a file.
/// #[tool(destructive)]
/// fn delete(#[arg] path: String) -> String { format!("deleted {path}") }
///
/// let path = std::env::temp_dir().join(format!("toolprism-doc-decide-{}.jsonl", std::process::id()));
/// # let _ = std::fs::remove_file(&path);
/// let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
/// let decisions = Decisions::open(&log).unwrap();
/// let registry = Registry::builder()
///     .tool(Delete)
///     .pre_execute(|_: &ExecuteCall| PreDecision::ask("Delete it?"))
///     .approver(decisions.clone())
///     .build()
///     .unwrap();
/// let snapshot = registry.snapshot();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = || ToolCall::new("c1", "delete", json!({"path": "a.txt"}));
/// let waiting = log.dispatch(&snapshot, call(), Surface::Direct).await.unwrap();
/// assert_eq!(waiting.error().unwrap().code(), Some(codes::DECISION_PENDING));
///
/// let asked = decisions.pending();
/// decisions.decide(&snapshot, &asked[0].id, Decision::Edit { arguments: json!({"path": "b.txt"}) }).unwrap();
/// let ran = log.dispatch(&snapshot, call(), Surface::Direct).await.unwrap();
/// assert_eq!(ran.value().unwrap(), &json!("deleted b.txt"));
/// # });
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Decisions {
    inner: Arc<Store>,
}

#[derive(Debug)]
struct Store {
    log: SessionLog,
    state: Mutex<State>,
}

/// A call and the policy that asks about it: what a decision is for.
type Asking = (String, String);

#[derive(Debug, Default)]
struct State {
    /// What waits, in the order it was asked.
    pending: Vec<DecisionRequest>,
    decided: HashMap<Asking, DecisionEvent>,
    /// The "allow always" decisions, each for its tool, policy, definition and arguments.
    allowed: Vec<DecisionEvent>,
}

impl State {
    fn asked(&mut self, request: DecisionRequest) {
        let asking = (request.id.clone(), request.policy.clone());
        // Asked again: the old answer no longer holds (the tool changed since).
        self.decided.remove(&asking);
        self.pending
            .retain(|waiting| (&waiting.id, &waiting.policy) != (&asking.0, &asking.1));
        self.pending.push(request);
    }

    fn decided(&mut self, decided: DecisionEvent) {
        self.pending.retain(|waiting| {
            let same_call = decided.on_form
                && (&waiting.name, &waiting.args, &waiting.definition)
                    == (&decided.name, &decided.args, &decided.definition);
            waiting.policy != decided.policy || !(waiting.id == decided.id || same_call)
        });
        // A form's answer was for the call that asked it, which runs on it at once: kept, it
        // would answer a later call that happens to share the id (another MCP caller's).
        if decided.on_form {
            return;
        }
        if matches!(decided.decision, Decision::AllowAlways { .. }) {
            self.allowed.push(decided.clone());
        }
        self.decided
            .insert((decided.id.clone(), decided.policy.clone()), decided);
    }

    fn fold(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::DecisionRequested(request) => self.asked(request),
            SessionEvent::Decided(decided) => self.decided(decided),
            _ => {}
        }
    }

    /// The answer already given to this request, if one holds for it.
    fn answer(&self, request: &ApprovalRequest) -> Option<Approval> {
        let call = &request.call;
        let holds = |decided: &DecisionEvent| {
            decided.name == call.name()
                && decided.policy == request.policy
                && decided.definition == request.definition
        };
        let asking = (call.id().to_owned(), request.policy.clone());
        if let Some(decided) = self.decided.get(&asking)
            && holds(decided)
            && decided.args == *call.args()
        {
            return Some(approval_of(&decided.decision));
        }
        self.allowed
            .iter()
            .any(|allowed| {
                holds(allowed)
                    && match &allowed.decision {
                        Decision::AllowAlways {
                            arguments: Some(arguments),
                        } => arguments == call.args(),
                        _ => true,
                    }
            })
            .then_some(Approval::Approved)
    }
}

/// Why a decision was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionError {
    /// No call with this id waits for a decision.
    #[error("no call `{id}` waits for a decision")]
    NotPending {
        /// The id given.
        id: String,
    },
    /// The call's tool is not in the snapshot given.
    #[error("the tool `{name}` of call `{id}` is not in the registry")]
    UnknownTool {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
    },
    /// The tool's definition changed since the call was asked about: the call is asked about
    /// again when it runs, against the definition it runs with.
    #[error(
        "the tool `{name}` changed since call `{id}` was asked about ({asked}, now {now}); it will be asked again when it runs"
    )]
    Stale {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// The definition asked about.
        asked: Fingerprint,
        /// The definition now.
        now: Fingerprint,
    },
    /// Edited arguments (or the arguments an "allow always" names) that the tool's input
    /// schema refuses.
    #[error("the arguments given for `{name}` were refused:\n{problems}")]
    InvalidArguments {
        /// The tool.
        name: String,
        /// What is wrong with them.
        problems: String,
    },
    /// A substituted result that the tool's output schema refuses.
    #[error("the result given for `{name}` was refused:\n{problems}")]
    InvalidResult {
        /// The tool.
        name: String,
        /// What is wrong with it.
        problems: String,
    },
    /// The decision could not be logged, so it was not taken.
    #[error("the decision could not be logged: {0}")]
    Log(#[from] io::Error),
}

impl Decisions {
    /// The decisions `log` holds: what waits, what was decided, what is allowed from now on.
    /// Reads the log once, keeping only its decision events.
    pub fn open(log: &SessionLog) -> io::Result<Self> {
        let mut state = State::default();
        SessionLog::scan(std::fs::File::open(log.path())?, |event| state.fold(event))?;
        Ok(Self {
            inner: Arc::new(Store {
                log: log.clone(),
                state: Mutex::new(state),
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The calls that wait for a decision, in the order they were asked about.
    pub fn pending(&self) -> Vec<DecisionRequest> {
        self.state().pending.clone()
    }

    /// Decides the call `id` waits for, against the registry `snapshot`: the tool must be the
    /// one asked about, edited arguments valid against its input schema, a substituted result
    /// valid against its output schema. The decision is logged before it holds; the call runs
    /// (or is answered) when it is dispatched again.
    pub fn decide(
        &self,
        snapshot: &Snapshot,
        id: &str,
        decision: Decision,
    ) -> Result<DecisionEvent, DecisionError> {
        let mut state = self.state();
        let Some(request) = state
            .pending
            .iter()
            .find(|waiting| waiting.id == id)
            .cloned()
        else {
            return Err(DecisionError::NotPending { id: id.to_owned() });
        };
        let Some(tool) = snapshot.table.get(&request.name) else {
            return Err(DecisionError::UnknownTool {
                id: request.id,
                name: request.name,
            });
        };
        let now = tool.definition.fingerprint();
        if now != request.definition {
            return Err(DecisionError::Stale {
                id: request.id,
                name: request.name,
                asked: request.definition,
                now,
            });
        }
        let decision = match decision {
            Decision::Edit { arguments } => Decision::Edit {
                arguments: checked(tool, &request.name, arguments)?,
            },
            Decision::AllowAlways {
                arguments: Some(arguments),
            } => Decision::AllowAlways {
                arguments: Some(checked(tool, &request.name, arguments)?),
            },
            Decision::Substitute { result } => {
                checked_result(tool, &result).map_err(|problems| DecisionError::InvalidResult {
                    name: request.name.clone(),
                    problems,
                })?;
                Decision::Substitute { result }
            }
            other => other,
        };
        let decided = DecisionEvent {
            id: request.id,
            name: request.name,
            args: request.args,
            policy: request.policy,
            definition: request.definition,
            decision,
            at: unix_millis(),
            on_form: false,
        };
        self.inner
            .log
            .append(&SessionEvent::Decided(decided.clone()))?;
        state.decided(decided.clone());
        Ok(decided)
    }

    /// The answer to one request: the decision that holds for it, or a new record of what
    /// waits (logged once; a request that cannot be logged is refused).
    fn answer(&self, request: &ApprovalRequest) -> Approval {
        let mut state = self.state();
        if let Some(approval) = state.answer(request) {
            return approval;
        }
        let call = &request.call;
        let waiting = state.pending.iter().any(|waiting| {
            waiting.id == call.id()
                && waiting.policy == request.policy
                && waiting.definition == request.definition
                && waiting.args == *call.args()
        });
        if waiting {
            return Approval::Pending;
        }
        let asked = DecisionRequest {
            id: call.id().to_owned(),
            name: call.name().to_owned(),
            args: call.args().clone(),
            definition: request.definition.clone(),
            policy: request.policy.clone(),
            question: request.question.clone(),
            at: unix_millis(),
        };
        match self
            .inner
            .log
            .append(&SessionEvent::DecisionRequested(asked.clone()))
        {
            Ok(()) => {
                state.asked(asked);
                Approval::Pending
            }
            Err(error) => Approval::Refused {
                reason: Some(format!("the call could not wait for a decision: {error}")),
            },
        }
    }
}

impl Approver for Decisions {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval> {
        let approval = self.answer(&request);
        Box::pin(std::future::ready(approval))
    }

    /// Logs the decision the person behind the call's client took on a form (an MCP client's
    /// elicitation): it holds only once logged.
    fn decided(&self, request: &ApprovalRequest, approval: &Approval) -> Result<(), String> {
        let decision = match approval {
            Approval::Approved => Decision::Approve,
            Approval::Refused { reason } => Decision::Reject {
                reason: reason.clone().unwrap_or_default(),
            },
            _ => return Err("a form decides approve or reject only".to_owned()),
        };
        let call = &request.call;
        let decided = DecisionEvent {
            id: call.id().to_owned(),
            name: call.name().to_owned(),
            args: call.args().clone(),
            policy: request.policy.clone(),
            definition: request.definition.clone(),
            decision,
            at: unix_millis(),
            on_form: true,
        };
        let mut state = self.state();
        self.inner
            .log
            .append(&SessionEvent::Decided(decided.clone()))
            .map_err(|error| error.to_string())?;
        state.decided(decided);
        Ok(())
    }
}

fn approval_of(decision: &Decision) -> Approval {
    match decision {
        Decision::Approve | Decision::AllowAlways { .. } => Approval::Approved,
        Decision::Edit { arguments } => Approval::Edited {
            arguments: arguments.clone(),
        },
        Decision::Reject { reason } => Approval::Refused {
            reason: Some(reason.clone()),
        },
        Decision::Substitute { result } => Approval::Substituted {
            value: result.clone(),
        },
    }
}

fn checked(
    tool: &crate::tool::CompiledTool,
    name: &str,
    arguments: Value,
) -> Result<Value, DecisionError> {
    checked_arguments(tool, arguments).map_err(|problems| DecisionError::InvalidArguments {
        name: name.to_owned(),
        problems,
    })
}

fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}
