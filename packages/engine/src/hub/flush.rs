//! Flush: fires due timers, turns due outboxes into frames for the `FrameSink`, releases
//! throttled updates and closes slow consumers.

use std::time::Instant;

use std::cmp::Reverse;

use super::fan_out::Ctx;
use super::{schedule, FrameSink, Hub, MaskBits, CLOSE_SLOW_CONSUMER};
use crate::wire::encode;

impl Hub {
    /// Fires every timer due at `now`: expires statements' time windows, turns records stale,
    /// releases throttled updates, flushes due outboxes into `sink`, closes slow consumers.
    pub fn run_due(&mut self, now: Instant, sink: &mut dyn FrameSink) {
        self.expire_views(now);
        self.run_statement_timers(now);
        self.expire_status(now);
        while let Some(&Reverse((at, slot))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                continue;
            };
            if s.timer != Some(at) {
                continue; // superseded by an earlier timer that already ran
            }
            s.timer = None;
            self.service(slot, now, sink);
        }
        while let Some(slot) = self.to_conflate.pop() {
            self.start_conflation(slot);
        }
    }

    fn service(&mut self, slot: u32, now: Instant, sink: &mut dyn FrameSink) {
        let slow = self.cfg.slow_consumer;
        let Some(s) = self.sessions.get(slot as usize).and_then(Option::as_ref) else {
            return;
        };
        if let Some(since) = s.blocked_since {
            if now >= since + slow {
                self.close_slow(slot, now, sink);
                return;
            }
        }
        let throttle_next = self.release_throttled(slot, now);
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        let mut next = throttle_next;
        if let Some(since) = s.blocked_since {
            if s.outbox.urgent() {
                // Replies first: the control messages leave now (in their order), the record
                // messages stay held for the drain (or conflation).
                let mut frame = std::mem::take(&mut self.reply_scratch);
                frame.clear();
                let messages = s.outbox.take_control(&mut frame);
                sink.frame_with(s.worker, s.sid, &[b"[", &frame, b"]"], &s.outbox.control_meta(messages));
                s.outbox.samples().clear_rows();
                self.stats.frames_out += 1;
                self.stats.bytes_out += frame.len() as u64 + 2;
                self.stats.replies_ahead += 1;
                self.reply_scratch = frame;
                if s.outbox.is_empty() {
                    s.due = None;
                }
            }
            next = min_opt(next, since + slow);
        } else if !s.outbox.is_empty() {
            match s.due {
                Some(d) if d > now => next = min_opt(next, d),
                _ => {
                    let len = s.outbox.len();
                    sink.frame_with(s.worker, s.sid, &[b"[", s.outbox.bytes(), b"]"], &s.outbox.frame_meta());
                    self.stats.frames_out += 1;
                    self.stats.bytes_out += len as u64 + 2;
                    s.outbox.clear();
                    s.burst.on_flush(&self.cfg.batching, now);
                    s.due = None;
                }
            }
        }
        if let Some(t) = next {
            schedule(&mut self.timers, s, slot, t);
        }
    }

    /// Sends held (throttled) updates whose interval has passed; returns the next one's due time.
    fn release_throttled(&mut self, slot: u32, now: Instant) -> Option<Instant> {
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
        let s = sessions.get_mut(slot as usize).and_then(Option::as_mut)?;
        if s.throttled.is_empty() {
            return None;
        }
        let throttle = cfg.batching.throttle;
        let mut next = None;
        let mut keep = Vec::new();
        let mut ctx = Ctx {
            cfg,
            timers,
            stats,
            now,
        };
        for rid in std::mem::take(&mut s.throttled) {
            let Some(&idx) = s.subs.get(&rid) else { continue };
            let Some(st) = subs
                .get_mut(rid as usize - 1)
                .and_then(|l| l.state.get_mut(idx as usize))
            else {
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
            ctx.queue(s, slot, scratch, Some(rec.ts));
        }
        s.throttled = keep;
        next
    }

    fn close_slow(&mut self, slot: u32, now: Instant, sink: &mut dyn FrameSink) {
        let Some(s) = self.sessions.get(slot as usize).and_then(Option::as_ref) else {
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
