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

    /// The flag itself, for work that polls an `AtomicBool` (the search; the trainer's workers).
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A guard that trips this handle when dropped (for example when the request that owns the search goes away).
    pub fn guard(&self) -> StopOnDrop {
        StopOnDrop(Some(self.clone()))
    }
}

/// Trips its [`StopHandle`] when dropped, unless disarmed.
#[derive(Debug)]
pub struct StopOnDrop(Option<StopHandle>);

impl StopOnDrop {
    /// Drops the guard without stopping (the work finished normally). The guard's share of the handle is released
    /// like any other drop: forgetting the guard instead would leak the handle's allocation once per search.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_guard_stops_and_a_disarmed_one_does_not() {
        let stopped = StopHandle::new();
        drop(stopped.guard());
        assert!(stopped.is_stopped());

        let finished = StopHandle::new();
        finished.guard().disarm();
        assert!(!finished.is_stopped());
    }

    #[test]
    fn a_disarmed_guard_releases_its_share_of_the_handle() {
        let handle = StopHandle::new();
        for _ in 0..3 {
            handle.guard().disarm();
            drop(handle.guard());
        }
        // Only `handle` itself still holds the flag: no guard leaked its clone.
        assert_eq!(Arc::strong_count(&handle.0), 1);
    }
}
