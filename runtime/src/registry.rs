//! The registry: checks tool definitions once, compiles their schemas once, and hands out
//! immutable snapshots that calls are dispatched through.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use jsonschema::Validator;
use serde::Serialize;
use serde_json::Value;

use crate::bound::BoundLimits;
use crate::call::{Surface, ToolCall};
use crate::depth::dispose_checked;
use crate::dispatch::Stages;
use crate::outcome::ToolOutcome;
use crate::policy::{Approver, PostExecutePolicy, PreExecutePolicy};
use crate::schema::{Compiled, SchemaError, SchemaRole, compile};
use crate::store::ToolOutputStore;
use crate::text::printable;
use crate::tool::{Handler, IntoToolDef, ToolDef, Toolset};
use crate::wrap::Wrapper;

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
    /// The value type does not deserialize from what it serializes, so `render` and `meta`,
    /// which see the value as deserialized from its JSON, could never run.
    #[error("tool `{name}`: {problem}")]
    ValueRoundTrip {
        /// The tool.
        name: String,
        /// Which field, and how to fix it.
        problem: String,
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
    /// Whether the input schema is draft-07, whose `$ref` hides its siblings.
    pub(crate) input_draft_07: bool,
    pub(crate) output: Validator,
    pub(crate) handler: Arc<dyn Handler>,
    pub(crate) limits: Option<BoundLimits>,
}

impl RegisteredTool {
    fn new(mut def: ToolDef) -> Result<Self, RegistrationError> {
        let input_schema = std::mem::take(&mut def.input_schema);
        let output_schema = std::mem::take(&mut def.output_schema);
        match Self::check(&def, &input_schema, &output_schema) {
            Ok((input, output)) => Ok(Self {
                definition: ToolDefinition {
                    name: def.name.as_str().into(),
                    description: def.description.as_str().into(),
                    input_schema: Arc::new(input_schema),
                    output_schema: Arc::new(output_schema),
                },
                input: input.validator,
                input_draft_07: input.draft_07,
                output: output.validator,
                handler: def.handler.clone(),
                limits: def.limits,
            }),
            Err(error) => {
                // A refused schema may be nested past what `Drop` can recurse through.
                dispose_checked(input_schema);
                dispose_checked(output_schema);
                Err(error)
            }
        }
    }

    /// Checks the name and compiles both schemas.
    fn check(
        def: &ToolDef,
        input_schema: &Value,
        output_schema: &Value,
    ) -> Result<(Compiled, Compiled), RegistrationError> {
        if !is_valid_tool_name(&def.name) {
            return Err(RegistrationError::InvalidName {
                name: printable(&def.name, MAX_TOOL_NAME_LEN * 2),
            });
        }
        let schema_error = |role, source| RegistrationError::Schema {
            name: def.name.clone(),
            role,
            source,
        };
        let input = compile(input_schema, SchemaRole::Input)
            .map_err(|source| schema_error("input", source))?;
        let output = compile(output_schema, SchemaRole::Output)
            .map_err(|source| schema_error("output", source))?;
        if let Some(problem) = def.handler.value_round_trip_gap() {
            return Err(RegistrationError::ValueRoundTrip {
                name: def.name.clone(),
                problem,
            });
        }
        Ok((input, output))
    }

    pub(crate) fn name(&self) -> &str {
        &self.definition.name
    }
}

/// The tools one snapshot sees, in registration order, with a name index.
#[derive(Clone, Default)]
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

    fn indexed(tools: Vec<Arc<RegisteredTool>>) -> Self {
        let index = tools
            .iter()
            .enumerate()
            .map(|(at, tool)| (tool.definition.shared_name(), at))
            .collect();
        Self { tools, index }
    }
}

/// A set of tools that calls are dispatched through, with the stages (wrappers, policies)
/// that run around every call.
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
    tools: Arc<RwLock<Arc<ToolTable>>>,
    stages: Arc<Stages>,
}

impl Registry {
    /// Starts building a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The tools registered now, frozen. Two `Arc` clones under a read lock, whatever the
    /// number of tools.
    pub fn snapshot(&self) -> Snapshot {
        let table = self
            .tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Snapshot {
            table,
            stages: self.stages.clone(),
            refusal: None,
        }
    }

    /// Dispatches one call through a fresh snapshot. See [`Snapshot::dispatch`].
    pub async fn dispatch(&self, call: ToolCall, surface: Surface) -> ToolOutcome {
        self.snapshot().dispatch(call, surface).await
    }

    /// Registers one more tool. Its schemas are checked and compiled before the registry is
    /// touched; snapshots taken before this returns do not see it.
    pub fn register(&self, tool: impl IntoToolDef) -> Result<(), RegistrationError> {
        let tool = RegisteredTool::new(tool.into_tool_def())?;
        let mut current = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        let mut table = ToolTable::clone(&current);
        table.push(tool)?;
        *current = Arc::new(table);
        Ok(())
    }

