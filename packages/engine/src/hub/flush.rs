//! Flush: fires due timers, turns due outboxes into frames for the `FrameSink`, releases
//! throttled updates and closes slow consumers.

use std::time::Instant;

use super::sessions::{schedule, Sessions};
use super::{FrameSink, Hub, MaskBits, CLOSE_SLOW_CONSUMER};
use crate::config::EngineConfig;
use crate::stats::EngineStats;
use crate::wire::encode;

impl Sessions {
    /// Flushes session `slot` (not closing as a slow consumer) into `sink`: a blocked session
    /// sends its control messages now and keeps its record messages held; an unblocked one sends
    /// its whole outbox as one frame once due. Re-arms its timer for the earliest of `next` (a
    /// throttled update), its flush and its slow-consumer deadline.
    pub(super) fn flush(
        &mut self,
        slot: u32,
        next: Option<Instant>,
        cfg: &EngineConfig,
        stats: &mut EngineStats,
        now: Instant,
        sink: &mut dyn FrameSink,
    ) {
        let Some(s) = self.slots.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        let mut next = next;
        if let Some(since) = s.blocked_since {
            if s.outbox.urgent() {
                // Replies first: the control messages leave now (in their order), the record
                // messages stay held for the drain (or conflation).
                let frame = &mut self.reply_scratch;
                frame.clear();
                let messages = s.outbox.take_control(frame);
                sink.frame_with(
                    s.worker,
                    s.sid,
                    &[b"[", frame.as_slice(), b"]"],
                    &s.outbox.control_meta(messages),
                );
                s.outbox.samples().clear_rows();
                stats.frames_out += 1;
                stats.bytes_out += frame.len() as u64 + 2;
                stats.replies_ahead += 1;
                if s.outbox.is_empty() {
                    s.due = None;
                }
            }
            next = min_opt(next, since + cfg.slow_consumer);
        } else if !s.outbox.is_empty() {
            match s.due {
                Some(d) if d > now => next = min_opt(next, d),
                _ => {
                    let len = s.outbox.len();
                    sink.frame_with(s.worker, s.sid, &[b"[", s.outbox.bytes(), b"]"], &s.outbox.frame_meta());
                    stats.frames_out += 1;
                    stats.bytes_out += len as u64 + 2;
                    s.outbox.clear();
                    s.burst.on_flush(&cfg.batching, now);
                    s.due = None;
                }
            }
        }
        if let Some(t) = next {
            schedule(&mut self.timers, s, slot, t);
        }
    }
}

impl Hub {
    /// Fires every timer due at `now`: expires statements' time windows, turns records stale,
    /// releases throttled updates, flushes due outboxes into `sink`, closes slow consumers.
    /// The topic entries made since the last pass go first (`direct.rs`): an unsubscribe
    /// entry precedes any frame of its session.
    pub fn run_due(&mut self, now: Instant, sink: &mut dyn FrameSink) {
        self.subscriptions.direct.emit(sink);
        self.views.expire(now, &mut self.stats);
        self.run_statement_timers(now);
        self.expire_status(now);
        self.subscriptions.direct.emit(sink);
        while let Some(slot) = self.sessions.pop_due(now) {
            self.service(slot, now, sink);
        }
        while let Some(slot) = self.subscriptions.to_conflate.pop() {
            self.start_conflation(slot);
        }
        self.subscriptions.direct.emit(sink);
    }

    /// Services session `slot`, whose timer fired: closes it as a slow consumer, or releases
    /// its throttled updates and flushes its outbox (`Sessions::flush`), after which its
    /// subscriptions may turn direct (`Hub::promote`).
    fn service(&mut self, slot: u32, now: Instant, sink: &mut dyn FrameSink) {
        let slow = self.cfg.slow_consumer;
        let Some(s) = self.sessions.get(slot) else {
            return;
        };
        if let Some(since) = s.blocked_since {
            if now >= since + slow {
                self.close_slow(slot, now, sink);
                return;
            }
        }
        let throttle_next = self.release_throttled(slot, now);
        self.sessions
            .flush(slot, throttle_next, &self.cfg, &mut self.stats, now, sink);
        self.promote(slot, sink);
    }

    /// Sends held (throttled) updates whose interval has passed; returns the next one's due time.
    fn release_throttled(&mut self, slot: u32, now: Instant) -> Option<Instant> {
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
        let s = slots.get_mut(slot as usize).and_then(Option::as_mut)?;
        if s.throttled.is_empty() {
            return None;
        }
        let throttle = out.cfg.batching.throttle;
        let mut next = None;
        let mut keep = Vec::new();
        for rid in std::mem::take(&mut s.throttled) {
            let Some(&idx) = s.subs.get(&rid) else { continue };
            let Some(st) = subscriptions.state_mut(rid, idx) else {
                continue;
            };
            if !st.held {
                continue;
            }
            let due = st.last_sent.map_or(now, |t| t + throttle);
            if due > now {
                keep.push(rid);
                next = min_opt(next, due);
                continue;
            }
            st.held = false;
            let Some(rec) = store.get(rid) else { continue };
            scratch.clear();
            scratch.push(b',');
            if st.layout != rec.layout {
                encode::image(
                    scratch,
                    rid,
                    store.subject(rid),
                    rec.seq,
                    rec.ts,
                    store.image_fields(rec),
                );
            } else {
                let fields = store.fields_at(rec, MaskBits(st.mask));
                encode::update(scratch, rid, rec.seq, rec.ts, fields, st.merged > 1);
            }
            st.mask = 0;
            st.merged = 0;
            st.last_sent = Some(now);
            out.queue(s, slot, scratch, Some(rec.ts));
        }
        s.throttled = keep;
        next
    }

    fn close_slow(&mut self, slot: u32, now: Instant, sink: &mut dyn FrameSink) {
        let Some(s) = self.sessions.get(slot) else {
            return;
        };
        let since = s.blocked_since.unwrap_or(now);
        let queued = s.outbox.len() as u64 + s.dropped_bytes;
        let reason = format!(
            "slow consumer: blocked {} ms with {} queued",
            now.saturating_duration_since(since).as_millis(),
            human_bytes(queued)
        );
        sink.frame(s.worker, s.sid, &[reason.as_bytes()], CLOSE_SLOW_CONSUMER);
        self.stats.slow_consumer_closes += 1;
        self.remove_session(slot);
    }
}

fn min_opt(a: Option<Instant>, b: Instant) -> Option<Instant> {
    Some(a.map_or(b, |a| a.min(b)))
}

/// `2.1 MB`, `512.0 KB`, `100 B` (decimal units, as in the close reason).
pub fn human_bytes(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1} KB", n as f64 / 1e3)
    } else {
        format!("{n} B")
    }
}
