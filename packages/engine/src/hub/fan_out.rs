//! Fan-out: encoded messages into subscribers' outboxes, throttling, conflation of blocked
//! sessions (flushing: `flush.rs`).

use std::cmp::Reverse;
use std::time::Instant;

use super::{schedule, Hub, SubState};
use crate::config::EngineConfig;
use crate::session::Session;
use crate::wire::encode;

/// Shared pieces of a delivery (borrowed from disjoint hub fields).
pub(super) struct Ctx<'a> {
    pub(super) cfg: &'a EngineConfig,
    pub(super) timers: &'a mut std::collections::BinaryHeap<Reverse<(Instant, u32)>>,
    pub(super) stats: &'a mut crate::stats::EngineStats,
    pub(super) now: Instant,
}

impl Ctx<'_> {
    /// Appends a record message (`bytes` starts with `,`) and arms the session's flush. `ts`: the
    /// origin timestamp of a `record.update` / `record.image`, for the latency samples.
    #[inline]
    pub(super) fn queue(&mut self, s: &mut Session, slot: u32, bytes: &[u8], ts: Option<f64>) {
        s.outbox.push_record(bytes);
        if let Some(ts) = ts {
            s.outbox.samples().record(ts);
        }
        self.stats.deliveries += 1;
        let due = s.burst.on_message(&self.cfg.batching, self.now);
        if s.due.is_none() {
            s.due = Some(due);
            if s.blocked_since.is_none() {
                schedule(self.timers, s, slot, due);
            }
        }
    }
}

/// Subscribers ahead of the current one whose outbox tail is prefetched.
const PREFETCH_AHEAD: usize = 8;

#[inline(always)]
fn prefetch_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

fn mark_dirty(s: &mut Session, st: &mut SubState, id: u32) {
    st.held = false;
    st.mask = 0;
    st.merged = 0;
    if !st.dirty {
        st.dirty = true;
        s.dirty.push(id);
    }
}

