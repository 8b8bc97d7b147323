//! Lowering to provider wire formats: tool definitions (with each provider's schema dialect)
//! and tool results, as `serde_json::Value`s ready to put in a request. Pure data; no HTTP.
//!
//! Results are lowered from the content the model was shown — never from the canonical value —
//! so what a provider receives is what the session log records and replay shows.
//!
//! Input schemas reach every provider with one object at the root: a union of objects (an
//! internally tagged enum as the args type) is flattened by [`object_root`], its shapes spelled
//! out in the description. What a lowered schema lets a model send, dispatch accepts, except
//! for constraints a dialect cannot carry, which are folded into descriptions (`minLength: 3`,
//! `oneOf: …`); a value breaking one of those is refused with a message naming the keyword.
//! Every function here refuses a schema deeper than
//! [`MAX_DEPTH`](crate::depth::MAX_DEPTH) before recursing, and is linear in the schema.
//!
//! | provider | a tool definition | a result lowers to |
//! |---|---|---|
//! | [`Provider::OpenAiChat`] | `{"type": "function", "function": {…}}` | a `role: "tool"` message with the text; images in a following `role: "user"` message |
//! | [`Provider::OpenAiResponses`] | `{"type": "function", "name", …}` | a `function_call_output` item (text, or `input_text`/`input_image` parts) |
//! | [`Provider::Anthropic`] | `{"name", "description", "input_schema"}` | a `tool_result` content block with text and base64 image blocks, and `is_error` |
//! | [`Provider::Gemini`] | one `{"functionDeclarations": […]}` tool | a `functionResponse` part (`{"output": …}` or `{"error": …}`) then `inlineData` parts |

mod choice;
mod dialect;
mod result;
mod root;

pub use choice::{ToolChoice, ToolChoiceError, lower_tool_choice};
pub use dialect::{DialectError, anthropic_strict, gemini, openai_strict, plain};
pub(crate) use result::text_of;
pub use result::{lower_content, lower_outcome};
pub use root::object_root;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::tool::{AdvertisedTool, Callers, Namespace};

/// A model provider's API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini (`generateContent`).
    Gemini,
}

impl std::fmt::Display for Provider {
    /// The API's name: `OpenAI Chat Completions`, `OpenAI Responses`, `Anthropic Messages`,
    /// `Gemini`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::OpenAiChat => "OpenAI Chat Completions",
            Self::OpenAiResponses => "OpenAI Responses",
            Self::Anthropic => "Anthropic Messages",
            Self::Gemini => "Gemini",
        })
    }
}

/// How tool definitions are lowered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOptions {
    /// Strict mode, where a provider has one: `"strict": true`, with input schemas rewritten
    /// by [`openai_strict`] (OpenAI Chat and Responses) or [`anthropic_strict`] (Anthropic).
    pub strict: bool,
    /// Send each tool's output schema where the provider has a field for it (Gemini
    /// `response`, OpenAI Responses `output_schema`).
    pub output_schemas: bool,
}

impl ToolOptions {
    /// With strict mode (OpenAI, Anthropic).
    #[must_use]
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// With output schemas where the provider takes them.
    #[must_use]
    pub fn with_output_schemas(mut self) -> Self {
        self.output_schemas = true;
        self
    }
}

/// Why a tool definition cannot be lowered for a provider: the tool, which of its schemas, and
/// the keyword.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}` cannot be sent to {provider:?}: its {role} schema: {source}")]
pub struct LowerError {
    /// The tool.
    pub tool: String,
    /// The provider.
    pub provider: Provider,
    /// `"input"` or `"output"`.
    pub role: &'static str,
    /// The keyword and why.
    #[source]
    pub source: DialectError,
}

/// Lowers tool definitions for a provider: one JSON value per tool, except for Gemini, where
/// all of them go in one `{"functionDeclarations": […]}` tool, and for OpenAI Responses,
/// where the tools of a [`Namespace`] go in one `{"type": "namespace", …}` tool, placed where
/// the first of them is. A tool only programs may call is left out for OpenAI Chat and
/// Gemini, which have no programs. A deferred tool is marked `defer_loading` where a provider
/// has the field and lowered like any other where it has not: withholding it until a search
/// finds it is [`Conversation`](crate::turn::Conversation)'s work.
///
/// ```
/// use toolprism::prelude::*;
/// use toolprism::lower::{Provider, ToolOptions, lower_tools};
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let snapshot = Registry::builder().tool(Add).build().unwrap().snapshot();
/// let tools = lower_tools(Provider::Anthropic, snapshot.definitions(), ToolOptions::default()).unwrap();
/// assert_eq!(tools[0]["name"], "add");
/// assert_eq!(tools[0]["input_schema"]["required"], serde_json::json!(["a", "b"]));
/// ```
pub fn lower_tools<'a>(
    provider: Provider,
    definitions: impl IntoIterator<Item = &'a AdvertisedTool>,
    options: ToolOptions,
) -> Result<Vec<Value>, LowerError> {
    let mut lowered = Vec::new();
    // Where each namespace's group is in `lowered`.
    let mut groups: HashMap<String, usize> = HashMap::new();
    for definition in definitions {
        // A tool only programs may call is not offered to the model: Anthropic's and
        // Responses' programs have a field for it; elsewhere it is left out.
        let programs_only = definition.about().callers == Callers::Programs;
        if programs_only && matches!(provider, Provider::OpenAiChat | Provider::Gemini) {
            continue;
        }
        let tool = lower_tool(provider, definition, options)?;
        match &definition.about().namespace {
            Some(namespace)
                if provider == Provider::OpenAiResponses && tool["type"] == "function" =>
            {
                in_namespace(&mut lowered, &mut groups, namespace, tool);
            }
            _ => lowered.push(tool),
        }
    }
    if provider == Provider::Gemini {
        return Ok(vec![json!({"functionDeclarations": lowered})]);
    }
    Ok(lowered)
}

