//! Pinned imports: the first time a server's tool is imported its definition is pinned, and a
//! later listing that differs holds the tool (uncallable, still shown as pinned) until the
//! host, or a person, accepts the new definition. Pins live in a file the host names, per
//! server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::depth::check_depth;
use toolprism::integrity::{Change, Severity, compare_definitions};
use toolprism::tool::Fingerprint;

/// The pin format this crate writes and reads.
pub const PIN_FORMAT_VERSION: u64 = 1;

/// The largest pin file read, in bytes.
pub const MAX_PIN_FILE_BYTES: usize = 64 * 1024 * 1024;

/// The failure code of a call to a tool held since its definition changed on the server.
pub const DEFINITION_CHANGED: &str = "TOOL_DEFINITION_CHANGED";

/// What happens to a tool a server lists that has no pin yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum NewTools {
    /// Pinned as first seen, and imported: trust on first use.
    #[default]
    PinOnFirstUse,
    /// Held, not imported, until accepted.
    Ask,
}

/// Where the pins are kept, and what to do with tools not pinned yet
/// ([`ImportOptions::pins`](crate::ImportOptions::pins)).
#[derive(Clone, Debug)]
pub struct PinFile {
    path: PathBuf,
    new_tools: NewTools,
}

impl PinFile {
    /// Pins kept in the file at `path` (made when first needed), new tools pinned on first use.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            new_tools: NewTools::PinOnFirstUse,
        }
    }

    /// New tools handled this way.
    #[must_use]
    pub fn new_tools(mut self, new_tools: NewTools) -> Self {
        self.new_tools = new_tools;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What happens to tools not pinned yet.
    pub fn new_tools_policy(&self) -> NewTools {
        self.new_tools
    }

    /// A digest of the file as it is (`None` when it cannot be read), to tell a change made by
    /// another process: a file's time may not move between two writes close together.
    pub(crate) fn digest(&self) -> Option<[u8; 32]> {
        use sha2::{Digest as _, Sha256};
        use std::io::Read as _;
        let mut bytes = Vec::new();
        std::fs::File::open(&self.path)
            .ok()?
            .take(MAX_PIN_FILE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(Sha256::digest(&bytes).into())
    }
}

/// The pin file's contents: per server, per remote tool name, the pinned definition and the
/// one last listed when it differs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pins {
    /// [`PIN_FORMAT_VERSION`].
    pub toolprism_pins: u64,
    /// By server identity (`name endpoint`), then by the tool's name on the server.
    pub servers: BTreeMap<String, BTreeMap<String, Pin>>,
}

/// One tool's pin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// The definition trusted, as listed (`name`, `title`, `description`, `inputSchema`,
    /// `outputSchema`, `annotations`), with its fingerprint; `None` for a new tool held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<PinnedDefinition>,
    /// A definition listed since that differs from the pinned one, waiting to be accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PinnedDefinition>,
}

/// A definition and its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedDefinition {
    /// [`Fingerprint`] of `definition`.
    pub fingerprint: Fingerprint,
    /// The definition, as listed.
    pub definition: Value,
}

/// Why a pin file was not read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// Reading or writing the file failed.
    #[error("the pin file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Not a pin file this version reads.
    #[error("the pin file {path} is not one this version reads: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// Nothing waits to be accepted under that server and tool.
    #[error("no change of `{tool}` from `{server}` waits to be accepted")]
    NothingPending {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
}

impl Pins {
    /// Reads the pins at `path`; an absent file holds none.
    pub fn load(path: &Path) -> Result<Self, PinError> {
        use std::io::Read as _;
        let invalid = |problem: String| PinError::Invalid {
            path: path.to_path_buf(),
            problem,
        };
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    toolprism_pins: PIN_FORMAT_VERSION,
                    servers: BTreeMap::new(),
                });
            }
            Err(source) => {
                return Err(PinError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut text = String::new();
        file.take(MAX_PIN_FILE_BYTES as u64 + 1)
            .read_to_string(&mut text)
            .map_err(|source| PinError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if text.len() > MAX_PIN_FILE_BYTES {
            return Err(invalid(format!(
                "it is larger than {MAX_PIN_FILE_BYTES} bytes"
            )));
        }
        let value: Value =
            serde_json::from_str(&text).map_err(|error| invalid(error.to_string()))?;
        check_depth(&value).map_err(|error| invalid(format!("it nests {error}")))?;
        let pins: Self =
            serde_json::from_value(value).map_err(|error| invalid(error.to_string()))?;
        if pins.toolprism_pins != PIN_FORMAT_VERSION {
            return Err(invalid(format!("format {}", pins.toolprism_pins)));
        }
        Ok(pins)
    }

    /// Writes the pins to `path`, whole or not at all (written aside, then renamed).
    pub fn save(&self, path: &Path) -> Result<(), PinError> {
        let io = |source| PinError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        let aside = path.with_extension("pins-new");
        std::fs::write(&aside, text).map_err(io)?;
        std::fs::rename(&aside, path).map_err(io)
    }

    /// Accepts what waits for `tool` of `server`: its pending definition becomes the pinned
    /// one.
    pub fn accept(&mut self, server: &str, tool: &str) -> Result<(), PinError> {
        let pin = self
            .servers
            .get_mut(server)
            .and_then(|tools| tools.get_mut(tool))
            .filter(|pin| pin.pending.is_some())
            .ok_or_else(|| PinError::NothingPending {
                server: server.to_owned(),
                tool: tool.to_owned(),
            })?;
        pin.pinned = pin.pending.take();
        Ok(())
    }

    /// Every tool held: `(server, tool, held)`.
    pub fn held(&self) -> Vec<HeldTool> {
        let mut held = Vec::new();
        for (server, tools) in &self.servers {
            for (tool, pin) in tools {
                if let Some(pending) = &pin.pending {
                    held.push(HeldTool::of(server, tool, pin.pinned.as_ref(), pending));
                }
            }
        }
        held
    }
}

/// A tool held: listed by its server with a definition not (yet) accepted.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct HeldTool {
    /// The server's identity (`name endpoint`).
    pub server: String,
    /// The tool's name on the server.
    pub remote_name: String,
    /// The pinned definition (`None` for a new tool held).
    pub pinned: Option<Value>,
    /// The definition listed now.
    pub listed: Value,
    /// What changed, classified ([`toolprism::integrity::Rule`]); empty for a new tool.
    pub changes: Vec<Change>,
}

