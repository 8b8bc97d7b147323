//! rmcp's `ServerHandler` for the server: each request handed to the part that answers it.

use std::borrow::Cow;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestMethod,
    CompleteRequestParams, CompleteResult, GetPromptRequestMethod, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SubscribeRequestMethod,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestMethod,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext,
};
use rmcp::{ErrorData, ServerHandler};
use toolprism::access::missing_scopes;

use super::host;
use super::request::{Requester, is_current};
use super::resources::{
    OUTPUT_URI_PREFIX, RETAINED_OUTPUT_TTL_MS, handle_of, output_uri, resource_not_found,
};
use super::setup::McpServer;
use super::traced::RequestTrace;

impl ServerHandler for McpServer {
    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    fn get_info(&self) -> ServerConfig {
        let settings = &self.shared.settings;
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_logging()
            .enable_tasks()
            .build();
        if let Some(host) = &settings.host {
            capabilities = host::merged(capabilities, host.capabilities());
        }
        let mut config = ServerConfig::new(capabilities);
        config.server_info = settings.implementation.clone();
        config.instructions.clone_from(&settings.instructions);
        config
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25])
    }

    #[expect(
        deprecated,
        reason = "MCP logging is 2025-11-25's; rmcp marks it deprecated"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session
            .log_level
            .store(request.level as u8, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        RequestTrace::start(self, "tools/list", None, &context)
            .run(async move {
                let lists = self.lists();
                let current = is_current(&context.meta, &context.peer);
                let tools = self.callable(
                    if current {
                        &lists.current
                    } else {
                        &lists.legacy
                    },
                    &context,
                );
                if !current {
                    return Ok(ListToolsResult::with_all_items(tools));
                }
                let (ttl, scope) = self.shared.settings.tool_list_cache;
                // A listing shown to a caller is that caller's: never to be shared.
                let scope = if Requester::of(&context).caller.is_some() {
                    CacheScope::Private
                } else {
                    scope
                };
                let mut result = ListToolsResult::with_all_items(tools);
                result.ttl_ms = Some(ttl);
                result.cache_scope = Some(scope);
                Ok(result)
            })
            .await
    }

    /// The tool a request names, for the transport to check its `Mcp-Param-*` headers
    /// against the arguments (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.lists()
            .current
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    // Not `async fn`s calling `call` and `listen_to_changes`: rmcp spawns a task per request
    // whose future is as large as the largest of these, and a wrapper would hold the arguments
    // twice.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        RequestTrace::start(self, "tools/call", Some(&request.name), &context)
            .run(self.call(request, context))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        RequestTrace::start(self, "resources/list", None, &context)
            .run(async move {
                // Retained outputs belong to the calls that made them: they are read by the URI a
                // result names, never listed to whoever asks.
                match &self.shared.settings.host {
                    Some(host) => host.list_resources(request, context).await,
                    None => Ok(ListResourcesResult::default()),
                }
            })
            .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let first_page = request.as_ref().is_none_or(|page| page.cursor.is_none());
        let mut result = match &self.shared.settings.host {
            Some(host) => host.list_resource_templates(request, context).await?,
            None => ListResourceTemplatesResult::default(),
        };
        if first_page {
            let template =
                ResourceTemplate::new(format!("{OUTPUT_URI_PREFIX}{{handle}}"), "tool-output")
                    .with_description(
                        "The full text of a tool result that was too long to show in full.",
                    )
                    .with_mime_type("text/plain");
            result.resource_templates.push(template);
        }
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        RequestTrace::start(self, "resources/read", None, &context)
            .run(async move {
                let Some(handle) = handle_of(&request.uri) else {
                    return match &self.shared.settings.host {
                        Some(host) => host.read_resource(request, context).await,
                        None => Err(resource_not_found(&request.uri)),
                    };
                };
                // Another's output, or one whose tool needs a scope the caller lacks, is answered as an
                // unknown one is.
                let requester = Requester::of(&context);
                let snapshot = self.shared.registry.snapshot();
                let read = snapshot
                    .read_retained(
                        handle,
                        requester.owner.as_ref(),
                        requester.caller.as_deref(),
                    )
                    .await;
                match read {
                    Ok(Some(text)) => {
                        let mut result = ReadResourceResult::new(vec![ResourceContents::text(
                            text,
                            output_uri(handle),
                        )]);
                        // What a handle names never changes, and belongs to whoever made the call.
                        result.ttl_ms = Some(RETAINED_OUTPUT_TTL_MS);
                        result.cache_scope = Some(CacheScope::Private);
                        Ok(ReadResourceResponse::Complete(result))
                    }
                    Ok(None) => Err(resource_not_found(&request.uri)),
                    Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
                }
            })
            .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.subscribe(request, context).await,
            None => Err(ErrorData::method_not_found::<SubscribeRequestMethod>()),
        }
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.settings.host {
            Some(host) => host.unsubscribe(request, context).await,
            None => Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>()),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        RequestTrace::start(self, "prompts/list", None, &context)
            .run(async move {
                match &self.shared.settings.host {
                    Some(host) => host.list_prompts(request, context).await,
                    None => Err(ErrorData::method_not_found::<ListPromptsRequestMethod>()),
                }
            })
            .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        RequestTrace::start(self, "prompts/get", Some(&request.name), &context)
            .run(async move {
                match &self.shared.settings.host {
                    Some(host) => host.get_prompt(request, context).await,
                    None => Err(ErrorData::method_not_found::<GetPromptRequestMethod>()),
                }
            })
            .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        RequestTrace::start(self, "completion/complete", None, &context)
            .run(async move {
                match &self.shared.settings.host {
                    Some(host) => host.complete(request, context).await,
                    None => Err(ErrorData::method_not_found::<CompleteRequestMethod>()),
                }
            })
            .await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        RequestTrace::start(self, "tasks/get", None, &context)
            .run(async move {
                let requester = Requester::of(&context);
                let tasks = &self.shared.settings.tasks;
                tasks.get(&request.task_id, requester.asker()).await
            })
            .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        RequestTrace::start(self, "tasks/update", None, &context)
            .run(async move {
                let requester = Requester::of(&context);
                let tasks = &self.shared.settings.tasks;
                tasks
                    .update(&request.task_id, requester.asker(), request.input_responses)
                    .await
            })
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        RequestTrace::start(self, "tasks/cancel", None, &context)
            .run(async move {
                let requester = Requester::of(&context);
                let tasks = &self.shared.settings.tasks;
                tasks.cancel(&request.task_id, requester.asker()).await
            })
            .await
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = Some(true);
        Some(accepted)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        // Boxed: a stream lives long and is opened once per session.
        Box::pin(self.listen_to_changes(context))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session of 2025-11-25: told of every change until it closes.
        let shared = &self.shared;
        shared.announcer.add(context.peer, &shared.changes);
    }
}

