//! Time for the session layer: passed in, never read from the system inside the logic.

use std::time::Instant;

/// One reading of the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    /// Wall-clock milliseconds since the Unix epoch (SendingTime, latency checks).
    pub utc_ms: i64,
    /// Monotonic milliseconds (heartbeat, test request and logout timers).
    pub mono_ms: u64,
}

/// Source of time for sessions. Injectable for tests.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Now;
}

/// The system clock: wall time from `SystemTime`, monotonic time from `Instant`.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock { start: Instant::now() }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Now {
        let utc_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        Now {
            utc_ms,
            mono_ms: self.start.elapsed().as_millis() as u64,
        }
    }
}
