//! A tool's requests for input, answered by the MCP client that made the call.
//!
//! - 2025-11-25: a live request to the client (`elicitation/create`, `sampling/createMessage`,
//!   `roots/list`) on the call's own stream, its parameters sent as the tool wrote them.
//! - 2026-07-28, which has no requests from server to client: the call ends with an
//!   input-required result listing what the body asked, and a `requestState` sealed with the
//!   server's key (HMAC-SHA256, bound to the tool and its arguments, expiring). The client
//!   retries with the answers and the state; the body runs again, and every ask answered so
//!   far is answered at once. A state that was altered, made for another call or expired is
//!   refused (`-32602`), whatever is wrong with it.
//!
//! Either way a body can ask only for what the client declared: anything else fails with
//! `INPUT_UNAVAILABLE`, which the server answers as `-32021` naming the capability.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CustomRequest, ErrorCode, InputRequest as McpInputRequest, InputRequests,
    RequestStateCodec, SealOptions, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use toolprism::BoxFuture;
use toolprism::access::Owner;
use toolprism::ask::{AskError, InputKind, InputRequest};
use toolprism::depth::check_depth;

/// How long a sealed `requestState` may be answered by default.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(10 * 60);

/// JSON-RPC's "missing required client capability" (2026-07-28).
const MISSING_CLIENT_CAPABILITY: i32 = -32_021;

/// What seals and opens the states of input-required results.
pub(crate) struct RequestStates {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl RequestStates {
    /// Under a random key: states made by this process only.
    pub(crate) fn random() -> Self {
        let mut key = [0_u8; 32];
        // The operating system's generator failing is not something to serve without.
        getrandom::fill(&mut key).expect("the operating system's random generator works");
        Self::with_key(&key, DEFAULT_REQUEST_STATE_TTL).expect("32 bytes is a long enough key")
    }

    /// Under `key`, which every replica serving the same clients must share.
    pub(crate) fn with_key(key: &[u8], ttl: Duration) -> Result<Self, String> {
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(|error| error.to_string())?;
        Ok(Self { codec, ttl })
    }
}

/// What a sealed state holds: the answers the body used so far.
#[derive(Serialize, Deserialize)]
struct Sealed {
    answers: BTreeMap<String, Value>,
}

/// What a state is bound to: the caller (its owner), the tool and its arguments (a state made
/// for one call opens for no other, nor for anyone else).
fn bound_to(owner: Option<&Owner>, tool: &str, args: &Value) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(b"toolprism tools/call\0");
    if let Some(owner) = owner {
        let key = owner.as_str();
        hash.update(key.len().to_be_bytes());
        hash.update(key.as_bytes());
    }
    hash.update([0]);
    hash.update(tool.as_bytes());
    hash.update([0]);
    canonical(args, &mut hash);
    hash.finalize().to_vec()
}

/// The value's JSON with its keys sorted, fed to the hash: the same arguments in another key
/// order are the same call. (Arguments are within the depth limit: the server checked.)
fn canonical(value: &Value, hash: &mut Sha256) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hash.update(b"{");
            for key in keys {
                hash.update(serde_json::to_string(key).unwrap_or_default().as_bytes());
                hash.update(b":");
                canonical(&map[key], hash);
                hash.update(b",");
            }
            hash.update(b"}");
        }
        Value::Array(items) => {
            hash.update(b"[");
            for item in items {
                canonical(item, hash);
                hash.update(b",");
            }
            hash.update(b"]");
        }
        scalar => hash.update(scalar.to_string().as_bytes()),
    }
}

/// The answers a retry carries: those of the state the client echoed (opened against this
/// call: its tool and arguments), then those it sent now.
pub(crate) fn open_answers(
    states: &RequestStates,
    owner: Option<&Owner>,
    tool: &str,
    args: &Value,
    state: Option<&str>,
    responses: Option<BTreeMap<String, Value>>,
) -> Result<BTreeMap<String, Value>, ErrorData> {
    let mut answers = match state {
        Some(state) => {
            let sealed: Sealed = states
                .codec
                .open_json_with(state, &bound_to(owner, tool, args))
                .map_err(|error| {
                    tracing::debug!(%error, "a requestState was refused");
                    refused_state()
                })?;
            sealed.answers
        }
        None => BTreeMap::new(),
    };
    answers.extend(responses.into_iter().flatten());
    Ok(answers)
}

/// The one answer to a state that does not open, whatever is wrong with it.
pub(crate) fn refused_state() -> ErrorData {
    ErrorData::invalid_params("requestState integrity check failed", None)
}

/// How a call's requests for input are answered.
pub(crate) enum Way {
    /// 2025-11-25: a live request on the call's stream.
    Live(Peer<RoleServer>),
    /// 2025-11-25 over stateless HTTP, which takes no answers back.
    Closed,
    /// 2026-07-28: the answers given so far; what the body asks beyond them ends the round.
    Rounds {
        answers: BTreeMap<String, Value>,
        used: Mutex<BTreeMap<String, Value>>,
        asked: Mutex<BTreeMap<String, McpInputRequest>>,
        /// What each key asked in this run.
        seen: Mutex<BTreeMap<String, InputRequest>>,
    },
}

