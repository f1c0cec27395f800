//! The engine-thread part of record replication: owners of subjects, the capture of this node's
//! changes into batch messages, and the application of other nodes' batches and snapshots with
//! gap detection. Installed in the hub (`Hub::install_records`); see the module doc of
//! `cluster::records` and docs/architecture.md for the rules.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::codec::{self, Entry, Header, SnapshotHead};
use super::{add, OwnerTable, RecordsConfig, RecordsStats};
use crate::cluster::ClusterConfig;
use crate::hub::{ContainerOp, Hub};
use crate::wire::Publish;

/// Owner of a subject nobody published yet, or whose owner restarted (its old records stay with
/// their last values until someone publishes them again).
const NONE: u16 = 0;
/// Owner: this node.
const LOCAL: u16 = 1;
/// Owner values from here on are remote node indexes + `REMOTE`.
const REMOTE: u16 = 2;

/// A message from NATS for the engine thread (decoded on the link's runtime).
#[derive(Debug)]
pub enum Inbound {
    /// Another node's batch.
    Batch {
        /// The sending node.
        node: Arc<str>,
        /// Its header.
        header: Header,
        /// The changes, in order.
        entries: Vec<Entry>,
    },
    /// A (reassembled) snapshot or image reply another node sent for this one.
    Snapshot {
        /// The sending node.
        node: Arc<str>,
        /// Its header (`seq`: the sender's last batch seq when it was taken).
        header: Header,
        /// Every record and container the sender owns (false: images of some subjects).
        full: bool,
        /// Images (and container memberships as `Clear` + `Add`).
        entries: Vec<Entry>,
    },
    /// Another node's heartbeat.
    Heartbeat {
        /// The sending node.
        node: Arc<str>,
        /// Its header (`seq`: its last batch seq).
        header: Header,
    },
    /// Another node asks for images of `subjects` this node owns (none: everything it owns).
    Request {
        /// The asking node.
        from: Arc<str>,
        /// Subjects; empty: a full snapshot.
        subjects: Vec<String>,
    },
    /// Time passed (every heartbeat interval): liveness and unanswered requests are checked.
    Tick,
}

/// What the engine thread hands to the link's outbound task.
#[derive(Debug)]
pub(super) enum Out {
    /// A message on this node's `<name>.rec.<node>`; `batch_seq` 0 for a snapshot chunk.
    Rec { payload: Vec<u8>, batch_seq: u64 },
    /// A request on `<name>.img.<owner>`.
    Request { owner: Arc<str>, payload: Vec<u8> },
    /// A heartbeat now (another node said hello).
    Heartbeat,
}

/// The sending side: a channel to the outbound task, bounded in bytes.
pub(super) struct Outbox {
    tx: tokio::sync::mpsc::UnboundedSender<Out>,
    /// Bytes handed over and not yet published (the task takes them off).
    queued: Arc<AtomicU64>,
    /// The last batch seq dropped (heartbeats report it, so receivers see the gap).
    dropped: Arc<AtomicU64>,
    stats: Arc<RecordsStats>,
}

impl Outbox {
    pub(super) fn new(
        tx: tokio::sync::mpsc::UnboundedSender<Out>,
        queued: Arc<AtomicU64>,
        dropped: Arc<AtomicU64>,
        stats: Arc<RecordsStats>,
    ) -> Outbox {
        Outbox {
            tx,
            queued,
            dropped,
            stats,
        }
    }