    /// Removes a tool, if there is one of that name. Calls already dispatched through an
    /// earlier snapshot still run it.
    pub fn remove(&self, name: &str) -> bool {
        let mut current = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if current.get(name).is_none() {
            return false;
        }
        let tools = current
            .tools
            .iter()
            .filter(|tool| tool.name() != name)
            .cloned()
            .collect();
        *current = Arc::new(ToolTable::indexed(tools));
        true
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("snapshot", &self.snapshot())
            .finish_non_exhaustive()
    }
}

/// Collects tool definitions and the stages around them, then checks and compiles it all in
/// [`build`](Self::build).
#[derive(Default)]
#[must_use = "a builder does nothing until `build()`"]
pub struct RegistryBuilder {
    defs: Vec<ToolDef>,
    stages: Stages,
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
        self.toolset_shared(Arc::new(state))
    }

    /// Adds every tool of a `#[toolset]` type whose state the host keeps a handle to as well.
    pub fn toolset_shared<S: Toolset>(self, state: Arc<S>) -> Self {
        self.tools(state.tool_defs())
    }

    /// Adds an around-execute wrapper. The first added is the outermost.
    pub fn wrap(mut self, wrapper: impl Wrapper) -> Self {
        self.stages.wrappers.push(Box::new(wrapper));
        self
    }

    /// Adds a pre-execute policy. Policies run in the order added; the first denial wins.
    pub fn pre_execute(mut self, policy: impl PreExecutePolicy) -> Self {
        self.stages.pre.push(Box::new(policy));
        self
    }

    /// Sets the approver that answers a policy's "ask".
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.stages.approver = Some(Box::new(approver));
        self
    }

    /// Bounds the model text of direct calls by these limits (default: 2,000 lines, 50 KiB).
    /// A tool's own limits ([`ToolDef::with_limits`]) take precedence.
    pub fn limits(mut self, limits: BoundLimits) -> Self {
        self.stages.limits = limits;
        self
    }

    /// Retains the full text of bounded outputs in this store (default: an [`FsOutputStore`](crate::FsOutputStore)
    /// in the user's cache directory).
    pub fn output_store(mut self, store: impl ToolOutputStore) -> Self {
        self.stages.store = Box::new(store);
        self
    }

    /// Adds a post-execute policy. Policies run in the order added, each on the outcome the
    /// previous one left.
    pub fn post_execute(mut self, policy: impl PostExecutePolicy) -> Self {
        self.stages.post.push(Box::new(policy));
        self
    }

    /// Checks every name and schema and compiles the validators. Fails on the first tool
    /// that is refused, naming it.
    pub fn build(self) -> Result<Registry, RegistrationError> {
        let mut table = ToolTable::default();
        for def in self.defs {
            table.push(RegisteredTool::new(def)?)?;
        }
        Ok(Registry {
            tools: Arc::new(RwLock::new(Arc::new(table))),
            stages: Arc::new(self.stages),
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
            .field("wrappers", &self.stages.wrappers.len())
            .field("pre_execute", &self.stages.pre.len())
            .field("post_execute", &self.stages.post.len())
            .finish()
    }
}

/// The tools of a registry at one moment, with its stages: what one model request sees.
/// Dispatching through a snapshot always runs the tool it advertised, whatever happens to the
/// registry meanwhile. Cloning is two `Arc` clones.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) table: Arc<ToolTable>,
    pub(crate) stages: Arc<Stages>,
    pub(crate) refusal: Option<Arc<str>>,
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

    /// The same definitions, but every call fails with `TOOLS_DISABLED` and this reason: for a
    /// final step, where the tools stay advertised (so a cached prompt prefix survives) but
    /// none may run.
    #[must_use]
    pub fn refusing_calls(mut self, reason: impl Into<String>) -> Self {
        self.refusal = Some(reason.into().into());
        self
    }

    /// Runs one call through the pipeline: resolve, validate the arguments, pre-execute
    /// policies, the wrappers and the body, normalization of the value (snapshot, validate,
    /// freeze, render, meta for direct calls), post-execute policies. Never panics, whatever
    /// the call, the tool, a wrapper or a policy does.
    ///
    /// Cancellation is dropping the returned future: no outcome is produced, and the
    /// wrappers and the body are dropped where they stand.
    pub async fn dispatch(&self, call: ToolCall, surface: Surface) -> ToolOutcome {
        crate::dispatch::dispatch(self, call, surface).await
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("tools", &self.table.names().collect::<Vec<_>>())
            .field("refusal", &self.refusal)
            .finish_non_exhaustive()
    }
}
