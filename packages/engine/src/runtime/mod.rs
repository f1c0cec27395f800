//! The engine runtime: one engine thread owning a `Hub`, fed through a channel from any thread,
//! flushing frames into per-worker ready queues and waking the workers.
//!
//! Two lanes feed the thread: a control lane (sessions, subscriptions, views, orders, journal
//! completions, admin) and an ingest lane (source publishes and container publishes). Per pass
//! the thread first takes every queued control command (up to `MAX_COMMANDS_PER_PASS`), then
//! ingest frames within a budget (`INGEST_FRAMES_PER_PASS` frames and `INGEST_TIME_PER_PASS`,
//! cut short when a control command arrives), fires due timers and wakes each worker whose ready
//! queue went from empty to non-empty. Replies the control turn queued (a `view.created`, a
//! subscribe ack) are flushed and their workers woken as the turn ends, and every
//! `REPLY_FLUSH_EVERY` during a long turn, before the ingest turn: a reply never waits for the
//! ingest budget. So a `view.create` never waits behind a source's backlog, and flushing stays
//! timely under a flood. Each lane is FIFO: ingest frames are applied in the
//! order they were queued, and a session's own commands stay in order. Across lanes there is no
//! order: a subscribe queued after a publish may be handled first (the subscription is then
//! pending and gets its image when the publish is applied, as for any unpublished subject).
//! Between passes the thread sleeps until either lane has work or the next timer is due.
//! Engines are registered by id so worker threads can `Engine::attach(id)`.

mod cluster;
mod engine;
mod engine_thread;
mod lane;
mod orders;
mod ready;
mod shutdown;
mod statements;
mod stats;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;

pub use crate::stats::EngineStats;
pub use cluster::{host_name, ClusterStart};
pub use orders::{FrameSubmit, OrderSubmit};
use ready::Workers;
pub use ready::{Drained, TakeInto, Waker, WorkerQueue, DRAIN_ROW};
pub use shutdown::ShutdownReport;
use stats::AtomicStats;

use crate::cluster::orders::ClusterOrderStats;
use crate::cluster::{ClusterConfig, ClusterError, Link};
use crate::error::{EngineError, Result};
use crate::hub::Command;
use crate::order_desk::{OrderCmd, OrdersShared};

/// Control commands (sessions, subscriptions, views, orders) handled per pass at most.
pub const MAX_COMMANDS_PER_PASS: usize = 4096;
/// Ingest frames (source publishes, container publishes) handled per pass at most.
pub const INGEST_FRAMES_PER_PASS: usize = 1024;
/// Time spent on ingest frames per pass at most (checked after each frame: one frame can overrun
/// it), so due flushes and queued control commands wait at most about this long behind a flood.
pub const INGEST_TIME_PER_PASS: std::time::Duration = std::time::Duration::from_millis(2);
/// Largest source frame (bytes) applied on the thread that ingests it while the engine thread is
/// parked (`engine_thread::ingest_inline`): a ticking feed's frames. Larger frames (images in
/// bulk, a flood) go to the engine thread, so that the worker goes on reading while they are
/// applied, and what queues up drives source flow control.
pub const INLINE_INGEST_MAX_BYTES: usize = 4096;
/// During a control turn, replies already queued are flushed to the workers at least this often
/// (and once as the turn ends), so the first of a burst of `view.create`s is not held back by the
/// rest of the burst. Replies to one session within this time still share a frame.
pub const REPLY_FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

enum Msg {
    Cmd(Command),
    Order(OrderCmd),
    /// Journal completions are waiting in `Shared::completions` (sent when it went non-empty).
    Completions,
    /// Answer with a snapshot of the materialised views (the admin views table).
    ViewStats(Sender<Vec<crate::hub::ViewStat>>),
    /// Answer with the open views of these sessions (a rule reload re-checks them).
    SessionViews(Vec<u32>, Sender<Vec<crate::hub::SessionView>>),
    /// Answer with these containers' members (empty: every container; a rule reload re-checks them).
    ContainerMembers(Vec<String>, Sender<Vec<crate::hub::ContainerMembers>>),
    /// Create a server statement (name, text); answer with its canonical text or the error.
    ServerStatement(String, String, Sender<Result<String>>),
    /// Ingest lane only: every ingest frame queued before it has been applied; answer (a source's
    /// barrier, `Engine::ingest_barrier`).
    IngestBarrier(Sender<()>),
    /// Ingest lane: a message from another cluster node (`cluster::records`).
    Records(crate::cluster::records::Inbound),
    Shutdown,
}