    /// Hands `out` over unless more than `limit` bytes wait already (false: dropped).
    fn send(&self, out: Out, limit: u64) -> bool {
        let n = match &out {
            Out::Rec { payload, .. } | Out::Request { payload, .. } => payload.len() as u64,
            Out::Heartbeat => 0,
        };
        if self.queued.load(Ordering::Relaxed) > limit {
            return false;
        }
        self.queued.fetch_add(n, Ordering::Relaxed);
        if self.tx.send(out).is_err() {
            self.queued.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// One other node, as this node knows it.
#[derive(Debug)]
struct RemoteNode {
    name: Arc<str>,
    /// Its incarnation (0: not heard yet).
    incarnation: u64,
    /// Its last batch seq applied (or covered by a snapshot).
    through: u64,
    last_heard: Instant,
    alive: bool,
    /// A full snapshot was asked at this time and has not arrived.
    snapshot_asked: Option<Instant>,
    /// Images of these subjects were asked at `images_asked` and have not arrived.
    asked: Vec<String>,
    images_asked: Option<Instant>,
    /// Subjects found behind while applying the current message (asked at its end).
    want: Vec<String>,
}

/// Engine-thread state of record replication.
pub struct Replica {
    me: Arc<str>,
    cfg: RecordsConfig,
    incarnation: u64,
    out: Outbox,
    owners: Arc<OwnerTable>,
    /// Owner by subject id - 1 (`NONE`, `LOCAL`, `REMOTE + node`).
    owner: Vec<u16>,
    nodes: Vec<RemoteNode>,
    /// The batch being captured (header first); `entries` changes in it.
    buf: Vec<u8>,
    entries: u64,
    batch_seq: u64,
    snapshots: u64,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("node", &self.me)
            .field("batch_seq", &self.batch_seq)
            .finish_non_exhaustive()
    }
}

impl Replica {
    pub(super) fn new(
        cluster: &ClusterConfig,
        cfg: RecordsConfig,
        incarnation: u64,
        out: Outbox,
        owners: Arc<OwnerTable>,
    ) -> Replica {
        let mut r = Replica {
            me: Arc::from(cluster.node.as_str()),
            cfg,
            incarnation,
            out,
            owners,
            owner: Vec::new(),
            nodes: Vec::new(),
            buf: Vec::new(),
            entries: 0,
            batch_seq: 0,
            snapshots: 0,
        };
        r.start_batch();
        r
    }

    /// Marks node `n` alive or gone (the ingest threads' table and the `peers` gauge follow).
    fn set_alive(&mut self, n: u16, alive: bool) {
        let node = &mut self.nodes[n as usize];
        node.alive = alive;
        self.owners.set_node(n, &node.name, alive);
        let peers = self.nodes.iter().filter(|n| n.alive).count() as u64;
        self.out.stats.peers.store(peers, Ordering::Relaxed);
    }

    fn start_batch(&mut self) {
        self.buf.clear();
        codec::header(&mut self.buf, codec::KIND_BATCH, self.incarnation, 0);
        self.entries = 0;
    }

    fn owner_of(&self, id: u32) -> u16 {
        self.owner.get(id as usize - 1).copied().unwrap_or(NONE)
    }

    fn set_owner(&mut self, id: u32, subject: &str, o: u16) {
        let i = id as usize - 1;
        if self.owner.len() <= i {
            self.owner.resize(i + 1, NONE);
        }
        let was = std::mem::replace(&mut self.owner[i], o);
        if was == o {
            return;
        }
        if o >= REMOTE {
            self.owners.set_remote(subject, o - REMOTE);
        } else if was >= REMOTE {
            self.owners.remove(subject);
        }
    }

    // ---- this node's changes ----

    /// Whether a local source may change subject `id` now: yes unless another live node owns it
    /// (refused and counted). A subject nobody owns, or owned by a node that is gone, becomes
    /// this node's (its seq continues from the record's).
    pub(crate) fn admit(&mut self, id: u32, subject: &str) -> bool {
        match self.owner_of(id) {
            LOCAL => true,
            o if o >= REMOTE && self.nodes[(o - REMOTE) as usize].alive => {
                add(&self.out.stats.publishes_refused, 1);
                false
            }
            _ => {
                self.set_owner(id, subject, LOCAL);
                true
            }
        }
    }

    /// A local publish, applied with `seq` and `ts`, goes into the current batch.
    pub(crate) fn capture(&mut self, p: &Publish, seq: u64, ts: f64) {
        codec::put_publish(&mut self.buf, p, seq, ts);
        self.entries += 1;
        if self.buf.len() >= self.cfg.max_message_bytes {
            self.seal();
        }
    }

    /// Local container ops go into the current batch.
    pub(crate) fn capture_container(&mut self, subject: &str, ops: &[ContainerOp]) {
        codec::put_container_ops(&mut self.buf, subject, ops);
        self.entries += 1;
        if self.buf.len() >= self.cfg.max_message_bytes {
            self.seal();
        }
    }

    /// The engine pass ended: the changes captured in it go out as one batch.
    pub(crate) fn end_pass(&mut self) {
        if self.entries > 0 {
            self.seal();
        }
    }

    fn seal(&mut self) {
        self.batch_seq += 1;
        codec::set_seq(&mut self.buf, self.batch_seq);
        let payload = std::mem::replace(&mut self.buf, Vec::with_capacity(self.cfg.max_message_bytes / 4));
        let entries = self.entries;
        let sent = self.out.send(
            Out::Rec {
                payload,
                batch_seq: self.batch_seq,
            },
            self.cfg.max_queued_bytes,
        );
        let s = &self.out.stats;
        if sent {
            add(&s.batches_sent, 1);
            add(&s.records_sent, entries);
        } else {
            add(&s.batches_dropped, 1);
            self.out.dropped.store(self.batch_seq, Ordering::Relaxed);
        }
        self.start_batch();
    }

    // ---- other nodes' changes ----

    fn node(&mut self, name: &Arc<str>, now: Instant) -> u16 {
        if let Some(i) = self.nodes.iter().position(|n| n.name == *name) {
            return i as u16;
        }
        self.nodes.push(RemoteNode {
            name: Arc::clone(name),
            incarnation: 0,
            through: 0,
            last_heard: now,
            alive: true,
            snapshot_asked: None,
            asked: Vec::new(),
            images_asked: None,
            want: Vec::new(),
        });
        let i = (self.nodes.len() - 1) as u16;
        self.set_alive(i, true);
        i
    }

    /// Notes that node `n` was heard with `h`; a new incarnation (the node restarted) orphans its
    /// old subjects and restarts its batch seqs.
    fn heard(&mut self, hub: &Hub, n: u16, h: &Header, now: Instant) {
        self.nodes[n as usize].last_heard = now;
        if !self.nodes[n as usize].alive {
            self.set_alive(n, true);
        }
        let node = &mut self.nodes[n as usize];
        if node.incarnation == h.incarnation {
            return;
        }
        let restarted = node.incarnation != 0;
        node.incarnation = h.incarnation;
        node.through = 0;
        node.snapshot_asked = None;
        node.asked.clear();
        node.images_asked = None;
        if restarted {
            let o = REMOTE + n;
            for i in 0..self.owner.len() {
                if self.owner[i] == o {
                    let id = (i + 1) as u32;
                    self.set_owner(id, hub.store().subject(id), NONE);
                }
            }
        }
    }

    fn ask_snapshot(&mut self, n: u16, now: Instant) {
        let node = &mut self.nodes[n as usize];
        if node.snapshot_asked.is_some() {
            return;
        }
        node.snapshot_asked = Some(now);
        let name = Arc::clone(&node.name);
        self.request(name, &[]);
    }

    fn request(&mut self, owner: Arc<str>, subjects: &[String]) {
        let payload = codec::request(&self.me, subjects);
        if self.out.send(Out::Request { owner, payload }, u64::MAX) {
            add(&self.out.stats.image_requests_sent, 1);
        }
    }

    /// Applies one message from NATS.
    pub fn handle(&mut self, hub: &mut Hub, msg: Inbound, now: Instant) {
        match msg {
            Inbound::Batch { node, header, entries } => {
                let n = self.node(&node, now);
                self.heard(hub, n, &header, now);
                let nd = &mut self.nodes[n as usize];
                if header.seq <= nd.through {
                    return; // already applied, or covered by a snapshot
                }
                if header.seq > nd.through + 1 {
                    add(&self.out.stats.gaps, 1);
                    self.ask_snapshot(n, now);
                }
                self.nodes[n as usize].through = header.seq;
                add(&self.out.stats.batches_received, 1);
                add(&self.out.stats.records_received, entries.len() as u64);
                for e in entries {
                    self.apply(hub, n, e, false, now);
                }
                hub.finish_replicated(now);
                self.ask_wanted(n, now);
            }
            Inbound::Snapshot {
                node,
                header,
                full,
                entries,
            } => {
                let n = self.node(&node, now);
                self.heard(hub, n, &header, now);
                for e in entries {
                    self.apply(hub, n, e, true, now);
                }
                hub.finish_replicated(now);
                let nd = &mut self.nodes[n as usize];
                if full {
                    nd.through = nd.through.max(header.seq);
                    nd.snapshot_asked = None;
                }
                nd.asked.clear();
                nd.images_asked = None;
                self.ask_wanted(n, now);
            }
            Inbound::Heartbeat { node, header } => {
                let n = self.node(&node, now);
                self.heard(hub, n, &header, now);
                if header.seq > self.nodes[n as usize].through && self.nodes[n as usize].snapshot_asked.is_none() {
                    add(&self.out.stats.gaps, 1);
                    self.ask_snapshot(n, now);
                }
            }
            Inbound::Request { from, subjects } => {
                if from != self.me {
                    self.answer(hub, &from, &subjects);
                }
            }
            Inbound::Tick => self.tick(now),
        }
    }

    /// Applies one entry from node `n` (`snapshot`: from a snapshot or image reply).
    fn apply(&mut self, hub: &mut Hub, n: u16, e: Entry, snapshot: bool, now: Instant) {
        let remote = REMOTE + n;
        match e {
            Entry::Record { publish, seq } => {
                let id = hub.subject_id(&publish.subject);
                let mut cur = self.owner_of(id);
                let rec = hub.store().get(id).map(|r| r.seq);
                if cur == LOCAL && rec.is_some() {
                    add(&self.out.stats.conflicts, 1);
                    if !self.yields_to(n) {
                        return;
                    }
                    // This node's source is refused from now on; the record is taken whole from
                    // the owner (this entry if it continues the local seq, else an image).
                    self.set_owner(id, &publish.subject, remote);
                    cur = NONE;
                }
                let local = rec.unwrap_or(0);
                let next = seq == local + 1;
                let take = if snapshot {
                    cur != remote || rec.is_none() || seq != local
                } else if publish.image {
                    cur != remote || seq > local
                } else {
                    next
                };
                if !take {
                    // Behind (not merely a repeat of what this node has): ask the owner for an image.
                    let stale = cur == remote && seq <= local;
                    if !snapshot && !stale && self.nodes[n as usize].snapshot_asked.is_none() {
                        add(&self.out.stats.gaps, 1);
                        self.nodes[n as usize].want.push(publish.subject);
                    }
                    return;
                }
                self.set_owner(id, &publish.subject, remote);
                hub.apply_replicated(&publish, seq, rec.is_some() && !next, now);
            }
            Entry::Container { subject, ops } => {
                let Some(id) = hub.container_id(&subject) else { return };
                if self.owner_of(id) == LOCAL {
                    add(&self.out.stats.conflicts, 1);
                    if !self.yields_to(n) {
                        return;
                    }
                }
                self.set_owner(id, &subject, remote);
                hub.apply_replicated_container(&subject, &ops, now);
            }
        }
    }

    /// Two nodes published one subject: the node whose name sorts first keeps it.
    fn yields_to(&self, n: u16) -> bool {
        *self.nodes[n as usize].name < *self.me
    }

    fn ask_wanted(&mut self, n: u16, now: Instant) {
        let node = &mut self.nodes[n as usize];
        if node.want.is_empty() {
            return;
        }
        let want = std::mem::take(&mut node.want);
        let name = Arc::clone(&node.name);
        node.images_asked = Some(now);
        self.request(name, &want);
        self.nodes[n as usize].asked.extend(want);
    }

    fn tick(&mut self, now: Instant) {
        let timeout = self.cfg.owner_timeout;
        let mut again = Vec::new();
        for i in 0..self.nodes.len() {
            let alive = now.saturating_duration_since(self.nodes[i].last_heard) < timeout;
            if alive != self.nodes[i].alive {
                self.set_alive(i as u16, alive);
            }
            let node = &mut self.nodes[i];
            if !alive {
                continue;
            }
            // Unanswered for a whole timeout (NATS lost it): ask again.
            if node
                .snapshot_asked
                .is_some_and(|t| now.saturating_duration_since(t) >= timeout)
            {
                node.snapshot_asked = None;
                again.push((i as u16, Vec::new()));
            } else if node
                .images_asked
                .is_some_and(|t| now.saturating_duration_since(t) >= timeout)
            {
                node.images_asked = None;
                again.push((i as u16, std::mem::take(&mut node.asked)));
            }
        }
        for (n, subjects) in again {
            if subjects.is_empty() {
                self.ask_snapshot(n, now);
            } else {
                self.nodes[n as usize].want = subjects;
                self.ask_wanted(n, now);
            }
        }
    }

    /// Sends node `to` images of `subjects` this node owns (none: every record and container it
    /// owns), after the batch captured so far, on this node's subject (so they arrive in order
    /// with its batches), in chunks of at most about `max_message_bytes`.
    fn answer(&mut self, hub: &Hub, to: &str, subjects: &[String]) {
        self.end_pass();
        add(&self.out.stats.image_requests_answered, 1);
        self.snapshots += 1;
        let mut head = SnapshotHead {
            for_node: to.to_owned(),
            id: self.snapshots,
            chunk: 0,
            last: false,
            full: subjects.is_empty(),
        };
        let mut chunk = self.snapshot_chunk(&head);
        let max = self.cfg.max_message_bytes;
        let store = hub.store();
        let ids: Vec<u32> = if subjects.is_empty() {
            (1..=store.max_id()).filter(|&id| self.owner_of(id) == LOCAL).collect()
        } else {
            subjects
                .iter()
                .filter_map(|s| store.lookup(s))
                .filter(|&id| self.owner_of(id) == LOCAL)
                .collect()
        };
        for id in ids {
            let subject = store.subject(id);
            if let Some(rec) = store.get(id) {
                let fields = store.image_fields(rec).map(|(name, value, _)| (name, value, true));
                let count = rec.slots.iter().filter(|s| s.value.is_some()).count();
                codec::put_record(&mut chunk, subject, rec.seq, rec.ts, true, count, fields);
            }
            if let (true, Some(c)) = (subjects.is_empty(), hub.views().container(id)) {
                let members: Vec<&str> = c.iter().map(|m| store.subject(m)).collect();
                let mut first = true;
                for part in members.chunks(max / 64 + 1) {
                    let ops: Vec<(u8, usize, &[&str])> = if first {
                        vec![(codec::OP_CLEAR, 0, &[][..]), (codec::OP_ADD, 0, part)]
                    } else {
                        vec![(codec::OP_ADD, 0, part)]
                    };
                    first = false;
                    codec::put_container(&mut chunk, subject, &ops);
                    if chunk.len() >= max {
                        chunk = self.send_chunk(chunk, &mut head);
                    }
                }
                if first {
                    codec::put_container::<&str>(&mut chunk, subject, &[(codec::OP_CLEAR, 0, &[])]);
                }
            }
            if chunk.len() >= max {
                chunk = self.send_chunk(chunk, &mut head);
            }
        }
        // The head ends with the `last` and `full` bytes: mark this chunk the last.
        let at = self.snapshot_chunk(&head).len() - 2;
        chunk[at] = 1;
        self.send_snapshot(chunk);
    }

    fn snapshot_chunk(&self, head: &SnapshotHead) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.cfg.max_message_bytes.min(64 * 1024));
        codec::header(&mut out, codec::KIND_SNAPSHOT, self.incarnation, self.batch_seq);
        codec::snapshot_head(&mut out, head);
        out
    }

    /// Sends `chunk` (not the last) and starts the next.
    fn send_chunk(&mut self, chunk: Vec<u8>, head: &mut SnapshotHead) -> Vec<u8> {
        self.send_snapshot(chunk);
        head.chunk += 1;
        self.snapshot_chunk(head)
    }

    fn send_snapshot(&mut self, payload: Vec<u8>) {
        // A snapshot is what heals gaps: it is not dropped for the outage bound (one is asked
        // again when it went missing).
        self.out.send(Out::Rec { payload, batch_seq: 0 }, u64::MAX);
    }
}
