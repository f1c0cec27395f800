//! A publish refusal that cannot be true, and the order stream's own word instead.
//!
//! After a lost NATS quorum is back, nats-server 2.9 can leave a server answering as the order
//! stream's leader with its old state beside the new leader (seen once in a test for over 30 s
//! after the restarted servers were healthy: stream info said last seq 4 while the consumer
//! delivered up to 105). A fenced publish then reaches both: the new leader
//! stores it, the stale one refuses it with "wrong last sequence: N" naming its old last seq, and
//! the client keeps whichever answer comes first. Taken as final, every decision is stored yet
//! answered `UNAVAILABLE`, and the leader steps down after each.
//!
//! A stream's last seq never goes back, so a refusal naming a last seq below one this node's
//! consumer had delivered before the message was sent cannot come from the stream's current
//! leader. The publisher does not take it: it waits, within the publish's timeout, for the
//! consumer to deliver the seq the message was fenced for (`last_seq + 1`): a message of the
//! same term there is this one (a term's message `k` is fenced for exactly that seq), so it is
//! stored; another node's message there means it was fenced off after all.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;

/// How many delivered messages are remembered (a verdict looks at the last few only: the
/// publisher waits at most one request timeout).
const RECENT: usize = 4096;

/// Whether a "wrong last sequence" refusal with `description` (the server's text, "wrong last
/// sequence: N ...") is stale: it names a last seq below `seen`, one the consumer had delivered
/// before the message was sent. A description without a number is taken as it is (not stale).
pub fn stale_refusal(description: &str, seen: u64) -> bool {
    let Some(rest) = description.split("wrong last sequence:").nth(1) else {
        return false;
    };
    let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u64>().is_ok_and(|named| named < seen)
}

/// What the consumer delivered at one seq, as far as a verdict can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// A message of the term asked about: the publish was stored there.
    Ours,
    /// Another term's message.
    Theirs,
    /// Not delivered yet.
    Pending,
    /// Delivered too long ago to tell.
    Forgotten,
}

#[derive(Default)]
struct Recent {
    /// (seq, subject) of the last `RECENT` messages delivered, in seq order (the last one is the
    /// last seq delivered). A term's messages share one subject string.
    subjects: VecDeque<(u64, Arc<str>)>,
    /// The `Nats-Msg-Id` of the last message delivered (`None`: it had none).
    last_id: Option<Box<str>>,
}

impl Recent {
    fn last(&self) -> u64 {
        self.subjects.back().map_or(0, |(seq, _)| *seq)
    }
}

/// The order stream as the consumer delivered it: the last seq, and which subject (term) each of
/// the last messages was on. Shared by the consumer (writes) and the publisher (reads).
#[derive(Default)]
pub struct Delivered {
    recent: Mutex<Recent>,
    notify: Notify,
}

impl Delivered {
    /// The last seq delivered (0: none yet).
    pub fn last(&self) -> u64 {
        self.recent.lock().map_or(0, |r| r.last())
    }

    /// The consumer delivered `seq` (the next one) on `subject`.
    pub fn delivered(&self, seq: u64, subject: &str) {
        self.delivered_with_id(seq, subject, None);
    }

    /// The consumer delivered `seq` (the next one) on `subject`, with message id `id`.
    pub fn delivered_with_id(&self, seq: u64, subject: &str, id: Option<&str>) {
        if let Ok(mut r) = self.recent.lock() {
            r.last_id = id.map(Box::from);
            let on = match r.subjects.back() {
                Some((_, last)) if &**last == subject => Arc::clone(last),
                _ => subject.into(),
            };
            if r.subjects.len() == RECENT {
                r.subjects.pop_front();
            }
            r.subjects.push_back((seq, on));
        }
        self.notify.notify_waiters();
    }

    /// The id of the message delivered at `seq` when it is the last one delivered (`None`: it
    /// had none, or `seq` is not the last seq delivered).
    pub fn last_id_at(&self, seq: u64) -> Option<String> {
        let r = self.recent.lock().ok()?;
        if r.last() != seq {
            return None;
        }
        r.last_id.as_deref().map(str::to_owned)
    }

