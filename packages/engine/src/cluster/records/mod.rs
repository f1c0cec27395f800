//! Cluster mode, records: every node's records and containers on every node, with the seq the
//! publishing node gave them (docs/architecture.md, "Cluster mode: records").
//!
//! The node whose source published a record (or fed a container) owns it. After each engine pass
//! the owner sends what its own sources changed in that pass, as one batch message on
//! `<name>.rec.<node>` (core NATS, no JetStream): every publish with its resulting seq, and every
//! container op. Every node subscribes to `<name>.rec.*` and applies the other nodes' batches
//! with the owner's seq. Batches carry a per-node batch seq; a gap (NATS was down, a node joined
//! late, a restarted owner) is healed by a snapshot the owner sends on the same subject, so it
//! arrives in order with the batches: subscribers get a fresh image, never a gap.
//!
//! Parts: `codec` (the message format), `owners` (who owns which subject, readable from ingest
//! threads), `replica` (engine-thread state: capture, apply, gaps), `tasks` (the NATS side on the
//! link's runtime). The runtime calls [`start`] and installs the [`Replica`] in its hub.

pub mod codec;
pub mod owners;
mod replica;
mod tasks;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use owners::OwnerTable;
pub use replica::{Inbound, Replica};

use super::Link;

/// Record replication settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordsConfig {
    /// A node says it is alive (and its last batch seq) this often. @default 1 s
    pub heartbeat: Duration,
    /// A node not heard from for this long is gone: its records stay with their last values and
    /// another node's source may take them over. @default 3 s
    pub owner_timeout: Duration,
    /// A batch message is closed at this size and another started (NATS' default max_payload
    /// is 1 MiB). @default 256 KiB
    pub max_message_bytes: usize,
    /// Batches waiting for NATS above this are dropped (the receivers heal the gap with a
    /// snapshot once NATS is back), so a NATS outage does not grow memory. @default 64 MiB
    pub max_queued_bytes: u64,
}

impl Default for RecordsConfig {
    fn default() -> Self {
        RecordsConfig {
            heartbeat: Duration::from_secs(1),
            owner_timeout: Duration::from_secs(3),
            max_message_bytes: 256 * 1024,
            max_queued_bytes: 64 * 1024 * 1024,
        }
    }
}

/// What one node sent to and received from the cluster (cumulative), for /metrics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RecordsCounters {
    /// Batch messages sent (one per engine pass with changes of this node's records).
    pub batches_sent: u64,
    /// Record changes and container ops in them.
    pub records_sent: u64,
    /// Bytes of every message this node sent on NATS (batches, snapshots, heartbeats, requests).
    pub bytes_sent: u64,
    /// Batch messages received from other nodes.
    pub batches_received: u64,
    /// Record changes and container ops received in batches.
    pub records_received: u64,
    /// Bytes of every message received from other nodes (snapshots for other nodes included).
    pub bytes_received: u64,
    /// Snapshot and image requests this node sent.
    pub image_requests_sent: u64,
    /// Snapshot and image requests this node answered.
    pub image_requests_answered: u64,
    /// Gaps seen: a batch seq or a record seq that skipped, healed by a snapshot or an image.
    pub gaps: u64,
    /// Batches dropped because NATS was not taking them (`max_queued_bytes`).
    pub batches_dropped: u64,
    /// Local publishes refused: the subject is owned by another live node.
    pub publishes_refused: u64,
    /// Messages from other nodes that could not be read (dropped, healed like a gap).
    pub decode_errors: u64,
    /// Remote changes to a subject this node owns (two nodes publishing one subject).
    pub conflicts: u64,
    /// Gauge: other nodes heard from within `owner_timeout`.
    pub peers: u64,
}

