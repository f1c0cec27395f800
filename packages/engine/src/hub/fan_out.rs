//! Fan-out, the tick's second stage: the message encoded once for a record (`scratch`) is
//! appended to every subscriber's outbox, with per-subscription throttling and the conflation
//! of blocked sessions (the third stage, flushing outboxes into frames: `flush.rs`); direct
//! subscribers are skipped and get it through one topic publish per worker (`direct.rs`).

use std::time::Instant;

use super::sessions::{schedule, Delivery};
use super::subscriptions::{SubState, Subscriber, Subscriptions};
use super::Hub;
use crate::session::Session;
use crate::wire::encode;

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

pub(super) fn mark_dirty(s: &mut Session, st: &mut SubState, id: u32) {
    st.held = false;
    st.mask = 0;
    st.merged = 0;
    if !st.dirty {
        st.dirty = true;
        s.dirty.push(id);
    }
}

impl Subscriptions {
    /// Appends `bytes` (`,` + the message for record `id`, of record layout `layout` and origin
    /// timestamp `ts`; `mask`: its changed slots) to every subscriber's outbox; throttled subscriptions hold it, a
    /// conflating session marks the record dirty, a blocked session past the conflation
    /// threshold is listed in `to_conflate`; direct subscribers get one publish entry per worker.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fan_out(
        &mut self,
        sessions: &mut [Option<Session>],
        out: &mut Delivery<'_>,
        id: u32,
        layout: u32,
        ts: Option<f64>,
        bytes: &[u8],
        is_image: bool,
        mask: u128,
    ) {
        let Subscriptions {
            by_record,
            to_conflate,
            direct,
        } = self;
        let Some(list) = by_record.get_mut(id as usize - 1) else {
            return;
        };
        let now = out.now;
        if list.direct_total > 0 {
            publish_direct(direct, list, out, id, bytes, ts);
        }
        // every subscriber direct (the hot path with batching off): no outbox to visit
        let n = if list.direct_total as usize == list.slots.len() {
            0
        } else {
            list.slots.len()
        };
        for i in 0..n {
            if list.state[i].direct {
                continue;
            }
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
                out.queue(s, slot, bytes, ts);
                continue;
            }
            let st = &mut list.state[i];
            if s.conflating {
                mark_dirty(s, st, id);
                out.stats.dropped_updates += 1;
                continue;
            }
            let throttle = out.cfg.batching.throttle;
            if !throttle.is_zero() && !is_image {
                if st.held {
                    st.mask |= mask;
                    st.merged += 1;
                    out.stats.conflated_updates += 1;
                    continue;
                }
                if let Some(last) = st.last_sent.filter(|&t| now < t + throttle) {
                    st.held = true;
                    st.mask = mask;
                    st.merged = 1;
                    st.layout = layout;
                    s.throttled.push(id);
                    schedule(out.timers, s, slot, last + throttle);
                    continue;
                }
            }
            if is_image {
                st.held = false;
                st.mask = 0;
                st.merged = 0;
            }
            st.last_sent = Some(now);
            out.queue(s, slot, bytes, ts);
            if s.blocked_since.is_some() && s.outbox.len() > out.cfg.outbox_conflate_bytes {
                to_conflate.push(slot);
            }
        }
    }

    /// Appends `bytes` (`,` + a record message of `id` that is not a field update, e.g.
    /// `record.status`) to every subscriber's outbox, in order with the record's updates; a
    /// conflating session marks the record dirty instead (its image, sent on the drain, carries
    /// the status). Throttling does not hold it.
    pub(super) fn fan_out_message(
        &mut self,
        sessions: &mut [Option<Session>],
        out: &mut Delivery<'_>,
        id: u32,
        bytes: &[u8],
    ) {
        let Subscriptions { by_record, direct, .. } = self;
        let Some(list) = by_record.get_mut(id as usize - 1) else {
            return;
        };
        if list.direct_total > 0 {
            publish_direct(direct, list, out, id, bytes, None);
        }
        for i in 0..list.slots.len() {
            if list.state[i].direct {
                continue;
            }
            let slot = list.slots[i];
            let Some(s) = sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                continue;
            };
            if s.conflating {
                mark_dirty(s, &mut list.state[i], id);
                continue;
            }
            out.queue(s, slot, bytes, None);
        }
    }

    /// Switches the blocked session `s` (in `slot`) to conflation: queued record messages are
    /// dropped and their records (and any held by throttling) marked dirty; control messages
    /// stay queued. Returns the record messages dropped.
    pub(super) fn start_conflation(&mut self, s: &mut Session) -> u64 {
        if s.conflating {
            return 0;
        }
        s.conflating = true;
        s.fast = false;
        self.end_all_direct(s);
        let (ids, dropped) = s.outbox.drop_records();
        let n = ids.len() as u64;
        s.dropped_bytes += dropped as u64;
        let held = std::mem::take(&mut s.throttled);
        for rid in ids.into_iter().chain(held) {
            let Some(&idx) = s.subs.get(&rid) else { continue };
            if let Some(st) = self.state_mut(rid, idx) {
                mark_dirty(s, st, rid);
            }
        }
        n
    }
}

