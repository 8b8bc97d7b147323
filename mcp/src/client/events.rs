//! What the client hears from the server outside a call's own answer: requests for input,
//! list changes, progress.

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, Implementation,
    ProgressNotificationParam,
};
#[expect(
    deprecated,
    reason = "sampling and roots: rmcp marks them deprecated (SEP-2577), servers still ask"
)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;
use tokio::sync::Notify;

use super::input::{InFlight, answer_live};
use super::progress::ProgressRoutes;

/// What the client hears from the server outside a request.
pub(super) struct ClientEvents {
    pub(super) refresh: Arc<Notify>,
    pub(super) progress: Arc<ProgressRoutes>,
    pub(super) in_flight: Arc<InFlight>,
}

/// A live request's answer, as the rmcp type it is read into.
pub(super) fn answer_as<T: serde::de::DeserializeOwned>(answer: Value) -> Result<T, ErrorData> {
    serde_json::from_value(answer).map_err(|error| {
        ErrorData::internal_error(
            format!("the answer is not what was asked for: {error}"),
            None,
        )
    })
}

#[expect(
    deprecated,
    reason = "sampling and roots: rmcp marks them deprecated (SEP-2577), servers still ask"
)]
impl ClientHandler for ClientEvents {
    /// Forms, completions and roots are declared, and tasks: what a server asks is answered by
    /// whoever answers the local call that asked it (its answerer), or refused if nobody does.
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder()
            .enable_elicitation()
            .enable_sampling()
            .enable_roots()
            .enable_tasks()
            .build();
        ClientConfig::new(
            capabilities,
            Implementation::new("toolprism", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(request)
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        let answer = answer_live(&self.in_flight, "elicitation/create", params).await?;
        answer_as(answer)
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(request)
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        let answer = answer_live(&self.in_flight, "sampling/createMessage", params).await?;
        answer_as(answer)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let answer = answer_live(&self.in_flight, "roots/list", serde_json::json!({})).await?;
        answer_as(answer)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.refresh.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.report(&params);
    }
}
