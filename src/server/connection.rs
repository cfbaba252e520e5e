//! Connections: the accept loop, the cap on open connections, and the timeouts that close what stalls.
//!
//! Every connection is HTTP/1.1 served by hyper with bounded request heads (`--max-header-bytes`, `--max-headers`:
//! hyper answers 431 and closes). Its socket is wrapped in `TimedIo`, which knows where the connection stands
//! between requests (a `Clock` shared with the connection's service) and fails a read that waits too long:
//! - a request head must arrive within `--header-timeout-s`, counted from the connection's opening or, on a
//!   kept-alive connection, from the first byte of the next request;
//! - a kept-alive connection may sit idle between requests for `--idle-timeout-s`;
//! - while a request is being answered there is no connection deadline: its body has `--body-timeout-s` (408, see
//!   `routes::JsonBody`) and the whole request `--request-timeout-s` (504);
//! - a write of the response that waits `--idle-timeout-s` for the client to take anything fails (the client stopped
//!   reading), so a stalled reader never holds what its answer holds (memory, a search slot) for longer.
//!
//! Beyond `--max-connections` open connections a new one is closed as soon as it is accepted, so stalled clients
//! can never exhaust the process's file descriptors; service resumes as soon as connections go.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tower::util::Oneshot;
use tower::ServiceExt;

use super::AppState;

/// The most connections the default cap allows, whatever the descriptor limit: each open connection costs memory
/// (buffers, a task), and thousands of idle ones are already far beyond what this service needs.
pub const MAX_DEFAULT_CONNECTIONS: usize = 10_000;

/// The default cap on open connections: half the process's soft limit of open files (the rest stays free for the
/// listener, logs and whatever else the process opens), at most [`MAX_DEFAULT_CONNECTIONS`], at least 16.
pub fn default_max_connections() -> usize {
    cap_for_open_files(open_files_limit())
}

/// The default cap when the process may open `limit` files (see [`default_max_connections`]).
fn cap_for_open_files(limit: u64) -> usize {
    (limit / 2).clamp(16, MAX_DEFAULT_CONNECTIONS as u64) as usize
}

/// The soft limit on open file descriptors (1024, the usual default, where it cannot be read).
fn open_files_limit() -> u64 {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct it is given, which lives for the whole call.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            return limit.rlim_cur;
        }
    }
    1024
}

/// What the accept loop tells the open connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lifecycle {
    Serving,
    /// Finish the request in progress, then close; idle connections close at once.
    Draining,
    /// Close now.
    Closing,
}

/// How long shutdown waits, after the grace period, for cancelled requests to answer before closing what is left.
const CLOSE_AFTER_GRACE: Duration = Duration::from_secs(2);

/// Accepts connections on `listener` until `shutdown` resolves, then stops accepting, drains the open connections
/// (answering what is in progress; `on_shutdown` runs first, and is where searches get their grace period) and
/// returns once every connection is closed or `grace` plus a short margin has passed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    state: AppState,
    shutdown: impl Future<Output = ()>,
    on_shutdown: impl FnOnce(),
) -> io::Result<()> {
    let config = &state.config;
    let cap = config
        .max_connections
        .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let slots = Arc::new(Semaphore::new(cap));
    let (lifecycle, _) = watch::channel(Lifecycle::Serving);
    let mut builder = http1::Builder::new();
    builder
        .keep_alive(true)
        // The head timeout is TimedIo's: hyper's own runs from the end of the previous response, which would make
        // the idle timeout and the head timeout one and the same.
        .header_read_timeout(None)
        .max_headers(config.max_headers)
        .max_header_size(config.max_header_bytes)
        // A connection never buffers more than one head's worth (hyper's floor is 8 KiB); bodies stream through.
        .max_buf_size(config.max_header_bytes.max(8192));
    let mut refusals = RefusalLog::default();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            // Over the cap: close at once rather than hold a descriptor for a connection we will not serve. Counted
            // first, so that a client that has seen its connection closed finds it counted.
            state.metrics.connections.refused.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            refusals.note(cap);
            continue;
        };
        state.metrics.connections.accepted.fetch_add(1, Ordering::Relaxed);
        let connection = Connection {
            builder: builder.clone(),
            app: app.clone(),
            state: state.clone(),
            lifecycle: lifecycle.subscribe(),
            _slot: OpenSlot::new(slot, &state),
        };
        tokio::spawn(connection.run(stream));
    }
    drop(listener);
    on_shutdown();
    let _ = lifecycle.send(Lifecycle::Draining);
    let all = u32::try_from(cap).unwrap_or(u32::MAX);
    let closed = tokio::time::timeout(config.shutdown_grace + CLOSE_AFTER_GRACE, slots.acquire_many(all)).await;
    if closed.is_err() {
        let open = cap - slots.available_permits();
        tracing::warn!(open, "grace period over: closing the connections still open");
        let _ = lifecycle.send(Lifecycle::Closing);
    }
    Ok(())
}

