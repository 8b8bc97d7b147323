//! A turn's calls, run in the order their effects need ([`effects`](crate::effects)): a call
//! waits for every earlier call it conflicts with (one of the two writes what the other
//! touches), and for nothing else. Reads overlap; a write that names no resource is a barrier;
//! writes to different resources overlap. Whenever the declared effects are true, the outcome
//! is that of running the calls one by one in the model's order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

use crate::effects::Effect;

/// Runs `run(i)` for every call, at most `cap` at once, each once every earlier call it
/// conflicts with has ended; among calls ready at once, the earliest starts first. `effects[i]`
/// is `None` for a call that touches nothing (one that will not be dispatched). The results
/// come back in the calls' order.
pub(super) async fn in_effect_order<F, Fut, T>(
    effects: &[Option<Effect>],
    cap: usize,
    run: F,
) -> Vec<T>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T>,
{
    let (mut blockers, dependents) = dependencies(effects);
    let mut ready: BinaryHeap<Reverse<usize>> = (0..effects.len())
        .filter(|at| blockers[*at] == 0)
        .map(Reverse)
        .collect();
    let mut running = FuturesUnordered::new();
    let mut results: Vec<Option<T>> = effects.iter().map(|_| None).collect();
    loop {
        while running.len() < cap.max(1) {
            let Some(Reverse(at)) = ready.pop() else {
                break;
            };
            let call = run(at);
            running.push(async move { (at, call.await) });
        }
        let Some((at, result)) = running.next().await else {
            break;
        };
        results[at] = Some(result);
        for &later in &dependents[at] {
            blockers[later] -= 1;
            if blockers[later] == 0 {
                ready.push(Reverse(later));
            }
        }
    }
    // Every call ran: dependencies only point back, so some call is always ready until all
    // have ended.
    results.into_iter().flatten().collect()
}

/// For each call, how many earlier calls it waits for; for each, the later calls waiting on
/// it.
fn dependencies(effects: &[Option<Effect>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut blockers = vec![0; effects.len()];
    let mut dependents = vec![Vec::new(); effects.len()];
    for (later, effect) in effects.iter().enumerate() {
        let Some(effect) = effect else { continue };
        for (earlier, before) in effects[..later].iter().enumerate() {
            if before
                .as_ref()
                .is_some_and(|before| before.conflicts(effect))
            {
                blockers[later] += 1;
                dependents[earlier].push(later);
            }
        }
    }
    (blockers, dependents)
}
