//! Mass reconnect (the `recover` and `recovery` commands of the fan-out mode): what a recovery
//! round is, what one user is waiting for while it recovers, and what the round measured.
//!
//! A round starts at a cut: every user's socket closed at once by the simulator (a network blip),
//! or the server's end (a restart). Each user then reconnects, logs in with the token and either
//! resumes (`record.resume` naming the previous `epoch` and, per subject, the id and seq it
//! holds) or subscribes again (`record.subscribe`: the fresh-image baseline). It has recovered
//! when the ack came and every record it waits an image for has one.

use crate::stats::new_histogram;
use hdrhistogram::Histogram;

/// How users recover after the cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    /// true: `record.resume`; false: `record.subscribe` (fresh images).
    pub resume: bool,
    /// When the cut happened, ms on the run clock.
    pub cut_ms: f64,
    /// A user not recovered by this time (run clock, ms) gives up and counts as failed.
    pub give_up_ms: f64,
    /// A failed reconnect attempt (refused, closed, timed out) is retried after this long, ms
    /// (plus up to as much again of per-user jitter).
    pub retry_ms: f64,
}

/// One user's progress through a round.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub round: Round,
    /// The ack (`record.resumed` / `record.subscribed`) arrived.
    pub acked: bool,
    /// Record ids whose image must still come (pending in the ack, reset, or a fresh subscribe).
    pub awaiting: Vec<u64>,
    /// Ids the ack said are pending (their image comes when a source publishes them).
    pub pending: Vec<u64>,
    /// Every record restarts from an image (a fresh subscribe, or a resume from another epoch).
    pub all_images: bool,
    /// Connection attempts so far in this round.
    pub attempts: u64,
}

impl Progress {
    pub fn new(round: Round) -> Progress {
        Progress {
            round,
            acked: false,
            awaiting: Vec::new(),
            pending: Vec::new(),
            all_images: false,
            attempts: 0,
        }
    }

    /// True once the ack came and no image is awaited.
    pub fn done(&self) -> bool {
        self.acked && self.awaiting.is_empty()
    }

    /// An image of record `id` arrived: it is no longer awaited; true when the ack had it pending.
    pub fn on_image(&mut self, id: u64) -> bool {
        self.awaiting.retain(|a| *a != id);
        self.pending.contains(&id)
    }
}

/// What a round measured on one worker (merged over workers for the answer).
#[derive(Debug, Clone)]
pub struct RecoveryStats {
    /// Users the round covers (cut, or dropped while it was armed).
    pub users: u64,
    /// Users that recovered.
    pub resumed: u64,
    /// Users that gave up (not recovered by the round's deadline).
    pub failed: u64,
    pub last_error: Option<String>,
    /// Cut -> recovered per user, µs.
    pub resume_time: Histogram<u64>,
    /// Latest recovery, ms on the run clock (0: none yet).
    pub last_resumed_ms: f64,
    /// Connection attempts (the first reconnects and the retries).
    pub attempts: u64,
    /// `record.update`s that came after the ack in the ack's frame: the replayed history.
    pub replayed: u64,
    /// `record.image`s flagged `reset: true`.
    pub reset_images: u64,
    /// Images of records the ack said were pending (a resume after a restart: a reset too).
    pub pending_images: u64,
    /// Images that answered a fresh `record.subscribe` (the baseline).
    pub fresh_images: u64,
    /// Updates with no base: no image and no held seq for the record (a resume must never do it).
    pub unbased: u64,
    /// Frames that brought a recovering user its ack or an image it waited for, and their bytes:
    /// the recovery's own traffic (the replay and reset images travel in the ack's frame).
    pub recovery_frames: u64,
    pub recovery_bytes: u64,
}

impl Default for RecoveryStats {
    fn default() -> Self {
        RecoveryStats {
            users: 0,
            resumed: 0,
            failed: 0,
            last_error: None,
            resume_time: new_histogram(),
            last_resumed_ms: 0.0,
            attempts: 0,
            replayed: 0,
            reset_images: 0,
            pending_images: 0,
            fresh_images: 0,
            unbased: 0,
            recovery_frames: 0,
            recovery_bytes: 0,
        }
    }
}