impl McpServer {
    /// The `subscriptions/listen` stream of a 2026-07-28 client: a notification per change of
    /// the registry, until the client closes it.
    async fn listen_to_changes(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return Ok(());
        }
        let mut changes = self.shared.changes.clone();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                seen = changes.changed() => {
                    if seen.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The tools of a listing the request's caller may call: all of them, unless the request
    /// carries a caller lacking a tool's scopes. A tool described by what its caller may call
    /// (Code Mode's `run_code`) gets that caller's description.
    fn callable(&self, tools: &[Tool], context: &RequestContext<RoleServer>) -> Vec<Tool> {
        let Some(caller) = Requester::of(context).caller else {
            return tools.to_vec();
        };
        let rules = self.scope_rules();
        let snapshot = self.shared.registry.snapshot();
        let may_call = |name: &str, by_program: bool| {
            snapshot.definition(name).is_some_and(|definition| {
                (!by_program || definition.about().callers.programs())
                    && missing_scopes(&definition.about().scopes, name, rules.as_deref(), &caller)
                        .is_empty()
            })
        };
        tools
            .iter()
            .filter(|tool| may_call(&tool.name, false))
            .map(|tool| {
                let mut tool = tool.clone();
                if let Some(definition) = snapshot
                    .definition(&tool.name)
                    .filter(|definition| definition.described_for_callers())
                {
                    let described = definition.description_for(&|name| may_call(name, true));
                    tool.description = Some(described.into_owned().into());
                }
                tool
            })
            .collect()
    }
}
