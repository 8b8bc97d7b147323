//! The connections the door holds: how many at once, which one gives way to a newcomer, and how
//! long a response may wait for a client that stops reading it.
//!
//! - At most [`MAX_CONNECTIONS`] at once (fewer when the file-descriptor limit is lower: the
//!   soft `RLIMIT_NOFILE` is raised to the hard one first, and the cap kept below it). When
//!   full, a new connection makes the oldest *idle* one close — one with no request in
//!   flight, such as a client dribbling a head it never finishes — so that slow or stalled
//!   clients cannot keep a legitimate one out. When every connection is busy, accepting waits.
//! - A connection sends its head within the head timeout from when it opened or its previous
//!   response ended (an idle keep-alive connection is closed then), see
//!   [`HEADER_READ_TIMEOUT`](crate::HEADER_READ_TIMEOUT).
//! - A write the client does not take for [`WRITE_TIMEOUT`] closes the connection.

use std::collections::BTreeMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The most connections served at once, unless the file-descriptor limit is lower.
pub const MAX_CONNECTIONS: usize = 1_024;
/// How long a response write may wait on a client that does not read it.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// File descriptors kept for what is not a client's connection (the store, the issuer, logs).
const RESERVED_DESCRIPTORS: u64 = 64;

/// Raises the soft limit on open file descriptors to the hard one (as far as the system lets
/// a process), and returns the soft limit now in force, if it can be read.
pub fn raise_fd_limit() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}

/// The connection cap for a process allowed `descriptors` open files: [`MAX_CONNECTIONS`], or
/// half of what is left after the reserve, whichever is less (at least 16).
pub(crate) fn connection_cap(descriptors: Option<u64>) -> usize {
    let Some(descriptors) = descriptors else {
        return MAX_CONNECTIONS;
    };
    let room = descriptors.saturating_sub(RESERVED_DESCRIPTORS) / 2;
    usize::try_from(room)
        .unwrap_or(usize::MAX)
        .clamp(16, MAX_CONNECTIONS)
}

/// The connections being served, oldest first, and which of them have a request in flight.
pub(crate) struct Connections {
    cap: usize,
    next: AtomicU64,
    live: Mutex<BTreeMap<u64, Arc<Connection>>>,
    /// Told when a connection ends, or one becomes idle.
    freed: Notify,
}

/// One connection: its requests in flight ([`EVICTED`] once it gave way), and how to close it.
pub(crate) struct Connection {
    busy: AtomicUsize,
    evict: CancellationToken,
}

/// What a connection's count of requests in flight becomes when it gives way: from 0 only, so
/// that a request never starts on a connection chosen to close, nor one with a request in
/// flight is chosen.
const EVICTED: usize = usize::MAX;

impl Connections {
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap,
            next: AtomicU64::new(0),
            live: Mutex::default(),
            freed: Notify::new(),
        })
    }

    /// Room for a connection just accepted: at once, by closing the oldest idle one when full,
    /// or once one ends or goes idle. The returned guard holds the place until dropped.
    pub(crate) async fn admit(self: &Arc<Self>) -> Admitted {
        loop {
            let freed = self.freed.notified();
            if let Some(admitted) = self.try_admit() {
                return admitted;
            }
            freed.await;
        }
    }

    fn try_admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if live.len() >= self.cap {
            let (&oldest, _) = live.iter().find(|(_, connection)| {
                connection
                    .busy
                    .compare_exchange(0, EVICTED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            })?;
            if let Some(evicted) = live.remove(&oldest) {
                evicted.evict.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            busy: AtomicUsize::new(0),
            evict: CancellationToken::new(),
        });
        live.insert(id, connection.clone());
        Some(Admitted {
            connections: self.clone(),
            id,
            connection,
        })
    }

    /// How many connections are being served.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A connection's place among those served; given back when dropped.
pub(crate) struct Admitted {
    connections: Arc<Connections>,
    id: u64,
    connection: Arc<Connection>,
}

impl Admitted {
    /// Resolves when a newcomer made this connection give way.
    pub(crate) async fn evicted(&self) {
        self.connection.evict.cancelled().await;
    }

    /// What the connection's service keeps, to mark each request in flight.
    pub(crate) fn handle(&self) -> BusyHandle {
        BusyHandle {
            connections: self.connections.clone(),
            connection: self.connection.clone(),
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.connections
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        self.connections.freed.notify_one();
    }
}

/// What a connection's service keeps, to mark each request busy.
#[derive(Clone)]
pub(crate) struct BusyHandle {
    connections: Arc<Connections>,
    connection: Arc<Connection>,
}

impl BusyHandle {
    /// Marks a request in flight on the connection until the returned guard is dropped (with
    /// the response's body); `None` when the connection already gave way (it is closing).
    pub(crate) fn busy(&self) -> Option<Busy> {
        self.connection
            .busy
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |busy| {
                (busy != EVICTED).then(|| busy + 1)
            })
            .ok()?;
        Some(Busy {
            connections: self.connections.clone(),
            connection: self.connection.clone(),
        })
    }
}

/// A request in flight; the connection is idle again when every one is dropped.
pub(crate) struct Busy {
    connections: Arc<Connections>,
    connection: Arc<Connection>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        // Never `EVICTED` while a request is in flight: the count is at least 1 here.
        if self.connection.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.connections.freed.notify_one();
        }
    }
}

/// A stream whose writes fail with `TimedOut` when the peer takes none of them for `limit`.
pub(crate) struct WriteDeadline<T> {
    inner: T,
    limit: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> WriteDeadline<T> {
    pub(crate) fn new(inner: T, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            timer: None,
        }
    }

    /// What a write that is not ready answers: pending, until the deadline has passed.
    fn waiting<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let limit = self.limit;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        ready!(timer.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took no part of the response in time",
        )))
    }

    fn progressed<R>(
        &mut self,
        done: Poll<io::Result<R>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<R>> {
        match done {
            Poll::Ready(done) => {
                self.timer = None;
                Poll::Ready(done)
            }
            Poll::Pending => self.waiting(cx),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let done = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.progressed(done, cx)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let done = Pin::new(&mut this.inner).poll_flush(cx);
        this.progressed(done, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let done = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.progressed(done, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let done = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.progressed(done, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_below_the_descriptor_limit() {
        assert_eq!(connection_cap(None), MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(1_048_576)), MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some(1_024)), 480);
        assert_eq!(connection_cap(Some(10)), 16);
    }

    #[tokio::test]
    async fn when_full_the_oldest_idle_connection_gives_way_and_a_busy_one_never_does() {
        let connections = Connections::new(2);
        let first = connections.admit().await;
        let second = connections.admit().await;
        let busy = second.handle().busy().unwrap();
        // Full: the third closes the first (idle), not the second (busy).
        let third = connections.admit().await;
        tokio::time::timeout(Duration::from_secs(5), first.evicted())
            .await
            .expect("the oldest idle connection is told to close");
        assert!(first.handle().busy().is_none(), "no request starts on it");
        assert!(!second.connection.evict.is_cancelled());
        drop(first);
        assert_eq!(connections.len(), 2);
        // Every connection busy: a newcomer waits until one is idle again.
        let _third_busy = third.handle().busy().unwrap();
        let waiting = tokio::spawn({
            let connections = connections.clone();
            async move { connections.admit().await.id }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(busy);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("admitted once a connection is idle")
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), second.evicted())
            .await
            .expect("the connection that went idle gave way");
    }
}
