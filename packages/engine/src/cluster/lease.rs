//! The order lease as its holder sees it: when it may go on deciding after a refresh failed.
//!
//! The lease is key `leader` of the desk bucket, whose messages expire `LEASE` after the NATS
//! server stored them. A write is stored after it was sent, so the key written by a refresh sent at
//! `t` lives at least until `t + LEASE`: no other node can `create` it before then. The holder
//! counts its lease **confirmed** until `t + LEASE - MARGIN` from the send time of its last write
//! that succeeded (`MARGIN` covers the engine thread taking the step-down a little late and clock
//! rate differences).
//!
//! A refresh that fails is retried. What the holder does depends on what the bucket said:
//! - **No answer** (NATS "no responders": the bucket's raft group has no leader while it elects
//!   one; a timeout): nobody else can write the key either. While confirmed it retries; after that
//!   it goes on deciding **provisionally**, as long as a check of the order stream shows no message
//!   beyond its own term's (`Stream::Ours`, answered by a stream leader in touch with a quorum of
//!   its replicas: `orders.rs`, `quorum_in_touch`) and less than `PROVISIONAL_MAX` passed since its last
//!   confirmed write. The stream's fences make every stored decision a function of the complete
//!   log whoever holds the key, so the lease only has to keep refusals (decisions that are not
//!   stored) from being made on a book another node has moved on from: the check bounds that
//!   window. A desk that stepped down (a publish failed or was fenced) promotes again on the
//!   stream's last seq when the check shows nothing of another node's (its own connection died
//!   with the server and took messages in flight with it); else the lease is lost.
//! - **The key moved** (the write was refused for its revision), and a read shows it held by this
//!   node at a newer revision (a write that timed out was stored after all): adopted, retried;
//!   gone (another node created it after this node's key expired and let its own expire in turn;
//!   an expired key alone does not refuse a refresh, the bucket's last seq stays at the key's
//!   revision): created again, and whoever creates it first holds it; held by another node: lost
//!   at once.

use std::time::{Duration, Instant};

/// How long the order lease lives without a refresh: a leader that stops (killed, cut off)
/// is replaced after at most this long.
pub const LEASE: Duration = Duration::from_secs(1);

/// The part of the lease the holder does not count on.
pub const MARGIN: Duration = Duration::from_millis(250);

/// The longest a holder decides provisionally (the bucket not answering) after its last
/// confirmed write, whatever the checks say. NATS elected a bucket's new leader in 4-8 s on
/// a loaded test machine; past this the holder steps down and waits for the bucket like everyone.
pub const PROVISIONAL_MAX: Duration = Duration::from_secs(10);

/// What the bucket said to one write of the lease key (a refresh, or a create of a key gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Stored at `revision`; the write was sent at `sent_at`.
    Stored {
        /// The key's new revision.
        revision: u64,
        /// When the write was sent.
        sent_at: Instant,
    },
    /// No answer: no responders (the bucket has no NATS leader right now), a timeout.
    Unanswered,
    /// Refused (the key's revision is not the one expected); a read shows it held by this node
    /// at `revision`.
    Ours {
        /// The key's revision.
        revision: u64,
    },
    /// Refused; a read shows the key gone (expired or deleted).
    Absent,
    /// Refused; a read shows the key held by another node.
    Theirs,
}

/// What a check of the order stream said (its last seq against this node's term).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The stream holds nothing beyond the messages this node's term sent.
    Ours,
    /// The stream holds messages beyond them: another node decided.
    Moved,
    /// No answer in time (no stream leader, no quorum, cut off).
    Unanswered,
}

/// What the holder does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The lease is confirmed again (refreshed or re-created): back to the regular refresh.
    Held,
    /// Write again at the lease's current revision (soon).
    Retry,
    /// Create the key again (write expecting no key).
    Recreate,
    /// Check the order stream (`Lease::checked`) before deciding on.
    Check,
    /// The desk stepped down; promote it again on the stream's last seq (provisionally).
    Promote,
    /// Stop deciding.
    Lost,
}

/// The lease held by this node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// The key's revision this node wrote last (the next refresh expects it).
    pub revision: u64,
    /// Send time of the last write that succeeded.
    written_at: Instant,
}

