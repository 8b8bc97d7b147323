//! Engine threads kept between runs. A thread that finished a run makes a fresh QuickJS runtime
//! and context for the next one before anyone asks (no run ever sees another's), then waits for
//! it; a run that finds no such thread starts one. Threads beyond [`MAX_IDLE`] end after their
//! run, and an idle one ends after [`IDLE_TIMEOUT`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rquickjs::{Context, Runtime};

/// Idle engine threads kept at most, each holding a fresh runtime: as many as runs at once by
/// default.
const MAX_IDLE: usize = crate::DEFAULT_CONCURRENT_RUNS;
/// How long an idle engine thread waits for a run before it ends.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A runtime and its context, made before the run that uses them and used by that run alone.
pub(crate) struct Fresh {
    pub(crate) runtime: Runtime,
    pub(crate) context: Context,
}

impl Fresh {
    pub(crate) fn make() -> Option<Self> {
        let runtime = Runtime::new().ok()?;
        let context = Context::full(&runtime).ok()?;
        Some(Self { runtime, context })
    }
}

/// A run to do on an engine thread, given the fresh runtime the thread made (if it made one).
pub(crate) type Job = Box<dyn FnOnce(Option<Fresh>) + Send>;

struct Idle {
    id: u64,
    stack: usize,
    jobs: mpsc::Sender<Job>,
}

static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn idle() -> std::sync::MutexGuard<'static, Vec<Idle>> {
    IDLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `job` on an idle engine thread whose stack holds `stack` bytes, or on a new one.
pub(crate) fn start(stack: usize, mut job: Job) -> std::io::Result<()> {
    loop {
        let found = {
            let mut idle = idle();
            let at = idle.iter().position(|thread| thread.stack >= stack);
            at.map(|at| idle.swap_remove(at))
        };
        let Some(thread) = found else { break };
        match thread.jobs.send(job) {
            Ok(()) => return Ok(()),
            // It ended meanwhile: try another.
            Err(mpsc::SendError(back)) => job = back,
        }
    }
    let (jobs, incoming) = mpsc::channel();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    std::thread::Builder::new()
        .name("toolprism-codemode".to_owned())
        .stack_size(stack)
        .spawn(move || serve(id, stack, job, &jobs, &incoming))
        .map(drop)
}

/// An engine thread: its first run, then a fresh runtime and the next run, until idle too long.
fn serve(
    id: u64,
    stack: usize,
    first: Job,
    jobs: &mpsc::Sender<Job>,
    incoming: &mpsc::Receiver<Job>,
) {
    let mut job = first;
    let mut fresh = None;
    loop {
        // The job contains its own panics (and says so to its host).
        job(fresh.take());
        if idle().len() >= MAX_IDLE {
            return;
        }
        fresh = Fresh::make();
        {
            let mut idle = idle();
            if idle.len() >= MAX_IDLE {
                return;
            }
            idle.push(Idle {
                id,
                stack,
                jobs: jobs.clone(),
            });
        }
        job = match incoming.recv_timeout(IDLE_TIMEOUT) {
            Ok(next) => next,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                let mut idle = idle();
                if let Some(at) = idle.iter().position(|thread| thread.id == id) {
                    idle.swap_remove(at);
                    return;
                }
                drop(idle);
                // Taken just now: its run is on the way.
                match incoming.recv() {
                    Ok(next) => next,
                    Err(_) => return,
                }
            }
        };
    }
}
