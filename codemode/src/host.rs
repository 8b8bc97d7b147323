//! The host side of a run: starts the engine, runs the tool calls it asks for as nested
//! dispatches (at most `concurrent_calls` at once, each once every call the program made
//! before it that it conflicts with has ended: reads overlap, a write waits for what it may
//! touch; the rest queued in order), finishes those the engine started and could not complete
//! at once, and hands each settled call back. Dropping the run drops the calls in flight and
//! stops the engine.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::task::Poll;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use toolprism::context::NestedDispatcher;
use toolprism::effects::Effect;
use toolprism::{BoxFuture, ToolCall, ToolOutcome};

use crate::engine::{self, Failure, InlineDispatch, Program, RunEnd, Settled, ToHost, reply};
use crate::limits::Stop;

/// Runs a program to its end, dispatching its tool calls through `dispatcher`. Nested calls
/// are named `<parent_id>.<n>`, `n` counting from 1 in the order the program made them.
pub(crate) async fn run(
    mut program: Program,
    dispatcher: NestedDispatcher,
    parent_id: &str,
) -> RunEnd {
    let width = program.limits.max_concurrent_calls();
    program.inline = inline_dispatch(&dispatcher, parent_id);
    let (to_host, mut from_engine) = tokio::sync::mpsc::unbounded_channel();
    let (to_engine, from_host) = mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let _stop_engine = CancelOnDrop(cancel.clone());
    if let Err(error) = engine::spawn(program, to_host, from_host, cancel) {
        return engine_failed(format!("its thread could not start: {error}"));
    }
    let mut running: FuturesUnordered<BoxFuture<'static, (u64, ToolOutcome)>> =
        FuturesUnordered::new();
    let mut calls = InOrder::default();
    let start = |seq: u64, call: ToolCall| -> BoxFuture<'static, (u64, ToolOutcome)> {
        let outcome = dispatcher.dispatch(call);
        Box::pin(async move { (seq, outcome.await) })
    };
    poll_fn(|cx| {
        loop {
            let mut progressed = false;
            while let Poll::Ready(Some((seq, outcome))) = running.poll_next_unpin(cx) {
                progressed = true;
                calls.ended(seq);
                // The engine may have ended already; its answer is then of no use.
                let _ = to_engine.send(Settled {
                    seq,
                    reply: reply(outcome),
                });
            }
            match from_engine.poll_recv(cx) {
                Poll::Ready(Some(ToHost::Call { seq, name, args })) => {
                    progressed = true;
                    let effect = dispatcher.effect_of(&name, &args);
                    let call = ToolCall::new(engine::call_id(parent_id, seq), name, args);
                    calls.queue(seq, call, effect);
                }
                Poll::Ready(Some(ToHost::Finish {
                    seq,
                    dispatch,
                    effect,
                })) => {
                    progressed = true;
                    // The engine starts a call only with none in flight: there is room.
                    calls.started_alone(seq, effect);
                    running.push(Box::pin(async move { (seq, dispatch.await) }));
                }
                Poll::Ready(Some(ToHost::Done(end))) => return Poll::Ready(end),
                Poll::Ready(None) => {
                    return Poll::Ready(engine_failed(
                        "its thread ended without a word".to_owned(),
                    ));
                }
                Poll::Pending => {}
            }
            for (seq, call) in calls.ready(width) {
                progressed = true;
                running.push(start(seq, call));
            }
            if !progressed {
                return Poll::Pending;
            }
        }
    })
    .await
}

/// On Tokio, what the engine needs to dispatch a call alone in flight itself, on its own
/// thread.
fn inline_dispatch(dispatcher: &NestedDispatcher, parent_id: &str) -> Option<InlineDispatch> {
    tokio::runtime::Handle::try_current()
        .ok()
        .map(|runtime| InlineDispatch {
            dispatcher: dispatcher.clone(),
            runtime,
            parent_id: parent_id.to_owned(),
            span: Arc::new(std::sync::Mutex::new(Some(tracing::Span::current()))),
        })
}

/// The end of a run whose engine failed: no logs, and why.
fn engine_failed(detail: String) -> RunEnd {
    RunEnd {
        logs: Vec::new(),
        outcome: Err(Failure {
            stop: Stop::Engine,
            detail,
        }),
    }
}

/// The program's calls in the order it made them: those queued, and the effects of those
/// running, so that a call starts only once every earlier call it conflicts with has ended.
#[derive(Default)]
struct InOrder {
    queued: VecDeque<(u64, ToolCall, Option<Effect>)>,
    running: Vec<(u64, Option<Effect>)>,
}

impl InOrder {
    fn queue(&mut self, seq: u64, call: ToolCall, effect: Option<Effect>) {
        self.queued.push_back((seq, call, effect));
    }

    fn started_alone(&mut self, seq: u64, effect: Option<Effect>) {
        self.running.push((seq, effect));
    }

    fn ended(&mut self, seq: u64) {
        self.running.retain(|(running, _)| *running != seq);
    }

    /// The queued calls that may start now, in order, at most `width` running in all.
    fn ready(&mut self, width: usize) -> Vec<(u64, ToolCall)> {
        let conflict = |mine: &Option<Effect>, theirs: &Option<Effect>| match (mine, theirs) {
            (Some(mine), Some(theirs)) => mine.conflicts(theirs),
            _ => false,
        };
        let mut ready = Vec::new();
        let mut at = 0;
        while at < self.queued.len() && self.running.len() < width {
            let effect = &self.queued[at].2;
            let blocked = self
                .running
                .iter()
                .any(|(_, running)| conflict(effect, running))
                || self
                    .queued
                    .range(..at)
                    .any(|(_, _, earlier)| conflict(effect, earlier));
            if blocked {
                at += 1;
                continue;
            }
            if let Some((seq, call, effect)) = self.queued.remove(at) {
                self.running.push((seq, effect));
                ready.push((seq, call));
            }
        }
        ready
    }
}

/// Stops the engine when the run is dropped (a cancelled `run_code`) or ends.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
