//! A client session as the engine sees it: its outbox, burst state, subscriptions and
//! slow-consumer state. Sessions live in a slab inside the hub; subscriber lists hold slab slots.

use std::collections::HashMap;
use std::time::Instant;

use crate::batch::Burst;
use crate::config::BatchingConfig;

mod samples;
pub use samples::{FrameMeta, Sampler, SAMPLE_RECORD, SAMPLE_VIEW_ROW};

/// Encoded messages waiting to be flushed as one frame (`[` + bytes + `]`).
#[derive(Debug, Default)]
#[repr(C)]
pub struct Outbox {
    bytes: Vec<u8>,
    messages: u32,
    /// Byte ranges of control messages (acks, errors): kept when record messages are dropped.
    control: Vec<(u32, u32)>,
    /// A reply (an answer to a request) is queued: a blocked session still sends its control
    /// messages now (`take_control`), ahead of the record messages it holds.
    urgent: bool,
    /// Latency samples of the queued messages.
    samples: Sampler,
}

/// How every record message starts (the encoder's canonical key order); inside JSON strings
/// quotes are escaped, so these bytes only ever occur at a message start.
const RECORD_MESSAGE_PREFIXES: [&[u8]; 2] = [
    b"{\"type\":\"record.update\",\"id\":",
    b"{\"type\":\"record.image\",\"id\":",
];

impl Outbox {
    /// Queues a record message (`record.image` / `record.update`). `msg` starts with the `,`
    /// separator (dropped when the outbox is empty), so the hot path is one copy.
    #[inline]
    pub fn push_record(&mut self, msg: &[u8]) {
        let msg = if self.bytes.is_empty() {
            msg.get(1..).unwrap_or_default()
        } else {
            msg
        };
        self.bytes.extend_from_slice(msg);
        self.messages += 1;
    }

    /// Queues a control message (`record.subscribed`, `record.unsubscribed`, `error`).
    pub fn push_control(&mut self, msg: &[u8]) {
        if !self.bytes.is_empty() {
            self.bytes.push(b',');
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(msg);
        self.messages += 1;
        // Outboxes are bounded far below 4 GiB by `outbox_conflate_bytes`.
        self.control.push((start as u32, msg.len() as u32));
    }

    /// Queues a reply (`push_control`) and marks the outbox urgent.
    pub fn push_reply(&mut self, msg: &[u8]) {
        self.push_control(msg);
        self.urgent = true;
    }

    /// true when a reply is queued (see `push_reply`).
    pub fn urgent(&self) -> bool {
        self.urgent
    }

    /// Number of queued control messages.
    pub fn control_messages(&self) -> usize {
        self.control.len()
    }

    /// Moves every control message into `out` (joined by `,`, in order) and keeps the record
    /// messages queued, in order; clears `urgent`. Replies of a blocked session leave this way
    /// while its record messages stay held (and may still be conflated).
    /// Returns the number of messages moved; their view-row samples stay until `clear_rows`
    /// (`control_meta` reads them for the frame).
    pub fn take_control(&mut self, out: &mut Vec<u8>) -> u32 {
        self.urgent = false;
        if self.control.is_empty() {
            return 0;
        }
        let moved = self.control.len() as u32;
        let mut records = Vec::with_capacity(self.bytes.len());
        let mut at = 0usize;
        let keep = |piece: &[u8], records: &mut Vec<u8>| {
            let piece = trim_commas(piece);
            if !piece.is_empty() {
                if !records.is_empty() {
                    records.push(b',');
                }
                records.extend_from_slice(piece);
            }
        };
        for &(start, len) in &self.control {
            let (start, end) = (start as usize, (start + len) as usize);
            keep(&self.bytes[at..start], &mut records);
            if !out.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(&self.bytes[start..end]);
            at = end;
        }
        keep(&self.bytes[at..], &mut records);
        self.messages -= self.control.len() as u32;
        self.control.clear();
        self.bytes = records;
        moved
    }

    /// The sampling counter and the samples of the queued messages.
    pub fn samples(&mut self) -> &mut Sampler {
        &mut self.samples
    }

    /// The frame of `messages` control messages `take_control` moved out: the view-row samples
    /// go with it (the caller then clears them with `samples().clear_rows()`).
    pub fn control_meta(&self, messages: u32) -> FrameMeta<'_> {
        FrameMeta {
            messages,
            records: &[],
            rows: self.samples.rows(),
        }
    }

