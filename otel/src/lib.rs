//! OpenTelemetry for a toolprism host in one call: the spans toolprism writes through
//! `tracing` (`execute_tool`, MCP requests, Code Mode runs) and its metrics, exported over
//! OTLP/HTTP, configured by the standard `OTEL_*` environment.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! // `None` unless OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) is set.
//! let telemetry = toolprism_otel::Telemetry::from_env("my-agent").expect("OTLP exporters");
//! tracing_subscriber::registry()
//!     .with(telemetry.as_ref().map(|telemetry| telemetry.layer()))
//!     .init();
//! // … dispatch, serve …
//! if let Some(telemetry) = telemetry {
//!     telemetry.shutdown(); // exports what is still buffered
//! }
//! ```
//!
//! What it sets up:
//!
//! - a tracer provider with a batch exporter (its own thread: no async runtime needed), the
//!   sampler of `OTEL_TRACES_SAMPLER`/`OTEL_TRACES_SAMPLER_ARG`, the resource of
//!   `OTEL_SERVICE_NAME`/`OTEL_RESOURCE_ATTRIBUTES` (else the name given);
//! - a meter provider exporting every `OTEL_METRIC_EXPORT_INTERVAL`, installed for toolprism
//!   with [`toolprism::telemetry::install_meter`];
//! - the W3C trace-context propagator, globally, which `toolprism-mcp` (feature `otel`) uses
//!   to carry a trace in requests' `_meta`;
//! - with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, arguments and results
//!   recorded on spans, each cut to [`toolprism::telemetry::DEFAULT_CONTENT_BYTES`].
//!
//! The [`layer`](Telemetry::layer) takes spans at `INFO` and above. When the sampler samples
//! no root (`always_off`, `parentbased_always_off`, or a ratio of 0), a span is built only
//! inside a sampled trace (one continued from a client's `traceparent`, or a sampled parent):
//! a dispatch outside any then pays one check (1.03× its instructions with no subscriber,
//! `scripts/otel-instructions.sh`).

use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing::subscriber::Interest;
use tracing::{Level, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;

/// The environment variable the GenAI conventions name for recording content.
pub const CAPTURE_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// How long one export may take (and so the export at shutdown, per signal): a process asked
/// to stop is given 30 s by most orchestrators, requests in flight included.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the exporters could not be built.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct Error(String);

/// The providers behind toolprism's spans and metrics, until [`shutdown`](Self::shutdown).
#[derive(Debug)]
pub struct Telemetry {
    tracer: Tracer,
    tracer_provider: SdkTracerProvider,
    meter_provider: Option<SdkMeterProvider>,
    roots_sampled: bool,
}

impl Telemetry {
    /// Exporters to the OTLP/HTTP endpoint the environment names: `None` when neither
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` nor a per-signal endpoint is set, and when
    /// `OTEL_SDK_DISABLED=true`. `service_name` names the service unless `OTEL_SERVICE_NAME`
    /// does.
    pub fn from_env(service_name: &str) -> Result<Option<Self>, Error> {
        let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
        let disabled = std::env::var("OTEL_SDK_DISABLED")
            .is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"));
        let endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT")
            || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
        if disabled || !endpoint {
            return Ok(None);
        }
        if std::env::var(CAPTURE_CONTENT_ENV).is_ok_and(|value| value.eq_ignore_ascii_case("true"))
        {
            toolprism::telemetry::record_content(Some(toolprism::telemetry::DEFAULT_CONTENT_BYTES));
        }
        Self::build(None, service_name).map(Some)
    }

    /// [`from_env`](Self::from_env), with its [`layer`](Self::layer) installed as the global
    /// subscriber: for a binary that traces nothing else. Keep what it returns until the end
    /// (dropped, it exports what is buffered).
    pub fn init_from_env(service_name: &str) -> Result<Option<Self>, Error> {
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        // Checked first: nothing global (the meter, content recording) is set for a
        // subscriber that cannot be installed.
        if tracing::dispatcher::has_been_set() {
            return Err(Error(
                "a global tracing subscriber is set already".to_owned(),
            ));
        }
        let Some(telemetry) = Self::from_env(service_name)? else {
            return Ok(None);
        };
        tracing_subscriber::registry()
            .with(telemetry.layer())
            .try_init()
            .map_err(|error| Error(error.to_string()))?;
        Ok(Some(telemetry))
    }

    /// Exporters to the OTLP/HTTP endpoint at `base` (`http://host:4318`: `/v1/traces` and
    /// `/v1/metrics` are added), whatever the environment says of endpoints.
    pub fn to_endpoint(base: &str, service_name: &str) -> Result<Self, Error> {
        Self::build(Some(base.trim_end_matches('/')), service_name)
    }

    fn build(base: Option<&str>, service_name: &str) -> Result<Self, Error> {
        let failed = |error: opentelemetry_otlp::ExporterBuildError| Error(error.to_string());
        let mut spans = SpanExporter::builder()
            .with_http()
            .with_timeout(EXPORT_TIMEOUT);
        let mut metrics = MetricExporter::builder()
            .with_http()
            .with_timeout(EXPORT_TIMEOUT);
        if let Some(base) = base {
            spans = spans.with_endpoint(format!("{base}/v1/traces"));
            metrics = metrics.with_endpoint(format!("{base}/v1/metrics"));
        }
        let resource = resource(service_name);
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans.build().map_err(failed)?)
            .with_resource(resource.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics.build().map_err(failed)?)
            .with_resource(resource)
            .build();
        Ok(Self::from_providers(tracer_provider, meter_provider).sample_roots(roots_sampled()))
    }

    /// Providers the host built (another exporter, sampler or processor): toolprism's spans
    /// go to `tracer_provider` through [`layer`](Self::layer), its metrics to
    /// `meter_provider` (installed with [`toolprism::telemetry::install_meter`], for the whole
    /// process), and the W3C propagator is installed globally. Roots are taken as sampled;
    /// say otherwise with [`sample_roots`](Self::sample_roots).
    pub fn from_providers(
        tracer_provider: SdkTracerProvider,
        meter_provider: SdkMeterProvider,
    ) -> Self {
        toolprism::telemetry::install_meter(meter_provider.meter("toolprism"));
        let mut telemetry = Self::traces_only(tracer_provider);
        telemetry.meter_provider = Some(meter_provider);
        telemetry
    }

    /// As [`from_providers`](Self::from_providers), without metrics.
    pub fn traces_only(tracer_provider: SdkTracerProvider) -> Self {
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Self {
            tracer: tracer_provider.tracer("toolprism"),
            tracer_provider,
            meter_provider: None,
            roots_sampled: true,
        }
    }

    /// Whether the tracer's sampler may sample a trace's root. `false` (a sampler that
    /// never does) lets the [`layer`](Self::layer) build spans only inside sampled traces, so
    /// that a call outside any pays one check and builds nothing.
    #[must_use]
    pub fn sample_roots(mut self, sampled: bool) -> Self {
        self.roots_sampled = sampled;
        self
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans, for a
    /// `tracing_subscriber::registry()`: spans and events at `INFO` and above, not rmcp's
    /// own (a connection's span would hold every request of the connection in one trace).
    ///
    /// When no root is sampled ([`sample_roots`](Self::sample_roots)), a span outside a
    /// sampled trace is disabled for the whole subscriber, so that what is never exported is
    /// never built: another layer of the same subscriber (a log formatter) does not see it
    /// either.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        let spans = tracing_opentelemetry::layer()
            .with_tracer(self.tracer.clone())
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(Exported);
        SampledOnly {
            roots_sampled: self.roots_sampled,
        }
        .and_then(spans)
    }

    /// Exports what is buffered (spans and metrics) and stops the exporters; as dropping it
    /// does.
    pub fn shutdown(self) {}
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // Errors here are the exporter's to report (through OpenTelemetry's own logs): at the
        // end of a process there is nobody left to tell.
        // A shutdown exports what is buffered first, each within its exporter's timeout.
        let _ = self.tracer_provider.shutdown();
        if let Some(meter_provider) = &self.meter_provider {
            let _ = meter_provider.shutdown();
        }
    }
}

