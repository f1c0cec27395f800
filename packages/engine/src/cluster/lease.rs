//! The order lease as its holder sees it: how long it may go on deciding after a refresh failed.
//!
//! The lease is key `leader` of the desk bucket, whose messages expire `LEASE` after the NATS
//! server stored them. A write is stored after it was sent, so the key written by a refresh sent at
//! `t` lives at least until `t + LEASE`: no other node can `create` it before then. The holder
//! counts its lease valid until `t + LEASE - MARGIN` from the send time of its last refresh that
//! succeeded (`MARGIN` covers the engine thread taking the step-down a little late and clock rate
//! differences). A refresh that fails (the bucket's NATS leader died and the others elect one,
//! a timeout) is retried until then; only a lease that could have expired, or that a read shows
//! gone or held by another node, makes the holder step down. Two nodes never decide at once on
//! the lease's account; the stream's fences stop the older one's publishes in any case.

use std::time::{Duration, Instant};

/// How long the order lease lives without a refresh: a leader that stops (killed, cut off)
/// is replaced after at most this long.
pub const LEASE: Duration = Duration::from_secs(1);

/// The part of the lease the holder does not count on.
pub const MARGIN: Duration = Duration::from_millis(250);

/// What a read of the lease key said after a refresh failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// No answer (the bucket has no NATS leader right now, a timeout).
    Unanswered,
    /// The key is gone (expired or deleted).
    Absent,
    /// Held by this node at `revision`.
    Ours {
        /// The key's revision.
        revision: u64,
    },
    /// Held by another node.
    Theirs,
}

/// What the holder does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Refresh again (at the lease's current revision) while the lease is valid.
    Retry,
    /// Stop deciding.
    Lost,
}

/// The lease held by this node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// The key's revision this node wrote last (the next refresh expects it).
    pub revision: u64,
    /// Until when this node may decide without a further refresh.
    valid_until: Instant,
}

impl Lease {
    /// Taken (or refreshed) at `revision` by a write sent at `sent_at`.
    pub fn new(revision: u64, sent_at: Instant) -> Lease {
        Lease {
            revision,
            valid_until: sent_at + LEASE - MARGIN,
        }
    }

    /// A refresh sent at `sent_at` succeeded with `revision`.
    pub fn refreshed(&mut self, revision: u64, sent_at: Instant) {
        *self = Lease::new(revision, sent_at);
    }

    /// The time left at `now` (`None`: the lease may have expired).
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        self.valid_until.checked_duration_since(now).filter(|d| !d.is_zero())
    }

    /// A refresh failed; `read` is what a read of the key said at `now`. A read showing this node
    /// at a newer revision means a refresh that timed out was stored after all: the next refresh
    /// expects that revision (the lease stays valid only as long as the last confirmed one).
    pub fn failed(&mut self, now: Instant, read: Read) -> Next {
        if self.remaining(now).is_none() {
            return Next::Lost;
        }
        match read {
            Read::Unanswered => Next::Retry,
            Read::Ours { revision } => {
                self.revision = self.revision.max(revision);
                Next::Retry
            }
            Read::Absent | Read::Theirs => Next::Lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_refresh_is_retried_while_the_lease_is_valid() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let soon = t0 + Duration::from_millis(300);
        assert_eq!(lease.failed(soon, Read::Unanswered), Next::Retry);
        assert_eq!(lease.remaining(soon), Some(LEASE - MARGIN - Duration::from_millis(300)));
        // a refresh that succeeds later renews from its send time
        lease.refreshed(5, soon);
        let later = t0 + LEASE;
        assert_eq!(lease.failed(later, Read::Unanswered), Next::Retry);
        assert_eq!(lease.revision, 5);
    }

    #[test]
    fn the_holder_steps_down_once_the_lease_could_have_expired() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let end = t0 + LEASE - MARGIN;
        assert_eq!(lease.remaining(end), None);
        assert_eq!(lease.failed(end, Read::Unanswered), Next::Lost);
        // even when a (stale) read still shows it as ours
        assert_eq!(lease.failed(end, Read::Ours { revision: 4 }), Next::Lost);
        assert_eq!(lease.failed(t0 + LEASE * 3, Read::Unanswered), Next::Lost);
        // the margin leaves time before any other node could take it
        assert!(t0 + LEASE > end);
    }

    #[test]
    fn a_read_showing_the_lease_gone_or_taken_steps_down_at_once() {
        let t0 = Instant::now();
        let soon = t0 + Duration::from_millis(10);
        assert_eq!(Lease::new(4, t0).failed(soon, Read::Absent), Next::Lost);
        assert_eq!(Lease::new(4, t0).failed(soon, Read::Theirs), Next::Lost);
    }

    #[test]
    fn a_timed_out_refresh_that_was_stored_is_adopted_without_extending_the_lease() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let soon = t0 + Duration::from_millis(200);
        assert_eq!(lease.failed(soon, Read::Ours { revision: 6 }), Next::Retry);
        assert_eq!(lease.revision, 6);
        assert_eq!(lease.remaining(soon), Some(LEASE - MARGIN - Duration::from_millis(200)));
        // an older revision (a lagging replica's answer) never moves it back
        assert_eq!(lease.failed(soon, Read::Ours { revision: 5 }), Next::Retry);
        assert_eq!(lease.revision, 6);
    }
}
