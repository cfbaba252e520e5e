//! [`StopHandle`]: a shared flag another thread trips to end a search early.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cloneable stop flag. The search polls it every few thousand nodes (well under a millisecond of work) and
/// then returns its best completed result, if any.
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    pub fn new() -> StopHandle {
        StopHandle::default()
    }

    /// Asks every search holding this handle to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.0
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A guard that trips this handle when dropped (for example when the request that owns the search goes away).
    pub fn guard(&self) -> StopOnDrop {
        StopOnDrop(self.clone())
    }
}

/// Trips its [`StopHandle`] when dropped.
#[derive(Debug)]
pub struct StopOnDrop(StopHandle);

impl StopOnDrop {
    /// Drops the guard without stopping (the work finished normally).
    pub fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}