impl Lease {
    /// Taken (or refreshed) at `revision` by a write sent at `sent_at`.
    pub fn new(revision: u64, sent_at: Instant) -> Lease {
        Lease {
            revision,
            written_at: sent_at,
        }
    }

    /// A write sent at `sent_at` succeeded with `revision`.
    pub fn refreshed(&mut self, revision: u64, sent_at: Instant) {
        *self = Lease::new(revision, sent_at);
    }

    /// The confirmed time left at `now` (`None`: the lease may have expired; the holder decides
    /// on only provisionally).
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        (self.written_at + LEASE - MARGIN)
            .checked_duration_since(now)
            .filter(|d| !d.is_zero())
    }

    /// Whether provisional deciding is still allowed at `now` (before `PROVISIONAL_MAX`).
    fn within_provisional(&self, now: Instant) -> bool {
        now < self.written_at + PROVISIONAL_MAX
    }

    /// The bucket's `answer` to a write, at `now`.
    pub fn answer(&mut self, now: Instant, answer: Answer) -> Next {
        let confirmed = self.remaining(now).is_some();
        match answer {
            Answer::Stored { revision, sent_at } => {
                self.refreshed(revision, sent_at);
                Next::Held
            }
            Answer::Theirs => Next::Lost,
            _ if !confirmed && !self.within_provisional(now) => Next::Lost,
            Answer::Absent => Next::Recreate,
            Answer::Ours { revision } => {
                // a write that timed out was stored: the next one expects it (the lease stays
                // confirmed only as long as the last write known to be stored says)
                self.revision = self.revision.max(revision);
                if confirmed {
                    Next::Retry
                } else {
                    Next::Check
                }
            }
            Answer::Unanswered if confirmed => Next::Retry,
            Answer::Unanswered => Next::Check,
        }
    }

    /// A check of the order stream said `stream` at `now`; `deciding`: the desk is deciding (not
    /// stepped down, not promoting). The provisional lease is kept only while the stream holds
    /// nothing beyond this node's term: a deciding desk goes on (`Retry`), one that stepped down
    /// (its publish failed or was fenced, by its own lost message) promotes again (`Promote`).
    pub fn checked(&self, now: Instant, deciding: bool, stream: Stream) -> Next {
        if self.remaining(now).is_some() {
            return Next::Retry;
        }
        match stream {
            Stream::Ours if self.within_provisional(now) && deciding => Next::Retry,
            Stream::Ours if self.within_provisional(now) => Next::Promote,
            _ => Next::Lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_failed_refresh_is_retried_while_the_lease_is_confirmed() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let soon = t0 + ms(300);
        assert_eq!(lease.answer(soon, Answer::Unanswered), Next::Retry);
        assert_eq!(lease.remaining(soon), Some(LEASE - MARGIN - ms(300)));
        // a refresh that succeeds later renews from its send time
        assert_eq!(
            lease.answer(
                soon + ms(5),
                Answer::Stored {
                    revision: 5,
                    sent_at: soon
                }
            ),
            Next::Held
        );
        let later = t0 + LEASE;
        assert_eq!(lease.answer(later, Answer::Unanswered), Next::Retry);
        assert_eq!(lease.revision, 5);
        // no stream check is needed while confirmed
        assert_eq!(lease.checked(later, false, Stream::Unanswered), Next::Retry);
    }

    #[test]
    fn bucket_unreachable_while_the_stream_works_keeps_leading() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        // the bucket's leader died; the confirmed lease ran out during its election
        for after in [LEASE - MARGIN, LEASE * 2, LEASE * 6] {
            let now = t0 + after;
            assert_eq!(lease.remaining(now), None);
            assert_eq!(lease.answer(now, Answer::Unanswered), Next::Check, "{after:?}");
            assert_eq!(lease.checked(now, true, Stream::Ours), Next::Retry, "{after:?}");
        }
        // ... but never past the provisional limit
        let end = t0 + PROVISIONAL_MAX;
        assert_eq!(lease.answer(end, Answer::Unanswered), Next::Lost);
        assert_eq!(lease.checked(end, true, Stream::Ours), Next::Lost);
    }

    #[test]
    fn provisional_leading_ends_when_the_stream_moves_or_fails() {
        let t0 = Instant::now();
        let lease = Lease::new(4, t0);
        let now = t0 + LEASE * 2;
        assert_eq!(lease.checked(now, true, Stream::Moved), Next::Lost);
        assert_eq!(lease.checked(now, true, Stream::Unanswered), Next::Lost);
        assert_eq!(lease.checked(now, false, Stream::Unanswered), Next::Lost);
    }

    #[test]
    fn a_fenced_publish_while_provisional_steps_down() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let now = t0 + LEASE * 3;
        assert_eq!(lease.answer(now, Answer::Unanswered), Next::Check);
        assert_eq!(lease.checked(now, true, Stream::Ours), Next::Retry);
        // the desk's publish was fenced (it stepped down at once) and the stream holds another
        // node's message: the lease is given up
        let later = now + ms(25);
        assert_eq!(lease.answer(later, Answer::Unanswered), Next::Check);
        assert_eq!(lease.checked(later, false, Stream::Moved), Next::Lost);
        // fenced by its own message that never reached the stream (its connection died with the
        // server): nothing of another node's, so the desk promotes again on the stream's last seq
        assert_eq!(lease.checked(later, false, Stream::Ours), Next::Promote);
        // ... but not past the provisional limit
        assert_eq!(lease.checked(t0 + PROVISIONAL_MAX, false, Stream::Ours), Next::Lost);
        // while confirmed a stepped-down desk is promoted by the regular election (after a refresh)
        assert_eq!(
            Lease::new(4, t0).checked(t0 + ms(100), false, Stream::Moved),
            Next::Retry
        );
    }

    #[test]
    fn the_key_held_by_another_node_steps_down_at_once() {
        let t0 = Instant::now();
        assert_eq!(Lease::new(4, t0).answer(t0 + ms(10), Answer::Theirs), Next::Lost);
        assert_eq!(Lease::new(4, t0).answer(t0 + LEASE * 3, Answer::Theirs), Next::Lost);
    }

    #[test]
    fn bucket_back_with_the_key_expired_recreate_wins() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let back = t0 + ms(5200);
        // the refresh is refused: another node created the key after this one's expired, and its
        // own expired too
        assert_eq!(lease.answer(back, Answer::Absent), Next::Recreate);
        // this node creates it first: confirmed again, from the create's send time
        let created = Answer::Stored {
            revision: 9,
            sent_at: back,
        };
        assert_eq!(lease.answer(back + ms(3), created), Next::Held);
        assert_eq!(lease.revision, 9);
        assert_eq!(lease.remaining(back + ms(3)), Some(LEASE - MARGIN - ms(3)));
    }

    #[test]
    fn bucket_back_with_the_key_expired_recreate_loses() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let back = t0 + ms(5200);
        assert_eq!(lease.answer(back, Answer::Absent), Next::Recreate);
        // another node created it first: the create is refused and the read shows it theirs
        assert_eq!(lease.answer(back + ms(3), Answer::Theirs), Next::Lost);
    }

    #[test]
    fn a_key_gone_while_confirmed_is_created_again() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        assert_eq!(lease.answer(t0 + ms(10), Answer::Absent), Next::Recreate);
        // ... and not past the provisional limit
        assert_eq!(lease.answer(t0 + PROVISIONAL_MAX, Answer::Absent), Next::Lost);
    }

    #[test]
    fn a_timed_out_write_that_was_stored_is_adopted_without_extending_the_lease() {
        let t0 = Instant::now();
        let mut lease = Lease::new(4, t0);
        let soon = t0 + ms(200);
        assert_eq!(lease.answer(soon, Answer::Ours { revision: 6 }), Next::Retry);
        assert_eq!(lease.revision, 6);
        assert_eq!(lease.remaining(soon), Some(LEASE - MARGIN - ms(200)));
        // an older revision (a lagging replica's answer) never moves it back
        assert_eq!(lease.answer(soon, Answer::Ours { revision: 5 }), Next::Retry);
        assert_eq!(lease.revision, 6);
        // past the confirmed lease, the stream is checked before deciding on
        assert_eq!(lease.answer(t0 + LEASE, Answer::Ours { revision: 6 }), Next::Check);
    }
}
