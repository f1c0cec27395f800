//! Per-session batching with Liberator burst semantics (SCENARIOS.md §1, "Batching semantics").
//!
//! A session's batching interval starts at `burst_min`. The first message queued while no
//! window is open opens one; the session is flushed when it ends. A window that held more than
//! three messages makes the next interval `burst_increment` longer (up to `burst_max`); every
//! window that passes with no message makes it `burst_increment` shorter (down to
//! `burst_min`). Windows tile time back to back from the last flush, so a message arriving
//! after a quiet spell is flushed at the end of the (shrunk) window it falls into; the shrink
//! is computed lazily when that message arrives, so idle sessions cost nothing.
//! `burst_max` = 0 turns batching off: every message is due at once (the engine still sends
//! everything queued for a session as one frame).
//!
//! Time is passed in (`now: Instant`); nothing here reads the clock.

use std::time::{Duration, Instant};

use crate::config::BatchingConfig;

/// Messages in one window above which the next interval grows.
pub const GROW_ABOVE_MESSAGES: u32 = 3;

/// One session's burst state.
#[derive(Debug, Clone)]
#[repr(C)] // hot fields first: `on_message` reads `window_end` and bumps `count`
pub struct Burst {
    window_end: Option<Instant>,
    count: u32,
    interval: Duration,
    last_end: Option<Instant>,
}

impl Burst {
    /// A session's initial state: interval = `burst_min`, no open window.
    pub fn new(cfg: &BatchingConfig) -> Self {
        Burst {
            interval: cfg.burst_min,
            window_end: None,
            count: 0,
            last_end: None,
        }
    }

    /// The current interval (what the next window will last), clamped to the config.
    pub fn interval(&self, cfg: &BatchingConfig) -> Duration {
        clamp(self.interval, cfg)
    }

    /// End of the open window, if one is open.
    pub fn window_end(&self) -> Option<Instant> {
        self.window_end
    }

    /// Counts a message queued at `now`; returns when the session must be flushed.
    pub fn on_message(&mut self, cfg: &BatchingConfig, now: Instant) -> Instant {
        if cfg.batching_off() {
            self.count = self.count.saturating_add(1);
            return now;
        }
        if let Some(end) = self.window_end {
            self.count = self.count.saturating_add(1);
            return end;
        }
        let mut interval = clamp(self.interval, cfg);
        let mut start = now;
        if let Some(mut cursor) = self.last_end.filter(|&e| e <= now) {
            // Every window that passed empty since the last flush shrinks the interval.
            loop {
                if interval <= cfg.burst_min || cfg.burst_increment.is_zero() || interval.is_zero() {
                    // No more shrinking: jump straight to the window holding `now`.
                    if !interval.is_zero() {
                        let n = (now - cursor).as_nanos() / interval.as_nanos();
                        cursor += Duration::from_nanos((n * interval.as_nanos()).min(u64::MAX as u128) as u64);
                    }
                    break;
                }
                if cursor + interval > now {
                    break;
                }
                cursor += interval;
                interval = interval.saturating_sub(cfg.burst_increment).max(cfg.burst_min);
            }
            start = cursor;
        }
        self.interval = interval;
        self.count = 1;
        let end = start + interval;
        self.window_end = Some(end);
        end
    }

    /// The session was flushed at `now`: closes the window, growing the interval if it was busy.
    pub fn on_flush(&mut self, cfg: &BatchingConfig, now: Instant) {
        if cfg.batching_off() {
            self.window_end = None;
            self.count = 0;
            return;
        }
        if self.window_end.take().is_some() && self.count > GROW_ABOVE_MESSAGES {
            self.interval = (clamp(self.interval, cfg) + cfg.burst_increment).min(cfg.burst_max);
        }
        self.count = 0;
        self.last_end = Some(now);
    }
}

/// Step of the grid that live-update flush deadlines are rounded down to (`FlushGrid`).
pub const FLUSH_GRID_STEP: Duration = Duration::from_millis(5);

/// Shortest `burst_min` for which deadlines are put on the grid: below it a step would be a
/// large part of the window.
pub const FLUSH_GRID_MIN_BURST: Duration = Duration::from_millis(20);

