//! Search permits (at most N searches at once, at most Q waiting, beyond that 503 at once), the registry of running
//! searches (so shutdown can cancel them), and [`run_search`]: how a handler runs CPU-bound work on tokio's blocking
//! pool with a drop guard that stops the work when the client goes away.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::ApiError;
use super::AppState;
use crate::search::StopHandle;

/// Counts searches running and waiting, and hands out permits.
#[derive(Debug)]
pub struct SearchPermits {
    semaphore: Arc<Semaphore>,
    total: usize,
    max_queue: usize,
    waiting: AtomicUsize,
    running: Arc<AtomicUsize>,
}

/// Held while a search runs; frees its permits (and the running count) when dropped.
#[derive(Debug)]
pub struct Permit {
    _permit: OwnedSemaphorePermit,
    running: Arc<AtomicUsize>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::Relaxed);
    }
}

struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl SearchPermits {
    /// `max_searches` threads may search at once; `max_queue` requests may wait for them.
    pub fn new(max_searches: usize, max_queue: usize) -> SearchPermits {
        SearchPermits {
            semaphore: Arc::new(Semaphore::new(max_searches)),
            total: max_searches,
            max_queue,
            waiting: AtomicUsize::new(0),
            running: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Searches running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }

    /// Requests waiting for a permit now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Permits free now.
    pub fn available(&self) -> usize {
        self.semaphore.available_permits()
    }

    /// Takes `threads` permits (one per searching thread), waiting in the queue if it has room, else 503 at once.
    pub async fn acquire(&self, threads: usize) -> Result<Permit, ApiError> {
        let n = threads.clamp(1, self.total) as u32;
        let permit = match self.semaphore.clone().try_acquire_many_owned(n) {
            Ok(p) => p,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::Relaxed) >= self.max_queue {
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                    return Err(saturated());
                }
                let _waiting = Waiting(&self.waiting);
                self.semaphore
                    .clone()
                    .acquire_many_owned(n)
                    .await
                    .map_err(|_| saturated())?
            }
        };
        self.running.fetch_add(1, Ordering::Relaxed);
        Ok(Permit {
            _permit: permit,
            running: self.running.clone(),
        })
    }
}

fn saturated() -> ApiError {
    ApiError::Unavailable {
        reason: "every search slot is busy and the queue is full; retry shortly".to_owned(),
        retry_after_s: 1,
    }
}

/// The stop handles of the searches running now, so a shutdown can cancel them.
#[derive(Debug, Default)]
pub struct ActiveSearches {
    handles: Mutex<HashMap<u64, StopHandle>>,
    next: AtomicU64,
}

/// Removes its search from the registry when dropped.
pub struct Registration<'a> {
    registry: &'a ActiveSearches,
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.registry.handles.lock() {
            map.remove(&self.id);
        }
    }
}

impl ActiveSearches {
    pub fn register(&self, stop: StopHandle) -> Registration<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut map) = self.handles.lock() {
            map.insert(id, stop);
        }
        Registration { registry: self, id }
    }

    /// Trips every running search's stop handle; returns how many.
    pub fn stop_all(&self) -> usize {
        self.handles
            .lock()
            .map(|map| map.values().map(StopHandle::stop).count())
            .unwrap_or(0)
    }
}

/// Work running on the blocking pool; dropping it (the client went away) trips the work's stop handle.
pub struct RunningSearch<T> {
    handle: tokio::task::JoinHandle<(T, Permit)>,
    on_drop: crate::search::StopOnDrop,
}

impl<T> RunningSearch<T> {
    /// Waits for the work to end and returns its result; its permits are freed.
    pub async fn finish(self) -> Result<T, ApiError> {
        self.finish_holding().await.map(|(result, _permit)| result)
    }

    /// Waits for the work to end and returns its result with its permits, which stay taken until the caller drops
    /// them: an answer too large to hold for many clients at once keeps its slot until it has been sent.
    pub async fn finish_holding(self) -> Result<(T, Permit), ApiError> {
        let RunningSearch { handle, on_drop } = self;
        let result = handle
            .await
            .map_err(|e| ApiError::Internal(format!("search task failed: {e}")))?;
        on_drop.disarm();
        Ok(result)
    }
}

/// Starts `work` on the blocking pool under `threads` search permits, in the current tracing span, and returns at
/// once. The work gets a [`StopHandle`] that is tripped when the returned [`RunningSearch`] is dropped before the work
/// ends (the client disconnected), at shutdown, or by the work's own limits; the permits are freed when the work's
/// result is taken (or, when nobody takes it, when the work actually ends).
pub async fn start_search<T, F>(state: &AppState, threads: usize, work: F) -> Result<RunningSearch<T>, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&StopHandle) -> T + Send + 'static,
{
    if state.shutting_down() {
        return Err(ApiError::Unavailable {
            reason: "the server is shutting down".to_owned(),
            retry_after_s: 1,
        });
    }
    let permit = state.permits.acquire(threads).await?;
    let stop = StopHandle::new();
    let on_drop = stop.guard();
    let span = tracing::Span::current();
    let task_state = state.clone();
    let handle = tokio::task::spawn_blocking(move || {
        let _span = span.enter();
        let _registration = task_state.active.register(stop.clone());
        (work(&stop), permit)
    });
    Ok(RunningSearch { handle, on_drop })
}

/// [`start_search`] and wait for the result.
pub async fn run_search<T, F>(state: &AppState, threads: usize, work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&StopHandle) -> T + Send + 'static,
{
    start_search(state, threads, work).await?.finish().await
}
