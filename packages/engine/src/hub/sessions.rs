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

use crate::batch::FlushGrid;
use crate::config::{BatchingConfig, EngineConfig};
use crate::session::{Outbox, Session};
use crate::stats::EngineStats;

/// Flush / throttle / slow-consumer deadlines `(at, slot)`, earliest first.
pub(super) type Timers = BinaryHeap<Reverse<(Instant, u32)>>;

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
    pub(super) timers: Timers,
    /// The control messages of a blocked session's reply frame (reused).
    pub(super) reply_scratch: Vec<u8>,
    /// The grid every session's live-update flush deadlines are rounded down to.
    pub(super) grid: FlushGrid,
}

impl Sessions {
    /// Slot of session `sid`, if it is open.
    #[inline]
    pub(super) fn slot(&self, sid: u32) -> Option<u32> {
        self.by_sid.get(&sid).copied()
    }

    /// The session in `slot`, if the slot is occupied.
    #[inline]
    pub(super) fn get(&self, slot: u32) -> Option<&Session> {
        self.slots.get(slot as usize)?.as_ref()
    }

    /// The session in `slot`, if the slot is occupied.
    #[inline]
    pub(super) fn get_mut(&mut self, slot: u32) -> Option<&mut Session> {
        self.slots.get_mut(slot as usize)?.as_mut()
    }

    /// Session `sid`, if it is open.
    pub(super) fn by_sid(&self, sid: u32) -> Option<&Session> {
        self.get(self.slot(sid)?)
    }

    /// Every open session.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Session> {
        self.slots.iter_mut().flatten()
    }

    /// Slots of the sessions of `worker`, lowest first.
    pub(super) fn slots_of_worker(&self, worker: u32) -> Vec<u32> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.as_ref().is_some_and(|s| s.worker == worker))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Places `session` in a vacated slot (or a new one) and indexes it by its sid; returns the
    /// slot. The caller has dropped any session of the same sid.
    pub(super) fn insert(&mut self, session: Session) -> u32 {
        let sid = session.sid;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(session);
                slot
            }
            None => {
                self.slots.push(Some(session));
                (self.slots.len() - 1) as u32
            }
        };
        self.by_sid.insert(sid, slot);
        slot
    }

    /// Vacates `slot` and returns its session (its subscriptions are the caller's to remove).
    pub(super) fn take(&mut self, slot: u32) -> Option<Session> {
        let s = self.slots.get_mut(slot as usize).and_then(Option::take)?;
        self.by_sid.remove(&s.sid);
        self.free.push(slot);
        Some(s)
    }

    /// Earliest queued timer (may be stale).
    pub(super) fn next_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((t, _))| *t)
    }

    /// Pops the next timer due by `now` that is still live and returns its slot (the session's
    /// timer is cleared); `None` when no timer is due.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<u32> {
        while let Some(&Reverse((at, slot))) = self.timers.peek() {
            if at > now {
                return None;
            }
            self.timers.pop();
            let Some(s) = self.slots.get_mut(slot as usize).and_then(Option::as_mut) else {
                continue;
            };
            if s.timer != Some(at) {
                continue; // superseded by an earlier timer that already ran
            }
            s.timer = None;
            return Some(slot);
        }
        None
    }

    /// Queues a timer for `slot` at `at` unless an earlier one is already queued.
    pub(super) fn schedule(&mut self, slot: u32, at: Instant) {
        if let Some(s) = self.slots.get_mut(slot as usize).and_then(Option::as_mut) {
            schedule(&mut self.timers, s, slot, at);
        }
    }

    /// Queues `msg` as the answer to a request of session `slot` and makes the session due now:
    /// a reply (`record.subscribed`, `view.created`, `error`, ...) is flushed at the end of this
    /// pass with whatever the outbox already holds, never held for the burst window (a client is
    /// waiting on it; live updates keep their batching). When the session is blocked its control
    /// messages leave alone and its record messages stay held (`flush.rs`).
    pub(super) fn push_reply(
        &mut self,
        slot: u32,
        msg: &[u8],
        batching: &BatchingConfig,
        stats: &mut EngineStats,
        now: Instant,
    ) {
        let Some((s, timers, _)) = self.push_with(slot, msg, Outbox::push_reply, batching, stats, now) else {
            return;
        };
        if s.due.is_none_or(|d| d > now) {
            s.due = Some(now);
        }
        // blocked too: a blocked session's replies leave now, ahead of its held record messages
        schedule(timers, s, slot, now);
    }

    /// Queues `msg` as a control message of session `slot`.
    pub(super) fn push_control(
        &mut self,
        slot: u32,
        msg: &[u8],
        batching: &BatchingConfig,
        stats: &mut EngineStats,
        now: Instant,
    ) {
        let Some((s, timers, due)) = self.push_with(slot, msg, Outbox::push_control, batching, stats, now) else {
            return;
        };
        if s.due.is_none() {
            s.due = Some(due);
            if s.blocked_since.is_none() {
                schedule(timers, s, slot, due);
            }
        }
    }

    /// As `push_reply` for a message from outside a request (an order ack): the session is due
    /// now whatever it was due before. Unknown sid: ignored.
    pub(super) fn push_reply_now(
        &mut self,
        sid: u32,
        msg: &[u8],
        batching: &BatchingConfig,
        stats: &mut EngineStats,
        now: Instant,
    ) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        let Some((s, timers, _)) = self.push_with(slot, msg, Outbox::push_reply, batching, stats, now) else {
            return;
        };
        s.due = Some(now);
        schedule(timers, s, slot, now);
    }

    /// What queuing a reply or control message shares: appends `msg` to session `slot`'s outbox
    /// with `push`, counts the delivery and feeds the burst window. Returns the session, the
    /// timers and the due time the burst window gives (the caller arms the flush); `None` when
    /// the slot is vacated.
    #[inline]
    fn push_with(
        &mut self,
        slot: u32,
        msg: &[u8],
        push: impl FnOnce(&mut Outbox, &[u8]),
        batching: &BatchingConfig,
        stats: &mut EngineStats,
        now: Instant,
    ) -> Option<(&mut Session, &mut Timers, Instant)> {
        let Sessions {
            slots, timers, grid, ..
        } = self;
        let s = slots.get_mut(slot as usize)?.as_mut()?;
        push(&mut s.outbox, msg);
        stats.deliveries += 1;
        let due = grid.align(batching, s.burst.on_message(batching, now), now);
        Some((s, timers, due))
    }

    /// The session slots and a `Delivery` over this part's timers: the one borrow split every
    /// fan-out and flush path takes to queue into many outboxes.
    #[inline]
    pub(super) fn delivery<'a>(
        &'a mut self,
        cfg: &'a EngineConfig,
        stats: &'a mut EngineStats,
        now: Instant,
    ) -> (&'a mut [Option<Session>], Delivery<'a>) {
        let Sessions {
            slots, timers, grid, ..
        } = self;
        (
            slots,
            Delivery {
                cfg,
                timers,
                grid,
                stats,
                now,
            },
        )
    }
}

