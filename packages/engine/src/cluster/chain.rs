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
//! - **The writer's own base** (`check_base`). The consumer's checks stop the healthy nodes when
//!   a writer whose history is the one left behind begins a term on a message no quorum holds,
//!   while that writer goes on. So before a node begins a term on the last seq it applied, it
//!   compares the stream leader's message there with the one it applied; on a mismatch it is the
//!   one that diverged and stops instead.
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

/// What one server answered for the order stream's message at one seq (a
/// `$JS.API.STREAM.MSG.GET` answer: the stream's leader, or a server that takes itself for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldAt {
    /// A message, with its `Nats-Msg-Id` (`None`: it has none, as the genesis marker).
    Message {
        /// Its id.
        id: Option<String>,
    },
    /// No message at that seq (never written, or removed by the stream's limits).
    Missing,
    /// An error or an answer that cannot be read.
    Unreadable,
}

/// Reads one `$JS.API.STREAM.MSG.GET` answer (JSON).
pub fn held_at(answer: &[u8]) -> HeldAt {
    #[derive(Deserialize)]
    struct ApiError {
        #[serde(default)]
        err_code: u64,
    }
    #[derive(Deserialize)]
    struct Answer {
        message: Option<async_nats::jetstream::stream::RawMessage>,
        error: Option<ApiError>,
    }
    /// JetStream's error code for "no message found".
    const NO_MESSAGE: u64 = 10037;
    let Ok(a) = serde_json::from_slice::<Answer>(answer) else {
        return HeldAt::Unreadable;
    };
    match (a.message, a.error) {
        (Some(raw), None) => match async_nats::jetstream::message::StreamMessage::try_from(raw) {
            Ok(m) => HeldAt::Message {
                id: m.headers.get(MSG_ID).map(|v| v.as_str().to_owned()),
            },
            Err(_) => HeldAt::Unreadable,
        },
        (_, Some(e)) if e.err_code == NO_MESSAGE => HeldAt::Missing,
        _ => HeldAt::Unreadable,
    }
}

/// The writer's own history does not match the stream at the seq a new term would follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseDiverged {
    /// The seq the term would follow (the last one this node applied).
    pub seq: u64,
    /// What the stream holds there.
    pub stream: String,
    /// What this node applied there.
    pub applied: String,
}

impl std::fmt::Display for BaseDiverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "order stream seq {} holds {} but this node applied {} there",
            self.seq, self.stream, self.applied
        )
    }
}

/// Whether a node may begin a term on the last seq it applied (`check_base`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// The stream holds the message this node applied there (or removed it: nothing to compare,
    /// the seq fence still holds): the term may begin.
    Follows,
    /// The stream holds another history there: this node is the one left behind.
    Diverged(BaseDiverged),
    /// Not known now (no answer, or none that can be read): try again later.
    Unknown,
}

