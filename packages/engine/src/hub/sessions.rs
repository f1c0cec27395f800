//! Sessions: the slots of open sessions (each with its outbox, burst and blocked state, see
//! `crate::session`), the free list of vacated slots, the sid -> slot index and the flush timers.
//!
//! Invariants: a slot is either `Some` and listed in `by_sid` under its session's sid, or `None`
//! and on `free` (slots are reused, never shrunk, so subscriber lists can name a session by its
//! slot). `timers` may hold stale entries: an entry `(at, slot)` is live only while the slot's
//! `Session::timer` is `Some(at)` (`schedule` keeps the earliest). `reply_scratch` is scratch
//! for the control messages of a blocked session's reply frame and holds nothing between calls.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use crate::session::Session;

/// Open sessions, addressed by slot (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Sessions {
    /// Session by slot; `None`: vacated (listed in `free`).
    pub(super) slots: Vec<Option<Session>>,
    /// Vacated slots, reused before the slab grows.
    pub(super) free: Vec<u32>,
    /// Slot of each open session, by session id.
    pub(super) by_sid: HashMap<u32, u32>,
    /// Flush / throttle / slow-consumer deadlines, earliest first (may be stale).
    pub(super) timers: BinaryHeap<Reverse<(Instant, u32)>>,
    /// The control messages of a blocked session's reply frame (reused).
    pub(super) reply_scratch: Vec<u8>,
}

/// Queues a timer for `slot` at `at` unless an earlier one is already queued.
pub(super) fn schedule(timers: &mut BinaryHeap<Reverse<(Instant, u32)>>, s: &mut Session, slot: u32, at: Instant) {
    if s.timer.is_none_or(|t| at < t) {
        s.timer = Some(at);
        timers.push(Reverse((at, slot)));
    }
}
