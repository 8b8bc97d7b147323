//! The suite's prompts, resources and completion, written with rmcp alone and served beside
//! the tools through `McpServer::with_handler`: what rmcp already does, toolprism does not
//! redo.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolprism_mcp::rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use toolprism_mcp::rmcp::service::{RequestContext, RoleServer};
use toolprism_mcp::rmcp::{ErrorData, ServerHandler};

use crate::PNG;

/// The fixtures the suite reads and gets.
pub(crate) struct Fixtures;

/// A result the suite expects, written as the JSON it checks.
fn from_json<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

/// A 2026-07-28 result is `complete` unless it says otherwise; rmcp drops the field for a
/// 2025-11-25 peer.
fn complete(mut value: Value) -> Value {
    value["resultType"] = json!("complete");
    value
}

fn text_message(text: String) -> Value {
    json!({"role": "user", "content": {"type": "text", "text": text}})
}

/// What a `test_input_required_result_prompt` retry answered for its context, if it did.
fn answered_context(request: &GetPromptRequestParams) -> Option<String> {
    let responses = serde_json::to_value(request.input_responses.as_ref()?).ok()?;
    let answer = responses.get("user_context")?;
    (answer.get("action")? == "accept")
        .then(|| {
            answer
                .pointer("/content/context")?
                .as_str()
                .map(str::to_owned)
        })
        .flatten()
}

impl ServerHandler for Fixtures {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_completions()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        from_json(complete(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A prompt with no arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments",
             "arguments": [
                {"name": "arg1", "description": "The first argument", "required": true},
                {"name": "arg2", "description": "The second argument", "required": true}]},
            {"name": "test_prompt_with_embedded_resource",
             "description": "A prompt that embeds a resource",
             "arguments": [{"name": "resourceUri", "description": "The resource to embed",
                            "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_input_required_result_prompt",
             "description": "A prompt that asks the user for its context first"},
        ]})))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let argument = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get(name))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let messages = match request.name.as_str() {
            "test_simple_prompt" => {
                vec![text_message("This is a simple prompt for testing.".into())]
            }
            "test_prompt_with_arguments" => vec![text_message(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))],
            "test_prompt_with_embedded_resource" => vec![
                json!({"role": "user", "content": {"type": "resource", "resource": {
                    "uri": argument("resourceUri"),
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}}),
                text_message("Please process the embedded resource above.".into()),
            ],
            "test_prompt_with_image" => vec![
                json!({"role": "user", "content":
                    {"type": "image", "data": PNG, "mimeType": "image/png"}}),
                text_message("Please analyze the image above.".into()),
            ],
            "test_input_required_result_prompt" => {
                let Some(context) = answered_context(&request) else {
                    let ask = from_json::<InputRequiredResult>(json!({
                        "resultType": "input_required",
                        "inputRequests": {"user_context": {
                            "method": "elicitation/create",
                            "params": {
                                "message": "What context should the prompt use?",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"context": {"type": "string"}},
                                    "required": ["context"]}}}}}))?;
                    return Ok(GetPromptResponse::InputRequired(ask));
                };
                vec![text_message(format!("Prompt with context: {context}"))]
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {other:?}"),
                    None,
                ));
            }
        };
        let result: GetPromptResult = from_json(complete(json!({ "messages": messages })))?;
        Ok(GetPromptResponse::Complete(result))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut result: ListResourcesResult = from_json(complete(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain",
             "description": "A static text resource"},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png",
             "description": "A static image"},
            {"uri": "test://watched-resource", "name": "watched-resource",
             "mimeType": "text/plain", "description": "A resource to subscribe to"},
        ]})))?;
        // The same for every client, and fixed for as long as the process runs.
        result.ttl_ms = Some(300_000);
        result.cache_scope = Some(toolprism_mcp::rmcp::model::CacheScope::Public);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        from_json(complete(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template-data",
             "mimeType": "application/json", "description": "Data for an id"},
        ]})))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "Watched."})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string()}),
                _ => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource at {uri:?}"),
                        Some(json!({ "uri": uri })),
                    ));
                }
            },
        };
        let result: ReadResourceResult = from_json(complete(json!({ "contents": [contents] })))?;
        Ok(ReadResourceResponse::Complete(result))
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        from_json(complete(
            json!({"completion": {"values": [], "total": 0, "hasMore": false}}),
        ))
    }
}