/// What queuing a message into an outbox touches besides the session: the settings, the timers,
/// the counters and the time (borrowed from disjoint hub parts, see `Sessions::delivery`).
pub(super) struct Delivery<'a> {
    pub(super) cfg: &'a EngineConfig,
    pub(super) timers: &'a mut Timers,
    pub(super) grid: &'a mut FlushGrid,
    pub(super) stats: &'a mut EngineStats,
    pub(super) now: Instant,
}

impl Delivery<'_> {
    /// Appends a record message (`bytes` starts with `,`) to session `s` (in `slot`) and arms
    /// its flush. `ts`: the origin timestamp of a `record.update` / `record.image`, for the
    /// latency samples.
    #[inline]
    pub(super) fn queue(&mut self, s: &mut Session, slot: u32, bytes: &[u8], ts: Option<f64>) {
        s.outbox.push_record(bytes);
        if let Some(ts) = ts {
            s.outbox.samples().record(ts);
        }
        self.stats.deliveries += 1;
        let due = self.grid.align(
            &self.cfg.batching,
            s.burst.on_message(&self.cfg.batching, self.now),
            self.now,
        );
        if s.due.is_none() {
            s.due = Some(due);
            if s.blocked_since.is_none() {
                schedule(self.timers, s, slot, due);
            }
        }
    }
}

/// Queues a timer for `slot` at `at` unless an earlier one is already queued.
pub(super) fn schedule(timers: &mut Timers, s: &mut Session, slot: u32, at: Instant) {
    if s.timer.is_none_or(|t| at < t) {
        s.timer = Some(at);
        timers.push(Reverse((at, slot)));
    }
}
