//! What a host serves beside the registry's tools: resources, prompts and completion, by any
//! rmcp [`ServerHandler`] it already has. [`McpServer::with_handler`](crate::McpServer::with_handler)
//! takes one; this is that handler with its futures boxed, so the server keeps one type.

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use toolprism::BoxFuture;

type Answer<'a, T> = BoxFuture<'a, Result<T, ErrorData>>;
type Context = RequestContext<RoleServer>;

/// The requests a toolprism server hands on to the host's handler.
pub(crate) trait HostHandler: Send + Sync + 'static {
    /// What the handler serves, merged into the server's capabilities.
    fn capabilities(&self) -> ServerCapabilities;
    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Answer<'_, ListResourcesResult>;
    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Answer<'_, ListResourceTemplatesResult>;
    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: Context,
    ) -> Answer<'_, ReadResourceResponse>;
    fn subscribe(&self, request: SubscribeRequestParams, context: Context) -> Answer<'_, ()>;
    fn unsubscribe(&self, request: UnsubscribeRequestParams, context: Context) -> Answer<'_, ()>;
    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Answer<'_, ListPromptsResult>;
    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: Context,
    ) -> Answer<'_, GetPromptResponse>;
    fn complete(
        &self,
        request: CompleteRequestParams,
        context: Context,
    ) -> Answer<'_, CompleteResult>;
}

impl<H: ServerHandler> HostHandler for H {
    fn capabilities(&self) -> ServerCapabilities {
        self.get_info().capabilities
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Answer<'_, ListResourcesResult> {
        Box::pin(ServerHandler::list_resources(self, request, context))
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Answer<'_, ListResourceTemplatesResult> {
        Box::pin(ServerHandler::list_resource_templates(
            self, request, context,
        ))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: Context,
    ) -> Answer<'_, ReadResourceResponse> {
        Box::pin(ServerHandler::read_resource(self, request, context))
    }

    #[expect(
        deprecated,
        reason = "2025-11-25's resources/subscribe, the host's to answer"
    )]
    fn subscribe(&self, request: SubscribeRequestParams, context: Context) -> Answer<'_, ()> {
        Box::pin(ServerHandler::subscribe(self, request, context))
    }

    #[expect(
        deprecated,
        reason = "2025-11-25's resources/unsubscribe, the host's to answer"
    )]
    fn unsubscribe(&self, request: UnsubscribeRequestParams, context: Context) -> Answer<'_, ()> {
        Box::pin(ServerHandler::unsubscribe(self, request, context))
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: Context,
    ) -> Answer<'_, ListPromptsResult> {
        Box::pin(ServerHandler::list_prompts(self, request, context))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: Context,
    ) -> Answer<'_, GetPromptResponse> {
        Box::pin(ServerHandler::get_prompt(self, request, context))
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: Context,
    ) -> Answer<'_, CompleteResult> {
        Box::pin(ServerHandler::complete(self, request, context))
    }
}

/// The server's capabilities with what the host's handler serves added: its prompts and
/// completion as it declares them, and its resource flags (toolprism serves resources of its
/// own, so they are always declared).
pub(crate) fn merged(mut ours: ServerCapabilities, host: ServerCapabilities) -> ServerCapabilities {
    ours.prompts = host.prompts;
    ours.completions = host.completions;
    if let Some(theirs) = host.resources {
        let resources = ours.resources.get_or_insert_with(Default::default);
        resources.subscribe = theirs.subscribe;
        resources.list_changed = theirs.list_changed;
    }
    ours
}
