//! `tools/call`: one dispatch on the direct surface, driven to its end with its progress sent
//! as it comes, and answered with its result, the next round of input it needs, or the
//! protocol error its failure stands for.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use toolprism::access::Owner;
use toolprism::pipeline::DispatchOptions;
use toolprism::tool::TaskSupport;
use toolprism::{Surface, ToolCall};

use super::detach::Detachable;
use super::drive::{Driven, Round, cancelled_by_client, drive};
use super::input;
use super::peer::{McpPeer, TaskSlot};
use super::progress::ProgressQueue;
use super::request::{Requester, call_id, is_current, takes_tasks};
use super::setup::McpServer;
use super::tasks;
use crate::wire::text::quoted_for_error;

impl McpServer {
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let snapshot = self.shared.registry.snapshot();
        let Some(tool) = snapshot.resolve(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", quoted_for_error(&request.name)),
                None,
            ));
        };
        let current = is_current(&context.meta, &context.peer);
        let takes_tasks = takes_tasks(&context.meta, &context.peer, current);
        let task_support = tool.definition().about().task;
        if task_support == TaskSupport::Required && !takes_tasks {
            return Err(tasks::tasks_required());
        }
        let wrapped = !tool.definition().output_is_object() && !current;
        let args = Value::Object(request.arguments.unwrap_or_default());
        let id = call_id(&context.id);
        let requester = Requester::of(&context);
        // On 2026-07-28 a body that asks for input ends the round; its next state is bound to
        // the caller and these arguments, and a retry's answers are opened against them before
        // it runs.
        let (kept_args, answers) = if current {
            let answers = self.answers_of(
                requester.owner.as_ref(),
                &request.name,
                &args,
                request.request_state.as_deref(),
                request.input_responses,
            )?;
            (Some(args.clone()), answers)
        } else {
            (None, BTreeMap::new())
        };
        let RequestContext { ct, meta, peer, .. } = context;
        let progress_token = meta.get_progress_token();
        let client = self.client_of(peer, meta, current, answers, requester.owner.clone());
        let options =
            self.dispatch_options(&client, requester, progress_token.is_some() || takes_tasks);
        let progress = progress_token.map(|token| (token, &client.progress));
        let round = Round {
            name: &request.name,
            args: kept_args.as_ref(),
            wrapped,
        };
        if takes_tasks {
            let call = ToolCall::new(id, request.name.clone(), args);
            let detachable = Detachable {
                snapshot,
                call,
                options,
                support: task_support,
            };
            return self
                .call_detachable(detachable, &client, &ct, progress.as_ref(), &round)
                .await;
        }
        let mut dispatch = std::pin::pin!(tool.dispatch(id, args, Surface::Direct, options));
        match drive(dispatch.as_mut(), &ct, progress.as_ref(), &client, None).await {
            Driven::Ended(outcome) => self.respond(&client, outcome, &round),
            Driven::Cancelled | Driven::Detached => Err(cancelled_by_client()),
        }
    }

    /// The client as the call sees it. The request's peer is moved, not cloned: a clone is
    /// some ten reference counts to raise and lower again on every call.
    fn client_of(
        &self,
        peer: rmcp::service::Peer<RoleServer>,
        meta: rmcp::model::RequestMetaObject,
        current: bool,
        answers: BTreeMap<String, Value>,
        owner: Option<Owner>,
    ) -> Arc<McpPeer> {
        Arc::new(McpPeer {
            peer,
            owner,
            session: self.session.clone(),
            progress: ProgressQueue::default(),
            meta,
            current,
            answers: Mutex::new(answers),
            answerer: OnceLock::new(),
            task: TaskSlot::default(),
        })
    }

    /// The answers a 2026-07-28 retry carries (none for a first round).
    pub(super) fn answers_of(
        &self,
        owner: Option<&Owner>,
        tool: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<BTreeMap<String, Value>>,
    ) -> Result<BTreeMap<String, Value>, ErrorData> {
        if state.is_none() && responses.is_none() {
            return Ok(BTreeMap::new());
        }
        input::open_answers(
            &self.shared.settings.states,
            owner,
            tool,
            args,
            state,
            responses,
        )
    }

    /// What the call's dispatch carries: the client (as an extension, and as the answerer of
    /// the body's requests for input); the caller, the scopes required here and the owner of
    /// what it keeps, which every call it makes inherits; and where its progress goes.
    /// Progress is forwarded by the request's task, between polls of the dispatch: no task is
    /// spawned per call. A call that may become a task keeps its reports without a token too:
    /// they become the task's status message.
    fn dispatch_options(
        &self,
        client: &Arc<McpPeer>,
        requester: Requester,
        keeps_progress: bool,
    ) -> DispatchOptions {
        let mut options = DispatchOptions::default()
            .shared_extension(client.clone())
            .shared_answerer(client.clone());
        if let Some(caller) = requester.caller {
            options = options.caller(caller);
            if let Some(rules) = self.scope_rules() {
                options = options.scope_rules(rules);
            }
        }
        if let Some(owner) = requester.owner {
            options = options.owner(owner);
        }
        if keeps_progress {
            options = options.shared_progress(client.clone());
        }
        options
    }
}
