//! Group commit on the order stream: the events the desk decides while earlier stream messages
//! are on their way go out together in one message (docs/architecture.md, "Cluster mode:
//! orders"). No event waits for a batch to fill: the publisher takes what is queued when it is
//! ready to send, so a quiet desk sends one event per message and a busy one many, each message
//! stored (on a quorum) or refused as a whole.
//!
//! A message's body frames its events (header [`HEADER`] = their count): per event a u32 (LE)
//! length, a u16 length and the event's origin tag (empty: none), then the encoded event. The
//! tag names the gateway request an event answers (`<node>:<request id>`), so the gateway of the
//! node that took the request reports it when the event arrives through the stream. A message
//! without the header (written one event per message) is one event with no tag.
//!
//! Message `k` (from 0) of a term is fenced on the stream's last seq `base + k` and, from the
//! second on, on the term's previous message id (`<subject>:<k-1>`): a message follows only the
//! term's previous one, and a term's messages are gap-free after the seq it began at.

use std::sync::Arc;
use std::time::Instant;

/// Header naming the number of events framed in a message's body.
pub const HEADER: &str = "Tidewire-Events";

/// Most events in one message.
pub const MAX_EVENTS: usize = 512;

/// Most bytes of events in one message (the NATS payload limit is 1 MiB by default).
pub const MAX_BYTES: usize = 256 * 1024;

/// One event as the desk hands it to the publisher.
#[derive(Debug)]
pub struct Item<D> {
    /// The term's event subject.
    pub subject: Arc<str>,
    /// The stream's last seq when the term began.
    pub base: u64,
    /// Origin tag (empty: none).
    pub tag: Vec<u8>,
    /// The encoded event.
    pub body: Vec<u8>,
    /// Its completion.
    pub done: D,
    /// When the desk handed it over (the stage timing, `stages.rs`).
    pub at: Instant,
}

/// One stream message: consecutive events of one term with its fences.
#[derive(Debug)]
pub struct Message<D> {
    /// The term's subject.
    pub subject: Arc<str>,
    /// `Nats-Expected-Last-Sequence`.
    pub last_seq: u64,
    /// Index of the message in its term (`Nats-Msg-Id` `<subject>:<k>`).
    pub k: u64,
    /// The framed events.
    pub body: Vec<u8>,
    /// Events in it.
    pub events: usize,
    /// Their completions, in order.
    pub dones: Vec<D>,
    /// When each was handed over, in order.
    pub queued: Vec<Instant>,
}

/// Makes messages out of queued events, counting each term's messages for their fences.
#[derive(Debug, Default)]
pub struct Batcher {
    term: Option<(Arc<str>, u64)>,
    next_k: u64,
}

impl Batcher {
    /// Takes `first` and, while they belong to the same term and fit, the events `more` yields
    /// (`more` is asked only while the message has room); an event of another term is left in
    /// `held` for the next message.
    pub fn message<D>(
        &mut self,
        first: Item<D>,
        held: &mut Option<Item<D>>,
        mut more: impl FnMut() -> Option<Item<D>>,
    ) -> Message<D> {
        if self.term.as_ref().is_none_or(|(s, _)| *s != first.subject) {
            self.term = Some((Arc::clone(&first.subject), first.base));
            self.next_k = 0;
        }
        let base = self.term.as_ref().map_or(first.base, |t| t.1);
        let k = self.next_k;
        self.next_k += 1;
        let mut msg = Message {
            subject: Arc::clone(&first.subject),
            last_seq: base + k,
            k,
            body: Vec::with_capacity(first.body.len() + 8),
            events: 0,
            dones: Vec::new(),
            queued: Vec::new(),
        };
        push(&mut msg, first);
        while msg.events < MAX_EVENTS && msg.body.len() < MAX_BYTES {
            let Some(item) = more() else { break };
            if item.subject != msg.subject || msg.body.len() + item.body.len() + 6 > MAX_BYTES {
                *held = Some(item);
                break;
            }
            push(&mut msg, item);
        }
        msg
    }
}

fn push<D>(msg: &mut Message<D>, item: Item<D>) {
    let tag = &item.tag[..item.tag.len().min(u16::MAX as usize)];
    msg.body.extend_from_slice(&(item.body.len() as u32).to_le_bytes());
    msg.body.extend_from_slice(&(tag.len() as u16).to_le_bytes());
    msg.body.extend_from_slice(tag);
    msg.body.extend_from_slice(&item.body);
    msg.events += 1;
    msg.dones.push(item.done);
    msg.queued.push(item.at);
}

/// One event read back from a message: its origin tag (empty: none) and its encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed {
    /// Origin tag.
    pub tag: Vec<u8>,
    /// The encoded event.
    pub body: Vec<u8>,
}

/// The events of a framed body of `count` events (`None`: it does not hold exactly that many).
pub fn split(body: &[u8], count: usize) -> Option<Vec<Framed>> {
    let mut out = Vec::with_capacity(count);
    let mut rest = body;
    while !rest.is_empty() {
        let (len, r) = rest.split_first_chunk::<4>()?;
        let (tag_len, r) = r.split_first_chunk::<2>()?;
        let (len, tag_len) = (u32::from_le_bytes(*len) as usize, u16::from_le_bytes(*tag_len) as usize);
        if r.len() < tag_len + len {
            return None;
        }
        out.push(Framed {
            tag: r[..tag_len].to_vec(),
            body: r[tag_len..tag_len + len].to_vec(),
        });
        rest = &r[tag_len + len..];
    }
    (out.len() == count).then_some(out)
}