/// What to do when `accept` fails: errors of one connection (it was reset before we took it) are skipped; others
/// (for example no descriptor left, `EMFILE`) are logged and accepting pauses briefly, as they may last.
async fn accept_failed(e: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(error = %e, "accept failed; pausing accepts for 100 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Logs connections refused over the cap at most once a second, with how many since the last line.
#[derive(Default)]
struct RefusalLog {
    last: Option<Instant>,
    since_last: u64,
}

impl RefusalLog {
    fn note(&mut self, cap: usize) {
        self.since_last += 1;
        if self.last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            tracing::warn!(
                max_connections = cap,
                refused = self.since_last,
                "connection cap reached: closing new connections at once"
            );
            self.last = Some(Instant::now());
            self.since_last = 0;
        }
    }
}

/// One connection's share of the cap; counted in `/metrics` while it lives.
struct OpenSlot {
    _permit: OwnedSemaphorePermit,
    state: AppState,
}

impl OpenSlot {
    fn new(permit: OwnedSemaphorePermit, state: &AppState) -> OpenSlot {
        state.metrics.connections.open.fetch_add(1, Ordering::Relaxed);
        OpenSlot {
            _permit: permit,
            state: state.clone(),
        }
    }
}

impl Drop for OpenSlot {
    fn drop(&mut self) {
        self.state.metrics.connections.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An accepted connection and what it needs to be served.
struct Connection {
    builder: http1::Builder,
    app: Router,
    state: AppState,
    lifecycle: watch::Receiver<Lifecycle>,
    _slot: OpenSlot,
}

impl Connection {
    async fn run(self, stream: TcpStream) {
        let Connection {
            builder,
            app,
            state,
            mut lifecycle,
            _slot,
        } = self;
        let clock = Arc::new(Clock::new());
        let io = TimedIo::new(stream, clock.clone(), &state);
        let service = ConnectionService { app, clock };
        let conn = builder.serve_connection(TokioIo::new(io), service);
        tokio::pin!(conn);
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                    return;
                }
                changed = lifecycle.changed() => {
                    // The sender goes away only when `serve` has returned: nothing is left to wait for.
                    match changed.map(|()| *lifecycle.borrow_and_update()) {
                        Ok(Lifecycle::Serving) => {}
                        Ok(Lifecycle::Draining) => conn.as_mut().graceful_shutdown(),
                        Ok(Lifecycle::Closing) | Err(_) => return,
                    }
                }
            }
        }
    }
}

/// Where a connection stands between requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for the first byte of the next request (since the previous response).
    Idle = 0,
    /// Reading a request head (since the connection opened, or since the first byte of this request).
    Head = 1,
    /// A request is being answered: from its complete head until its response has been written.
    Busy = 2,
}

/// The phase of a connection and when it began, shared by the socket wrapper and the connection's service (both
/// polled by the connection's own task). Packed in one atomic: nanoseconds since the connection opened, times 4,
/// plus the phase.
struct Clock {
    opened: Instant,
    state: AtomicU64,
}

impl Clock {
    /// A new connection: its head is due within the head timeout from now.
    fn new() -> Clock {
        Clock {
            opened: Instant::now(),
            state: AtomicU64::new(Phase::Head as u64),
        }
    }

    fn enter(&self, phase: Phase) {
        let nanos = u64::try_from(self.opened.elapsed().as_nanos()).unwrap_or(u64::MAX >> 2);
        self.state.store((nanos << 2) | phase as u64, Ordering::Relaxed);
    }

    fn now(&self) -> (Phase, Instant) {
        let state = self.state.load(Ordering::Relaxed);
        let phase = match state & 3 {
            0 => Phase::Idle,
            1 => Phase::Head,
            _ => Phase::Busy,
        };
        (phase, self.opened + Duration::from_nanos(state >> 2))
    }
}

/// The socket of a connection, failing a read that waits past the deadline of the connection's phase (see the
/// module docs). hyper treats the error like any broken connection: it closes it.
struct TimedIo {
    io: TcpStream,
    clock: Arc<Clock>,
    header_timeout: Duration,
    idle_timeout: Duration,
    /// One timer per connection, moved rather than re-created.
    timer: Pin<Box<Sleep>>,
    armed: Instant,
    /// Armed when a write finds the socket full; cleared by the next write that goes through.
    write_timer: Pin<Box<Sleep>>,
    write_stalled: bool,
    state: AppState,
}

impl TimedIo {
    fn new(io: TcpStream, clock: Arc<Clock>, state: &AppState) -> TimedIo {
        let header_timeout = state.config.header_timeout;
        let armed = clock.opened + header_timeout;
        TimedIo {
            io,
            clock,
            header_timeout,
            idle_timeout: state.config.idle_timeout,
            timer: Box::pin(tokio::time::sleep_until(armed)),
            armed,
            write_timer: Box::pin(tokio::time::sleep_until(armed)),
            write_stalled: false,
            state: state.clone(),
        }
    }

