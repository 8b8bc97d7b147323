//! What one run may use, and how each way a run can end is named.

use std::fmt;
use std::time::Duration;

/// What one program run may use. Every limit has a default; past it the run ends with the
/// limit's own [`Stop`] code, and the host is unaffected.
///
/// ```
/// use std::time::Duration;
/// use toolprism_codemode::Limits;
///
/// let limits = Limits::default()
///     .memory_bytes(16 << 20)
///     .wall_time(Duration::from_secs(5))
///     .tool_calls(100);
/// assert_eq!(limits.max_tool_calls(), 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Limits {
    memory_bytes: usize,
    stack_bytes: usize,
    cpu_time: Duration,
    wall_time: Duration,
    tool_calls: usize,
    concurrent_calls: usize,
    log_bytes: usize,
    result_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 64 << 20,
            stack_bytes: 512 << 10,
            cpu_time: Duration::from_secs(5),
            wall_time: Duration::from_secs(60),
            tool_calls: 1_000,
            concurrent_calls: 8,
            log_bytes: 64 << 10,
            result_bytes: 4 << 20,
        }
    }
}

impl Limits {
    /// The JavaScript heap (default 64 MiB): past it, [`Stop::Memory`].
    pub fn memory_bytes(mut self, bytes: usize) -> Self {
        self.memory_bytes = bytes.max(1 << 20);
        self
    }

    /// The JavaScript stack (default 512 KiB): deeper recursion is [`Stop::Stack`].
    pub fn stack_bytes(mut self, bytes: usize) -> Self {
        self.stack_bytes = bytes.clamp(64 << 10, 64 << 20);
        self
    }

    /// CPU time spent running the program itself (default 5 s; tool calls not included):
    /// past it, [`Stop::CpuTime`].
    pub fn cpu_time(mut self, limit: Duration) -> Self {
        self.cpu_time = limit;
        self
    }

    /// Time from start to finish, tool calls included (default 60 s): past it,
    /// [`Stop::WallTime`], and the calls still running are dropped.
    pub fn wall_time(mut self, limit: Duration) -> Self {
        self.wall_time = limit;
        self
    }

    /// Tool calls in one run (default 1,000): the next one ends the run with
    /// [`Stop::ToolCalls`].
    pub fn tool_calls(mut self, calls: usize) -> Self {
        self.tool_calls = calls;
        self
    }

    /// Tool calls running at once (default 8). More calls wait their turn, in the order the
    /// program made them: `Promise.all` over a long list works, at this width.
    pub fn concurrent_calls(mut self, calls: usize) -> Self {
        self.concurrent_calls = calls.max(1);
        self
    }

    /// Bytes of `console` output (default 64 KiB): past it, [`Stop::Logs`]; the logs up to
    /// the limit are kept.
    pub fn log_bytes(mut self, bytes: usize) -> Self {
        self.log_bytes = bytes;
        self
    }

    /// Bytes of the result as JSON (default 4 MiB): past it, [`Stop::ResultSize`]. The same
    /// bound applies to the arguments of each tool call.
    pub fn result_bytes(mut self, bytes: usize) -> Self {
        self.result_bytes = bytes;
        self
    }

    /// The heap limit.
    pub fn max_memory_bytes(&self) -> usize {
        self.memory_bytes
    }

    /// The stack limit.
    pub fn max_stack_bytes(&self) -> usize {
        self.stack_bytes
    }

    /// The CPU-time limit.
    pub fn max_cpu_time(&self) -> Duration {
        self.cpu_time
    }

    /// The wall-time limit.
    pub fn max_wall_time(&self) -> Duration {
        self.wall_time
    }

    /// The tool-call limit.
    pub fn max_tool_calls(&self) -> usize {
        self.tool_calls
    }

    /// How many calls run at once.
    pub fn max_concurrent_calls(&self) -> usize {
        self.concurrent_calls
    }

    /// The log limit.
    pub fn max_log_bytes(&self) -> usize {
        self.log_bytes
    }

    /// The result-size limit.
    pub fn max_result_bytes(&self) -> usize {
        self.result_bytes
    }
}

