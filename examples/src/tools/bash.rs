//! `bash`: runs a command in the foreground, in the workspace, with a timeout that kills the
//! command's whole process group (so `sleep 100 &` inside it dies too).
//!
//! The value holds the exit code, the output (each stream up to [`MAX_STREAM_BYTES`]; bytes
//! beyond are counted in `dropped_bytes`, never silently lost) and the time taken. Output that
//! is not UTF-8 is shown with U+FFFD in place of the invalid bytes.
//!
//! To adapt: this file uses `Workspace` (the directory commands run in: copy `workspace.rs` along,
//! or take a state of your own).
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `process`, `io-util`, `time`,
//! `rt`), `nix` (features `signal`; Unix only).

use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use toolprism::context::State;
use toolprism::prelude::*;
use toolprism::present::{Card, TerminalCard};

use super::workspace::Workspace;

/// The timeout when none is given.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout a call may ask for.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// The most bytes of each stream kept in the value.
pub const MAX_STREAM_BYTES: usize = 16 * 1024 * 1024;

/// Arguments of `bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line, run by `sh -c` in the workspace root.
    pub command: String,
    /// How long it may run, in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600_000))]
    pub timeout_ms: Option<u64>,
}

/// The value of `bash`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BashValue {
    /// The exit code; absent when the command was killed by a signal (or for timing out).
    pub exit_code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Whether the command ran past its timeout and was killed.
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// Output bytes beyond [`MAX_STREAM_BYTES`] per stream, read and not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_bytes: u64,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if signature"
)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Runs a shell command in the workspace root and returns its output and exit code. It is
/// killed, with every process it started, if it runs past `timeout_ms`.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Run command",
    destructive,
    open_world,
    scopes = ["shell:run"],
    examples = [r#"{"command": "cargo test"}"#, r#"{"command": "ls -la", "timeout_ms": 5000}"#]
)]
pub async fn bash(
    args: BashArgs,
    State(workspace): State<Workspace>,
) -> Result<BashValue, ToolError> {
    let timeout = Duration::from_millis(
        args.timeout_ms
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .clamp(1, MAX_TIMEOUT_MS),
    );
    let started = Instant::now();
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&args.command)
        .current_dir(workspace.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, so a timeout can kill everything it started.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn()?;
    // Killing the group on drop also covers cancellation: dropping the call's future.
    let group = ProcessGroup(child.id());
    let (stdout, stderr) = (Captured::default(), Captured::default());
    let readers = [
        tokio::spawn(read_capped(child.stdout.take(), stdout.clone())),
        tokio::spawn(read_capped(child.stderr.take(), stderr.clone())),
    ];

    let (status, timed_out) = if let Ok(status) = tokio::time::timeout(timeout, child.wait()).await
    {
        (Some(status?), false)
    } else {
        group.kill();
        (child.wait().await.ok(), true)
    };
    // The group is dead or done; a process that left it could still hold the pipes open.
    group.kill();
    for reader in readers {
        let abort = reader.abort_handle();
        if tokio::time::timeout(Duration::from_secs(2), reader)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    let ((stdout, out_dropped), (stderr, err_dropped)) = (stdout.take(), stderr.take());
    Ok(BashValue {
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|status| status.code())
        },
        stdout,
        stderr,
        timed_out,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        dropped_bytes: out_dropped + err_dropped,
    })
}

fn render(args: &BashArgs, value: &BashValue) -> String {
    let mut text = value.stdout.clone();
    if !value.stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&value.stderr);
    }
    let ending = if value.timed_out {
        format!(
            "Command exceeded timeout of {} ms. Retry with a larger timeout.",
            args.timeout_ms
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .clamp(1, MAX_TIMEOUT_MS)
        )
    } else if let Some(code) = value.exit_code {
        format!("Command exited with code {code}.")
    } else {
        "Command was killed by a signal.".to_owned()
    };
    if text.is_empty() {
        ending
    } else {
        format!("{}\n\n{ending}", text.trim_end_matches('\n'))
    }
}

fn card(args: &BashArgs, value: &BashValue) -> Card {
    let output = format!("{}{}", value.stdout, value.stderr);
    Card::Terminal(TerminalCard::new(
        &args.command,
        value.exit_code,
        value.timed_out,
        value.duration_ms,
        &output,
    ))
}

/// A command's process group, killed on demand and on drop.
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn kill(&self) {
        #[cfg(unix)]
        if let Some(id) = self.0.and_then(|id| i32::try_from(id).ok()) {
            // The group may be gone already; that is the point.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(id),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What was read of one stream: the bytes kept, and how many were not.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<(Vec<u8>, u64)>>);

impl Captured {
    /// The text read so far, even if the reader never finished.
    fn take(&self) -> (String, u64) {
        let mut captured = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (bytes, dropped) = std::mem::take(&mut *captured);
        (String::from_utf8_lossy(&bytes).into_owned(), dropped)
    }
}

/// Reads a stream to its end, keeping at most [`MAX_STREAM_BYTES`] and counting the rest.
async fn read_capped<R: AsyncRead + Unpin>(stream: Option<R>, into: Captured) {
    let Some(mut stream) = stream else {
        return;
    };
    let mut buffer = vec![0; 64 * 1024];
    while let Ok(read) = stream.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let mut captured = into.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, dropped) = &mut *captured;
        let room = MAX_STREAM_BYTES - kept.len();
        kept.extend_from_slice(&buffer[..read.min(room)]);
        *dropped += (read - read.min(room)) as u64;
    }
}