/// Puts a lowered Responses tool in its namespace's group, made where its first tool is.
fn in_namespace(
    lowered: &mut Vec<Value>,
    groups: &mut HashMap<String, usize>,
    namespace: &Namespace,
    tool: Value,
) {
    let members = groups
        .get(&namespace.name)
        .and_then(|&at| lowered[at].get_mut("tools"))
        .and_then(Value::as_array_mut);
    if let Some(members) = members {
        members.push(tool);
    } else {
        groups.insert(namespace.name.clone(), lowered.len());
        lowered.push(json!({
            "type": "namespace",
            "name": namespace.name,
            "description": namespace.description,
            "tools": [tool],
        }));
    }
}

/// The code execution tool whose programs may call a tool only programs may call.
const ANTHROPIC_CODE_EXECUTION: &str = "code_execution_20250825";

/// A tool's description as a provider without a field for examples gets it: with its example
/// arguments after it (MCP, OpenAI Chat and Responses, Gemini).
///
/// ```
/// use serde_json::json;
/// use toolprism::prelude::*;
/// use toolprism::tool::IntoToolDef;
///
/// /// Reads a file.
/// #[tool]
/// fn read(#[arg] path: String) -> String { path }
///
/// let registry = Registry::builder().tool(Read.into_tool_def().with_example(json!({"path": "a.txt"}))).build().unwrap();
/// let snapshot = registry.snapshot();
/// let described = toolprism::lower::description_with_examples(snapshot.definition("read").unwrap());
/// assert_eq!(described, "Reads a file.\n\nExamples of arguments:\n- {\"path\":\"a.txt\"}");
/// ```
pub fn description_with_examples(definition: &AdvertisedTool) -> Cow<'_, str> {
    let examples = &definition.about().examples;
    if examples.is_empty() {
        Cow::Borrowed(definition.description())
    } else {
        Cow::Owned(with_examples(definition.description(), examples))
    }
}

/// A description with its tool's example arguments after it.
fn with_examples(description: &str, examples: &[Value]) -> String {
    let mut text = description.trim_end().to_owned();
    text.push_str("\n\nExamples of arguments:");
    for example in examples {
        text.push_str("\n- ");
        text.push_str(&example.to_string());
    }
    text
}

fn lower_tool(
    provider: Provider,
    definition: &AdvertisedTool,
    options: ToolOptions,
) -> Result<Value, LowerError> {
    let fail = |role, source| LowerError {
        tool: definition.name().to_owned(),
        provider,
        role,
        source,
    };
    let strict =
        options.strict && matches!(provider, Provider::OpenAiChat | Provider::OpenAiResponses);
    // Arguments are one object on every provider's wire: a union of objects is flattened.
    let input_schema = object_root(definition.input_schema());
    let input = match provider {
        Provider::Gemini => gemini(&input_schema).map_err(|e| fail("input", e))?,
        Provider::Anthropic if options.strict => {
            anthropic_strict(&input_schema).map_err(|e| fail("input", e))?
        }
        _ if strict => openai_strict(&input_schema).map_err(|e| fail("input", e))?,
        _ => plain(&input_schema).map_err(|e| fail("input", e))?,
    };
    let about = definition.about();
    let name = definition.name();
    // Examples go where a provider has a field for them (Anthropic), else into the
    // description, where the model still reads them.
    let description = if provider == Provider::Anthropic {
        Cow::Borrowed(definition.description())
    } else {
        description_with_examples(definition)
    };
    if about.tool_search
        && provider == Provider::OpenAiResponses
        && name == crate::search::DEFAULT_NAME
    {
        // Responses' own client-side tool search: the model's `tool_search_call` is answered
        // with a `tool_search_output` of the tools found.
        return Ok(json!({
            "type": "tool_search",
            "execution": "client",
            "description": description,
            "parameters": input,
        }));
    }
    let programs_only = about.callers == Callers::Programs;
    Ok(match provider {
        Provider::OpenAiChat => {
            let mut function =
                json!({"name": name, "description": description, "parameters": input});
            if strict {
                function["strict"] = json!(true);
            }
            json!({"type": "function", "function": function})
        }
        Provider::OpenAiResponses => {
            let mut tool = json!({
                "type": "function",
                "name": name,
                "description": description,
                "parameters": input,
                "strict": strict,
            });
            if options.output_schemas {
                tool["output_schema"] =
                    plain(definition.output_schema()).map_err(|e| fail("output", e))?;
            }
            if about.defer_loading {
                tool["defer_loading"] = json!(true);
            }
            if programs_only {
                tool["allowed_callers"] = json!(["programmatic"]);
            }
            tool
        }
        Provider::Anthropic => {
            let mut tool = json!({"name": name, "description": description, "input_schema": input});
            if !about.examples.is_empty() {
                tool["input_examples"] = Value::Array(about.examples.clone());
            }
            if about.defer_loading {
                tool["defer_loading"] = json!(true);
            }
            if programs_only {
                tool["allowed_callers"] = json!([ANTHROPIC_CODE_EXECUTION]);
            }
            if options.strict {
                tool["strict"] = json!(true);
            }
            tool
        }
        Provider::Gemini => {
            let mut declaration = Map::new();
            declaration.insert("name".into(), json!(name));
            declaration.insert("description".into(), json!(description));
            declaration.insert("parameters".into(), input);
            if options.output_schemas {
                let output = gemini(definition.output_schema()).map_err(|e| fail("output", e))?;
                declaration.insert("response".into(), output);
            }
            Value::Object(declaration)
        }
    })
}