/// Why a run ended without a result. Each has its own failure code (`run_code` fails with
/// it), so a host or a model can tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stop {
    /// The program does not parse: `SYNTAX_ERROR`.
    Syntax,
    /// The program threw, and nothing caught it: `UNCAUGHT_EXCEPTION`.
    Exception,
    /// The program settled without a JSON result (`NaN`, a function, a cycle…):
    /// `RESULT_NOT_JSON`.
    NotJson,
    /// The program's promise can never settle (it waits on nothing that is running):
    /// `NEVER_SETTLED`.
    NeverSettled,
    /// The heap limit: `MEMORY_LIMIT`.
    Memory,
    /// The stack limit: `STACK_LIMIT`.
    Stack,
    /// The CPU-time limit: `CPU_TIME_LIMIT`.
    CpuTime,
    /// The wall-time limit: `WALL_TIME_LIMIT`.
    WallTime,
    /// The tool-call limit: `TOOL_CALL_LIMIT`.
    ToolCalls,
    /// The log limit: `LOG_LIMIT`.
    Logs,
    /// The result-size limit: `RESULT_LIMIT`.
    ResultSize,
    /// The engine could not start or failed: `ENGINE_FAILED`.
    Engine,
    /// A call the program made waits for a decision: `DECISION_PENDING`. The program runs
    /// again once it is decided, its earlier calls answered from the session log
    /// ([`Decisions`](toolprism::session::Decisions)).
    DecisionPending,
}

impl Stop {
    /// The failure code `run_code` reports.
    pub fn code(self) -> &'static str {
        match self {
            Self::Syntax => "SYNTAX_ERROR",
            Self::Exception => "UNCAUGHT_EXCEPTION",
            Self::NotJson => "RESULT_NOT_JSON",
            Self::NeverSettled => "NEVER_SETTLED",
            Self::Memory => "MEMORY_LIMIT",
            Self::Stack => "STACK_LIMIT",
            Self::CpuTime => "CPU_TIME_LIMIT",
            Self::WallTime => "WALL_TIME_LIMIT",
            Self::ToolCalls => "TOOL_CALL_LIMIT",
            Self::Logs => "LOG_LIMIT",
            Self::ResultSize => "RESULT_LIMIT",
            Self::Engine => "ENGINE_FAILED",
            Self::DecisionPending => toolprism::error::codes::DECISION_PENDING,
        }
    }

    /// The stop a failure code names.
    pub fn from_code(code: &str) -> Option<Self> {
        ALL_STOPS.into_iter().find(|stop| stop.code() == code)
    }

    /// What the model is told happened, before the details.
    pub(crate) fn headline(self, limits: &Limits) -> String {
        match self {
            Self::Syntax => "The program has a syntax error".to_owned(),
            Self::Exception => "The program threw an exception that nothing caught".to_owned(),
            Self::NotJson => "The program's result is not JSON".to_owned(),
            Self::NeverSettled => {
                "The program waits on a promise that nothing will ever settle".to_owned()
            }
            Self::Memory => format!(
                "The program ran out of memory (limit {} bytes)",
                limits.memory_bytes
            ),
            Self::Stack => format!(
                "The program recursed too deeply (stack limit {} bytes)",
                limits.stack_bytes
            ),
            Self::CpuTime => format!(
                "The program ran longer than its CPU time limit ({:?})",
                limits.cpu_time
            ),
            Self::WallTime => format!(
                "The program ran longer than its time limit ({:?})",
                limits.wall_time
            ),
            Self::ToolCalls => format!(
                "The program made more than {} tool calls",
                limits.tool_calls
            ),
            Self::Logs => format!("The program logged more than {} bytes", limits.log_bytes),
            Self::ResultSize => format!(
                "The program's result is larger than {} bytes as JSON",
                limits.result_bytes
            ),
            Self::Engine => "The JavaScript engine failed".to_owned(),
            Self::DecisionPending => {
                "The program reached a call that waits for a decision; it runs again once decided"
                    .to_owned()
            }
        }
    }
}

const ALL_STOPS: [Stop; 13] = [
    Stop::Syntax,
    Stop::Exception,
    Stop::NotJson,
    Stop::NeverSettled,
    Stop::Memory,
    Stop::Stack,
    Stop::CpuTime,
    Stop::WallTime,
    Stop::ToolCalls,
    Stop::Logs,
    Stop::ResultSize,
    Stop::Engine,
    Stop::DecisionPending,
];

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_has_its_own_code() {
        let mut codes: Vec<_> = ALL_STOPS.iter().map(|stop| stop.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ALL_STOPS.len());
        for stop in ALL_STOPS {
            assert_eq!(Stop::from_code(stop.code()), Some(stop));
        }
    }
}
