//! What registration makes of a [`ToolDef`](super::ToolDef): its name checked, its schemas
//! checked and compiled once, and the [`AdvertisedTool`] every snapshot shows of it.

use std::collections::HashMap;
use std::sync::Arc;

use jsonschema::Validator;
use serde::Serialize;
use serde_json::Value;

use crate::bound::BoundLimits;
use crate::depth::{check_depth, dispose_checked};
use crate::schema::{Compiled, Plan, SchemaError, SchemaRole, compile, describe_violations};
use crate::text::printable;

use super::{CallerDescription, Callers, Handler, RequiredState, ToolAbout, ToolDef};

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
    /// The tool takes host state the registry does not have.
    #[error(
        "tool `{name}` takes host state `{state}`, which this registry does not have: add it with `.state(…)` on the registry builder"
    )]
    MissingState {
        /// The tool.
        name: String,
        /// The state's type.
        state: &'static str,
    },
    /// What the tool says about itself is refused: a contradiction (read-only and
    /// destructive), an icon that is not a URL, a zero timeout.
    #[error("tool `{name}`: {problem}")]
    About {
        /// The tool.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// An example of the tool's arguments is refused by its input schema.
    #[error("tool `{name}`: its example {index} is refused by its input schema:\n{violation}")]
    Example {
        /// The tool.
        name: String,
        /// The example's index, from 0.
        index: usize,
        /// How the schema refuses it.
        violation: String,
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

impl RegistrationError {
    /// The name of the tool refused (cut to a readable length when the name itself is what
    /// was wrong).
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use toolprism::prelude::*;
    ///
    /// let tool = ToolDef::builder("lookup")
    ///     .input_schema(json!({"type": "nonsense"}))
    ///     .handler(|args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args) })
    ///     .build();
    /// let refused = Registry::builder().tool(tool).build().unwrap_err();
    /// assert_eq!(refused.tool_name(), "lookup");
    /// ```
    pub fn tool_name(&self) -> &str {
        match self {
            Self::Duplicate { name }
            | Self::InvalidName { name }
            | Self::Schema { name, .. }
            | Self::MissingState { name, .. }
            | Self::About { name, .. }
            | Self::Example { name, .. }
            | Self::ValueRoundTrip { name, .. } => name,
        }
    }
}

/// Checks a tool name against the rule every provider accepts: 1 to 64 ASCII letters, digits,
/// `_` or `-`.
///
/// ```
/// # use toolprism::tool::is_valid_tool_name;
/// assert!(is_valid_tool_name("read_file"));
/// assert!(!is_valid_tool_name("read file"));
/// assert!(!is_valid_tool_name(""));
/// assert!(!is_valid_tool_name(&"x".repeat(65)));
/// ```
pub const fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_TOOL_NAME_LEN {
        return false;
    }
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if !(byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-') {
            return false;
        }
        at += 1;
    }
    true
}

/// What a snapshot advertises of a registered tool: name, description and schemas, as
/// registered. Cheap to clone. (A [`ToolDef`] is what a tool is registered *from*; this is what
/// a model, an MCP peer or a lowering sees of it afterwards.)
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AdvertisedTool {
    name: Arc<str>,
    description: Arc<str>,
    input_schema: Arc<Value>,
    output_schema: Arc<Value>,
    /// Read from `output_schema` once, here: a host may ask on every call.
    #[serde(skip)]
    output_is_object: bool,
    /// What the tool says about itself.
    #[serde(skip)]
    about: Arc<ToolAbout>,
    /// Its description for a caller, when it depends on what that caller may call.
    #[serde(skip)]
    described_for: Option<CallerDescription>,
}

impl AdvertisedTool {
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

    /// Whether the output schema's root says `"type": "object"`, so that every value the tool
    /// returns is a JSON object (what MCP 2025-11-25 requires of structured content).
    ///
    /// ```
    /// use toolprism::prelude::*;
    ///
    /// /// Adds.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    /// struct Sum { sum: i64 }
    ///
    /// /// Adds, naming the sum.
    /// #[tool]
    /// fn add_named(a: i64, b: i64) -> Sum { Sum { sum: a + b } }
    ///
    /// let registry = Registry::builder().tool(Add).tool(AddNamed).build().unwrap();
    /// let snapshot = registry.snapshot();
    /// assert!(!snapshot.definition("add").unwrap().output_is_object());
    /// assert!(snapshot.definition("add_named").unwrap().output_is_object());
    /// ```
    pub fn output_is_object(&self) -> bool {
        self.output_is_object
    }