/// One ingest-lane entry: a source's publish or container publish and its size in bytes (the
/// frame's length; for a container publish, its subjects' lengths), counted in `ingest_bytes`
/// until the engine thread takes it.
pub(crate) struct IngestMsg {
    /// `Msg::Cmd` (a publish) or `Msg::IngestBarrier` (0 bytes).
    cmd: Msg,
    bytes: usize,
}

struct Shared {
    id: u32,
    /// `Engine::epoch`.
    epoch: u64,
    /// Control lane.
    tx: lane::LaneSender<Msg>,
    /// Ingest lane.
    ingest_tx: lane::LaneSender<IngestMsg>,
    /// The receiving ends of both lanes and their bell.
    lanes: engine_thread::Lanes,
    /// The hub and the desk; `None` once the engine thread ended (engine_thread.rs `Core`).
    core: Mutex<Option<engine_thread::Core>>,
    /// Bytes queued in the ingest lane (added on send, taken off once the engine thread applied it).
    ingest_bytes: AtomicU64,
    /// Ready queues by worker id - 1 (shared with the order desk's ack sink).
    workers: Arc<Workers>,
    next_sid: AtomicU32,
    stats: AtomicStats,
    thread: Mutex<Option<JoinHandle<()>>>,
    shut: AtomicBool,
    /// Order counters, latencies and the recovery report; `None` = orders disabled.
    orders: Option<Arc<OrdersShared>>,
    /// Journal completions batched by the writer thread (one wake-up per batch, not per entry).
    completions: Arc<orders::Completions>,
    /// Shutdown request, drain deadline and the report of what was dropped.
    stopping: shutdown::Stopping,
    /// `EngineConfig::shutdown_drain`.
    shutdown_drain: std::time::Duration,
    /// Cluster record replication; `None` on a single node.
    records: Option<crate::cluster::records::RecordsReplicator>,
    /// Cluster mode: the node's NATS link (shared by every cluster part).
    cluster: Option<Arc<Link>>,
    /// Cluster mode with orders: the desk's cluster counters.
    cluster_orders: Option<Arc<ClusterOrderStats>>,
}

/// Connects this node's cluster link (the one NATS connection every cluster part shares).
/// BAD_REQUEST on bad settings, UNAVAILABLE-like INTERNAL naming the URLs when no server answers.
pub fn cluster_link(cfg: ClusterConfig) -> Result<Arc<Link>> {
    Link::connect(cfg).map(Arc::new).map_err(cluster_error)
}

fn cluster_error(e: ClusterError) -> EngineError {
    match e {
        ClusterError::Config(m) => EngineError::bad_request(m, Some("cluster"), None),
        other => EngineError::Internal {
            message: other.to_string(),
        },
    }
}

fn registry() -> &'static Mutex<HashMap<u32, Arc<Shared>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u32, Arc<Shared>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

static NEXT_ENGINE_ID: AtomicU32 = AtomicU32::new(1);

fn internal(what: &str) -> EngineError {
    EngineError::Internal {
        message: format!("engine {what} lock poisoned (a thread panicked)"),
    }
}

/// A handle on a running engine; cheap to clone, usable from any thread.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("id", &self.shared.id).finish()
    }
}

/// A fresh epoch: wall-clock ms since 1970 x 1024 + the low bits of the process id, so two runs
/// (a restart takes well over a millisecond) or two processes started in the same ms differ; below
/// 2^53 (exact in JavaScript) until the year 2248.
fn new_epoch() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (ms << 10) | u64::from(std::process::id() & 1023)
}

#[cfg(test)]
mod tests;
