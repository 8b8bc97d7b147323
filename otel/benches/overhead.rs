//! What tracing costs a dispatch, in one run: the no-op call `add(a, b)` with no subscriber
//! (the baseline), with the OpenTelemetry layer and nothing sampled, with every call sampled
//! and handed to a batch exporter (which discards: the network is another thread's cost),
//! and with nothing sampled but metrics recorded.
//!
//! `cargo bench -p toolprism-otel --bench overhead`; the ratios to quote are each case over
//! `no_subscriber`. The metrics case runs last: a meter, once installed, stays. The same
//! cases as instruction counts: `scripts/otel-instructions.sh`.

mod setups;

use criterion::{Criterion, criterion_group, criterion_main};

use setups::{Setup, call, snapshot};

fn overhead(c: &mut Criterion) {
    let snapshot = snapshot();
    let mut group = c.benchmark_group("telemetry_add");
    for setup in Setup::ALL {
        setup.run(false, || {
            group.bench_function(setup.name(), |b| b.iter(|| call(&snapshot)));
        });
    }
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