/// Decides whether a node that applied the message with id `applied` (`None`: one without an id)
/// at `base` may begin a term there (its first message names that id in `FOLLOWS`), from the
/// message-get answers for `base` of every server that answered for the stream's leader and the
/// highest last seq their stream info reported. A term whose first message names a message no
/// quorum holds would make every healthy node stop applying the stream (`Chain::follow`) while
/// the writer went on: the writer checks first.
/// - Any answer holding another message at `base`: diverged (a server answering with a history
///   left behind is as likely to be right as this node, and mixing neither is the rule).
/// - Otherwise any answer holding this node's message: the term may begin.
/// - A stream whose last seq is below `base` never held a message this node applied: diverged.
/// - Missing on a stream that reached `base`: removed by its limits (`max_age`, a delete):
///   nothing to compare, the term may begin.
/// - Otherwise: unknown.
pub fn check_base(base: u64, applied: Option<&str>, answers: &[HeldAt], last_seq: Option<u64>) -> Base {
    let name = |id: Option<&str>| match id {
        Some(id) => format!("message {id}"),
        None => "a message without an id".to_owned(),
    };
    let held = || {
        answers.iter().filter_map(|a| match a {
            HeldAt::Message { id } => Some(id.as_deref()),
            _ => None,
        })
    };
    if let Some(other) = held().find(|id| *id != applied) {
        return Base::Diverged(BaseDiverged {
            seq: base,
            stream: name(other),
            applied: name(applied),
        });
    }
    if held().next().is_some() {
        return Base::Follows;
    }
    match last_seq {
        Some(last) if last < base => Base::Diverged(BaseDiverged {
            seq: base,
            stream: format!("nothing (the stream ends at seq {last})"),
            applied: name(applied),
        }),
        Some(_) if answers.contains(&HeldAt::Missing) => Base::Follows,
        _ => Base::Unknown,
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

    /// A `$JS.API.STREAM.MSG.GET` answer for a message with headers `hdrs` (raw NATS header block).
    fn msg_get(seq: u64, hdrs: Option<&str>) -> Vec<u8> {
        let encode = |b: &[u8]| {
            // the answer's base64, written here so the test names every byte the server sends
            const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut out = String::new();
            for c in b.chunks(3) {
                let n = (u32::from(c[0]) << 16)
                    | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*c.get(2).unwrap_or(&0));
                for i in 0..4 {
                    if i <= c.len() {
                        out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
                    } else {
                        out.push('=');
                    }
                }
            }
            out
        };
        let hdrs = hdrs
            .map(|h| format!(r#","hdrs":"{}""#, encode(h.as_bytes())))
            .unwrap_or_default();
        format!(
            r#"{{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{{"subject":"tw.orders.ev.a.1-1","seq":{seq}{hdrs},"data":"{}","time":"2026-11-29T08:00:00.123456789Z"}}}}"#,
            encode(b"events")
        )
        .into_bytes()
    }

    #[test]
    fn message_get_answers_are_read() {
        let with_id = msg_get(
            7,
            Some("NATS/1.0\r\nTidewire-Events: 1\r\nNats-Msg-Id: tw.orders.ev.a.1-1:3\r\nNats-Expected-Last-Sequence: 6\r\n\r\n"),
        );
        assert_eq!(
            held_at(&with_id),
            HeldAt::Message {
                id: Some("tw.orders.ev.a.1-1:3".into())
            }
        );
        assert_eq!(held_at(&msg_get(1, None)), HeldAt::Message { id: None });
        let missing = br#"{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","error":{"code":404,"err_code":10037,"description":"no message found"}}"#;
        assert_eq!(held_at(missing), HeldAt::Missing);
        let no_leader = br#"{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}"#;
        assert_eq!(held_at(no_leader), HeldAt::Unreadable);
        assert_eq!(held_at(b"not json"), HeldAt::Unreadable);
    }

    /// The writer's side of `a_term_s_first_message_naming_another_message_at_its_base_is_refused`:
    /// this node applied term 2's message 1 at seq 3 (held by its replica only) while the stream
    /// holds term 3's message 0 there; it must not begin a term on seq 3.
    #[test]
    fn a_writer_whose_message_at_its_base_is_not_the_stream_s_has_diverged() {
        let at = |id: &str| HeldAt::Message { id: Some(id.into()) };
        let d = check_base(3, Some("t2:1"), &[at("t3:0")], Some(3));
        assert_eq!(
            d,
            Base::Diverged(BaseDiverged {
                seq: 3,
                stream: "message t3:0".into(),
                applied: "message t2:1".into(),
            })
        );
        if let Base::Diverged(d) = d {
            assert_eq!(
                d.to_string(),
                "order stream seq 3 holds message t3:0 but this node applied message t2:1 there"
            );
        }
        // the same message: the term may begin; the genesis marker has no id on either side
        assert_eq!(check_base(3, Some("t2:1"), &[at("t2:1")], Some(3)), Base::Follows);
        assert_eq!(
            check_base(1, None, &[HeldAt::Message { id: None }], Some(1)),
            Base::Follows
        );
        // a message with an id where this node applied one without
        assert!(matches!(check_base(1, None, &[at("t1:0")], Some(5)), Base::Diverged(_)));
        // a second server answering with another message at the seq: neither is mixed
        assert!(matches!(
            check_base(3, Some("t2:1"), &[at("t2:1"), at("t3:0")], Some(4)),
            Base::Diverged(_)
        ));
        // a server behind (nothing there yet) beside one holding this node's message
        assert_eq!(
            check_base(3, Some("t2:1"), &[HeldAt::Missing, at("t2:1")], Some(3)),
            Base::Follows
        );
    }

    #[test]
    fn a_stream_that_never_reached_the_writer_s_base_has_another_history() {
        let d = check_base(5, Some("t2:3"), &[HeldAt::Missing], Some(4));
        let Base::Diverged(d) = d else { panic!("{d:?}") };
        assert_eq!(
            d.to_string(),
            "order stream seq 5 holds nothing (the stream ends at seq 4) but this node applied message t2:3 there"
        );
        // removed by the stream's limits: nothing to compare
        assert_eq!(check_base(5, Some("t2:3"), &[HeldAt::Missing], Some(9)), Base::Follows);
        // no answer that can be read: not known
        assert_eq!(check_base(5, Some("t2:3"), &[], None), Base::Unknown);
        assert_eq!(
            check_base(5, Some("t2:3"), &[HeldAt::Unreadable], Some(9)),
            Base::Unknown
        );
        assert_eq!(check_base(5, Some("t2:3"), &[HeldAt::Missing], None), Base::Unknown);
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
