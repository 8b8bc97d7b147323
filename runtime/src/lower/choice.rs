//! Which tools the model may or must call on a turn, in each provider's words — refused, with
//! the reason, where a provider cannot say it.

use serde_json::{Value, json};

use super::Provider;

/// Which tools the model may or must call on a turn.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// It decides (every provider's default).
    Auto,
    /// It must call a tool.
    Required,
    /// It must not call a tool.
    None,
    /// It must call this tool.
    Tool(String),
    /// It may call only these tools, or must call one of them (`required`).
    Allowed {
        /// The tools.
        tools: Vec<String>,
        /// Whether it must call one.
        required: bool,
    },
    /// Gemini's `VALIDATED`: calls or text, calls held to their schemas.
    Validated,
}

/// Why a provider cannot say a tool choice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{provider} cannot say this tool choice: {why}")]
pub struct ToolChoiceError {
    /// The provider.
    pub provider: Provider,
    /// Why not.
    pub why: &'static str,
}

/// The tool choice as `provider` takes it: the value of `tool_choice` (OpenAI Chat and
/// Responses, Anthropic), or of `toolConfig` (Gemini).
///
/// ```
/// use serde_json::json;
/// use toolprism::lower::{Provider, ToolChoice, lower_tool_choice};
///
/// let one = ToolChoice::Tool("read".into());
/// assert_eq!(lower_tool_choice(Provider::Anthropic, &one).unwrap(), json!({"type": "tool", "name": "read"}));
/// assert_eq!(
///     lower_tool_choice(Provider::Gemini, &one).unwrap(),
///     json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}})
/// );
/// let subset = ToolChoice::Allowed { tools: vec!["read".into(), "grep".into()], required: false };
/// assert!(lower_tool_choice(Provider::Anthropic, &subset).is_err());
/// ```
pub fn lower_tool_choice(
    provider: Provider,
    choice: &ToolChoice,
) -> Result<Value, ToolChoiceError> {
    let refuse = |why| Err(ToolChoiceError { provider, why });
    match provider {
        Provider::OpenAiChat => Ok(match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            ToolChoice::Allowed { tools, required } => json!({
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": mode(*required),
                    "tools": tools.iter().map(|name| json!({"type": "function", "function": {"name": name}})).collect::<Vec<_>>(),
                },
            }),
            ToolChoice::Validated => return refuse("it has no validated mode (that is Gemini's)"),
        }),
        Provider::OpenAiResponses => Ok(match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
            ToolChoice::Allowed { tools, required } => json!({
                "type": "allowed_tools",
                "mode": mode(*required),
                "tools": tools.iter().map(|name| json!({"type": "function", "name": name})).collect::<Vec<_>>(),
            }),
            ToolChoice::Validated => return refuse("it has no validated mode (that is Gemini's)"),
        }),
        Provider::Anthropic => Ok(match choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            ToolChoice::Allowed { .. } => {
                return refuse("it cannot limit a turn to some of the tools sent; send only those");
            }
            ToolChoice::Validated => return refuse("it has no validated mode (that is Gemini's)"),
        }),
        Provider::Gemini => {
            let (mode, names): (&str, Option<&[String]>) = match choice {
                ToolChoice::Auto => ("AUTO", None),
                ToolChoice::Required => ("ANY", None),
                ToolChoice::None => ("NONE", None),
                ToolChoice::Tool(name) => ("ANY", Some(std::slice::from_ref(name))),
                // `allowedFunctionNames` is taken with ANY and VALIDATED only: "may call one of
                // these, or answer" is VALIDATED with the names.
                ToolChoice::Allowed { tools, required } => (
                    if *required { "ANY" } else { "VALIDATED" },
                    Some(tools.as_slice()),
                ),
                ToolChoice::Validated => ("VALIDATED", None),
            };
            let mut config = json!({"mode": mode});
            if let Some(names) = names {
                config["allowedFunctionNames"] = json!(names);
            }
            Ok(json!({"functionCallingConfig": config}))
        }
    }
}

fn mode(required: bool) -> &'static str {
    if required { "required" } else { "auto" }
}