/// The grid that flush deadlines of live updates fall on, shared by every session of a hub.
///
/// Each session's windows tile time from its own last flush, so without a grid the sessions'
/// deadlines spread evenly over time and nearly every engine pass flushes a few sessions and
/// wakes their transport workers for a few frames. Rounding each deadline down to a multiple
/// of `FLUSH_GRID_STEP` from one origin (the first time the grid is asked) brings the sessions
/// due within a step into one pass: one wake-up and one drain per worker for all their frames.
/// A deadline only moves earlier (a window is at most one step shorter, never longer, so no
/// message waits past its window); a session flushed on the grid starts its next window on it,
/// so its later windows keep their full length. Replies are not on the grid (they are due at
/// once), nor is anything while `burst_min` is under `FLUSH_GRID_MIN_BURST` or batching is off.
#[derive(Debug, Default, Clone, Copy)]
pub struct FlushGrid {
    origin: Option<Instant>,
}

impl FlushGrid {
    /// `due` (a deadline `Burst::on_message` returned at `now`) rounded down to the grid.
    pub fn align(&mut self, cfg: &BatchingConfig, due: Instant, now: Instant) -> Instant {
        if cfg.batching_off() || cfg.burst_min < FLUSH_GRID_MIN_BURST {
            return due;
        }
        let origin = *self.origin.get_or_insert(now);
        let Some(since) = due.checked_duration_since(origin) else {
            return due;
        };
        let step = FLUSH_GRID_STEP.as_nanos();
        let off = since.as_nanos() % step;
        due - Duration::from_nanos(off as u64)
    }
}