    /// Called when a read found nothing to read: arms the timer for the current phase's deadline and fails once it
    /// passes. While a request is answered the timer only makes sure it is polled again within the idle timeout, so
    /// that a response that finished without another read still starts the idle deadline on time.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let (phase, since) = self.clock.now();
            let deadline = match phase {
                Phase::Head => since + self.header_timeout,
                Phase::Idle => since + self.idle_timeout,
                Phase::Busy if self.armed > Instant::now() => self.armed,
                Phase::Busy => Instant::now() + self.idle_timeout,
            };
            if deadline != self.armed {
                self.timer.as_mut().reset(deadline);
                self.armed = deadline;
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let (kind, counter) = match phase {
                Phase::Busy => continue,
                Phase::Head => ("header", &self.state.metrics.connections.header_timeouts),
                Phase::Idle => ("idle", &self.state.metrics.connections.idle_timeouts),
            };
            counter.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(timeout = kind, "closing a stalled connection");
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no complete request within the {kind} timeout"),
            )));
        }
    }
}

impl AsyncRead for TimedIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before && this.clock.now().0 == Phase::Idle {
                    // The first byte of the next request: its head is now due within the head timeout.
                    this.clock.enter(Phase::Head);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.poll_deadline(cx),
        }
    }
}

impl TimedIo {
    /// What a write that found the socket full returns: pending, until the client has taken nothing for the idle
    /// timeout; then the write fails and hyper closes the connection.
    fn poll_stalled_write<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if !self.write_stalled {
            self.write_stalled = true;
            let deadline = Instant::now() + self.idle_timeout;
            self.write_timer.as_mut().reset(deadline);
        }
        if self.write_timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.state
            .metrics
            .connections
            .response_timeouts
            .fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            timeout = "response",
            "closing a connection whose client stopped reading its response"
        );
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took nothing of the response within the idle timeout",
        )))
    }

    /// Passes a write's outcome on, tracking whether the socket is stalled.
    fn track_write<T>(&mut self, cx: &mut Context<'_>, written: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match written {
            Poll::Pending => self.poll_stalled_write(cx),
            ready => {
                self.write_stalled = false;
                ready
            }
        }
    }
}

impl AsyncWrite for TimedIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        this.track_write(cx, written)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.io).poll_flush(cx);
        this.track_write(cx, flushed)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.track_write(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// The application as one connection's hyper service: a request whose head has arrived makes the connection busy,
/// and its response body, once hyper is done with it, makes it idle again.
struct ConnectionService {
    app: Router,
    clock: Arc<Clock>,
}

impl hyper::service::Service<Request<Incoming>> for ConnectionService {
    type Response = Response<IdleOnDrop>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, request: Request<Incoming>) -> ResponseFuture {
        self.clock.enter(Phase::Busy);
        ResponseFuture {
            inner: self.app.clone().oneshot(request),
            clock: self.clock.clone(),
        }
    }
}

struct ResponseFuture {
    inner: Oneshot<Router, Request<Incoming>>,
    clock: Arc<Clock>,
}

impl Future for ResponseFuture {
    type Output = Result<Response<IdleOnDrop>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let response = std::task::ready!(Pin::new(&mut this.inner).poll(cx))?;
        let clock = this.clock.clone();
        Poll::Ready(Ok(response.map(|body| IdleOnDrop { body, clock })))
    }
}

/// A response body that marks its connection idle when dropped: hyper drops it once the response is written (or
/// abandoned), and from then the idle timeout runs.
struct IdleOnDrop {
    body: Body,
    clock: Arc<Clock>,
}

impl Drop for IdleOnDrop {
    fn drop(&mut self) {
        self.clock.enter(Phase::Idle);
    }
}

impl http_body::Body for IdleOnDrop {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_keeps_the_phase_and_when_it_began() {
        let clock = Clock::new();
        assert_eq!(clock.now(), (Phase::Head, clock.opened));
        for phase in [Phase::Busy, Phase::Idle, Phase::Head] {
            let before = Instant::now();
            clock.enter(phase);
            let (now, since) = clock.now();
            assert_eq!(now, phase);
            // Stored with nanosecond resolution, so it is never earlier than a reading taken just before.
            assert!(since + Duration::from_micros(1) >= before, "{since:?} vs {before:?}");
        }
    }

    #[test]
    fn the_default_cap_is_half_the_descriptor_limit_between_16_and_10000() {
        // (soft limit of open files, cap): the usual 1024, a raised limit, tiny limits, and "unlimited".
        for (limit, cap) in [
            (1024, 512),
            (4096, 2048),
            (20_001, 10_000),
            (65_536, 10_000),
            (40, 20),
            (33, 16),
            (10, 16),
            (0, 16),
            (u64::MAX, 10_000),
        ] {
            assert_eq!(cap_for_open_files(limit), cap, "soft limit {limit}");
        }
    }
}