    /// The id of the message delivered at `seq` when it is the last one delivered: `Some(None)`
    /// when that message had none, `None` when `seq` is not the last seq delivered.
    pub fn id_at(&self, seq: u64) -> Option<Option<String>> {
        let r = self.recent.lock().ok()?;
        (r.last() == seq).then(|| r.last_id.as_deref().map(str::to_owned))
    }

    /// What was delivered at `seq`, for a message of `subject`.
    pub fn at(&self, seq: u64, subject: &str) -> At {
        let Ok(r) = self.recent.lock() else {
            return At::Forgotten;
        };
        if seq > r.last() {
            return At::Pending;
        }
        match r.subjects.iter().rev().find(|(s, _)| *s == seq) {
            Some((_, on)) if &**on == subject => At::Ours,
            Some(_) => At::Theirs,
            None => At::Forgotten,
        }
    }

    /// Waits until `seq` is delivered, at most until `deadline`: `Some(true)` when a message of
    /// `subject` is there, `Some(false)` when another's is, `None` when not in time (or
    /// forgotten).
    pub async fn wait(&self, seq: u64, subject: &str, deadline: Instant) -> Option<bool> {
        loop {
            // registered before the check: a delivery right after it still wakes this wait
            let delivered = self.notify.notified();
            match self.at(seq, subject) {
                At::Ours => return Some(true),
                At::Theirs => return Some(false),
                At::Forgotten => return None,
                At::Pending => {}
            }
            let deadline = tokio::time::Instant::from_std(deadline);
            if tokio::time::timeout_at(deadline, delivered).await.is_err() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_refusal_naming_a_seq_below_one_delivered_before_the_send_is_stale() {
        let text = "wrong last sequence: 4 (code 400, error code 10071)";
        assert!(stale_refusal(text, 5));
        assert!(stale_refusal(text, 105));
        // the stream's last seq may be the one delivered, or beyond it: a true refusal
        assert!(!stale_refusal(text, 4));
        assert!(!stale_refusal(text, 0));
        // nothing to compare: taken as it is
        assert!(!stale_refusal("wrong last sequence (code 400)", 5));
        assert!(!stale_refusal("wrong last msg ID: a:1", 5));
    }

    #[test]
    fn the_message_delivered_at_the_fenced_seq_decides() {
        let d = Delivered::default();
        assert_eq!(d.at(5, "t1"), At::Pending);
        d.delivered(4, "old");
        d.delivered(5, "t1");
        d.delivered(6, "t2");
        assert_eq!(d.last(), 6);
        assert_eq!(d.at(5, "t1"), At::Ours);
        assert_eq!(d.at(6, "t1"), At::Theirs);
        assert_eq!(d.at(7, "t1"), At::Pending);
        for seq in 7..7 + RECENT as u64 {
            d.delivered(seq, "t3");
        }
        assert_eq!(d.at(5, "t1"), At::Forgotten);
    }

    #[test]
    fn the_last_message_s_id_is_told_for_its_seq_only() {
        let d = Delivered::default();
        assert_eq!(d.last_id_at(0), None);
        d.delivered_with_id(4, "t1", Some("t1:0"));
        assert_eq!(d.last_id_at(4).as_deref(), Some("t1:0"));
        assert_eq!(d.last_id_at(3), None);
        d.delivered(5, "genesis");
        assert_eq!(d.last_id_at(5), None);
        assert_eq!(d.last_id_at(4), None);
        // `id_at` tells a message without an id from a seq that is not the last one
        assert_eq!(d.id_at(5), Some(None));
        assert_eq!(d.id_at(4), None);
        d.delivered_with_id(6, "t2", Some("t2:0"));
        assert_eq!(d.id_at(6), Some(Some("t2:0".into())));
    }

    #[test]
    fn a_wait_ends_with_the_delivery_or_the_deadline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let d = Arc::new(Delivered::default());
        d.delivered(3, "old");
        let waiting = Arc::clone(&d);
        let got = rt.block_on(async move {
            let wait = waiting.wait(4, "t1", Instant::now() + Duration::from_secs(60));
            let deliver = async {
                tokio::task::yield_now().await;
                d.delivered(4, "t1");
            };
            tokio::join!(wait, deliver).0
        });
        assert_eq!(got, Some(true));
        let d = Delivered::default();
        let late = rt.block_on(d.wait(9, "t1", Instant::now()));
        assert_eq!(late, None);
    }
}
