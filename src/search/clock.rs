//! The clock a time budget is counted on: the wall clock (a request's latency), or the CPU time of the thread that
//! searches (self-play on a shared machine: a budget then buys the same search however busy the machine is).

use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// Which clock counts a search's time budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BudgetClock {
    /// Wall-clock time: what a caller waits.
    #[default]
    Wall,
    /// CPU time of the searching thread: time the thread spends waiting for a core is not counted. A search on
    /// several threads counts wall-clock time (each thread has its own CPU clock).
    ThreadCpu,
}

impl BudgetClock {
    /// The names a request and the command line use: `wall`, `cpu`.
    pub const NAMES: &'static [&'static str] = &["wall", "cpu"];

    /// The time on this clock, from an origin fixed for the process (wall) or the thread (CPU).
    pub fn now(self) -> Duration {
        match self {
            BudgetClock::Wall => ORIGIN.elapsed(),
            BudgetClock::ThreadCpu => thread_cpu_time(),
        }
    }

    /// This clock for a search on `threads` threads: the CPU clock counts a single thread's time only.
    pub fn for_threads(self, threads: usize) -> BudgetClock {
        if threads > 1 {
            BudgetClock::Wall
        } else {
            self
        }
    }

    /// The request name of this clock.
    pub fn name(self) -> &'static str {
        match self {
            BudgetClock::Wall => "wall",
            BudgetClock::ThreadCpu => "cpu",
        }
    }
}

impl std::str::FromStr for BudgetClock {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "wall" => Ok(BudgetClock::Wall),
            "cpu" => Ok(BudgetClock::ThreadCpu),
            other => Err(format!("budget_clock must be \"wall\" or \"cpu\", found {other:?}")),
        }
    }
}

static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

/// The CPU time the calling thread has used (zero where the system cannot tell).
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_cpu_clock_counts_work_and_not_sleep() {
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time() - before;
        // Sleeping costs next to no CPU time; the wall clock sees all of it.
        assert!(slept < Duration::from_millis(20), "{slept:?}");
        let start = thread_cpu_time();
        let mut x = 0u64;
        while thread_cpu_time() - start < Duration::from_millis(5) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        assert!(BudgetClock::ThreadCpu.now() >= start + Duration::from_millis(5));
    }

    #[test]
    fn a_search_on_several_threads_counts_wall_time() {
        assert_eq!(BudgetClock::ThreadCpu.for_threads(2), BudgetClock::Wall);
        assert_eq!(BudgetClock::ThreadCpu.for_threads(1), BudgetClock::ThreadCpu);
        for name in BudgetClock::NAMES {
            assert_eq!(name.parse::<BudgetClock>().map(BudgetClock::name), Ok(*name));
        }
    }
}
