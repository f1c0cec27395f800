//! The run clock: epoch milliseconds derived from CLOCK_MONOTONIC and an anchor handed over by
//! the TypeScript CLI, so the source's `ts` stamps (performance.timeOrigin + performance.now() in
//! Node, also CLOCK_MONOTONIC underneath) and this process's receipt times are one clock.

/// Converts CLOCK_MONOTONIC readings to epoch ms using one (epoch, monotonic) anchor pair.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch_at_ms: f64,
    mono_at_ms: f64,
}

/// CLOCK_MONOTONIC now, ms (Node's `process.hrtime` reads the same clock).
pub fn monotonic_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}

impl Clock {
    /// A clock anchored at `epoch_ms` when CLOCK_MONOTONIC read `mono_ms`.
    pub fn anchored(epoch_ms: f64, mono_ms: f64) -> Clock {
        Clock {
            epoch_at_ms: epoch_ms,
            mono_at_ms: mono_ms,
        }
    }

    /// A clock anchored to the system's real-time clock now (when no anchor was given).
    pub fn from_system() -> Clock {
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        Clock::anchored(epoch, monotonic_ms())
    }

    /// The CLOCK_MONOTONIC reading (ms) at which this clock reads `epoch_ms` (timers are armed on it).
    pub fn monotonic_at(&self, epoch_ms: f64) -> f64 {
        epoch_ms - self.epoch_at_ms + self.mono_at_ms
    }

    /// Epoch ms now, with sub-millisecond fraction.
    pub fn now_ms(&self) -> f64 {
        self.epoch_at_ms + (monotonic_ms() - self.mono_at_ms)
    }
}
