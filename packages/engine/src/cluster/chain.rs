//! The order stream as one server's replica delivers it, checked against the writers' own word.
//!
//! After a lost NATS quorum is back, nats-server 2.9 can leave its replicas of the order stream
//! holding different messages at one seq (a raft desync: a message the old stream leader proposed
//! without a quorum, applied there, while the servers that elected a new leader stored another
//! node's message at the same seq; nats-io/nats-server#6944 names the desync, fixed in 2.12). An
//! ordered consumer created on such a replica delivers the message no quorum holds, and the
//! stream's last seq as that server reports it stays there while the stream goes on.
//!
//! Two checks keep a node from mixing the two histories or waiting on one of them:
//! - **The message-id chain.** A term's message `k > 0` is published with
//!   `Nats-Expected-Last-Msg-Id` = the id of the term's message `k - 1` (`batch.rs`), which the
//!   writer's stream leader checked when it stored it. A message whose expected id is not the id
//!   of the message this node applied at the seq before it (or whose `Nats-Expected-Last-Sequence`
//!   is not that seq) follows another history than the one applied here: the node has diverged.
//! - **A term's first message.** It is fenced by the stream on its seq only (the stream's own
//!   last-id check cannot be trusted there: a stream leader that recovered from disk knows the
//!   last message's id only when it is younger than the stream's duplicate window, and would
//!   refuse every new term after a quiet spell). So the writer also names, in `Tidewire-Follows`,
//!   the id of the message its own consumer delivered at that seq; the stream does not check it,
//!   every node does. A node whose message there has another id has diverged from the writer.
//!   Either side may be the one left behind (a node cannot tell whose replica desynced), so it
//!   stops applying rather than mix the two. Messages without the header (streams written
//!   before it, or a term that began after a message without an id, such as the genesis marker)
//!   are checked on their seq only.
//! - **The highest last seq.** Every server that takes itself for the stream's leader answers a
//!   stream info request; the consumer's quiet check takes the highest last seq among the answers,
//!   not the first one.

use serde::Deserialize;

/// Header with a stream message's id (`Sent::message` in `orders.rs`).
pub const MSG_ID: &str = "Nats-Msg-Id";
/// Header with the id of the message a message was fenced to follow.
pub const EXPECTED_LAST_MSG_ID: &str = "Nats-Expected-Last-Msg-Id";
/// Header with the stream seq a message was fenced to follow.
pub const EXPECTED_LAST_SEQ: &str = "Nats-Expected-Last-Sequence";
/// Header on a term's first message: the id of the message the writer applied at the seq the
/// message is fenced to follow (checked by the nodes, not by the stream).
pub const FOLLOWS: &str = "Tidewire-Follows";

/// The fences a delivered message carries (each `None` when it has no such header).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fences<'a> {
    /// Its own id.
    pub id: Option<&'a str>,
    /// The id of the message it was written to follow.
    pub expected_last_id: Option<&'a str>,
    /// The seq it was written to follow (unparsable: `Some(None)`).
    pub expected_last_seq: Option<Option<u64>>,
    /// The id of the message its writer applied at that seq (`FOLLOWS`).
    pub follows: Option<&'a str>,
}

/// A delivered message does not follow the history applied here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diverged {
    /// The message's stream seq.
    pub seq: u64,
    /// What it was written to follow.
    pub expected: String,
    /// What this node applied at the seq before it.
    pub applied: String,
}

impl std::fmt::Display for Diverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "order stream seq {} follows {} but this node applied {} before it",
            self.seq, self.expected, self.applied
        )
    }
}

/// The last message delivered in seq order: its seq and its id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chain {
    seq: u64,
    /// `None`: a message without an id (the genesis marker), or nothing delivered yet.
    id: Option<String>,
}

impl Chain {
    /// Checks the message at `seq` (the one after the last delivered) against the chain, then
    /// takes it as the last one. On `Err` the chain is unchanged.
    pub fn follow(&mut self, seq: u64, fences: Fences<'_>) -> Result<(), Diverged> {
        let applied = || match &self.id {
            Some(id) => format!("message {id} at seq {}", self.seq),
            None => format!("a message without an id at seq {}", self.seq),
        };
        if let Some(expected) = fences.expected_last_seq {
            if expected != Some(self.seq) {
                return Err(Diverged {
                    seq,
                    expected: match expected {
                        Some(s) => format!("seq {s}"),
                        None => "an unreadable seq".into(),
                    },
                    applied: applied(),
                });
            }
        }
        for expected in [fences.expected_last_id, fences.follows].into_iter().flatten() {
            if self.id.as_deref() != Some(expected) {
                return Err(Diverged {
                    seq,
                    expected: format!("message {expected}"),
                    applied: applied(),
                });
            }
        }
        self.seq = seq;
        self.id = fences.id.map(str::to_owned);
        Ok(())
    }
}