    /// What the tool says about itself: title, hints, icons, examples, timeout, deferral,
    /// callers.
    pub fn about(&self) -> &ToolAbout {
        &self.about
    }

    /// Its description for a caller who may call the tools `may_call` says yes to: the one
    /// [`ToolDef::with_description_for_callers`] makes, else the registered one.
    pub fn description_for(&self, may_call: &dyn Fn(&str) -> bool) -> std::borrow::Cow<'_, str> {
        match &self.described_for {
            Some(describe) => std::borrow::Cow::Owned(describe.describe(may_call)),
            None => std::borrow::Cow::Borrowed(&self.description),
        }
    }

    /// Whether its description depends on the caller.
    pub fn described_for_callers(&self) -> bool {
        self.described_for.is_some()
    }

    pub(crate) fn shared_name(&self) -> Arc<str> {
        self.name.clone()
    }
}

/// A registered tool: its definition, its compiled validators and its handler.
pub(crate) struct CompiledTool {
    pub(crate) definition: AdvertisedTool,
    pub(crate) input: Validator,
    /// What arguments are checked against before `input`, when the input schema has a plan.
    pub(crate) input_plan: Option<Plan>,
    /// Whether the input schema is draft-07, whose `$ref` hides its siblings.
    pub(crate) input_draft_07: bool,
    pub(crate) output: Validator,
    /// What the lossless snapshot checks of a typed body's value, when the output schema has
    /// a plan.
    pub(crate) output_plan: Option<Plan>,
    pub(crate) handler: Arc<dyn Handler>,
    pub(crate) limits: Option<BoundLimits>,
    pub(crate) required_state: Vec<RequiredState>,
    /// Read from `about` once, for the dispatch path.
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) callers: Callers,
}