/// Runs every completion of a message with its result: stored (the message's stream seq) or
/// not, the events of one message share it.
pub fn settle<D: FnOnce(Result<u64, String>)>(dones: Vec<D>, result: &Result<u64, String>) {
    for done in dones {
        done(result.clone());
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::VecDeque;

    use super::*;

    fn item(subject: &Arc<str>, base: u64, body: &str) -> Item<String> {
        Item {
            subject: Arc::clone(subject),
            base,
            tag: Vec::new(),
            body: body.as_bytes().to_vec(),
            done: body.to_owned(),
            at: Instant::now(),
        }
    }

    /// Messages the batcher makes of `queue`, as (last_seq, k, completions).
    fn drain(b: &mut Batcher, queue: Vec<Item<String>>) -> Vec<(u64, u64, Vec<String>)> {
        let mut q: VecDeque<_> = queue.into();
        let mut held = None;
        let mut out = Vec::new();
        while let Some(first) = held.take().or_else(|| q.pop_front()) {
            let m = b.message(first, &mut held, || q.pop_front());
            let bodies: Vec<String> = split(&m.body, m.events)
                .expect("frames")
                .into_iter()
                .map(|f| String::from_utf8(f.body).expect("utf8"))
                .collect();
            assert_eq!(bodies, m.dones, "completions in event order");
            out.push((m.last_seq, m.k, m.dones));
        }
        out
    }

    #[test]
    fn queued_events_of_a_term_share_a_message_fenced_after_the_previous_one() {
        let t1: Arc<str> = "o.ev.a.1".into();
        let mut b = Batcher::default();
        let got = drain(
            &mut b,
            vec![item(&t1, 10, "e1"), item(&t1, 10, "e2"), item(&t1, 10, "e3")],
        );
        assert_eq!(got, vec![(10, 0, vec!["e1".into(), "e2".into(), "e3".into()])]);
        // what was queued later goes in the term's next message
        let got = drain(&mut b, vec![item(&t1, 10, "e4")]);
        assert_eq!(got, vec![(11, 1, vec!["e4".into()])]);
    }

    #[test]
    fn a_message_never_mixes_terms_and_a_new_term_starts_at_its_base() {
        let (t1, t2): (Arc<str>, Arc<str>) = ("o.ev.a.1".into(), "o.ev.a.2".into());
        let mut b = Batcher::default();
        let got = drain(
            &mut b,
            vec![
                item(&t1, 10, "a"),
                item(&t1, 10, "b"),
                item(&t2, 17, "c"),
                item(&t2, 17, "d"),
            ],
        );
        assert_eq!(
            got,
            vec![
                (10, 0, vec!["a".into(), "b".into()]),
                (17, 0, vec!["c".into(), "d".into()]),
            ]
        );
    }

    #[test]
    fn a_message_holds_at_most_max_events() {
        let t1: Arc<str> = "o.ev.a.1".into();
        let mut b = Batcher::default();
        let queue = (0..MAX_EVENTS + 3).map(|i| item(&t1, 4, &i.to_string())).collect();
        let got = drain(&mut b, queue);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, got[0].2.len()), (4, MAX_EVENTS));
        assert_eq!((got[1].0, got[1].1, got[1].2.len()), (5, 1, 3));
    }

    #[test]
    fn a_failed_message_fails_every_event_in_it_and_a_stored_one_acks_each() {
        let seen = RefCell::new(Vec::new());
        let dones: Vec<_> = (0..3)
            .map(|i| {
                let seen = &seen;
                move |r: Result<u64, String>| seen.borrow_mut().push((i, r))
            })
            .collect();
        settle(dones, &Err("no quorum".into()));
        let failed = seen.borrow().clone();
        assert_eq!(failed, (0..3).map(|i| (i, Err("no quorum".into()))).collect::<Vec<_>>());
        seen.borrow_mut().clear();
        let dones: Vec<_> = (0..2)
            .map(|i| {
                let seen = &seen;
                move |r: Result<u64, String>| seen.borrow_mut().push((i, r))
            })
            .collect();
        settle(dones, &Ok(42));
        assert_eq!(*seen.borrow(), vec![(0, Ok(42)), (1, Ok(42))]);
    }

    #[test]
    fn frames_carry_tags_and_a_short_or_miscounted_body_is_refused() {
        let t1: Arc<str> = "o.ev.a.1".into();
        let mut first = item(&t1, 1, "x");
        first.tag = b"b:7".to_vec();
        let mut b = Batcher::default();
        let mut held = None;
        let mut rest = vec![item(&t1, 1, "yy")].into_iter();
        let m = b.message(first, &mut held, || rest.next());
        let got = split(&m.body, 2).expect("two events");
        assert_eq!(
            got[0],
            Framed {
                tag: b"b:7".to_vec(),
                body: b"x".to_vec()
            }
        );
        assert_eq!(
            got[1],
            Framed {
                tag: Vec::new(),
                body: b"yy".to_vec()
            }
        );
        assert!(split(&m.body, 3).is_none());
        assert!(split(&m.body[..m.body.len() - 1], 2).is_none());
    }
}