impl Hub {
    /// Appends `scratch` (`,` + the message for record `id`) to every subscriber's outbox.
    pub(super) fn fan_out(&mut self, id: u32, is_image: bool, mask: u128, now: Instant) {
        let Hub {
            cfg,
            subs,
            sessions,
            timers,
            scratch,
            stats,
            to_conflate,
            store,
            ..
        } = self;
        let Some(list) = subs.get_mut(id as usize - 1) else {
            return;
        };
        let (layout, ts) = store.get(id).map_or((0, None), |r| (r.layout, Some(r.ts)));
        let bytes: &[u8] = scratch;
        let mut ctx = Ctx {
            cfg,
            timers,
            stats,
            now,
        };
        for i in 0..list.slots.len() {
            // Fan-out writes to a thousand different outboxes: pull the tail (two lines: a message is
            // ~100 bytes) of the outbox 8 subscribers ahead into cache so copies overlap misses.
            if let Some(Some(Some(a))) = list.slots.get(i + PREFETCH_AHEAD).map(|&a| sessions.get(a as usize)) {
                prefetch_write(a.outbox.tail_ptr());
                prefetch_write(a.outbox.tail_ptr().wrapping_add(64));
            }
            let slot = list.slots[i];
            let Some(s) = sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                continue;
            };
            if s.fast {
                // Hot path: not blocked, not conflating, no throttling.
                ctx.queue(s, slot, bytes, ts);
                continue;
            }
            let st = &mut list.state[i];
            if s.conflating {
                mark_dirty(s, st, id);
                ctx.stats.dropped_updates += 1;
                continue;
            }
            let throttle = ctx.cfg.batching.throttle;
            if !throttle.is_zero() && !is_image {
                if st.held {
                    st.mask |= mask;
                    st.merged += 1;
                    ctx.stats.conflated_updates += 1;
                    continue;
                }
                if let Some(last) = st.last_sent.filter(|&t| now < t + throttle) {
                    st.held = true;
                    st.mask = mask;
                    st.merged = 1;
                    st.layout = layout;
                    s.throttled.push(id);
                    schedule(ctx.timers, s, slot, last + throttle);
                    continue;
                }
            }
            if is_image {
                st.held = false;
                st.mask = 0;
                st.merged = 0;
            }
            st.last_sent = Some(now);
            ctx.queue(s, slot, bytes, ts);
            if s.blocked_since.is_some() && s.outbox.len() > ctx.cfg.outbox_conflate_bytes {
                to_conflate.push(slot);
            }
        }
    }

    /// Appends `scratch` (`,` + a record message of `id` that is not a field update, e.g.
    /// `record.status`) to every subscriber's outbox, in order with the record's updates; a
    /// conflating session marks the record dirty instead (its image, sent on the drain, carries
    /// the status). Throttling does not hold it.
    pub(super) fn fan_out_message(&mut self, id: u32, now: Instant) {
        let Hub {
            cfg,
            subs,
            sessions,
            timers,
            scratch,
            stats,
            ..
        } = self;
        let Some(list) = subs.get_mut(id as usize - 1) else {
            return;
        };
        let mut ctx = Ctx {
            cfg,
            timers,
            stats,
            now,
        };
        for i in 0..list.slots.len() {
            let slot = list.slots[i];
            let Some(s) = sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                continue;
            };
            if s.conflating {
                mark_dirty(s, &mut list.state[i], id);
                continue;
            }
            ctx.queue(s, slot, scratch, None);
        }
    }

    /// Queues a fresh image of `id` for one subscriber (subscribe, unblock), or marks it dirty
    /// while the session conflates.
    pub(super) fn send_image(&mut self, slot: u32, id: u32, idx: u32, now: Instant) {
        self.send_image_flagged(slot, id, idx, false, now);
    }

    /// Queues record `id`'s history entries from `from` on (`record.resume`) for one subscriber,
    /// as a publish would have; a conflating session marks the record dirty instead (its image
    /// follows on the drain).
    pub(super) fn replay_history(&mut self, slot: u32, id: u32, idx: u32, from: usize, now: Instant) {
        let Hub {
            cfg,
            subs,
            sessions,
            timers,
            stats,
            history,
            ..
        } = self;
        let (Some(s), Some(st)) = (
            sessions.get_mut(slot as usize).and_then(Option::as_mut),
            subs.get_mut(id as usize - 1)
                .and_then(|l| l.state.get_mut(idx as usize)),
        ) else {
            return;
        };
        if s.conflating {
            mark_dirty(s, st, id);
            return;
        }
        st.last_sent = Some(now);
        let mut ctx = Ctx {
            cfg,
            timers,
            stats,
            now,
        };
        for bytes in history.entries_from(id, from) {
            ctx.queue(s, slot, bytes, None);
        }
    }

    /// `send_image`; `reset` flags the image (`record.resume` that could not replay).
    pub(super) fn send_image_flagged(&mut self, slot: u32, id: u32, idx: u32, reset: bool, now: Instant) {
        let Hub {
            cfg,
            subs,
            sessions,
            timers,
            scratch,
            stats,
            store,
            ..
        } = self;
        let (Some(s), Some(list)) = (
            sessions.get_mut(slot as usize).and_then(Option::as_mut),
            subs.get_mut(id as usize - 1),
        ) else {
            return;
        };
        let Some(st) = list.state.get_mut(idx as usize) else {
            return;
        };
        if s.conflating {
            mark_dirty(s, st, id);
            return;
        }
        let Some(rec) = store.get(id) else { return };
        scratch.clear();
        scratch.push(b',');
        let subject = super::tiers::shown_subject(store.subject(id), &s.tier);
        encode::image(scratch, id, subject, rec.seq, rec.ts, store.image_fields(rec));
        if reset {
            encode::flag_reset(scratch);
        }
        st.held = false;
        st.mask = 0;
        st.merged = 0;
        st.dirty = false;
        st.last_sent = Some(now);
        let (stale, ts) = (rec.stale, rec.ts);
        let mut ctx = Ctx {
            cfg,
            timers,
            stats,
            now,
        };
        ctx.queue(s, slot, scratch, Some(ts));
        if stale {
            scratch.clear();
            scratch.push(b',');
            encode::record_status(scratch, id, true);
            ctx.queue(s, slot, scratch, None);
        }
    }

    /// Switches a blocked session to conflation: queued record messages are dropped and their
    /// records (and any held by throttling) marked dirty; control messages stay queued.
    pub(super) fn start_conflation(&mut self, slot: u32) {
        let Hub {
            subs, sessions, stats, ..
        } = self;
        let Some(s) = sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        if s.conflating {
            return;
        }
        s.conflating = true;
        s.fast = false;
        let (ids, dropped) = s.outbox.drop_records();
        stats.dropped_updates += ids.len() as u64;
        s.dropped_bytes += dropped as u64;
        let held = std::mem::take(&mut s.throttled);
        for rid in ids.into_iter().chain(held) {
            let Some(&idx) = s.subs.get(&rid) else { continue };
            if let Some(st) = subs
                .get_mut(rid as usize - 1)
                .and_then(|l| l.state.get_mut(idx as usize))
            {
                mark_dirty(s, st, rid);
            }
        }
    }

    /// The socket drained: dirty records go out as images, then the outbox is flushed when due.
    pub(super) fn unblock(&mut self, slot: u32, now: Instant) {
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        if s.blocked_since.is_none() {
            return;
        }
        s.blocked_since = None;
        s.dropped_bytes = 0;
        let dirty = if s.conflating {
            std::mem::take(&mut s.dirty)
        } else {
            Vec::new()
        };
        s.conflating = false;
        s.refresh_fast(&self.cfg.batching);
        for rid in dirty {
            let Some(s) = self.sessions.get(slot as usize).and_then(Option::as_ref) else {
                return;
            };
            let Some(&idx) = s.subs.get(&rid) else { continue };
            let is_dirty = self
                .subs
                .get(rid as usize - 1)
                .and_then(|l| l.state.get(idx as usize))
                .is_some_and(|st| st.dirty);
            if is_dirty {
                self.send_image(slot, rid, idx, now);
            }
        }
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        if !s.outbox.is_empty() {
            let due = s.due.unwrap_or(now);
            s.due = Some(due);
            schedule(&mut self.timers, s, slot, due);
        }
    }
}
