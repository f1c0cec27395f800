//! How the engine thread hands its `EngineStats` to other threads: one atomic per field, stored
//! once per pass, loaded by `Engine::stats` on any thread.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::stats::EngineStats;

/// The hub's stats as of the engine thread's last pass, plus `publishes_in` (counted by the
/// threads that call `ingest`).
pub(super) struct AtomicStats {
    /// By `EngineStats` field, in list order.
    values: [AtomicU64; EngineStats::LEN],
    pub(super) publishes_in: AtomicU64,
}

impl Default for AtomicStats {
    fn default() -> Self {
        AtomicStats {
            values: std::array::from_fn(|_| AtomicU64::new(0)),
            publishes_in: AtomicU64::new(0),
        }
    }
}

impl AtomicStats {
    /// Stores the hub's stats (engine thread).
    pub(super) fn publish(&self, h: &EngineStats) {
        for (a, v) in self.values.iter().zip(h.values()) {
            a.store(v, Ordering::Relaxed);
        }
    }

    /// The last stored stats, with `publishes_in`; the desk's and cluster fields are filled by the caller.
    pub(super) fn snapshot(&self) -> EngineStats {
        let mut s = EngineStats::from_values(std::array::from_fn(|i| self.values[i].load(Ordering::Relaxed)));
        s.publishes_in = self.publishes_in.load(Ordering::Relaxed);
        s
    }
}
