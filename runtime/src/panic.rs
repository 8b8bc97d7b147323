//! Containing panics: whatever user code does — a body, a wrapper, a policy, an approver, a
//! store, a `Serialize` or `Deserialize` impl, a `Drop` — its panic becomes a failure, never
//! an unwind into the host.
//!
//! Calling user code has a synchronous part (a closure that panics before it returns its
//! future) and an asynchronous one (polling that future, then dropping it). [`contain`] covers
//! all three. A panic payload is itself user data whose `Drop` may panic again: it is dropped
//! inside containment too, and leaked if it does.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Longest panic message carried into a failure.
const MAX_PANIC_MESSAGE: usize = 1_000;

/// Runs `f`, turning a panic into its message.
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(into_message)
}

/// Calls `start` and runs the future it returns, containing a panic in the call, in polling
/// and in dropping the future (when it completes, or when the caller drops this).
pub(crate) fn contain<F: Future + Unpin>(start: impl FnOnce() -> F) -> Contained<F> {
    match catch(start) {
        Ok(inner) => Contained {
            inner: Some(inner),
            early: None,
        },
        Err(message) => Contained {
            inner: None,
            early: Some(message),
        },
    }
}

/// The future [`contain`] returns: `Err(message)` if any part of the user's code panicked.
pub(crate) struct Contained<F: Future + Unpin> {
    inner: Option<F>,
    /// The panic of the synchronous call, reported on the first poll.
    early: Option<String>,
}

impl<F: Future + Unpin> Contained<F> {
    /// Drops the inner future inside containment; a panic there is logged and otherwise
    /// ignored, since the outcome was already decided.
    fn release(&mut self) {
        if let Some(inner) = self.inner.take()
            && let Err(panic) = catch(move || drop(inner))
        {
            tracing::warn!(panic, "dropping a future panicked");
        }
    }
}

impl<F: Future + Unpin> Future for Contained<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(message) = self.early.take() {
            return Poll::Ready(Err(message));
        }
        let Some(inner) = self.inner.as_mut() else {
            // Polled after completion: never ready again, never a panic.
            return Poll::Pending;
        };
        let polled = match catch(|| Pin::new(inner).poll(cx)) {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(output)) => Ok(output),
            Err(message) => Err(message),
        };
        // Done: the inner future is dropped now, inside containment, and never polled again.
        self.release();
        Poll::Ready(polled)
    }
}

impl<F: Future + Unpin> Drop for Contained<F> {
    fn drop(&mut self) {
        self.release();
    }
}

fn into_message(payload: Box<dyn Any + Send>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|text| crate::text::truncate(text, MAX_PANIC_MESSAGE))
        .or_else(|| {
            payload
                .downcast_ref::<String>()
                .map(|text| crate::text::truncate(text, MAX_PANIC_MESSAGE))
        })
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned());
    dispose(payload);
    message
}

/// Drops a panic payload inside containment; one whose `Drop` panics again is leaked, as is
/// the payload of that second panic.
fn dispose(payload: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::Waker;

    use super::*;

    fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
        Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_panic_before_the_future_exists_is_contained() {
        let mut contained = contain(|| -> std::future::Ready<u8> { panic!("before async") });
        assert_eq!(
            poll_once(&mut contained),
            Poll::Ready(Err("before async".to_owned()))
        );
    }

    #[test]
    fn a_payload_whose_drop_panics_is_leaked_not_unwound() {
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                panic!("the payload panics when dropped");
            }
        }
        let caught = catch(|| std::panic::panic_any(Bomb));
        assert_eq!(caught, Err("a panic with a non-string payload".to_owned()));
    }

    #[test]
    fn dropping_the_future_is_contained_too() {
        static DROPPED: AtomicBool = AtomicBool::new(false);
        struct PanicsOnDrop;
        impl Future for PanicsOnDrop {
            type Output = ();
            fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
                Poll::Pending
            }
        }
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                DROPPED.store(true, Ordering::Relaxed);
                panic!("dropped");
            }
        }
        let mut contained = contain(|| PanicsOnDrop);
        assert!(poll_once(&mut contained).is_pending());
        drop(contained);
        assert!(DROPPED.load(Ordering::Relaxed));
    }
}
