//! The progress reports of one `tools/call`, on their way from the body (which reports on its
//! own task, and must not block) to the request's task (which sends them to the client).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use rmcp::model::ProgressNotificationParam;
use rmcp::service::RoleServer;
use tokio::sync::Notify;
use toolprism::context::{Progress, ProgressSink};

/// Progress reports buffered for one call before newer ones are dropped (a body that reports
/// faster than the transport sends cannot grow memory without bound).
pub(super) const PROGRESS_BUFFER: usize = 256;

/// A bounded queue of reports with a wake-up for its one reader. Nothing is allocated for the
/// reports until there is one: rmcp's own client asks for progress on every request, and most
/// tools never report.
pub(crate) struct ProgressQueue<T> {
    reports: Mutex<VecDeque<T>>,
    ready: Notify,
}

impl<T> Default for ProgressQueue<T> {
    fn default() -> Self {
        Self {
            reports: Mutex::default(),
            ready: Notify::new(),
        }
    }
}

impl<T> ProgressQueue<T> {
    /// Queues a report, or drops it when the reader is `PROGRESS_BUFFER` behind.
    pub(crate) fn push(&self, report: T) {
        let mut reports = self.reports.lock().unwrap_or_else(PoisonError::into_inner);
        if reports.len() >= PROGRESS_BUFFER {
            tracing::debug!(
                "progress report dropped: the client reads slower than the tool reports"
            );
            return;
        }
        reports.push_back(report);
        drop(reports);
        self.ready.notify_one();
    }

    /// Waits until a report was pushed since the last wait (at once if one was).
    pub(crate) async fn ready(&self) {
        self.ready.notified().await;
    }

    /// Whether a report waits.
    pub(crate) fn has_reports(&self) -> bool {
        !self
            .reports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// The reports queued so far, oldest first.
    pub(crate) fn take(&self) -> VecDeque<T> {
        std::mem::take(&mut *self.reports.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl ProgressSink for ProgressQueue<Progress> {
    fn report(&self, progress: &Progress) {
        self.push(progress.clone());
    }
}

/// A call's progress token and the queue its reports wait in.
pub(crate) type ProgressStream<'a> = (rmcp::model::ProgressToken, &'a ProgressQueue<Progress>);

/// Ready when a report waits to be sent (never, without a progress token).
pub(crate) async fn reports_ready(progress: Option<&ProgressStream<'_>>) {
    match progress {
        Some((_, queue)) => queue.ready().await,
        None => std::future::pending().await,
    }
}

/// Sends the reports waiting, oldest first.
pub(super) async fn send_progress(
    peer: &rmcp::service::Peer<RoleServer>,
    progress: Option<&ProgressStream<'_>>,
) {
    let Some((token, queue)) = progress else {
        return;
    };
    for report in queue.take() {
        let mut param = ProgressNotificationParam::new(token.clone(), report.done);
        param.total = report.total;
        param.message = report.message;
        // A client that went away misses its progress; the result tells it the rest.
        let _ = peer.notify_progress(param).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `ready()` completes on its first poll (a broken wake-up fails, never hangs).
    fn ready_now<T>(queue: &ProgressQueue<T>) -> bool {
        use std::future::Future as _;
        use std::task::{Context, Waker};
        let wait = std::pin::pin!(queue.ready());
        wait.poll(&mut Context::from_waker(Waker::noop()))
            .is_ready()
    }

    #[test]
    fn a_report_pushed_before_the_wait_is_not_missed() {
        let queue = ProgressQueue::default();
        assert!(!ready_now(&queue), "nothing pushed yet");
        queue.push(1);
        assert!(queue.has_reports());
        assert!(ready_now(&queue));
        assert_eq!(queue.take(), [1]);
        assert!(queue.take().is_empty());
        assert!(!queue.has_reports());
        assert!(!ready_now(&queue), "the wake-up was used");
    }

    #[test]
    fn reports_beyond_the_buffer_are_dropped_newest_first() {
        let queue = ProgressQueue::default();
        for report in 0..PROGRESS_BUFFER + 10 {
            queue.push(report);
        }
        let taken = queue.take();
        assert_eq!(taken.len(), PROGRESS_BUFFER);
        assert_eq!(taken.back(), Some(&(PROGRESS_BUFFER - 1)));
    }
}
