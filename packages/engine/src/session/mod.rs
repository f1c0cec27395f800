//! A client session as the engine sees it: its outbox, burst state, subscriptions and
//! slow-consumer state. Sessions live in a slab inside the hub; subscriber lists hold slab slots.

use std::collections::HashMap;
use std::time::Instant;

use crate::batch::Burst;
use crate::config::BatchingConfig;

/// Encoded messages waiting to be flushed as one frame (`[` + bytes + `]`).
#[derive(Debug, Default)]
pub struct Outbox {
    bytes: Vec<u8>,
    messages: u32,
    /// Byte ranges of control messages (acks, errors): kept when record messages are dropped.
    control: Vec<(u32, u32)>,
    /// Record id of every queued record message (duplicates allowed), for conflation.
    records: Vec<u32>,
}

impl Outbox {
    /// Queues a record message (`record.image` / `record.update`) of record `id`.
    #[inline]
    pub fn push_record(&mut self, id: u32, msg: &[u8]) {
        if !self.bytes.is_empty() {
            self.bytes.push(b',');
        }
        self.bytes.extend_from_slice(msg);
        self.messages += 1;
        self.records.push(id);
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

    /// Drops every record message, keeping control messages in order. Returns the record ids
    /// that had messages queued (with duplicates) and the number of bytes dropped.
    pub fn drop_records(&mut self) -> (Vec<u32>, usize) {
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
        (std::mem::take(&mut self.records), dropped)
    }

    /// Empties the outbox after a flush, keeping its allocation.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.messages = 0;
        self.control.clear();
        self.records.clear();
    }
}

/// One session.
#[derive(Debug)]
pub struct Session {
    /// Server-wide session id (allocated by the caller's thread).
    pub sid: u32,
    /// Worker whose ready queue gets this session's frames.
    pub worker: u32,
    /// Login name (for reasons and logs).
    pub user: Box<str>,
    /// Price tier (subject mapping; used by later issues).
    pub tier: Box<str>,
    /// Queued messages.
    pub outbox: Outbox,
    /// Batching state.
    pub burst: Burst,
    /// When the queued messages must be flushed (`None` while the outbox is empty).
    pub due: Option<Instant>,
    /// Earliest timer queued for this session in the hub's heap.
    pub timer: Option<Instant>,
    /// Subscribed record id -> index in that record's subscriber list.
    pub subs: HashMap<u32, u32>,
    /// Set while the worker reports the socket as buffered.
    pub blocked_since: Option<Instant>,
    /// Record messages are not queued but tracked in `dirty` (sent as images when unblocked).
    pub conflating: bool,
    /// Records with changes not sent (conflation); may hold stale/duplicate ids (checked on use).
    pub dirty: Vec<u32>,
    /// Records with a held (throttled) update; may hold stale ids (checked on use).
    pub throttled: Vec<u32>,
    /// Bytes dropped by conflation since the session was blocked.
    pub dropped_bytes: u64,
    /// true: not blocked, not conflating, no throttling -> fan-out appends directly.
    pub fast: bool,
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
        let mut o = Outbox::default();
        o.push_control(b"{\"a\":1}");
        o.push_record(7, b"{\"r\":1}");
        o.push_control(b"{\"b\":2}");
        o.push_record(8, b"{\"r\":2}");
        o.push_record(7, b"{\"r\":3}");
        assert_eq!(o.messages(), 5);
        let (ids, dropped) = o.drop_records();
        assert_eq!(ids, [7, 8, 7]);
        assert_eq!(o.bytes(), b"{\"a\":1},{\"b\":2}");
        assert_eq!(dropped, 3 * 8);
        assert_eq!(o.messages(), 2);
        o.push_record(9, b"x");
        let (ids, _) = o.drop_records();
        assert_eq!(ids, [9]);
        assert_eq!(o.bytes(), b"{\"a\":1},{\"b\":2}");
        o.clear();
        assert!(o.is_empty());
    }
}