    /// The whole outbox as one frame: its message count and samples.
    pub fn frame_meta(&self) -> FrameMeta<'_> {
        FrameMeta {
            messages: self.messages,
            records: self.samples.records(),
            rows: self.samples.rows(),
        }
    }

    /// Where the next message will be written (for prefetching; never dereferenced here).
    #[inline]
    pub fn tail_ptr(&self) -> *const u8 {
        self.bytes.as_ptr().wrapping_add(self.bytes.len())
    }

    /// Queued bytes (without the frame's brackets).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// true when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Number of queued messages.
    pub fn messages(&self) -> u32 {
        self.messages
    }

    /// The queued messages joined by `,`.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Record ids of the queued record messages (with duplicates), found by their prefix, so
    /// the hot path need not track them (this runs once, when a session starts conflating).
    pub fn record_ids(&self) -> Vec<u32> {
        let b = &self.bytes;
        let mut ids = Vec::new();
        for (i, _) in b.iter().enumerate().filter(|(_, &c)| c == b'{') {
            let rest = &b[i..];
            let Some(p) = RECORD_MESSAGE_PREFIXES.iter().find(|p| rest.starts_with(p)) else {
                continue;
            };
            let digits = rest[p.len()..].iter().take_while(|c| c.is_ascii_digit());
            let id = digits.fold(0u64, |n, &c| n.saturating_mul(10).saturating_add(u64::from(c - b'0')));
            ids.push(u32::try_from(id).unwrap_or(u32::MAX));
        }
        ids
    }

    /// Drops every record message, keeping control messages in order. Returns the record ids
    /// that had messages queued (with duplicates) and the number of bytes dropped.
    pub fn drop_records(&mut self) -> (Vec<u32>, usize) {
        let ids = self.record_ids();
        let before = self.bytes.len();
        let mut kept = Vec::with_capacity(self.control.iter().map(|c| c.1 as usize + 1).sum());
        let mut control = Vec::with_capacity(self.control.len());
        for &(start, len) in &self.control {
            if !kept.is_empty() {
                kept.push(b',');
            }
            control.push((kept.len() as u32, len));
            kept.extend_from_slice(&self.bytes[start as usize..(start + len) as usize]);
        }
        self.bytes = kept;
        self.messages = control.len() as u32;
        self.control = control;
        let dropped = before - self.bytes.len();
        self.samples.clear_records();
        (ids, dropped)
    }

    /// Empties the outbox after a flush, keeping its allocation.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.messages = 0;
        self.control.clear();
        self.urgent = false;
        self.samples.clear();
    }
}

/// `piece` without leading and trailing `,` separators.
fn trim_commas(mut piece: &[u8]) -> &[u8] {
    while let [b',', rest @ ..] = piece {
        piece = rest;
    }
    while let [rest @ .., b','] = piece {
        piece = rest;
    }
    piece
}

/// One session. `repr(C)` keeps the fields the fan-out hot path touches (`fast`, `outbox`,
/// `burst`, `due`) together at the front, in as few cache lines as possible.
#[derive(Debug)]
#[repr(C)]
pub struct Session {
    /// true: not blocked, not conflating, no throttling -> fan-out appends directly.
    pub fast: bool,
    /// Record messages are not queued but tracked in `dirty` (sent as images when unblocked).
    pub conflating: bool,
    /// Server-wide session id (allocated by the caller's thread).
    pub sid: u32,
    /// Queued messages.
    pub outbox: Outbox,
    /// When the queued messages must be flushed (`None` while the outbox is empty).
    pub due: Option<Instant>,
    /// Batching state.
    pub burst: Burst,
    /// Earliest timer queued for this session in the hub's heap.
    pub timer: Option<Instant>,
    /// Set while the worker reports the socket as buffered.
    pub blocked_since: Option<Instant>,
    /// Worker whose ready queue gets this session's frames.
    pub worker: u32,
    /// Subscribed record id -> index in that record's subscriber list.
    pub subs: HashMap<u32, u32>,
    /// Records with changes not sent (conflation); may hold stale/duplicate ids (checked on use).
    pub dirty: Vec<u32>,
    /// Records with a held (throttled) update; may hold stale ids (checked on use).
    pub throttled: Vec<u32>,
    /// Bytes dropped by conflation since the session was blocked.
    pub dropped_bytes: u64,
    /// Login name (for reasons and logs).
    pub user: Box<str>,
    /// Price tier (subject mapping; used by later issues).
    pub tier: Box<str>,
    /// Its worker applies topic entries: the session may get record messages through topic
    /// publishes (hub `direct.rs`).
    pub topics: bool,
    /// Subscriptions whose record messages come through the worker's topic publish (hub `direct.rs`).
    pub direct: u32,
    /// Some subscription may not be direct yet: the next flush that empties the outbox of an
    /// eligible session makes them direct.
    pub promote: bool,
}

impl Session {
    /// A new, unblocked session with an empty outbox.
    pub fn new(sid: u32, worker: u32, user: &str, tier: &str, cfg: &BatchingConfig) -> Self {
        Session {
            sid,
            worker,
            user: user.into(),
            tier: tier.into(),
            outbox: Outbox::default(),
            burst: Burst::new(cfg),
            due: None,
            timer: None,
            subs: HashMap::new(),
            blocked_since: None,
            conflating: false,
            dirty: Vec::new(),
            throttled: Vec::new(),
            dropped_bytes: 0,
            fast: cfg.throttle.is_zero(),
            topics: false,
            direct: 0,
            promote: false,
        }
    }