impl CompiledTool {
    pub(crate) fn new(mut def: ToolDef) -> Result<Self, RegistrationError> {
        let input_schema = std::mem::take(&mut def.input_schema);
        let output_schema = std::mem::take(&mut def.output_schema);
        let advertised = def.advertised_input_schema.take();
        let checked =
            Self::check(&def, &input_schema, &output_schema).and_then(|compiled| match advertised
                .as_ref()
                .map(check_depth)
            {
                Some(Err(error)) => Err(RegistrationError::Schema {
                    name: def.name.clone(),
                    role: "advertised input",
                    source: SchemaError::TooDeep { at: error.at },
                }),
                _ => Ok(compiled),
            });
        match checked {
            Ok((input, output)) => Ok(Self {
                definition: AdvertisedTool {
                    name: def.name.as_str().into(),
                    description: def.description.as_str().into(),
                    input_schema: Arc::new(match advertised {
                        Some(advertised) => {
                            dispose_checked(input_schema);
                            advertised
                        }
                        None => input_schema,
                    }),
                    output_is_object: is_object_rooted(&output_schema),
                    output_schema: Arc::new(output_schema),
                    about: Arc::new(def.about.clone()),
                    described_for: def.described_for.clone(),
                },
                input: input.validator,
                input_plan: input.plan,
                input_draft_07: input.draft_07,
                output: output.validator,
                output_plan: output.plan,
                handler: def.handler.clone(),
                limits: def.limits,
                required_state: def.required_state.clone(),
                timeout: def.about.timeout,
                callers: def.about.callers,
            }),
            Err(error) => {
                // A refused schema may be nested past what `Drop` can recurse through.
                dispose_checked(input_schema);
                dispose_checked(output_schema);
                if let Some(advertised) = advertised {
                    dispose_checked(advertised);
                }
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
        if let Err(problem) = super::about::check(&def.about) {
            return Err(RegistrationError::About {
                name: def.name.clone(),
                problem,
            });
        }
        if let Some(template) = &def.about.resource {
            let properties = input_schema.get("properties").and_then(Value::as_object);
            if let Some(unknown) = template
                .arguments()
                .find(|name| !properties.is_some_and(|known| known.contains_key(*name)))
            {
                return Err(RegistrationError::About {
                    name: def.name.clone(),
                    problem: format!(
                        "its resource template `{template}` names `{unknown}`, which is not one of its arguments"
                    ),
                });
            }
        }
        for (index, example) in def.about.examples.iter().enumerate() {
            if let Err(error) = check_depth(example) {
                return Err(RegistrationError::Example {
                    name: def.name.clone(),
                    index,
                    violation: format!("- it nests deeper than the limit ({})", error.at),
                });
            }
            if !input.validator.is_valid(example) {
                return Err(RegistrationError::Example {
                    name: def.name.clone(),
                    index,
                    violation: describe_violations(&input.validator, example),
                });
            }
        }
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

    /// Checks that every state the tool takes is among `has` (the registry's).
    pub(crate) fn check_state(
        &self,
        has: impl Fn(std::any::TypeId) -> bool,
    ) -> Result<(), RegistrationError> {
        match self.required_state.iter().find(|state| !has(state.id)) {
            Some(missing) => Err(RegistrationError::MissingState {
                name: self.name().to_owned(),
                state: missing.name,
            }),
            None => Ok(()),
        }
    }
}

/// The tools one snapshot sees, in registration order, with a name index.
#[derive(Clone, Default)]
pub(crate) struct ToolTable {
    tools: Vec<Arc<CompiledTool>>,
    /// Hashed with a seeded hasher: an imported tool's name is chosen by a remote server,
    /// which could otherwise pick names that all collide (and turn every lookup into a scan).
    index: HashMap<Arc<str>, usize, foldhash::fast::RandomState>,
    /// How many changes the registry made before this table: 0 for the one it was built with.
    pub(crate) generation: u64,
    /// Each namespace's description, which all of its tools must give alike.
    namespaces: HashMap<String, String>,
}

impl ToolTable {
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<CompiledTool>> {
        self.index.get(name).map(|&at| &self.tools[at])
    }

    /// The tools, in registration order.
    pub(crate) fn tools(&self) -> &[Arc<CompiledTool>] {
        &self.tools
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name())
    }

    pub(crate) fn push(&mut self, tool: CompiledTool) -> Result<(), RegistrationError> {
        let name = tool.definition.shared_name();
        if self.index.contains_key(&name) {
            return Err(RegistrationError::Duplicate {
                name: name.as_ref().to_owned(),
            });
        }
        if let Some(namespace) = &tool.definition.about().namespace {
            match self.namespaces.get(&namespace.name) {
                Some(description) if *description != namespace.description => {
                    return Err(RegistrationError::About {
                        name: name.as_ref().to_owned(),
                        problem: format!(
                            "its namespace `{}` is described otherwise by another tool of it",
                            namespace.name
                        ),
                    });
                }
                Some(_) => {}
                None => {
                    self.namespaces
                        .insert(namespace.name.clone(), namespace.description.clone());
                }
            }
        }
        self.index.insert(name, self.tools.len());
        self.tools.push(Arc::new(tool));
        Ok(())
    }

    pub(crate) fn indexed(tools: Vec<Arc<CompiledTool>>, generation: u64) -> Self {
        let index = tools
            .iter()
            .enumerate()
            .map(|(at, tool)| (tool.definition.shared_name(), at))
            .collect();
        let namespaces = tools
            .iter()
            .filter_map(|tool| tool.definition.about().namespace.as_ref())
            .map(|namespace| (namespace.name.clone(), namespace.description.clone()))
            .collect();
        Self {
            tools,
            index,
            generation,
            namespaces,
        }
    }
}

/// Whether a schema's root says `"type": "object"`: only then is every value it accepts an
/// object (a union of objects, or `true`, may still accept anything else).
fn is_object_rooted(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher as _;

    use serde_json::json;

    use super::{ToolTable, is_object_rooted};

    /// Names a remote server chose cannot be picked to collide ahead of time: every table
    /// hashes them under a seed of its own.
    #[test]
    fn every_name_index_is_seeded_apart() {
        let (one, other) = (ToolTable::default(), ToolTable::indexed(Vec::new(), 1));
        let hashes = |table: &ToolTable| {
            ["read", "add_0", "up_lookup"].map(|name| table.index.hasher().hash_one(name))
        };
        assert_ne!(hashes(&one), hashes(&other));
    }

    #[test]
    fn only_a_root_typed_object_is_object_rooted() {
        assert!(is_object_rooted(&json!({"type": "object"})));
        assert!(!is_object_rooted(&json!({"type": "string"})));
        assert!(!is_object_rooted(&json!({"oneOf": [{"type": "object"}]})));
        assert!(!is_object_rooted(&json!({"type": ["object", "null"]})));
        assert!(!is_object_rooted(&json!(true)));
    }
}
