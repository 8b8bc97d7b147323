//! The pipeline of one call: resolve, validate input, run the body, then normalize its value
//! into a frozen canonical value and its projections.
//!
//! Numbers in comments refer to the steps of the pipeline in `DESIGN.md`.

use serde_json::Value;
use tracing::Instrument as _;

use crate::call::{Surface, ToolCall, ToolContext};
use crate::content::ContentBlock;
use crate::error::{FailureError, ToolError, codes};
use crate::meta::MetaError;
use crate::outcome::{ToolFailure, ToolOutcome, ToolSuccess};
use crate::panic::CatchUnwind;
use crate::registry::{RegisteredTool, ToolTable};
use crate::schema::describe_violations;
use crate::text::truncate;
use crate::tool::BodyError;
use crate::value::FrozenValue;

/// How many tool names an unknown-tool failure lists.
const MAX_LISTED_TOOLS: usize = 20;
/// How much of an unknown name is echoed back.
const MAX_ECHOED_NAME: usize = 80;

pub(crate) async fn dispatch(table: &ToolTable, call: ToolCall, surface: Surface) -> ToolOutcome {
    let span = tracing::debug_span!(
        "tool_dispatch",
        tool = %truncate(call.name(), MAX_ECHOED_NAME),
        call_id = %truncate(call.id(), MAX_ECHOED_NAME),
        ?surface,
    );
    let outcome = run(table, call, surface).instrument(span.clone()).await;
    span.in_scope(|| match &outcome {
        ToolOutcome::Failure(failure) => {
            tracing::debug!(code = failure.error.code(), "tool call failed");
        }
        ToolOutcome::Success(_) => tracing::trace!("tool call succeeded"),
    });
    outcome
}

async fn run(table: &ToolTable, call: ToolCall, surface: Surface) -> ToolOutcome {
    // 1. Resolve the name in this snapshot.
    let Some(tool) = table.get(call.name()) else {
        return failure(unknown_tool(table, call.name()));
    };
    let call_id = call.shared_id();

    // 3. Validate the arguments before anything else sees them.
    let args = match call.into_args() {
        Ok(args) => args,
        Err(error) => {
            return failure(input_error(
                tool,
                &format!("- the arguments are not valid JSON: {error}"),
            ));
        }
    };
    if !tool.input.is_valid(&args) {
        let violations = describe_violations(&tool.input, &args);
        return failure(input_error(tool, &violations));
    }

    // 4. Run the body, containing panics.
    let cx = ToolContext::new(call_id, tool.definition.shared_name(), surface);
    let value = match CatchUnwind::new(tool.handler.call(&args, cx)).await {
        Ok(Ok(value)) => value,
        Ok(Err(BodyError::Input(error))) => {
            return failure(input_error(tool, &format!("- {error}")));
        }
        Ok(Err(BodyError::Failed(error))) => return failure(body_error(error)),
        Ok(Err(BodyError::Output(error))) => {
            return failure(output_error(
                tool,
                &format!("its value is not lossless JSON: {error}"),
            ));
        }
        Err(panic) => {
            tracing::warn!(tool = tool.name(), panic, "tool body panicked");
            return failure(FailureError::coded(
                "ToolPanic",
                codes::TOOL_PANICKED,
                format!(
                    "Tool `{}` failed unexpectedly (it panicked): {panic}",
                    tool.name()
                ),
            ));
        }
    };

    // 5–9. Validate, freeze and project.
    match normalize(tool, &args, value, surface) {
        Ok(success) => ToolOutcome::Success(success),
        Err(error) => failure(error),
    }
}

/// Turns a value into a canonical success: validate against the output schema (6), freeze (7),
/// render (8) and, for direct calls, project metadata (9). Every projection is computed from
/// the frozen, validated value.
pub(crate) fn normalize(
    tool: &RegisteredTool,
    args: &Value,
    value: Value,
    surface: Surface,
) -> Result<ToolSuccess, FailureError> {
    if !tool.output.is_valid(&value) {
        let violations = describe_violations(&tool.output, &value);
        return Err(output_error(
            tool,
            &format!("its value does not match its output schema:\n{violations}"),
        ));
    }
    let value = FrozenValue::freeze(value);

    let projected = tool
        .handler
        .project(args, &value, surface == Surface::Direct)
        .map_err(|problem| output_error(tool, &problem))?;
    let content = match projected.content {
        None => default_render(&value),
        Some(Ok(content)) => content,
        Some(Err(problem)) => return Err(output_error(tool, &problem)),
    };
    let meta = match projected.meta {
        None | Some(Ok(None)) => None,
        Some(Ok(Some(meta))) => Some(meta),
        Some(Err(MetaError::Invalid(problem))) => {
            tracing::warn!(tool = tool.name(), problem, "presentation meta dropped");
            None
        }
        Some(Err(MetaError::Failed(problem))) => return Err(output_error(tool, &problem)),
    };

    Ok(ToolSuccess {
        value,
        content,
        meta,
        additional_contexts: Vec::new(),
    })
}

/// Without a `render`, a string is one text block and anything else is serialized once.
fn default_render(value: &Value) -> Vec<ContentBlock> {
    let text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    vec![ContentBlock::text(text)]
}

fn failure(error: FailureError) -> ToolOutcome {
    ToolOutcome::Failure(ToolFailure::new(error))
}

fn unknown_tool(table: &ToolTable, name: &str) -> FailureError {
    let mut available: Vec<String> = table
        .names()
        .take(MAX_LISTED_TOOLS)
        .map(|name| format!("`{name}`"))
        .collect();
    if table.names().nth(MAX_LISTED_TOOLS).is_some() {
        available.push("…".to_owned());
    }
    let available = if available.is_empty() {
        "none".to_owned()
    } else {
        available.join(", ")
    };
    FailureError::coded(
        "UnknownToolError",
        codes::UNKNOWN_TOOL,
        format!(
            "Unknown tool `{}`. Available tools: {available}.",
            truncate(name, MAX_ECHOED_NAME)
        ),
    )
}

fn input_error(tool: &RegisteredTool, problems: &str) -> FailureError {
    FailureError::coded(
        "ToolInputError",
        codes::INVALID_TOOL_INPUT,
        format!(
            "Invalid arguments for tool `{}`:\n{problems}\nFix the arguments to match the tool's input schema and call it again.",
            tool.name()
        ),
    )
}

fn output_error(tool: &RegisteredTool, problem: &str) -> FailureError {
    tracing::warn!(
        tool = tool.name(),
        problem,
        "tool produced an invalid value"
    );
    FailureError::coded(
        "ToolOutputError",
        codes::INVALID_TOOL_OUTPUT,
        format!(
            "Tool `{}` produced an invalid result: {problem}",
            tool.name()
        ),
    )
}

fn body_error(error: ToolError) -> FailureError {
    error.into_failure_error()
}
