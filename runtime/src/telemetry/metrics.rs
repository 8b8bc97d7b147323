//! Dispatch metrics on an OpenTelemetry meter the host installs once.
//!
//! | Instrument | Kind, unit | Attributes |
//! |---|---|---|
//! | `gen_ai.client.operation.duration` | histogram, `s` | `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `error.type` on failure (the pipeline's code, or `tool_error` for a body's own) |
//! | `toolprism.tool.refusals` | counter, `{call}` | `gen_ai.tool.name`, `error.type` (denied, refused, blocked, not callable, scope missing, tools disabled) |
//! | `toolprism.tool.validation_failures` | counter, `{call}` | `gen_ai.tool.name`, `error.type` (`INVALID_TOOL_INPUT` or `INVALID_TOOL_OUTPUT`) |
//! | `toolprism.tool.spills` | counter, `{call}` | `gen_ai.tool.name` |
//!
//! A tool name no tool of the registry has (a model may invent any) is recorded as `_OTHER`,
//! so that what a model writes cannot grow the number of series.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};

use crate::ToolOutcome;
use crate::error::FailureKind;

/// The buckets the GenAI conventions advise for `gen_ai.client.operation.duration`, in
/// seconds.
pub const GEN_AI_DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The buckets the MCP conventions advise for `mcp.{server,client}.operation.duration`, in
/// seconds.
pub const MCP_DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The tool name recorded for a name no tool has.
pub const OTHER_TOOL: &str = "_OTHER";

static INSTALLED: OnceLock<(Meter, Instruments)> = OnceLock::new();

/// Records dispatch metrics on `meter` from now on, for the whole process; the toolprism
/// crates that record metrics of their own (`toolprism-mcp`) take it from [`meter`]. `false`
/// when a meter was installed already: the first stays.
pub fn install_meter(meter: Meter) -> bool {
    let mut fresh = false;
    INSTALLED.get_or_init(|| {
        fresh = true;
        let instruments = Instruments::new(&meter);
        (meter, instruments)
    });
    fresh
}

/// The meter [`install_meter`] installed, if any.
pub fn meter() -> Option<&'static Meter> {
    INSTALLED.get().map(|(meter, _)| meter)
}

/// The instruments, once a meter is installed: until then a dispatch reads no clock for them.
pub(crate) fn instruments() -> Option<&'static Instruments> {
    INSTALLED.get().map(|(_, instruments)| instruments)
}

pub(crate) struct Instruments {
    duration: Histogram<f64>,
    refusals: Counter<u64>,
    validation_failures: Counter<u64>,
    spills: Counter<u64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Self {
        let calls = |name: &'static str, description: &'static str| {
            meter
                .u64_counter(name)
                .with_unit("{call}")
                .with_description(description)
                .build()
        };
        Self {
            duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("How long a tool call took, from dispatch to outcome.")
                .with_boundaries(GEN_AI_DURATION_BUCKETS.to_vec())
                .build(),
            refusals: calls(
                "toolprism.tool.refusals",
                "Calls refused before or after their body: by a policy, an approver, a scope or the caller.",
            ),
            validation_failures: calls(
                "toolprism.tool.validation_failures",
                "Calls whose arguments or value broke their schema.",
            ),
            spills: calls(
                "toolprism.tool.spills",
                "Outputs too large for the model, retained and shown as a preview.",
            ),
        }
    }

    /// A dispatch of `tool` (`None`: no tool has its name) that started at `started` ended.
    pub(crate) fn ended(&self, tool: Option<Arc<str>>, outcome: &ToolOutcome, started: Instant) {
        let tool = match tool {
            Some(tool) => KeyValue::new("gen_ai.tool.name", tool),
            None => KeyValue::new("gen_ai.tool.name", OTHER_TOOL),
        };
        let seconds = started.elapsed().as_secs_f64();
        let operation = KeyValue::new("gen_ai.operation.name", "execute_tool");
        let ToolOutcome::Failure(failure) = outcome else {
            self.duration.record(seconds, &[operation, tool]);
            return;
        };
        let kind = failure.error.kind();
        let error = KeyValue::new("error.type", error_type(kind));
        self.duration
            .record(seconds, &[operation, tool.clone(), error.clone()]);
        let counter = match kind {
            Some(kind) if is_refusal(kind) => &self.refusals,
            Some(FailureKind::InvalidInput | FailureKind::InvalidOutput) => {
                &self.validation_failures
            }
            _ => return,
        };
        counter.add(1, &[tool, error]);
    }

    /// An output of `tool` was retained and replaced by a preview.
    pub(crate) fn spilled(&self, tool: Arc<str>) {
        self.spills
            .add(1, &[KeyValue::new("gen_ai.tool.name", tool)]);
    }
}

/// A failure's `error.type` in a metric: the pipeline's code, or `tool_error` (as the MCP
/// conventions name a tool's own failure) for a code a body chose, which may be anything.
fn error_type(kind: Option<FailureKind>) -> &'static str {
    kind.map_or("tool_error", FailureKind::code)
}

/// Whether a failure of `kind` is a refusal: the call was judged, not failed.
fn is_refusal(kind: FailureKind) -> bool {
    matches!(
        kind,
        FailureKind::DeniedByPolicy
            | FailureKind::RefusedByApprover
            | FailureKind::BlockedByPolicy
            | FailureKind::NotCallable
            | FailureKind::ScopeMissing
            | FailureKind::ToolsDisabled
    )
}