    /// Recomputes `fast` after a state or config change.
    pub fn refresh_fast(&mut self, cfg: &BatchingConfig) {
        self.fast = self.blocked_since.is_none() && !self.conflating && cfg.throttle.is_zero();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_records_keeps_control_messages_in_order() {
        let rec = |id: u32, kind: &str| {
            format!(",{{\"type\":\"record.{kind}\",\"id\":{id},\"s\":\"{{\\\"type\\\":\\\"record.update\\\",\\\"id\\\":5\"}}")
        };
        let mut o = Outbox::default();
        o.push_record(rec(7, "image").as_bytes());
        o.push_control(b"{\"a\":1}");
        o.push_record(rec(8, "update").as_bytes());
        o.push_control(b"{\"b\":2}");
        o.push_record(rec(7, "update").as_bytes());
        assert_eq!(o.messages(), 5);
        assert_eq!(o.bytes()[0], b'{', "no leading separator");
        let full = o.len();
        let (ids, dropped) = o.drop_records();
        assert_eq!(ids, [7, 8, 7], "ids inside strings are not message starts");
        assert_eq!(o.bytes(), b"{\"a\":1},{\"b\":2}");
        assert_eq!(dropped, full - o.len());
        assert_eq!(o.messages(), 2);
        o.push_record(rec(4_000_000_000, "update").as_bytes());
        let (ids, _) = o.drop_records();
        assert_eq!(ids, [4_000_000_000]);
        assert_eq!(o.bytes(), b"{\"a\":1},{\"b\":2}");
        o.clear();
        assert!(o.is_empty());
    }

    #[test]
    fn take_control_moves_replies_out_and_keeps_records_in_order() {
        let rec = |id: u32| format!(",{{\"type\":\"record.update\",\"id\":{id}}}");
        let mut o = Outbox::default();
        o.push_record(rec(1).as_bytes());
        o.push_control(b"{\"v\":1}");
        o.push_record(rec(2).as_bytes());
        o.push_reply(b"{\"a\":1}");
        o.push_record(rec(3).as_bytes());
        assert!(o.urgent());
        let mut out = Vec::new();
        o.take_control(&mut out);
        assert_eq!(out, b"{\"v\":1},{\"a\":1}");
        assert_eq!(
            o.bytes(),
            br#"{"type":"record.update","id":1},{"type":"record.update","id":2},{"type":"record.update","id":3}"#
        );
        assert_eq!(o.messages(), 3);
        assert!(!o.urgent());
        // control first, then nothing else: the outbox empties
        let mut o = Outbox::default();
        o.push_reply(b"{\"a\":1}");
        let mut out = Vec::new();
        o.take_control(&mut out);
        assert_eq!(out, b"{\"a\":1}");
        assert!(o.is_empty());
        assert_eq!(o.messages(), 0);
        // records pushed after the split keep a single separator
        o.push_record(rec(4).as_bytes());
        o.push_reply(b"{\"b\":2}");
        o.push_record(rec(5).as_bytes());
        out.clear();
        o.take_control(&mut out);
        assert_eq!(
            o.bytes(),
            br#"{"type":"record.update","id":4},{"type":"record.update","id":5}"#
        );
    }

    #[test]
    fn samples_follow_their_messages() {
        let rec = |id: u32| format!(",{{\"type\":\"record.update\",\"id\":{id}}}");
        let mut o = Outbox::default();
        o.push_record(rec(1).as_bytes());
        o.samples().record(100.0);
        o.push_control(b"{\"type\":\"view.rows\"}");
        o.samples().view_row(200.0);
        o.push_reply(b"{\"a\":1}");
        let meta = o.frame_meta();
        assert_eq!(
            (meta.messages, meta.records, meta.rows),
            (3, &[100.0][..], &[200.0][..])
        );
        // a blocked session's replies leave with the view-row samples
        let mut out = Vec::new();
        let moved = o.take_control(&mut out);
        let meta = o.control_meta(moved);
        assert_eq!((meta.messages, meta.records, meta.rows), (2, &[][..], &[200.0][..]));
        o.samples().clear_rows();
        assert_eq!(o.frame_meta().records, [100.0], "the record message is still queued");
        // conflation drops the record messages and their samples
        o.drop_records();
        assert_eq!(o.frame_meta().messages, 0);
        assert!(o.frame_meta().records.is_empty());
        o.push_record(rec(2).as_bytes());
        o.samples().record(300.0);
        o.clear();
        assert!(o.frame_meta().records.is_empty() && o.frame_meta().rows.is_empty());
    }
}
