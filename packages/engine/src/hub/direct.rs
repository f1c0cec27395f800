//! Direct delivery: a session on the hot path gets a record's messages through its worker's
//! native topic publish (uWS `app.publish`: one shared frame per record message per worker)
//! instead of a copy in its outbox and a `ws.send` of its own.
//!
//! A worker applies the entries of its ready queue in queue order, so the hub knows exactly which
//! sessions each worker's app has subscribed to each record's topic. Besides frames, the queue
//! carries three kinds of entries (`FrameSink::entry`, row `[key, offset, length, kind, arg]`):
//! - `ENTRY_SUBSCRIBE` (key: session id, arg: record id): subscribe the session's socket to the
//!   record's topic;
//! - `ENTRY_UNSUBSCRIBE` (key: session id, arg: record id, 0 for every topic): unsubscribe it;
//! - `ENTRY_PUBLISH` (key: record id, data: the frame, arg: direct subscribers on that worker):
//!   publish the frame to the record's topic.
//!
//! Invariants:
//! - A subscription is direct (`SubState::direct`) only while its session is `eligible`, and a
//!   direct subscription never has a message of its record in the session's outbox: the fan-out
//!   skips it (one publish entry per worker with a direct subscriber instead), and anything else
//!   that queues a message of the record to that one session (an image, a replay) first ends the
//!   subscription's direct mode (`Subscriptions::subscriber`).
//! - The subscribe entry is appended right after the frame that took everything the session had
//!   queued (`Hub::promote`, after its flush, only with an empty outbox), so the session's image
//!   of the record is never overtaken by a publish.
//! - Every way out of direct mode (blocked, conflating, throttling or a burst window turned on,
//!   unsubscribe, entitlement revoke, tier retarget, a fresh image, session close) appends the
//!   unsubscribe entry before anything else of the session leaves: `DirectOps` is emitted at the
//!   start of every flush pass (`Hub::run_due`), before any frame of that pass.
//! - `SubList::direct` counts the direct subscriptions of each worker (the publish entry's
//!   subscriber count, for the worker's counters), `Session::direct` those of a session.

use std::time::Instant;

use super::{FrameSink, Hub};
use crate::config::BatchingConfig;
use crate::session::{FrameMeta, Sampler, Session};

/// Ready-queue entry kind (in the close-code column): subscribe a session to a record's topic.
pub const ENTRY_SUBSCRIBE: u16 = 1;
/// Ready-queue entry kind: unsubscribe a session from a record's topic (record 0: from all).
pub const ENTRY_UNSUBSCRIBE: u16 = 2;
/// Ready-queue entry kind: publish the entry's frame to a record's topic.
pub const ENTRY_PUBLISH: u16 = 3;

/// true when session `s` may get record messages through topic publishes: its worker applies
/// topic entries, it is on the hot path (not blocked, not conflating, no throttling) and has no
/// burst window to respect (batching off).
#[inline]
pub(super) fn eligible(s: &Session, batching: &BatchingConfig) -> bool {
    s.topics && s.fast && batching.batching_off()
}

/// One entry waiting for the next flush pass.
#[derive(Debug, Clone, Copy)]
struct Op {
    worker: u32,
    kind: u16,
    key: u32,
    arg: u32,
    /// Frame bytes in `DirectOps::data` (publish only).
    at: u32,
    len: u32,
    /// Latency samples in `DirectOps::samples` (publish only).
    samples_at: u32,
    samples_len: u32,
}

/// The topic entries made since the last flush pass, in order, and the per-worker samplers of
/// the messages delivered by publishes.
#[derive(Debug, Default)]
pub(super) struct DirectOps {
    ops: Vec<Op>,
    /// Publish frames' messages, back to back.
    data: Vec<u8>,
    /// Origin `ts` of the sampled deliveries of each publish, back to back.
    samples: Vec<f64>,
    /// `(worker, sampler)`: one in N deliveries of the worker's publishes is sampled.
    samplers: Vec<(u32, Sampler)>,
}

impl DirectOps {
    fn op(&mut self, worker: u32, kind: u16, key: u32, arg: u32) {
        self.ops.push(Op {
            worker,
            kind,
            key,
            arg,
            at: 0,
            len: 0,
            samples_at: 0,
            samples_len: 0,
        });
    }

    /// Session `sid` of `worker` now gets record `rid` through its topic.
    pub(super) fn subscribe(&mut self, worker: u32, sid: u32, rid: u32) {
        self.op(worker, ENTRY_SUBSCRIBE, sid, rid);
    }

