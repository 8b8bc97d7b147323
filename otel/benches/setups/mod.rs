//! The subscribers the overhead benchmarks dispatch under, shared by the timed benchmark and
//! the instruction count.

use std::hint::black_box;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanData, SpanExporter};
use serde_json::json;
use toolprism::Snapshot;
use toolprism::prelude::*;
use toolprism_otel::Telemetry;
use tracing_subscriber::layer::SubscriberExt as _;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The no-op call's registry.
pub(crate) fn snapshot() -> Snapshot {
    Registry::builder().tool(Add).build().unwrap().snapshot()
}

/// One call of `add(2, 3)`.
pub(crate) fn call(snapshot: &Snapshot) {
    let call = ToolCall::new("call_1", "add", black_box(json!({"a": 2, "b": 3})));
    black_box(block_on(snapshot.dispatch(call, Surface::Direct)));
}

/// Polls a future that never waits to completion, with no executor overhead to measure.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// An exporter that drops what it is given: sending is another thread's cost.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        black_box(batch);
        std::future::ready(Ok(()))
    }
}

/// The ways a dispatch is observed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Setup {
    /// No subscriber: the baseline.
    NoSubscriber,
    /// The layer, a sampler that samples no root.
    NothingSampled,
    /// Every call sampled, handed to a batch exporter.
    SampledExporting,
    /// Nothing sampled, metrics recorded (installed for the rest of the process).
    NothingSampledWithMetrics,
}

impl Setup {
    pub(crate) const ALL: [Self; 4] = [
        Self::NoSubscriber,
        Self::NothingSampled,
        Self::SampledExporting,
        Self::NothingSampledWithMetrics,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::NoSubscriber => "no_subscriber",
            Self::NothingSampled => "nothing_sampled",
            Self::SampledExporting => "sampled_exporting",
            Self::NothingSampledWithMetrics => "nothing_sampled_with_metrics",
        }
    }

    /// Runs `work` under this setup: its subscriber the thread's default for the while, or
    /// (`global`, once per process) the process's, as a host installs it.
    pub(crate) fn run(self, global: bool, work: impl FnOnce()) {
        let sampler = match self {
            Self::NoSubscriber => return work(),
            Self::SampledExporting => Sampler::AlwaysOn,
            Self::NothingSampled | Self::NothingSampledWithMetrics => {
                Sampler::ParentBased(Box::new(Sampler::AlwaysOff))
            }
        };
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(Discard)
            .with_sampler(sampler)
            .build();
        let telemetry = match self {
            Self::NothingSampledWithMetrics => {
                let meters = SdkMeterProvider::builder()
                    .with_periodic_exporter(InMemoryMetricExporter::default())
                    .build();
                Telemetry::from_providers(tracer_provider, meters)
            }
            _ => Telemetry::traces_only(tracer_provider),
        };
        let telemetry = telemetry.sample_roots(matches!(self, Self::SampledExporting));
        let subscriber = tracing_subscriber::registry().with(telemetry.layer());
        if global {
            tracing::subscriber::set_global_default(subscriber).expect("the first subscriber");
            work();
        } else {
            tracing::subscriber::with_default(subscriber, work);
        }
    }
}