impl HeldTool {
    fn of(
        server: &str,
        tool: &str,
        pinned: Option<&PinnedDefinition>,
        listed: &PinnedDefinition,
    ) -> Self {
        let changes = pinned.map_or_else(Vec::new, |pinned| {
            compare_definitions(
                tool,
                &as_toolprism(&pinned.definition),
                &as_toolprism(&listed.definition),
            )
        });
        Self {
            server: server.to_owned(),
            remote_name: tool.to_owned(),
            pinned: pinned.map(|pinned| pinned.definition.clone()),
            listed: listed.definition.clone(),
            changes,
        }
    }

    /// The changes, one line each: breaking or compatible, where, what, and before → after.
    pub fn diff(&self) -> String {
        if self.pinned.is_none() {
            return format!("{}: a new tool, not pinned yet", self.remote_name);
        }
        let mut lines = Vec::new();
        for change in &self.changes {
            let severity = match change.severity() {
                Severity::Breaking => "breaking",
                Severity::Compatible => "compatible",
            };
            let shown = |value: &Option<Value>| {
                value.as_ref().map_or_else(
                    || "—".to_owned(),
                    |value| toolprism::present::shorten(&value.to_string(), 200),
                )
            };
            lines.push(format!(
                "{severity} {}: {} ({} → {})",
                change.path,
                change.rule.describe(),
                shown(&change.before),
                shown(&change.after),
            ));
        }
        lines.join("\n")
    }
}

/// A listed tool as pinned: what the fingerprint covers.
pub(crate) fn listed_definition(tool: &Tool) -> Value {
    json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": *tool.input_schema,
        "outputSchema": tool.output_schema.as_deref(),
        "annotations": tool.annotations,
    })
}

/// A listed definition in the shape toolprism's definitions take, for [`compare_definitions`].
fn as_toolprism(listed: &Value) -> Value {
    let annotations = &listed["annotations"];
    let mut hints = serde_json::Map::new();
    for (hint, key) in [
        ("read_only", "readOnlyHint"),
        ("destructive", "destructiveHint"),
        ("idempotent", "idempotentHint"),
        ("open_world", "openWorldHint"),
    ] {
        if let Some(said) = annotations.get(key).filter(|said| said.is_boolean()) {
            hints.insert(hint.to_owned(), said.clone());
        }
    }
    let title = listed
        .get("title")
        .filter(|title| !title.is_null())
        .or_else(|| annotations.get("title"))
        .cloned()
        .unwrap_or(Value::Null);
    json!({
        "name": listed["name"],
        "title": title,
        "description": listed["description"],
        "input_schema": listed["inputSchema"],
        "output_schema": listed["outputSchema"],
        "hints": hints,
    })
}

/// What the pins say of one listed tool.
pub(crate) enum Verdict {
    /// Import it as listed.
    Trusted,
    /// Held: not called; shown as pinned (`Some`), or not imported (`None`, a new tool).
    Held(Option<Tool>),
}

/// Judges one listed tool against `pins`, updating them: a first sighting pinned (or held,
/// as the host says), a change recorded as pending, a definition back to the pinned one
/// clearing what was pending. Returns the verdict and whether the pins changed.
pub(crate) fn judge(
    pins: &mut Pins,
    server: &str,
    tool: &Tool,
    new_tools: NewTools,
) -> (Verdict, bool) {
    let listed = listed_definition(tool);
    let Ok(fingerprint) = Fingerprint::of_definition(&listed) else {
        return (Verdict::Held(None), false);
    };
    let now = PinnedDefinition {
        fingerprint,
        definition: listed,
    };
    let tools = pins.servers.entry(server.to_owned()).or_default();
    let pin = tools.entry(tool.name.to_string()).or_insert(Pin {
        pinned: None,
        pending: None,
    });
    match &pin.pinned {
        Some(pinned) if pinned.fingerprint == now.fingerprint => {
            let changed = pin.pending.take().is_some();
            (Verdict::Trusted, changed)
        }
        Some(pinned) => {
            let shown = serde_json::from_value::<Tool>(pinned.definition.clone()).ok();
            let changed = pin.pending.as_ref() != Some(&now);
            pin.pending = Some(now);
            (Verdict::Held(shown), changed)
        }
        None if new_tools == NewTools::PinOnFirstUse => {
            pin.pinned = Some(now);
            pin.pending = None;
            (Verdict::Trusted, true)
        }
        None => {
            let changed = pin.pending.as_ref() != Some(&now);
            pin.pending = Some(now);
            (Verdict::Held(None), changed)
        }
    }
}
