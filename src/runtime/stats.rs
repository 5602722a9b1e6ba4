//! Load counters for tests and tools. Not for timing or tracing (logs go through `tracing`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters for tests and tools; each is the number of times the event happened.
#[derive(Debug, Default)]
pub struct Stats {
    pub(super) registered: AtomicU64,
    pub(super) loads: AtomicU64,
    pub(super) load_failures: AtomicU64,
    pub(super) full_inflations: AtomicU64,
    pub(super) extractions: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StatsSnapshot {
    /// Fat binaries registered (wrappers, byte slices, modules).
    pub registered: u64,
    /// Successful loads of a fat binary on an agent.
    pub loads: u64,
    /// Failed first uses (each cached and reported to every later caller).
    pub load_failures: u64,
    /// Compressed bundles inflated whole (only when several agents need different entries).
    pub full_inflations: u64,
    /// Entries extracted (each entry of each container at most once).
    pub extractions: u64,
}

impl Stats {
    pub(super) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            registered: get(&self.registered),
            loads: get(&self.loads),
            load_failures: get(&self.load_failures),
            full_inflations: get(&self.full_inflations),
            extractions: get(&self.extractions),
        }
    }
}