/// A request as rmcp's typed form, which carries it on 2026-07-28 (an input-required
/// result, a task's `tasks/get`); refused when that form would not carry it whole (a keyword
/// rmcp does not know, such as a number's `format`), rather than sent altered.
pub(crate) fn carried(request: &InputRequest) -> Result<McpInputRequest, String> {
    let kind = request.kind();
    let wire = match kind {
        // `roots/list` takes no parameters.
        InputKind::Roots => json!({"method": kind.method()}),
        _ => request.to_json(),
    };
    let typed: McpInputRequest = serde_json::from_value(wire.clone())
        .map_err(|error| format!("MCP cannot carry this {} request: {error}", kind.method()))?;
    let back = serde_json::to_value(&typed).map_err(|error| error.to_string())?;
    if !covers(&back, &wire) {
        return Err(format!(
            "MCP 2026-07-28 (rmcp's types) would not carry this {} request whole; keep to the keywords it knows",
            kind.method()
        ));
    }
    Ok(typed)
}

/// Whether `carried` holds everything `sent` does (it may add defaults, such as a form's
/// `mode`).
fn covers(carried: &Value, sent: &Value) -> bool {
    match (carried, sent) {
        (Value::Object(carried), Value::Object(sent)) => sent
            .iter()
            .all(|(key, value)| carried.get(key).is_some_and(|kept| covers(kept, value))),
        (Value::Array(carried), Value::Array(sent)) => {
            carried.len() == sent.len()
                && carried
                    .iter()
                    .zip(sent)
                    .all(|(kept, value)| covers(kept, value))
        }
        (Value::Number(carried), Value::Number(sent)) => carried.as_f64() == sent.as_f64(),
        _ => carried == sent,
    }
}

/// Refuses a key asked a second time in one run for something else: a key names one request
/// (two nested calls asking `confirm` for different things would get one answer).
pub(crate) fn once_per_key(
    seen: &Mutex<BTreeMap<String, InputRequest>>,
    key: &str,
    request: &InputRequest,
) -> Result<(), AskError> {
    let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    match seen.get(key) {
        Some(earlier) if earlier != request => Err(AskError::Failed(format!(
            "`{key}` was asked twice in one call for different things; each key names one request"
        ))),
        Some(_) => Ok(()),
        None => {
            seen.insert(key.to_owned(), request.clone());
            Ok(())
        }
    }
}

/// The answerer of one call an MCP client made.
pub(crate) struct McpAnswerer {
    declared: Declared,
    way: Way,
    /// A kind the body asked for that the client did not declare.
    missing: Mutex<Option<InputKind>>,
}

/// The kinds of input a client declared it answers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Declared {
    elicitation: bool,
    sampling: bool,
    roots: bool,
}

impl Declared {
    pub(crate) fn of(capabilities: Option<&ClientCapabilities>) -> Self {
        capabilities.map_or_else(Self::default, |capabilities| Self {
            elicitation: capabilities.elicitation.is_some(),
            sampling: capabilities.sampling.is_some(),
            roots: capabilities.roots.is_some(),
        })
    }

    pub(crate) fn has(self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => self.elicitation,
            InputKind::Sampling => self.sampling,
            InputKind::Roots => self.roots,
            _ => false,
        }
    }
}

impl McpAnswerer {
    pub(crate) fn live(declared: Declared, peer: Peer<RoleServer>) -> Self {
        Self::new(declared, Way::Live(peer))
    }

    pub(crate) fn closed(declared: Declared) -> Self {
        Self::new(declared, Way::Closed)
    }

    /// A round of 2026-07-28, with the answers given so far ([`open_answers`]).
    pub(crate) fn round(declared: Declared, answers: BTreeMap<String, Value>) -> Self {
        Self::new(
            declared,
            Way::Rounds {
                answers,
                used: Mutex::default(),
                asked: Mutex::default(),
                seen: Mutex::default(),
            },
        )
    }

    fn new(declared: Declared, way: Way) -> Self {
        Self {
            declared,
            way,
            missing: Mutex::new(None),
        }
    }

    /// Whether the client declared it answers this kind.
    pub(crate) fn declares(&self, kind: InputKind) -> bool {
        self.declared.has(kind)
    }

    /// Notes a kind the body asked for and the client did not declare; why it is unavailable.
    pub(crate) fn undeclared(&self, key: &str, kind: InputKind) -> AskError {
        *self.missing.lock().unwrap_or_else(PoisonError::into_inner) = Some(kind);
        AskError::Unavailable(format!(
            "This tool needs input (`{key}`, {}) that the client did not declare it can give.",
            kind.method()
        ))
    }