/// The highest `state.last_seq` among stream info answers (JSON bodies); answers that are errors
/// or cannot be read count for nothing. `None`: no answer could be read.
pub fn highest_last_seq<'a>(answers: impl IntoIterator<Item = &'a [u8]>) -> Option<u64> {
    #[derive(Deserialize)]
    struct State {
        last_seq: u64,
    }
    #[derive(Deserialize)]
    struct Info {
        state: State,
    }
    answers
        .into_iter()
        .filter_map(|a| serde_json::from_slice::<Info>(a).ok())
        .map(|i| i.state.last_seq)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg<'a>(id: &'a str, last_seq: u64, last_id: Option<&'a str>) -> Fences<'a> {
        Fences {
            id: Some(id),
            expected_last_id: last_id,
            expected_last_seq: Some(Some(last_seq)),
            follows: None,
        }
    }

    /// A term's first message, naming the message its writer applied at `last_seq`.
    fn first<'a>(id: &'a str, last_seq: u64, follows: &'a str) -> Fences<'a> {
        Fences {
            follows: Some(follows),
            ..msg(id, last_seq, None)
        }
    }

    #[test]
    fn a_term_s_messages_follow_each_other_and_a_new_term_follows_any_message_at_its_base() {
        let mut c = Chain::default();
        let genesis = Fences::default();
        assert_eq!(c.follow(1, genesis), Ok(()));
        assert_eq!(c.follow(2, msg("t1:0", 1, None)), Ok(()));
        assert_eq!(c.follow(3, msg("t1:1", 2, Some("t1:0"))), Ok(()));
        // a new term's first message written without `FOLLOWS` names only the seq it follows
        assert_eq!(c.follow(4, msg("t2:0", 3, None)), Ok(()));
        assert_eq!(c.follow(5, msg("t2:1", 4, Some("t2:0"))), Ok(()));
        // written one event per message, without fences
        assert_eq!(c.follow(6, Fences::default()), Ok(()));
    }

    /// The quorum test's failure, as the two replicas delivered it: the old leader's server held
    /// term 2's message 1 at seq 3 (proposed without a quorum, never acknowledged); the stream
    /// went on with term 3's messages 0 (seq 3) and 1 (seq 4).
    #[test]
    fn a_message_of_another_history_is_refused_and_the_chain_stays_where_it_was() {
        let mut c = Chain::default();
        c.follow(1, Fences::default()).unwrap();
        c.follow(2, msg("t2:0", 1, None)).unwrap();
        c.follow(3, msg("t2:1", 2, Some("t2:0"))).unwrap();
        let d = c.follow(4, msg("t3:1", 3, Some("t3:0"))).unwrap_err();
        assert_eq!(
            d.to_string(),
            "order stream seq 4 follows message t3:0 but this node applied message t2:1 at seq 3 before it"
        );
        assert_eq!(d.seq, 4);
        // unchanged: the same message is refused again
        assert!(c.follow(4, msg("t3:1", 3, Some("t3:0"))).is_err());
        // a fence on another seq than the last delivered one is refused too
        let d = c.follow(4, msg("t4:0", 2, None)).unwrap_err();
        assert_eq!(d.expected, "seq 2");
        let bad = Fences {
            expected_last_seq: Some(None),
            ..msg("t4:0", 0, None)
        };
        assert_eq!(c.follow(4, bad).unwrap_err().expected, "an unreadable seq");
    }

    /// The gap the seq fence leaves: this node's replica delivered term 2's message 1 at seq 3
    /// (never stored on a quorum) while the stream holds term 3's message 0 there; the next
    /// message is the first of term 4, fenced by the stream on seq 3 only.
    #[test]
    fn a_term_s_first_message_naming_another_message_at_its_base_is_refused() {
        let mut c = Chain::default();
        c.follow(1, Fences::default()).unwrap();
        c.follow(2, msg("t2:0", 1, None)).unwrap();
        c.follow(3, msg("t2:1", 2, Some("t2:0"))).unwrap();
        let d = c.follow(4, first("t4:0", 3, "t3:0")).unwrap_err();
        assert_eq!(
            d.to_string(),
            "order stream seq 4 follows message t3:0 but this node applied message t2:1 at seq 3 before it"
        );
        // unchanged, and the node's own history goes on only with the message it applied
        assert!(c.follow(4, first("t4:0", 3, "t3:0")).is_err());
        assert_eq!(c.follow(4, first("t4:0", 3, "t2:1")), Ok(()));
        assert_eq!(c.follow(5, msg("t4:1", 4, Some("t4:0"))), Ok(()));
        // a term that began after a message without an id names none
        let mut c = Chain::default();
        c.follow(1, Fences::default()).unwrap();
        assert!(c.follow(2, first("t1:0", 1, "genesis")).is_err());
        assert_eq!(c.follow(2, msg("t1:0", 1, None)), Ok(()));
    }

    #[test]
    fn the_highest_last_seq_of_the_answers_counts() {
        let stale = br#"{"type":"io.nats.jetstream.api.v1.stream_info_response","state":{"messages":3,"last_seq":3}}"#;
        let current =
            br#"{"type":"io.nats.jetstream.api.v1.stream_info_response","state":{"messages":6,"last_seq":6}}"#;
        let error = br#"{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":503}}"#;
        assert_eq!(highest_last_seq([&stale[..], &current[..], &error[..]]), Some(6));
        assert_eq!(highest_last_seq([&current[..], &stale[..]]), Some(6));
        assert_eq!(highest_last_seq([&error[..], &b"not json"[..]]), None);
        assert_eq!(highest_last_seq(std::iter::empty()), None);
    }
}
