//! The exit status of a command, one per class of outcome, so a script can tell them apart.

use toolprism::ToolOutcome;
use toolprism::error::FailureKind;

/// The call succeeded (or the command did what it was asked).
pub const OK: u8 = 0;
/// The tool ran and failed (its own error, `TOOL_FAILED` or a code of its own).
pub const TOOL_FAILED: u8 = 1;
/// The command line was wrong: an unknown option, arguments that are not JSON, a file that
/// cannot be read.
pub const USAGE: u8 = 2;
/// No tool has that name.
pub const UNKNOWN_TOOL: u8 = 3;
/// The arguments do not match the tool's input schema.
pub const INVALID_INPUT: u8 = 4;
/// A policy or an approver stopped the call.
pub const STOPPED_BY_POLICY: u8 = 5;
/// The tool is broken: its value broke its output schema, it panicked, or the pipeline
/// failed around it.
pub const TOOL_BROKEN: u8 = 6;
/// `calls`: the response or stream could not be read (not the provider's format, a protocol
/// broken, a limit passed).
pub const UNREADABLE: u8 = 7;
/// `lock --check`: a breaking change since the lock.
pub const BREAKING_CHANGE: u8 = 8;
/// Ctrl-C: the call was dropped.
pub const CANCELLED: u8 = 130;

/// The status of a call's outcome.
pub fn of(outcome: &ToolOutcome) -> u8 {
    let Some(error) = outcome.error() else {
        return OK;
    };
    match error.kind() {
        None | Some(FailureKind::ToolFailed) => TOOL_FAILED,
        Some(FailureKind::UnknownTool) => UNKNOWN_TOOL,
        Some(FailureKind::InvalidInput) => INVALID_INPUT,
        Some(
            FailureKind::DeniedByPolicy
            | FailureKind::RefusedByApprover
            | FailureKind::DecisionPending
            | FailureKind::BlockedByPolicy
            | FailureKind::ToolsDisabled,
        ) => STOPPED_BY_POLICY,
        Some(_) => TOOL_BROKEN,
    }
}
