//! A session the agent can stop and resume: its log (every call, its result and value, every
//! decision asked and taken), and the turn that waits for decisions with the conversation
//! before it, saved when the agent stops.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolprism::pipeline::{ExecuteCall, PreDecision, PreExecutePolicy};
use toolprism::session::{Decision, DecisionRequest, Decisions, LogOptions, SessionLog};

/// The session directory's files.
const LOG_FILE: &str = "session.jsonl";
const WAITING_FILE: &str = "waiting.json";

/// A session directory: the log, and the decisions it holds.
pub(crate) struct Session {
    dir: PathBuf,
    pub(crate) log: SessionLog,
    pub(crate) decisions: Decisions,
}

/// A turn stopped for decisions: the conversation before it, and the turn's stream as the
/// provider sent it (read again on resume, so the calls are the model's own).
#[derive(Serialize, Deserialize)]
pub(crate) struct Waiting {
    pub(crate) messages: Vec<Value>,
    pub(crate) turn: String,
}

impl Session {
    /// Opens (or starts) the session in `dir`. The log keeps values, so a resumed turn gives
    /// the model back the same results.
    pub(crate) fn open(dir: &Path) -> Result<Self, String> {
        let failed = |error: std::io::Error| format!("{}: {error}", dir.display());
        std::fs::create_dir_all(dir).map_err(failed)?;
        let (log, _) =
            SessionLog::open(dir.join(LOG_FILE), LogOptions::default().values()).map_err(failed)?;
        let decisions = Decisions::open(&log).map_err(failed)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            log,
            decisions,
        })
    }

    /// The turn that waits for decisions, if the last run stopped for some.
    pub(crate) fn waiting(&self) -> Result<Option<Waiting>, String> {
        let path = self.dir.join(WAITING_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|error| format!("{}: {error}", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(format!("{}: {error}", path.display())),
        }
    }

    /// Saves the turn that waits, whole or not at all (written aside, then renamed).
    pub(crate) fn stop(&self, waiting: &Waiting) -> Result<(), String> {
        let path = self.dir.join(WAITING_FILE);
        let aside = self.dir.join(format!("{WAITING_FILE}.new"));
        let bytes = serde_json::to_vec(waiting).map_err(|error| error.to_string())?;
        std::fs::write(&aside, bytes)
            .and_then(|()| std::fs::rename(&aside, &path))
            .map_err(|error| format!("{}: {error}", path.display()))
    }

    /// The waiting turn is answered: nothing waits any more.
    pub(crate) fn answered(&self) -> Result<(), String> {
        match std::fs::remove_file(self.dir.join(WAITING_FILE)) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error.to_string()),
            _ => Ok(()),
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Asks a person before every call of the tools named (`--ask TOOL`).
pub(crate) struct AskBefore(pub(crate) Vec<String>);

impl PreExecutePolicy for AskBefore {
    fn check(&self, call: &ExecuteCall) -> PreDecision {
        if self.0.iter().any(|tool| tool == call.name()) {
            PreDecision::ask(format!("Run `{}` with {}?", call.name(), call.args()))
        } else {
            PreDecision::Allow
        }
    }

    /// Named, so that a decision taken in one run holds in the next.
    fn name(&self) -> &'static str {
        "ask-before"
    }
}

/// A decision given on the command line: `--approve ID`, `--reject ID REASON`,
/// `--edit ID JSON`, `--substitute ID JSON`.
pub(crate) fn decision(
    flag: &str,
    mut next: impl FnMut() -> Option<String>,
) -> Result<(String, Decision), String> {
    let id = next().ok_or_else(|| format!("{flag} needs a call id"))?;
    let json = |what: &str, text: Option<String>| -> Result<Value, String> {
        let text = text.ok_or_else(|| format!("{flag} {id} needs {what}"))?;
        serde_json::from_str(&text).map_err(|error| format!("{flag} {id}: {error}"))
    };
    let decision = match flag {
        "--approve" => Decision::Approve,
        "--reject" => Decision::Reject {
            reason: next().ok_or_else(|| format!("--reject {id} needs a reason"))?,
        },
        "--edit" => Decision::Edit {
            arguments: json("the arguments as JSON", next())?,
        },
        _ => Decision::Substitute {
            result: json("the result as JSON", next())?,
        },
    };
    Ok((id, decision))
}

/// What to tell the person about a call that waits.
pub(crate) fn describe(request: &DecisionRequest, dir: &Path) -> String {
    format!(
        "⏸ {id} waits for a decision: {question}\n  decide: agent --session {dir} --approve {id}   (or --reject {id} REASON, --edit {id} JSON, --substitute {id} JSON)",
        id = request.id,
        question = request.question,
        dir = dir.display(),
    )
}