    /// The capability the body needed and the client did not declare, as the `-32021` error
    /// that says so.
    pub(crate) fn missing_capability(&self) -> Option<ErrorData> {
        let kind = (*self.missing.lock().unwrap_or_else(PoisonError::into_inner))?;
        let name = match kind {
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
            _ => "elicitation",
        };
        Some(ErrorData::new(
            ErrorCode(MISSING_CLIENT_CAPABILITY),
            format!("This tool needs the client's `{name}` capability, which it did not declare."),
            Some(json!({"requiredCapabilities": {name: {}}})),
        ))
    }

    /// What the body asked beyond the answers, and the state to echo with the answers: `None`
    /// when it asked nothing more.
    pub(crate) fn next_round(
        &self,
        states: &RequestStates,
        owner: Option<&Owner>,
        tool: &str,
        args: &Value,
    ) -> Result<Option<(InputRequests, String)>, ErrorData> {
        let Way::Rounds { used, asked, .. } = &self.way else {
            return Ok(None);
        };
        let asked = std::mem::take(&mut *asked.lock().unwrap_or_else(PoisonError::into_inner));
        if asked.is_empty() {
            return Ok(None);
        }
        let requests: InputRequests = asked.into_iter().collect();
        let answers = std::mem::take(&mut *used.lock().unwrap_or_else(PoisonError::into_inner));
        let options = SealOptions::new().ttl(states.ttl);
        let bound = bound_to(owner, tool, args);
        let state = states
            .codec
            .seal_json_with(&Sealed { answers }, &options.associated_data(&bound))
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(Some((requests, state)))
    }
}

impl toolprism::ask::Answerer for McpAnswerer {
    fn can_answer(&self, kind: InputKind) -> bool {
        self.declared.has(kind) && !matches!(self.way, Way::Closed)
    }

    fn answer<'a>(
        &'a self,
        key: &'a str,
        request: &'a InputRequest,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        Box::pin(async move {
            let kind = request.kind();
            if !self.declared.has(kind) {
                return Err(self.undeclared(key, kind));
            }
            match &self.way {
                Way::Closed => Err(AskError::Unavailable(
                    "This server runs stateless over HTTP and cannot wait for a 2025-11-25 client's answer.".to_owned(),
                )),
                Way::Live(peer) => ask_live(peer, request).await,
                Way::Rounds { answers, used, asked, seen } => {
                    let typed = carried(request).map_err(AskError::Failed)?;
                    once_per_key(seen, key, request)?;
                    if let Some(answer) = answers.get(key) {
                        used.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .insert(key.to_owned(), answer.clone());
                        return Ok(answer.clone());
                    }
                    asked.lock().unwrap_or_else(PoisonError::into_inner).insert(key.to_owned(), typed);
                    Err(AskError::Suspended)
                }
            }
        })
    }
}

/// A live request to a 2025-11-25 client, its parameters sent as the tool wrote them (rmcp's
/// typed forms would drop what they do not know, such as a number's `format`).
async fn ask_live(peer: &Peer<RoleServer>, request: &InputRequest) -> Result<Value, AskError> {
    let params = match request.kind() {
        InputKind::Roots => None,
        _ => Some(request.params().clone()),
    };
    let sent = ServerRequest::CustomRequest(CustomRequest::new(request.kind().method(), params));
    let answer = peer
        .send_request(sent)
        .await
        .map_err(|error| AskError::Failed(error.to_string()))?;
    let answer =
        serde_json::to_value(answer).map_err(|error| AskError::Failed(error.to_string()))?;
    check_depth(&answer).map_err(|error| AskError::Failed(format!("the answer nests {error}")))?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_carried_whole_or_refused_never_altered() {
        let plain = InputRequest::elicit(
            "Pick",
            json!({"type": "object", "properties": {
                "size": {"type": "string", "enum": ["s", "m"], "default": "s"},
                "count": {"type": "integer", "minimum": 1, "maximum": 9},
            }, "required": ["size"]}),
        );
        let carried_form = serde_json::to_value(carried(&plain).unwrap()).unwrap();
        assert_eq!(
            carried_form["params"]["requestedSchema"]["properties"]["count"]["maximum"],
            9
        );

        // rmcp's types keep no `format` on a number: sent through them it would be lost.
        let formatted = InputRequest::elicit(
            "Pick",
            json!({"type": "object", "properties": {
                "count": {"type": "integer", "format": "uint8", "maximum": 9},
            }}),
        );
        let refused = carried(&formatted).unwrap_err();
        assert!(refused.contains("whole"), "{refused}");
        assert!(carried(&InputRequest::roots()).is_ok());
    }

    #[test]
    fn a_key_names_one_request() {
        let seen = Mutex::default();
        let confirm = InputRequest::elicit("Sure?", json!({"type": "object", "properties": {}}));
        let other = InputRequest::elicit("Really?", json!({"type": "object", "properties": {}}));
        assert!(once_per_key(&seen, "confirm", &confirm).is_ok());
        assert!(once_per_key(&seen, "confirm", &confirm).is_ok());
        assert!(once_per_key(&seen, "confirm", &other).is_err());
        assert!(once_per_key(&seen, "other", &other).is_ok());
    }
}