/// Queues one publish entry of `bytes` (`,` + a message of record `id`) per worker with direct
/// subscribers in `list`, counted as a delivery to each of them.
fn publish_direct(
    direct: &mut super::direct::DirectOps,
    list: &super::subscriptions::SubList,
    out: &mut Delivery<'_>,
    id: u32,
    bytes: &[u8],
    ts: Option<f64>,
) {
    let frame = bytes.len().saturating_sub(1) as u64 + 2;
    for &(worker, n) in &list.direct {
        if n > 0 {
            direct.publish(worker, id, bytes, n, ts);
            out.stats.deliveries += u64::from(n);
            out.stats.direct_deliveries += u64::from(n);
            out.stats.frames_out += u64::from(n);
            out.stats.bytes_out += frame * u64::from(n);
        }
    }
}

impl Hub {
    /// Fans `scratch` (`,` + the message for record `id`) out to its subscribers.
    pub(super) fn fan_out(&mut self, id: u32, is_image: bool, mask: u128, now: Instant) {
        let Hub {
            cfg,
            subscriptions,
            sessions,
            scratch,
            stats,
            store,
            ..
        } = self;
        let (layout, ts) = store.get(id).map_or((0, None), |r| (r.layout, Some(r.ts)));
        let (slots, mut out) = sessions.delivery(cfg, stats, now);
        subscriptions.fan_out(slots, &mut out, id, layout, ts, scratch, is_image, mask);
    }

    /// Fans `scratch` (a record message of `id` that is not a field update) out to its
    /// subscribers (`Subscriptions::fan_out_message`).
    pub(super) fn fan_out_message(&mut self, id: u32, now: Instant) {
        let Hub {
            cfg,
            subscriptions,
            sessions,
            scratch,
            stats,
            ..
        } = self;
        let (slots, mut out) = sessions.delivery(cfg, stats, now);
        subscriptions.fan_out_message(slots, &mut out, id, scratch);
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
            subscriptions,
            sessions,
            stats,
            history,
            ..
        } = self;
        let (slots, mut out) = sessions.delivery(cfg, stats, now);
        let Subscriber::Live(s, st) = subscriptions.subscriber(slots, slot, id, idx) else {
            return;
        };
        st.last_sent = Some(now);
        for bytes in history.entries_from(id, from) {
            out.queue(s, slot, bytes, None);
        }
    }

    /// `send_image`; `reset` flags the image (`record.resume` that could not replay).
    pub(super) fn send_image_flagged(&mut self, slot: u32, id: u32, idx: u32, reset: bool, now: Instant) {
        let Hub {
            cfg,
            subscriptions,
            sessions,
            scratch,
            stats,
            store,
            ..
        } = self;
        let (slots, mut out) = sessions.delivery(cfg, stats, now);
        let Subscriber::Live(s, st) = subscriptions.subscriber(slots, slot, id, idx) else {
            return;
        };
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
        out.queue(s, slot, scratch, Some(ts));
        if stale {
            scratch.clear();
            scratch.push(b',');
            encode::record_status(scratch, id, true);
            out.queue(s, slot, scratch, None);
        }
    }

    /// Switches blocked session `slot` to conflation (`Subscriptions::start_conflation`).
    pub(super) fn start_conflation(&mut self, slot: u32) {
        let Some(s) = self.sessions.get_mut(slot) else {
            return;
        };
        self.stats.dropped_updates += self.subscriptions.start_conflation(s);
    }

    /// The socket drained: dirty records go out as images, then the outbox is flushed when due.
    pub(super) fn unblock(&mut self, slot: u32, now: Instant) {
        let Some(s) = self.sessions.get_mut(slot) else {
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
            let Some(s) = self.sessions.get(slot) else {
                return;
            };
            let Some(&idx) = s.subs.get(&rid) else { continue };
            if self.subscriptions.state(rid, idx).is_some_and(|st| st.dirty) {
                self.send_image(slot, rid, idx, now);
            }
        }
        let Some(s) = self.sessions.get_mut(slot) else {
            return;
        };
        if !s.outbox.is_empty() {
            let due = s.due.unwrap_or(now);
            s.due = Some(due);
            self.sessions.schedule(slot, due);
        } else if s.promote {
            // nothing to flush: its subscriptions turn direct again at once (`Hub::promote`)
            self.sessions.schedule(slot, now);
        }
    }
}