/// The counters, shared by the engine thread and the link's tasks.
#[derive(Debug, Default)]
pub struct RecordsStats {
    batches_sent: AtomicU64,
    records_sent: AtomicU64,
    bytes_sent: AtomicU64,
    batches_received: AtomicU64,
    records_received: AtomicU64,
    bytes_received: AtomicU64,
    image_requests_sent: AtomicU64,
    image_requests_answered: AtomicU64,
    gaps: AtomicU64,
    batches_dropped: AtomicU64,
    publishes_refused: AtomicU64,
    decode_errors: AtomicU64,
    conflicts: AtomicU64,
    peers: AtomicU64,
}

fn add(a: &AtomicU64, n: u64) {
    a.fetch_add(n, Ordering::Relaxed);
}

impl RecordsStats {
    /// The counters now.
    pub fn snapshot(&self) -> RecordsCounters {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RecordsCounters {
            batches_sent: g(&self.batches_sent),
            records_sent: g(&self.records_sent),
            bytes_sent: g(&self.bytes_sent),
            batches_received: g(&self.batches_received),
            records_received: g(&self.records_received),
            bytes_received: g(&self.bytes_received),
            image_requests_sent: g(&self.image_requests_sent),
            image_requests_answered: g(&self.image_requests_answered),
            gaps: g(&self.gaps),
            batches_dropped: g(&self.batches_dropped),
            publishes_refused: g(&self.publishes_refused),
            decode_errors: g(&self.decode_errors),
            conflicts: g(&self.conflicts),
            peers: g(&self.peers),
        }
    }
}

/// Hands a message from NATS to the engine thread (the runtime queues it on its ingest lane);
/// false when the engine is gone.
pub type EngineSink = Box<dyn Fn(Inbound, usize) -> bool + Send + Sync>;

/// The running replication: the link's tasks, the shared owner table and the counters. Dropping
/// it stops the tasks.
pub struct RecordsReplicator {
    link: Arc<Link>,
    owners: Arc<OwnerTable>,
    stats: Arc<RecordsStats>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for RecordsReplicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordsReplicator")
            .field("link", &self.link)
            .finish_non_exhaustive()
    }
}

impl RecordsReplicator {
    /// Who owns which subject (the ingest path refuses a source publishing another node's subject).
    pub fn owners(&self) -> &Arc<OwnerTable> {
        &self.owners
    }

    /// The counters now.
    pub fn counters(&self) -> RecordsCounters {
        self.stats.snapshot()
    }

    /// The link.
    pub fn link(&self) -> &Arc<Link> {
        &self.link
    }
}

impl RecordsReplicator {
    /// Stops the tasks: nothing more is sent or received (the engine is shutting down).
    pub fn stop(&self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Drop for RecordsReplicator {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts record replication on `link`: subscribes to the other nodes' batches and requests,
/// announces this node (the others answer with a heartbeat, so a gap or a late join is seen at
/// once) and returns the replicator (keep it alive) and the engine-thread part, for
/// `Hub::install_records`. Messages from NATS reach the engine thread through `sink`.
/// Errors when NATS refuses the subscriptions.
pub fn start(
    link: Arc<Link>,
    cfg: RecordsConfig,
    sink: EngineSink,
) -> Result<(RecordsReplicator, Replica), super::ClusterError> {
    let stats = Arc::new(RecordsStats::default());
    let owners = Arc::new(OwnerTable::default());
    let incarnation = incarnation();
    let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
    let queued = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicU64::new(0));
    let tasks = tasks::spawn(
        &link,
        tasks::TaskArgs {
            cfg,
            incarnation,
            stats: Arc::clone(&stats),
            queued: Arc::clone(&queued),
            dropped: Arc::clone(&dropped),
            out_rx,
            out_tx: out_tx.clone(),
            sink,
        },
    )?;
    let replica = Replica::new(
        link.config(),
        cfg,
        incarnation,
        replica::Outbox::new(out_tx, queued, dropped, Arc::clone(&stats)),
        Arc::clone(&owners),
    );
    Ok((
        RecordsReplicator {
            link,
            owners,
            stats,
            tasks,
        },
        replica,
    ))
}

/// A number unlikely to repeat across restarts of a node: the clock's nanoseconds mixed with the
/// process id.
fn incarnation() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15;
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)).max(1)
}