fn clamp(d: Duration, cfg: &BatchingConfig) -> Duration {
    if cfg.batching_off() {
        return Duration::ZERO;
    }
    d.clamp(cfg.burst_min, cfg.burst_max.max(cfg.burst_min))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> BatchingConfig {
        BatchingConfig {
            burst_min: Duration::from_millis(100),
            burst_max: Duration::from_millis(250),
            burst_increment: Duration::from_millis(50),
            throttle: Duration::ZERO,
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Sends `n` messages at `at` and flushes at the returned deadline.
    fn window(b: &mut Burst, c: &BatchingConfig, at: Instant, n: u32) -> Instant {
        let due = b.on_message(c, at);
        for _ in 1..n {
            assert_eq!(b.on_message(c, at), due);
        }
        b.on_flush(c, due);
        due
    }

    /// A burst grown to `burst_max` by three busy windows from now; returns it and the last window's end.
    fn grown_to_max(c: &BatchingConfig) -> (Burst, Instant) {
        let mut b = Burst::new(c);
        let mut end = Instant::now();
        for _ in 0..3 {
            end = window(&mut b, c, end, 10);
        }
        (b, end)
    }

    #[test]
    fn grows_by_increment_when_busy_up_to_max() {
        let c = cfg();
        let t0 = Instant::now();
        let mut b = Burst::new(&c);
        assert_eq!(b.interval(&c), ms(100));
        let e1 = window(&mut b, &c, t0, 4);
        assert_eq!(e1, t0 + ms(100));
        assert_eq!(b.interval(&c), ms(150));
        // Next window starts where the last ended.
        let e2 = window(&mut b, &c, e1 + ms(10), 5);
        assert_eq!(e2, e1 + ms(150));
        assert_eq!(b.interval(&c), ms(200));
        let e3 = window(&mut b, &c, e2, 4);
        assert_eq!(b.interval(&c), ms(250));
        window(&mut b, &c, e3, 9);
        assert_eq!(b.interval(&c), ms(250), "capped at burst_max");
    }

    #[test]
    fn three_messages_do_not_grow() {
        let c = cfg();
        let t0 = Instant::now();
        let mut b = Burst::new(&c);
        window(&mut b, &c, t0, 3);
        assert_eq!(b.interval(&c), ms(100));
    }

    #[test]
    fn empty_windows_shrink_lazily_down_to_min() {
        let c = cfg();
        let (mut b, end) = grown_to_max(&c);
        assert_eq!(b.interval(&c), ms(250));
        // One empty 250 ms window, then a message: it falls in a 200 ms window.
        let due = b.on_message(&c, end + ms(260));
        assert_eq!(due, end + ms(250) + ms(200));
        b.on_flush(&c, due);
        assert_eq!(b.interval(&c), ms(200));
        // Two empty windows (200, 150): next window is 100 ms long.
        let due2 = b.on_message(&c, due + ms(360));
        assert_eq!(due2, due + ms(200) + ms(150) + ms(100));
        b.on_flush(&c, due2);
        assert_eq!(b.interval(&c), ms(100));
        // Long idle at min: aligned to the 100 ms grid, never shorter than min.
        let due3 = b.on_message(&c, due2 + ms(1234));
        assert_eq!(due3, due2 + ms(1300));
    }

    #[test]
    fn message_inside_next_window_does_not_shrink() {
        let c = cfg();
        let t0 = Instant::now();
        let mut b = Burst::new(&c);
        let e = window(&mut b, &c, t0, 4);
        let due = b.on_message(&c, e + ms(149));
        assert_eq!(due, e + ms(150));
    }

    #[test]
    fn batching_off_is_due_at_once() {
        let c = BatchingConfig {
            burst_max: Duration::ZERO,
            ..cfg()
        };
        let t0 = Instant::now();
        let mut b = Burst::new(&c);
        assert_eq!(b.on_message(&c, t0), t0);
        assert_eq!(b.on_message(&c, t0 + ms(5)), t0 + ms(5));
        b.on_flush(&c, t0);
        assert_eq!(b.interval(&c), Duration::ZERO);
        assert_eq!(b.window_end(), None);
    }

    #[test]
    fn config_change_clamps_interval() {
        let c = cfg();
        let (mut b, end) = grown_to_max(&c);
        let smaller = BatchingConfig {
            burst_max: ms(120),
            ..c
        };
        assert_eq!(b.interval(&smaller), ms(120));
        assert_eq!(b.on_message(&smaller, end), end + ms(120));
    }

    /// Two sessions whose messages arrive 1.5 ms apart (each opening a 100 ms window) get the
    /// same deadline on the grid; a deadline only moves earlier, by less than a step, and a
    /// session flushed on the grid keeps full-length windows after it.
    #[test]
    fn grid_brings_deadlines_together_and_only_earlier() {
        let c = cfg();
        let t0 = Instant::now();
        let mut grid = FlushGrid::default();
        let (mut a, mut b) = (Burst::new(&c), Burst::new(&c));
        let da = grid.align(&c, a.on_message(&c, t0), t0);
        let at_b = t0 + Duration::from_micros(1_500);
        let db = grid.align(&c, b.on_message(&c, at_b), at_b);
        assert_eq!(da, t0 + ms(100), "the grid starts at the first deadline asked");
        assert_eq!(db, da, "b's window end (t0 + 101.5 ms) is rounded down to a's");
        // b flushes on the grid: its next window, opened later, ends a whole interval after it
        b.on_flush(&c, db);
        let at = db + ms(30) + Duration::from_micros(700);
        let next = grid.align(&c, b.on_message(&c, at), at);
        assert_eq!(next, db + ms(100));
        for k in 0..50u64 {
            let now = t0 + Duration::from_micros(k * 317);
            let mut s = Burst::new(&c);
            let end = s.on_message(&c, now);
            let due = grid.align(&c, end, now);
            assert!(due <= end && end - due < FLUSH_GRID_STEP, "k {k}");
            assert_eq!((due - t0).as_nanos() % FLUSH_GRID_STEP.as_nanos(), 0, "k {k}");
        }
    }

    /// Off with batching off, and for windows shorter than FLUSH_GRID_MIN_BURST.
    #[test]
    fn grid_leaves_short_windows_and_batching_off_alone() {
        let t0 = Instant::now();
        let mut grid = FlushGrid::default();
        assert_eq!(grid.align(&cfg(), t0 + ms(100), t0), t0 + ms(100)); // origin t0
        let off = BatchingConfig {
            burst_max: Duration::ZERO,
            ..cfg()
        };
        let at = t0 + Duration::from_micros(2_345);
        assert_eq!(grid.align(&off, at, at), at);
        let short = BatchingConfig {
            burst_min: ms(10),
            ..cfg()
        };
        let due = at + ms(10);
        assert_eq!(grid.align(&short, due, at), due);
    }
}