/// The resource: what the environment says, else `service_name`.
fn resource(service_name: &str) -> Resource {
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some_and(|name| !name.is_empty());
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name(service_name.to_owned()).build()
    }
}

/// Whether the sampler `OTEL_TRACES_SAMPLER` names may sample a trace's root.
fn roots_sampled() -> bool {
    let sampler = std::env::var("OTEL_TRACES_SAMPLER").unwrap_or_default();
    let ratio = || {
        std::env::var("OTEL_TRACES_SAMPLER_ARG")
            .ok()
            .and_then(|ratio| ratio.parse::<f64>().ok())
    };
    match sampler.as_str() {
        "always_off" | "parentbased_always_off" => false,
        // As the SDK reads it: a missing or invalid ratio is 1.
        "traceidratio" | "parentbased_traceidratio" => ratio().is_none_or(|ratio| ratio > 0.0),
        _ => true,
    }
}

/// Whether the layer exports what `meta` describes: `INFO` and above, not rmcp's; of
/// toolprism's own events only those written for traces (target `toolprism`: decisions,
/// spills, invalid outputs), not its logs, which may quote what a call carried (a panic's
/// message, what was wrong with a value).
fn exported(meta: &Metadata<'_>) -> bool {
    let target = meta.target();
    let toolprism_log = meta.is_event() && target.starts_with("toolprism") && target != "toolprism";
    *meta.level() <= Level::INFO && !target.starts_with("rmcp") && !toolprism_log
}

/// [`exported`] as the layer's filter, decided once per callsite: the level and target of
/// what a callsite writes never change. Its level hint lets a subscriber that has no other
/// layer skip `debug!` and `trace!` at the macro.
#[derive(Clone, Copy, Debug)]
struct Exported;

impl<S> Filter<S> for Exported {
    fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        exported(meta)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if exported(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::INFO)
    }
}

/// Disables, for the whole subscriber, the spans the layer would export when they would not
/// be sampled: when no root is, those outside a sampled trace. (A per-layer filter cannot do
/// it: it hides a span from its layer, and the registry builds it all the same.)
#[derive(Clone, Copy, Debug)]
struct SampledOnly {
    roots_sampled: bool,
}

impl SampledOnly {
    fn vetoes(self, meta: &Metadata<'_>) -> bool {
        !self.roots_sampled && meta.is_span() && exported(meta)
    }
}

impl<S: Subscriber> Layer<S> for SampledOnly {
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::INFO)
    }

    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.vetoes(meta) {
            Interest::sometimes()
        } else {
            Interest::always()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>, _: Context<'_, S>) -> bool {
        // Inside a span the layer exports, its context is current (entering a span activates
        // it); a trace a server continues from a client is made current as its span is made.
        !self.vetoes(meta)
            || opentelemetry::Context::map_current(|current| {
                current.span().span_context().is_sampled()
            })
    }
}