impl RecoveryStats {
    /// A user recovered at `now_ms`, `now_ms - cut_ms` after the cut.
    pub fn on_resumed(&mut self, cut_ms: f64, now_ms: f64) {
        self.resumed += 1;
        let micros = ((now_ms - cut_ms) * 1000.0).max(0.0).round() as u64;
        self.resume_time.saturating_record(micros);
        self.last_resumed_ms = self.last_resumed_ms.max(now_ms);
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &RecoveryStats) {
        self.users += other.users;
        self.resumed += other.resumed;
        self.failed += other.failed;
        if other.last_error.is_some() {
            self.last_error.clone_from(&other.last_error);
        }
        if self.resume_time.add(&other.resume_time).is_err() {
            for v in other.resume_time.iter_recorded() {
                self.resume_time.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.last_resumed_ms = self.last_resumed_ms.max(other.last_resumed_ms);
        self.attempts += other.attempts;
        self.replayed += other.replayed;
        self.reset_images += other.reset_images;
        self.pending_images += other.pending_images;
        self.fresh_images += other.fresh_images;
        self.unbased += other.unbased;
        self.recovery_frames += other.recovery_frames;
        self.recovery_bytes += other.recovery_bytes;
    }

    /// True when every user of the round recovered or gave up.
    pub fn settled(&self) -> bool {
        self.resumed + self.failed >= self.users
    }

    /// The answer's JSON fields (times in ms).
    pub fn to_json(&self, cut_ms: f64) -> serde_json::Value {
        let h = &self.resume_time;
        let ms = |q: f64| {
            if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(q) as f64 / 1000.0
            }
        };
        serde_json::json!({
            "users": self.users, "resumed": self.resumed, "failed": self.failed, "lastError": self.last_error,
            "resumeMs": {
                "count": h.len(), "p50": ms(0.5), "p90": ms(0.9), "p99": ms(0.99),
                "max": if h.is_empty() { 0.0 } else { h.max() as f64 / 1000.0 }
            },
            "lastResumedMs": if self.last_resumed_ms > 0.0 { self.last_resumed_ms - cut_ms } else { 0.0 },
            "attempts": self.attempts, "replayed": self.replayed, "resetImages": self.reset_images,
            "pendingImages": self.pending_images, "freshImages": self.fresh_images, "unbased": self.unbased,
            "recoveryFrames": self.recovery_frames, "recoveryBytes": self.recovery_bytes
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round() -> Round {
        Round {
            resume: true,
            cut_ms: 1000.0,
            give_up_ms: 5000.0,
            retry_ms: 100.0,
        }
    }

    #[test]
    fn a_user_is_done_once_acked_with_no_image_awaited() {
        let mut p = Progress::new(round());
        assert!(!p.done());
        p.acked = true;
        p.awaiting = vec![3, 4];
        p.pending = vec![4];
        assert!(!p.on_image(3));
        assert!(!p.done());
        assert!(p.on_image(4));
        assert!(p.done());
    }

    #[test]
    fn merging_adds_counts_and_times() {
        let mut a = RecoveryStats {
            users: 2,
            ..RecoveryStats::default()
        };
        let mut b = RecoveryStats {
            users: 3,
            failed: 1,
            last_error: Some("x".into()),
            ..RecoveryStats::default()
        };
        a.on_resumed(1000.0, 1010.0);
        b.on_resumed(1000.0, 1250.0);
        b.on_resumed(1000.0, 1030.0);
        a.merge(&b);
        assert_eq!((a.users, a.resumed, a.failed), (5, 3, 1));
        assert!(!a.settled());
        a.resumed += 1;
        assert!(a.settled());
        let j = a.to_json(1000.0);
        assert_eq!(j["lastResumedMs"], 250.0);
        assert_eq!(j["resumeMs"]["count"], 3);
        assert!((j["resumeMs"]["max"].as_f64().unwrap() - 250.0).abs() < 0.5);
        assert_eq!(j["lastError"], "x");
    }
}