    /// Session `sid` of `worker` no longer gets record `rid` (0: any record) through its topic.
    pub(super) fn unsubscribe(&mut self, worker: u32, sid: u32, rid: u32) {
        self.op(worker, ENTRY_UNSUBSCRIBE, sid, rid);
    }

    /// Publishes `msg` (`,` + one record message of `rid`, as fanned out) to the `subscribers`
    /// direct subscribers `worker` has for `rid`; `ts`: the message's origin timestamp (latency
    /// samples, counted per delivery at the worker's sampling period).
    pub(super) fn publish(&mut self, worker: u32, rid: u32, msg: &[u8], subscribers: u32, ts: Option<f64>) {
        let msg = msg.get(1..).unwrap_or_default();
        let samples_at = self.samples.len();
        if let Some(ts) = ts {
            let i = match self.samplers.iter().position(|(w, _)| *w == worker) {
                Some(i) => i,
                None => {
                    self.samplers.push((worker, Sampler::default()));
                    self.samplers.len() - 1
                }
            };
            let n = self.samplers[i].1.take_n(subscribers);
            self.samples.extend(std::iter::repeat_n(ts, n as usize));
        }
        // Sizes fit u32: the buffer is emitted every pass.
        self.ops.push(Op {
            worker,
            kind: ENTRY_PUBLISH,
            key: rid,
            arg: subscribers,
            at: self.data.len() as u32,
            len: msg.len() as u32,
            samples_at: samples_at as u32,
            samples_len: (self.samples.len() - samples_at) as u32,
        });
        self.data.extend_from_slice(msg);
    }

    /// Samples one in `every` deliveries of `worker`'s publishes from now on.
    pub(super) fn set_every(&mut self, worker: u32, every: u32) {
        match self.samplers.iter_mut().find(|(w, _)| *w == worker) {
            Some((_, s)) => s.set_every(every),
            None => {
                let mut s = Sampler::default();
                s.set_every(every);
                self.samplers.push((worker, s));
            }
        }
    }

    /// Appends every waiting entry to `sink`, in order, and empties the buffer.
    pub(super) fn emit(&mut self, sink: &mut dyn FrameSink) {
        for op in &self.ops {
            if op.kind == ENTRY_PUBLISH {
                let (at, len) = (op.at as usize, op.len as usize);
                let (s_at, s_len) = (op.samples_at as usize, op.samples_len as usize);
                let meta = FrameMeta {
                    messages: op.arg,
                    records: &self.samples[s_at..s_at + s_len],
                    rows: &[],
                };
                sink.entry(
                    op.worker,
                    op.key,
                    &[b"[", &self.data[at..at + len], b"]"],
                    op.kind,
                    &meta,
                );
            } else {
                let meta = FrameMeta {
                    messages: op.arg,
                    ..FrameMeta::default()
                };
                sink.entry(op.worker, op.key, &[], op.kind, &meta);
            }
        }
        self.ops.clear();
        self.data.clear();
        self.samples.clear();
    }
}

impl Hub {
    /// Session `slot` was flushed: when it is eligible, has subscriptions that are not direct
    /// and nothing left in its outbox, they become direct, their subscribe entries appended to
    /// `sink` right after the frame that just took its outbox.
    pub(super) fn promote(&mut self, slot: u32, sink: &mut dyn FrameSink) {
        let Hub {
            cfg,
            subscriptions,
            sessions,
            ..
        } = self;
        let Some(s) = sessions.get_mut(slot) else {
            return;
        };
        if !s.promote || !s.outbox.is_empty() || !eligible(s, &cfg.batching) {
            return;
        }
        s.promote = false;
        let subs: Vec<(u32, u32)> = s.subs.iter().map(|(&rid, &idx)| (rid, idx)).collect();
        for (rid, idx) in subs {
            subscriptions.make_direct(s, rid, idx);
        }
        subscriptions.direct.emit(sink);
    }

    /// New batching settings: sessions that are no longer eligible leave direct mode, sessions
    /// that became eligible are flushed now (and so promoted).
    pub(super) fn set_batching(&mut self, b: BatchingConfig, now: Instant) {
        self.cfg.batching = b;
        let Hub {
            subscriptions,
            sessions,
            ..
        } = self;
        let mut due = Vec::new();
        for (slot, s) in sessions.slots.iter_mut().enumerate() {
            let Some(s) = s.as_mut() else { continue };
            s.refresh_fast(&b);
            if !eligible(s, &b) {
                subscriptions.end_all_direct(s);
            } else if s.promote {
                due.push(slot as u32);
            }
        }
        for slot in due {
            self.sessions.schedule(slot, now);
        }
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
