//! The host side of a run: starts the engine, runs the tool calls it asks for as nested
//! dispatches (at most `concurrent_calls` at once, the rest queued in order), finishes those
//! the engine started and could not complete at once, and hands each settled call back.
//! Dropping the run drops the calls in flight and stops the engine.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::task::Poll;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use toolprism::context::NestedDispatcher;
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
    // On Tokio, the engine dispatches a call alone in flight itself, on its own thread.
    program.inline = tokio::runtime::Handle::try_current()
        .ok()
        .map(|runtime| InlineDispatch {
            dispatcher: dispatcher.clone(),
            runtime,
            parent_id: parent_id.to_owned(),
            span: tracing::Span::current(),
        });
    let (to_host, mut from_engine) = tokio::sync::mpsc::unbounded_channel();
    let (to_engine, from_host) = mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let _stop_engine = CancelOnDrop(cancel.clone());
    if let Err(error) = engine::spawn(program, to_host, from_host, cancel) {
        return RunEnd {
            logs: Vec::new(),
            outcome: Err(Failure {
                stop: Stop::Engine,
                detail: format!("its thread could not start: {error}"),
            }),
        };
    }
    let mut running: FuturesUnordered<BoxFuture<'static, (u64, ToolOutcome)>> =
        FuturesUnordered::new();
    let mut queued: VecDeque<(u64, ToolCall)> = VecDeque::new();
    let start = |seq: u64, call: ToolCall| -> BoxFuture<'static, (u64, ToolOutcome)> {
        let outcome = dispatcher.dispatch(call);
        Box::pin(async move { (seq, outcome.await) })
    };
    poll_fn(|cx| {
        loop {
            let mut progressed = false;
            while let Poll::Ready(Some((seq, outcome))) = running.poll_next_unpin(cx) {
                progressed = true;
                // The engine may have ended already; its answer is then of no use.
                let _ = to_engine.send(Settled {
                    seq,
                    reply: reply(outcome),
                });
                if let Some((seq, call)) = queued.pop_front() {
                    running.push(start(seq, call));
                }
            }
            match from_engine.poll_recv(cx) {
                Poll::Ready(Some(ToHost::Call { seq, name, args })) => {
                    progressed = true;
                    let call = ToolCall::new(engine::call_id(parent_id, seq), name, args);
                    if running.len() < width {
                        running.push(start(seq, call));
                    } else {
                        queued.push_back((seq, call));
                    }
                }
                Poll::Ready(Some(ToHost::Finish { seq, dispatch })) => {
                    progressed = true;
                    // The engine starts a call only with none in flight: there is room.
                    running.push(Box::pin(async move { (seq, dispatch.await) }));
                }
                Poll::Ready(Some(ToHost::Done(end))) => return Poll::Ready(end),
                Poll::Ready(None) => {
                    return Poll::Ready(RunEnd {
                        logs: Vec::new(),
                        outcome: Err(Failure {
                            stop: Stop::Engine,
                            detail: "its thread ended without a word".to_owned(),
                        }),
                    });
                }
                Poll::Pending => {}
            }
            if !progressed {
                return Poll::Pending;
            }
        }
    })
    .await
}

/// Stops the engine when the run is dropped (a cancelled `run_code`) or ends.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
