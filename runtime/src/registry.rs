//! The registry: checks tool definitions once, compiles their schemas once, and hands out
//! immutable snapshots that calls are dispatched through.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use jsonschema::Validator;
use serde::Serialize;
use serde_json::Value;

use crate::call::{Surface, ToolCall};
use crate::outcome::ToolOutcome;
use crate::schema::{SchemaError, SchemaRole, compile};
use crate::text::truncate;
use crate::tool::{Handler, IntoToolDef, ToolDef, Toolset};

/// The longest tool name providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Why a tool could not be registered. The message names the tool and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// Another tool already has this name.
    #[error("tool `{name}`: a tool of this name is already registered")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// The name is one providers would refuse.
    #[error(
        "tool name `{name}` is refused: names must match `^[a-zA-Z0-9_-]{{1,64}}$` (what OpenAI, Anthropic and Gemini all accept)"
    )]
    InvalidName {
        /// The name, cut to a readable length.
        name: String,
    },
    /// A schema is outside the supported subset (see [`crate::schema`]).
    #[error("tool `{name}`: its {role} schema is refused: {source}")]
    Schema {
        /// The tool.
        name: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// Why.
        #[source]
        source: SchemaError,
    },
}

/// Checks a tool name against the rule every provider accepts: 1 to 64 ASCII letters, digits,
/// `_` or `-`.
///
/// ```
/// # use toolprism::is_valid_tool_name;
/// assert!(is_valid_tool_name("read_file"));
/// assert!(!is_valid_tool_name("read file"));
/// assert!(!is_valid_tool_name(""));
/// assert!(!is_valid_tool_name(&"x".repeat(65)));
/// ```
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// What a tool advertises to a model: name, description and schemas. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDefinition {
    name: Arc<str>,
    description: Arc<str>,
    input_schema: Arc<Value>,
    output_schema: Arc<Value>,
}

impl ToolDefinition {
    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input JSON Schema, as registered.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The output JSON Schema, as registered.
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    pub(crate) fn shared_name(&self) -> Arc<str> {
        self.name.clone()
    }
}

/// A registered tool: its definition, its compiled validators and its handler.
pub(crate) struct RegisteredTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) input: Validator,
    pub(crate) output: Validator,
    pub(crate) handler: Arc<dyn Handler>,
}

impl RegisteredTool {
    fn new(def: ToolDef) -> Result<Self, RegistrationError> {
        if !is_valid_tool_name(&def.name) {
            return Err(RegistrationError::InvalidName {
                name: truncate(&def.name, MAX_TOOL_NAME_LEN * 2),
            });
        }
        let schema_error = |role, source| RegistrationError::Schema {
            name: def.name.clone(),
            role,
            source,
        };
        let input = compile(&def.input_schema, SchemaRole::Input)
            .map_err(|source| schema_error("input", source))?;
        let output = compile(&def.output_schema, SchemaRole::Output)
            .map_err(|source| schema_error("output", source))?;
        Ok(Self {
            definition: ToolDefinition {
                name: def.name.as_str().into(),
                description: def.description.as_str().into(),
                input_schema: Arc::new(def.input_schema),
                output_schema: Arc::new(def.output_schema),
            },
            input,
            output,
            handler: def.handler,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.definition.name
    }
}

/// The tools one snapshot sees, in registration order, with a name index.
#[derive(Default)]
pub(crate) struct ToolTable {
    tools: Vec<Arc<RegisteredTool>>,
    index: HashMap<Arc<str>, usize>,
}

impl ToolTable {
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.index.get(name).map(|&at| &self.tools[at])
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name())
    }

    fn push(&mut self, tool: RegisteredTool) -> Result<(), RegistrationError> {
        let name = tool.definition.shared_name();
        if self.index.contains_key(&name) {
            return Err(RegistrationError::Duplicate {
                name: name.as_ref().to_owned(),
            });
        }
        self.index.insert(name, self.tools.len());
        self.tools.push(Arc::new(tool));
        Ok(())
    }
}

/// A set of tools that calls are dispatched through.
///
/// Cloning a `Registry` shares it. [`Registry::snapshot`] captures the tools registered at
/// that moment; registering or removing tools later affects later snapshots only.
///
/// ```
/// use toolprism::prelude::*;
/// use serde_json::json;
///
/// /// Greets someone.
/// #[tool]
/// fn greet(#[arg(description = "Who to greet.")] name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = Registry::builder().tool(Greet).build()?;
/// let outcome = registry
///     .dispatch(ToolCall::new("call_1", "greet", json!({"name": "Ada"})), Surface::Direct)
///     .await;
/// assert_eq!(outcome.value().unwrap(), &json!("Hello, Ada!"));
/// assert_eq!(outcome.content(), [ContentBlock::text("Hello, Ada!")]);
/// # Ok::<(), toolprism::RegistrationError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Registry {
    current: Arc<RwLock<Snapshot>>,
}

impl Registry {
    /// Starts building a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The tools registered now, frozen: an `Arc` clone, whatever the number of tools.
    pub fn snapshot(&self) -> Snapshot {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Dispatches one call through a fresh snapshot. See [`Snapshot::dispatch`].
    pub async fn dispatch(&self, call: ToolCall, surface: Surface) -> ToolOutcome {
        self.snapshot().dispatch(call, surface).await
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("snapshot", &self.snapshot())
            .finish()
    }
}

/// Collects tool definitions, then checks and compiles them all in [`build`](Self::build).
#[derive(Default)]
#[must_use = "a builder does nothing until `build()`"]
pub struct RegistryBuilder {
    defs: Vec<ToolDef>,
}

impl RegistryBuilder {
    /// Adds a tool: a [`ToolDef`] or the struct `#[tool]` generates.
    pub fn tool(mut self, tool: impl IntoToolDef) -> Self {
        self.defs.push(tool.into_tool_def());
        self
    }

    /// Adds several tool definitions.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.defs.extend(tools);
        self
    }

    /// Adds every tool of a `#[toolset]` type, capturing `state` for them all.
    pub fn toolset<S: Toolset>(self, state: S) -> Self {
        self.tools(Arc::new(state).tool_defs())
    }

    /// Checks every name and schema and compiles the validators. Fails on the first tool
    /// that is refused, naming it.
    pub fn build(self) -> Result<Registry, RegistrationError> {
        let mut table = ToolTable::default();
        for def in self.defs {
            table.push(RegisteredTool::new(def)?)?;
        }
        Ok(Registry {
            current: Arc::new(RwLock::new(Snapshot {
                table: Arc::new(table),
            })),
        })
    }
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field(
                "tools",
                &self.defs.iter().map(ToolDef::name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The tools of a registry at one moment. Dispatching through a snapshot always runs the tool
/// it advertised, whatever happens to the registry meanwhile.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) table: Arc<ToolTable>,
}

impl Snapshot {
    /// The advertised definitions, in registration order. No schema work is done here.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.table.tools.iter().map(|tool| &tool.definition)
    }

    /// The definition of one tool.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.table.get(name).map(|tool| &tool.definition)
    }

    /// Runs one call through the pipeline: resolve, validate the arguments, run the body,
    /// snapshot, validate and freeze its value, then project content and (for direct calls)
    /// metadata. Never panics, whatever the call or the tool does.
    pub async fn dispatch(&self, call: ToolCall, surface: Surface) -> ToolOutcome {
        crate::dispatch::dispatch(&self.table, call, surface).await
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.table.names()).finish()
    }
}
