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
mod orders;
mod ready;
mod shutdown;
mod statements;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, Select, Sender, TryRecvError};

pub use cluster::{host_name, ClusterStart};
pub use orders::OrderSubmit;
use ready::Workers;
pub use ready::{Drained, Waker, WorkerQueue};
pub use shutdown::ShutdownReport;

use crate::cluster::orders::ClusterOrderStats;
use crate::cluster::{ClusterConfig, ClusterError, Link};
use crate::config::{BatchingConfig, EngineConfig, OrdersConfig};
use crate::error::{EngineError, Result};
use crate::hub::{Command, ContainerOp, Hub, HubStats};
use crate::order_desk::{OrderCmd, OrderDesk, OrdersShared};
use crate::wire::decode::decode_source_frame_as;
use crate::wire::PublishGrants;

/// Control commands (sessions, subscriptions, views, orders) handled per pass at most.
pub const MAX_COMMANDS_PER_PASS: usize = 4096;
/// Ingest frames (source publishes, container publishes) handled per pass at most.
pub const INGEST_FRAMES_PER_PASS: usize = 1024;
/// Time spent on ingest frames per pass at most (checked after each frame: one frame can overrun
/// it), so due flushes and queued control commands wait at most about this long behind a flood.
pub const INGEST_TIME_PER_PASS: std::time::Duration = std::time::Duration::from_millis(2);
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

/// Engine counters, readable from any thread (updated by the engine thread once per pass).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EngineStats {
    /// Publishes accepted by `ingest`.
    pub publishes_in: u64,
    /// Publishes the store refused (field limit).
    pub publishes_rejected: u64,
    /// Messages appended to outboxes.
    pub deliveries: u64,
    /// Frames flushed to workers.
    pub frames_out: u64,
    /// Bytes of those frames.
    pub bytes_out: u64,
    /// Record updates merged into throttled deltas instead of sent alone.
    pub conflated_updates: u64,
    /// Record updates slow consumers never got as deltas (replaced by an image when they drain).
    pub dropped_updates: u64,
    /// Sessions closed with 4008.
    pub slow_consumer_closes: u64,
    /// Open sessions.
    pub sessions: u64,
    /// Current record subscriptions.
    pub subscriptions: u64,
    /// Published records.
    pub records: u64,
    /// Containers (published to or viewed; per-tier copies included).
    pub containers: u64,
    /// Materialised views (unique requests), in grace included.
    pub views: u64,
    /// Open view windows (view subscribers).
    pub view_windows: u64,
    /// Orders accepted since start (0 when orders are disabled).
    pub orders_accepted: u64,
    /// Order requests rejected since start.
    pub orders_rejected: u64,
    /// Orders open now (recovered ones included).
    pub orders_open: u64,
    /// Last durable journal seq (0 = none / orders disabled).
    pub journal_durable_seq: u64,
    /// DAY orders expired at an end of day since start.
    pub orders_expired: u64,
    /// Cluster mode: what this node sent to and received from the other nodes (all zero on a
    /// single node).
    pub cluster_records: crate::cluster::records::RecordsCounters,
    /// Cluster mode: 1 while this node is the order leader (decides), else 0.
    pub order_leader: u64,
    /// Cluster mode: last order stream seq applied to this node's order book.
    pub order_stream_seq: u64,
    /// Cluster mode: order requests forwarded to the leader since start.
    pub orders_forwarded: u64,
    /// Cluster mode: order stream publishes that failed since start (timed out, fenced, no quorum).
    pub order_publish_failures: u64,
}

#[derive(Default)]
struct AtomicStats {
    publishes_in: AtomicU64,
    publishes_rejected: AtomicU64,
    deliveries: AtomicU64,
    frames_out: AtomicU64,
    bytes_out: AtomicU64,
    conflated_updates: AtomicU64,
    dropped_updates: AtomicU64,
    slow_consumer_closes: AtomicU64,
    sessions: AtomicU64,
    subscriptions: AtomicU64,
    records: AtomicU64,
    containers: AtomicU64,
    views: AtomicU64,
    view_windows: AtomicU64,
}

impl AtomicStats {
    fn publish(&self, h: &HubStats) {
        let r = Ordering::Relaxed;
        self.publishes_rejected.store(h.publishes_rejected, r);
        self.deliveries.store(h.deliveries, r);
        self.frames_out.store(h.frames_out, r);
        self.bytes_out.store(h.bytes_out, r);
        self.conflated_updates.store(h.conflated_updates, r);
        self.dropped_updates.store(h.dropped_updates, r);
        self.slow_consumer_closes.store(h.slow_consumer_closes, r);
        self.sessions.store(h.sessions, r);
        self.subscriptions.store(h.subscriptions, r);
        self.records.store(h.records, r);
        self.containers.store(h.containers, r);
        self.views.store(h.views, r);
        self.view_windows.store(h.view_windows, r);
    }

    fn snapshot(&self) -> EngineStats {
        let r = Ordering::Relaxed;
        EngineStats {
            publishes_in: self.publishes_in.load(r),
            publishes_rejected: self.publishes_rejected.load(r),
            deliveries: self.deliveries.load(r),
            frames_out: self.frames_out.load(r),
            bytes_out: self.bytes_out.load(r),
            conflated_updates: self.conflated_updates.load(r),
            dropped_updates: self.dropped_updates.load(r),
            slow_consumer_closes: self.slow_consumer_closes.load(r),
            sessions: self.sessions.load(r),
            subscriptions: self.subscriptions.load(r),
            records: self.records.load(r),
            containers: self.containers.load(r),
            views: self.views.load(r),
            view_windows: self.view_windows.load(r),
            ..EngineStats::default()
        }
    }
}

struct Shared {
    id: u32,
    /// `Engine::epoch`.
    epoch: u64,
    /// Control lane.
    tx: Sender<Msg>,
    /// Ingest lane.
    ingest_tx: Sender<IngestMsg>,
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

impl Engine {
    /// Starts an engine thread with `cfg` and registers it under a new id (from 1). Orders disabled.
    pub fn start(cfg: EngineConfig) -> Result<Engine> {
        Engine::start_with_orders(cfg, None)
    }

    /// `start_with_orders` in cluster mode when `cluster` is given: records and containers are
    /// replicated with the other nodes on its link (`cluster::records`). Errors (INTERNAL, naming
    /// NATS) when the subscriptions fail.
    pub fn start_with_cluster(
        cfg: EngineConfig,
        orders: Option<OrdersConfig>,
        cluster: Option<ClusterStart>,
    ) -> Result<Engine> {
        Engine::start_all(cfg, orders, cluster)
    }

    /// Like `start`, with orders enabled when `orders` is given: the journal is opened and replayed
    /// here (trade records and blotters re-created before the engine serves anything; see
    /// `recovery()`). Errors (INTERNAL, naming journalDir) when the journal cannot be opened or replayed.
    pub fn start_with_orders(cfg: EngineConfig, orders: Option<OrdersConfig>) -> Result<Engine> {
        Engine::start_all(cfg, orders, None)
    }

    /// Like `start_with_orders`, in cluster mode when `cluster` is given: the node's link is
    /// connected (`cluster_link`), records and containers are replicated with the other nodes
    /// (`cluster::records`) and, with orders, the desk decides through the replicated order
    /// stream instead of the local journal (`orders.journal_dir` is not used): it creates the
    /// stream and the lease bucket if missing and rebuilds its books from the stream in the
    /// background (docs/architecture.md, "Cluster mode"). Errors as `cluster_link`, or INTERNAL
    /// when the stream or the subscriptions cannot be set up within the connect timeout.
    pub fn start_node(
        cfg: EngineConfig,
        orders: Option<OrdersConfig>,
        cluster: Option<ClusterConfig>,
    ) -> Result<Engine> {
        let link = cluster.map(cluster_link).transpose()?;
        Engine::start_on(cfg, orders, link)
    }

    /// `start_node` on an already connected link (`None`: one process), with the default record
    /// replication settings.
    pub fn start_on(cfg: EngineConfig, orders: Option<OrdersConfig>, link: Option<Arc<Link>>) -> Result<Engine> {
        let cluster = link.map(|link| ClusterStart {
            link,
            records: crate::cluster::records::RecordsConfig::default(),
        });
        Engine::start_all(cfg, orders, cluster)
    }

    fn start_all(cfg: EngineConfig, orders: Option<OrdersConfig>, cluster: Option<ClusterStart>) -> Result<Engine> {
        let link = cluster.as_ref().map(|c| Arc::clone(&c.link));
        cfg.batching.validate()?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let (ingest_tx, ingest_rx) = crossbeam_channel::unbounded();
        let completions = Arc::new(orders::Completions::default());
        let workers: Arc<Workers> = Arc::default();
        let mut hub = Hub::new(cfg);
        let epoch = new_epoch();
        hub.set_epoch(epoch);
        let desk = match orders {
            None => None,
            Some(oc) => {
                let post = Arc::new(orders::CompletionPost::new(
                    tx.clone(),
                    Arc::clone(&completions),
                    Arc::clone(&workers),
                ));
                match &link {
                    None => {
                        let mut desk = OrderDesk::open(oc, post)?;
                        desk.restore(&mut hub, Instant::now());
                        Some(desk)
                    }
                    Some(link) => {
                        let to_engine_tx = tx.clone();
                        let to_engine: crate::cluster::orders::ToEngine = Arc::new(move |cmd| {
                            // The engine thread is gone only at shutdown: nothing to tell then.
                            let _ = to_engine_tx.send(Msg::Order(cmd));
                        });
                        let desk_link = crate::cluster::orders::start(link, to_engine).map_err(cluster_error)?;
                        Some(OrderDesk::clustered(oc, post, desk_link))
                    }
                }
            }
        };
        let records = match cluster {
            None => None,
            Some(c) => {
                let lane = ingest_tx.clone();
                let sink: crate::cluster::records::EngineSink = Box::new(move |m, _bytes| {
                    lane.send(IngestMsg {
                        cmd: Msg::Records(m),
                        bytes: 0,
                    })
                    .is_ok()
                });
                let (replicator, replica) = crate::cluster::records::start(c.link, c.records, sink)
                    .map_err(|e| EngineError::Internal { message: e.to_string() })?;
                hub.install_records(replica);
                Some(replicator)
            }
        };
        let id = NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(Shared {
            id,
            epoch,
            tx,
            ingest_tx,
            ingest_bytes: AtomicU64::new(0),
            workers,
            next_sid: AtomicU32::new(1),
            stats: AtomicStats::default(),
            thread: Mutex::new(None),
            shut: AtomicBool::new(false),
            orders: desk.as_ref().map(|d| Arc::clone(d.shared())),
            completions,
            stopping: shutdown::Stopping::default(),
            shutdown_drain: cfg.shutdown_drain,
            records,
            cluster_orders: desk.as_ref().and_then(|d| d.cluster_stats().cloned()),
            cluster: link,
        });
        shared.stats.publish(&hub.stats());
        let for_thread = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name(format!("tidewire-engine-{id}"))
            .spawn(move || {
                run(
                    hub,
                    desk,
                    &Lanes {
                        ctrl: rx,
                        ingest: ingest_rx,
                    },
                    &for_thread,
                )
            })
            .map_err(|e| EngineError::Internal {
                message: format!("cannot start the engine thread: {e}"),
            })?;
        *shared.thread.lock().map_err(|_| internal("thread"))? = Some(handle);
        registry()
            .lock()
            .map_err(|_| internal("registry"))?
            .insert(id, Arc::clone(&shared));
        Ok(Engine { shared })
    }

    /// The running engine with this id (for worker threads). `NOT_FOUND` if none.
    pub fn attach(id: u32) -> Result<Engine> {
        let reg = registry().lock().map_err(|_| internal("registry"))?;
        match reg.get(&id) {
            Some(shared) => Ok(Engine {
                shared: Arc::clone(shared),
            }),
            None => Err(EngineError::NotFound {
                message: format!("no running engine with id {id}"),
            }),
        }
    }

    /// This engine's id.
    pub fn id(&self) -> u32 {
        self.shared.id
    }

    /// Cluster mode: this node's NATS link (`None` for one process).
    pub fn cluster(&self) -> Option<&Arc<Link>> {
        self.shared.cluster.as_ref()
    }

    fn send(&self, cmd: Command) -> Result<()> {
        if self.shared.shut.load(Ordering::Acquire) {
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        self.shared
            .tx
            .send(Msg::Cmd(cmd))
            .map_err(|_| EngineError::Unavailable {
                engine_id: self.shared.id,
            })
    }

    /// Queues a source command on the ingest lane, counting `bytes` until the engine takes it.
    fn send_ingest(&self, cmd: Command, bytes: usize) -> Result<()> {
        let unavailable = || EngineError::Unavailable {
            engine_id: self.shared.id,
        };
        if self.is_shut() {
            return Err(unavailable());
        }
        // Counted before the send: the engine thread may take it (and subtract) at once.
        self.shared.ingest_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        self.send_ingest_msg(IngestMsg {
            cmd: Msg::Cmd(cmd),
            bytes,
        })
    }

    /// Queues `msg` on the ingest lane (its bytes already counted in `ingest_bytes`).
    fn send_ingest_msg(&self, msg: IngestMsg) -> Result<()> {
        let unavailable = || EngineError::Unavailable {
            engine_id: self.shared.id,
        };
        let bytes = msg.bytes;
        self.shared.ingest_tx.send(msg).map_err(|_| {
            self.shared.ingest_bytes.fetch_sub(bytes as u64, Ordering::Relaxed);
            unavailable()
        })
    }

    fn is_shut(&self) -> bool {
        self.shared.shut.load(Ordering::Acquire)
    }

    /// Registers a worker (a thread that sends frames); `waker` is called when its ready queue
    /// goes from empty to non-empty. Returns the worker id (from 1).
    pub fn register_worker(&self, waker: Box<dyn Waker>) -> Result<u32> {
        if self.is_shut() {
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        let mut w = self.shared.workers.write().map_err(|_| internal("workers"))?;
        w.push(Some(Arc::new(WorkerQueue::new(waker))));
        Ok(w.len() as u32)
    }

    /// Removes a worker and closes its sessions. Unknown ids and a shut engine are ignored.
    pub fn unregister_worker(&self, worker: u32) -> Result<()> {
        let mut w = self.shared.workers.write().map_err(|_| internal("workers"))?;
        if let Some(slot) = (worker as usize).checked_sub(1).and_then(|i| w.get_mut(i)) {
            *slot = None;
        }
        drop(w);
        if !self.is_shut() {
            self.send(Command::CloseWorker { worker })?;
        }
        Ok(())
    }

    /// Opens a session whose frames go to `worker`; returns its id at once (from 1).
    pub fn open_session(&self, worker: u32, user: &str, tier: &str) -> Result<u32> {
        let workers = self.shared.workers.read().map_err(|_| internal("workers"))?;
        let known = ready::queue_of(&workers, worker).is_some();
        drop(workers);
        if !known {
            return Err(EngineError::NotFound {
                message: format!("no registered worker with id {worker}"),
            });
        }
        let sid = self.shared.next_sid.fetch_add(1, Ordering::Relaxed);
        self.send(Command::OpenSession {
            sid,
            worker,
            user: user.into(),
            tier: tier.into(),
        })?;
        Ok(sid)
    }

    /// Closes a session (its queue and subscriptions go). Ignored on a shut engine.
    pub fn close_session(&self, sid: u32) -> Result<()> {
        if self.is_shut() {
            return Ok(());
        }
        self.send(Command::CloseSession { sid })
    }

    /// Subscribes; the ack, images or an error frame arrive in the session's stream.
    pub fn subscribe(&self, sid: u32, req_id: u32, subjects: Vec<String>) -> Result<()> {
        self.send(Command::Subscribe { sid, req_id, subjects })
    }

    /// Unsubscribes; the ack or an error frame arrives in the session's stream.
    pub fn unsubscribe(&self, sid: u32, req_id: u32, subjects: Vec<String>) -> Result<()> {
        self.send(Command::Unsubscribe { sid, req_id, subjects })
    }

    /// `view.create` (sort as text, `name asc, bid desc`); `view.created` or an error frame
    /// arrives in the session's stream.
    #[allow(clippy::too_many_arguments)]
    pub fn view_create(
        &self,
        sid: u32,
        req_id: u32,
        container: String,
        filter: String,
        sort: String,
        offset: u32,
        size: u32,
    ) -> Result<()> {
        self.send(Command::ViewCreate {
            sid,
            req_id,
            container,
            filter,
            sort,
            offset,
            size,
        })
    }

    /// `view.change`: moves the session's window on its view `view_id`.
    pub fn view_change(&self, sid: u32, req_id: u32, view_id: u32, offset: u32, size: u32) -> Result<()> {
        self.send(Command::ViewChange {
            sid,
            req_id,
            view_id,
            offset,
            size,
        })
    }

    /// `view.close`; `view.closed` or an error frame arrives in the session's stream.
    pub fn view_close(&self, sid: u32, req_id: u32, view_id: u32) -> Result<()> {
        self.send(Command::ViewClose { sid, req_id, view_id })
    }

    /// A source's (validated) `container.publish`.
    pub fn container_publish(&self, subject: String, ops: Vec<ContainerOp>) -> Result<()> {
        orders::refuse_private_container(&subject, &ops)?;
        statements::refuse_stat_container(&subject)?;
        if let Some(r) = &self.shared.records {
            r.owners().check_container(&subject, &ops)?;
        }
        let bytes = subject.len() + ops.iter().map(op_bytes).sum::<usize>();
        self.send_ingest(Command::ContainerPublish { subject, ops }, bytes)
    }

    /// Reports the session's socket as buffered / drained. Ignored on a shut engine.
    pub fn set_blocked(&self, sid: u32, blocked: bool) -> Result<()> {
        if self.is_shut() {
            return Ok(());
        }
        self.send(Command::SetBlocked { sid, blocked })
    }

    /// Decodes and validates a source frame on the calling thread, then queues it. Returns the
    /// number of publishes accepted; a bad frame is rejected whole.
    pub fn ingest(&self, frame: &[u8]) -> Result<usize> {
        self.ingest_as(frame, None)
    }

    /// `ingest` of a frame from a source with publish `grants`: a subject they do not permit
    /// refuses the frame whole (`NOT_ENTITLED`, checked while the frame is decoded:
    /// wire::decode_source_frame_as).
    pub fn ingest_as(&self, frame: &[u8], grants: Option<&PublishGrants>) -> Result<usize> {
        if self.is_shut() {
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        let text = std::str::from_utf8(frame).map_err(|e| EngineError::BadFrame {
            message: format!("frame is not valid UTF-8: {e}"),
            index: None,
        })?;
        self.ingest_str_as(text, grants)
    }

    /// `ingest` of a frame that is already a string.
    pub fn ingest_str(&self, text: &str) -> Result<usize> {
        self.ingest_str_as(text, None)
    }

    /// `ingest_as` of a frame that is already a string.
    pub fn ingest_str_as(&self, text: &str, grants: Option<&PublishGrants>) -> Result<usize> {
        self.ingest_str_from(text, grants, 0)
    }

    /// `ingest_as` of the source whose session is `source` (0: none): the records it publishes
    /// are its own, stale once it is gone (`StatusConfig`).
    pub fn ingest_from(&self, frame: &[u8], grants: Option<&PublishGrants>, source: u32) -> Result<usize> {
        let text = std::str::from_utf8(frame).map_err(|e| EngineError::BadFrame {
            message: format!("frame is not valid UTF-8: {e}"),
            index: None,
        })?;
        self.ingest_str_from(text, grants, source)
    }

    /// `ingest_from` of a frame that is already a string.
    pub fn ingest_str_from(&self, text: &str, grants: Option<&PublishGrants>, source: u32) -> Result<usize> {
        if self.is_shut() {
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        let batch = decode_source_frame_as(text, grants)?;
        orders::refuse_private_publishes(&batch)?;
        statements::refuse_stat_publishes(&batch)?;
        if let Some(r) = &self.shared.records {
            r.owners().check_publishes(&batch)?;
        }
        let n = batch.len();
        if n == 0 {
            return Ok(0);
        }
        let received_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        let cmd = if source == 0 {
            Command::Publish { batch, received_ms }
        } else {
            Command::SourcePublish {
                source,
                batch,
                received_ms,
            }
        };
        self.send_ingest(cmd, text.len())?;
        self.shared.stats.publishes_in.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    /// Takes everything ready for `worker`; `None` when nothing is. `NOT_FOUND` for an unknown worker.
    pub fn drain(&self, worker: u32) -> Result<Option<Drained>> {
        let workers = self.shared.workers.read().map_err(|_| internal("workers"))?;
        let queue = ready::queue_of(&workers, worker).cloned();
        drop(workers);
        match queue {
            Some(q) => q.take(),
            None => Err(EngineError::NotFound {
                message: format!("no registered worker with id {worker}"),
            }),
        }
    }

    /// `source.register` of source session `sid`: serves `patterns`, active or standby by
    /// `priority` (lower takes over first); `source.registered` / `source.activate` / `error`
    /// arrive in the session's frames.
    pub fn source_register(&self, sid: u32, req_id: u32, patterns: Vec<String>, priority: u32) -> Result<()> {
        self.send(Command::SourceRegister {
            sid,
            req_id,
            patterns,
            priority,
        })
    }

    /// New record history settings (`record.resume`); the history kept so far is dropped.
    pub fn set_history(&self, cfg: crate::hub::HistoryConfig) -> Result<()> {
        self.send(Command::SetHistory(cfg))
    }

    /// `record.resume`: `record.resumed`, then the missed messages or reset images (or an
    /// `error`) arrive in the session's frames.
    pub fn resume(&self, sid: u32, req_id: u32, epoch: u64, records: Vec<crate::hub::ResumeRecord>) -> Result<()> {
        self.send(Command::Resume {
            sid,
            req_id,
            epoch,
            records,
        })
    }

    /// This engine's epoch: differs from every earlier run's, so a client's seqs from before a
    /// restart are never taken for this run's (`record.resume` answers them with reset images).
    pub fn epoch(&self) -> u64 {
        self.shared.epoch
    }

    /// New record status settings (stale grace, age rules).
    pub fn set_status(&self, cfg: crate::hub::StatusConfig) -> Result<()> {
        self.send(Command::SetStatus(cfg))
    }

    /// New batching/throttle settings (validated), applied from the next message on.
    pub fn set_batching(&self, b: BatchingConfig) -> Result<()> {
        b.validate()?;
        self.send(Command::SetBatching(b))
    }

    /// The materialised views, as the engine thread sees them at its next pass. Blocks the
    /// calling thread until then, at most `timeout` (`UNAVAILABLE` past it or after shutdown).
    pub fn view_stats(&self, timeout: std::time::Duration) -> Result<Vec<crate::hub::ViewStat>> {
        let unavailable = || EngineError::Unavailable {
            engine_id: self.shared.id,
        };
        if self.is_shut() {
            return Err(unavailable());
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.shared.tx.send(Msg::ViewStats(tx)).map_err(|_| unavailable())?;
        rx.recv_timeout(timeout).map_err(|_| unavailable())
    }

    /// The open views of sessions `sids` (view id, container, tier), as the engine thread sees
    /// them after every command queued before this call. Blocks the calling thread until then,
    /// at most `timeout` (`UNAVAILABLE` past it or after shutdown).
    pub fn session_views(&self, sids: Vec<u32>, timeout: std::time::Duration) -> Result<Vec<crate::hub::SessionView>> {
        self.ask(|tx| Msg::SessionViews(sids, tx), timeout)
    }

    /// The members of `containers` (empty: every container with members), as the engine thread
    /// sees them after every control command queued before this call (`Hub::container_members`).
    /// Blocks the calling thread until then, at most `timeout` (`UNAVAILABLE` past it or after
    /// shutdown).
    pub fn container_members(
        &self,
        containers: Vec<String>,
        timeout: std::time::Duration,
    ) -> Result<Vec<crate::hub::ContainerMembers>> {
        self.ask(|tx| Msg::ContainerMembers(containers, tx), timeout)
    }

    /// Sends the control message `make` builds around a reply channel and waits for the engine
    /// thread's answer, at most `timeout`; `UNAVAILABLE` after shutdown, when the engine thread is
    /// gone, or past the timeout.
    fn ask<T>(
        &self,
        make: impl FnOnce(crossbeam_channel::Sender<T>) -> Msg,
        timeout: std::time::Duration,
    ) -> Result<T> {
        let unavailable = || EngineError::Unavailable {
            engine_id: self.shared.id,
        };
        if self.is_shut() {
            return Err(unavailable());
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.shared.tx.send(make(tx)).map_err(|_| unavailable())?;
        rx.recv_timeout(timeout).map_err(|_| unavailable())
    }

    /// Waits until the engine thread has applied every ingest frame (source publish, container
    /// publish) queued before this call, from any thread: a source's barrier (its `session.ping`
    /// is answered after it, docs/protocol.md). Blocks the calling thread until then, at most
    /// `timeout`; `UNAVAILABLE` past it, after shutdown or when the engine thread is gone.
    /// Frames queued after the call may or may not have been applied too.
    pub fn ingest_barrier(&self, timeout: std::time::Duration) -> Result<()> {
        let unavailable = || EngineError::Unavailable {
            engine_id: self.shared.id,
        };
        if self.is_shut() {
            return Err(unavailable());
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.send_ingest_msg(IngestMsg {
            cmd: Msg::IngestBarrier(tx),
            bytes: 0,
        })?;
        rx.recv_timeout(timeout).map_err(|_| unavailable())
    }

    /// Closes session `sid`'s view `view_id` after a rule change: `error` NOT_ENTITLED with
    /// `reason` (`field: "viewId"`), then `view.closed` with reqId 0. A view no longer open: nothing.
    pub fn view_revoke(&self, sid: u32, view_id: u32, reason: String) -> Result<()> {
        self.send(Command::ViewRevoke { sid, view_id, reason })
    }

    /// Current counters.
    pub fn stats(&self) -> EngineStats {
        let mut s = self.shared.stats.snapshot();
        if let Some(o) = &self.shared.orders {
            let os = o.stats();
            s.orders_accepted = os.accepted;
            s.orders_rejected = os.rejected;
            s.orders_open = os.open;
            s.journal_durable_seq = os.journal_durable_seq;
            s.orders_expired = os.expired;
        }
        if let Some(r) = &self.shared.records {
            s.cluster_records = r.counters();
        }
        if let Some(c) = &self.shared.cluster_orders {
            let r = Ordering::Relaxed;
            s.order_leader = u64::from(c.leader.load(r));
            s.order_stream_seq = c.applied_seq.load(r);
            s.orders_forwarded = c.forwarded.load(r);
            s.order_publish_failures = c.publish_failures.load(r);
        }
        s
    }

    /// Commands queued for the engine thread now, both lanes (source publishes, session
    /// requests, order requests, journal completions).
    pub fn queue_depth(&self) -> usize {
        self.shared.tx.len() + self.shared.ingest_tx.len()
    }

    /// The ingest lane now: frames queued and not yet taken by the engine thread, and bytes of
    /// source publishes and container publishes not yet applied (the one being applied included).
    /// A server pauses its sources while this is above a high-water mark (the lane is otherwise
    /// unbounded).
    pub fn ingest_queue(&self) -> (usize, u64) {
        (
            self.shared.ingest_tx.len(),
            self.shared.ingest_bytes.load(Ordering::Relaxed),
        )
    }

    /// Stops the engine thread (joined) and unregisters the engine. Idempotent. Commands queued
    /// before it are handled for at most `EngineConfig::shutdown_drain`, the rest dropped (see
    /// `shutdown_report`).
    pub fn shutdown(&self) -> Result<()> {
        self.shutdown_report().map(|_| ())
    }

    /// `shutdown`, returning what the bounded drain dropped (all zero when everything queued was
    /// handled, or when the engine was already shut down).
    pub fn shutdown_report(&self) -> Result<ShutdownReport> {
        if self.shared.shut.swap(true, Ordering::AcqRel) {
            return Ok(ShutdownReport::default());
        }
        self.shared.stopping.ask(self.shared.shutdown_drain);
        // A failed send means the thread is already gone; joining below still reaps it.
        let _ = self.shared.tx.send(Msg::Shutdown);
        let handle = self.shared.thread.lock().map_err(|_| internal("thread"))?.take();
        if let Some(h) = handle {
            if h.join().is_err() {
                return Err(EngineError::Internal {
                    message: format!("engine {} thread panicked", self.shared.id),
                });
            }
        }
        if let Some(r) = &self.shared.records {
            r.stop();
        }
        registry()
            .lock()
            .map_err(|_| internal("registry"))?
            .remove(&self.shared.id);
        Ok(self.shared.stopping.report())
    }
}

/// The subjects' bytes of a container op (its ingest-lane size).
fn op_bytes(op: &ContainerOp) -> usize {
    match op {
        ContainerOp::Add(s) | ContainerOp::InsertAt(_, s) | ContainerOp::Remove(s) => s.iter().map(String::len).sum(),
        ContainerOp::Clear => 0,
    }
}

/// Applies one command: order commands go to the desk; publishes are shown to the desk first
/// (which instruments ticked) and then applied.
fn dispatch(hub: &mut Hub, desk: &mut Option<OrderDesk>, msg: Msg, shared: &Shared) {
    let now = Instant::now();
    match msg {
        Msg::Cmd(cmd) => {
            if let (Some(d), Command::Publish { batch, .. } | Command::SourcePublish { batch, .. }) =
                (desk.as_mut(), &cmd)
            {
                d.note_publishes(batch);
            }
            hub.handle(cmd, now);
        }
        Msg::Order(oc) => {
            if let Some(d) = desk.as_mut() {
                d.handle(hub, oc, now);
            }
        }
        Msg::Completions => {
            if let Some(d) = desk.as_mut() {
                d.apply_completions(hub, shared.completions.take(), now);
            }
        }
        Msg::ViewStats(reply) => {
            let _ = reply.send(hub.view_stats()); // the asker may have given up waiting
        }
        Msg::SessionViews(sids, reply) => {
            let _ = reply.send(hub.session_views(&sids)); // the asker may have given up waiting
        }
        Msg::ContainerMembers(containers, reply) => {
            let _ = reply.send(hub.container_members(&containers)); // the asker may have given up waiting
        }
        Msg::ServerStatement(name, text, reply) => {
            let _ = reply.send(hub.create_server_statement(&name, &text, now)); // the asker may have given up waiting
        }
        Msg::IngestBarrier(reply) => {
            let _ = reply.send(()); // the asker may have given up waiting
        }
        Msg::Records(m) => hub.records_inbound(m, now),
        Msg::Shutdown => {}
    }
}

/// The engine thread's two receivers.
pub(crate) struct Lanes {
    ctrl: Receiver<Msg>,
    ingest: Receiver<IngestMsg>,
}

impl Lanes {
    /// Blocks until either lane has a message (or is disconnected), at most until `deadline`.
    fn wait(&self, deadline: Option<Instant>) {
        let mut sel = Select::new();
        sel.recv(&self.ctrl);
        sel.recv(&self.ingest);
        match deadline {
            Some(at) => {
                let _ = sel.ready_deadline(at); // a timeout means timers are due
            }
            None => {
                sel.ready();
            }
        }
    }
}

/// What one lane's turn in a pass ended with.
#[derive(PartialEq, Eq)]
enum Turn {
    /// Keep running.
    Go,
    /// Shutdown was asked and its drain deadline passed: everything left was dropped.
    Overdue,
    /// The control lane is disconnected (the engine is being dropped), or the workers lock is
    /// poisoned (a worker thread panicked holding it: nothing can be delivered).
    Gone,
}

/// Sends every due outbox (replies queued by control commands, and anything else due now) to
/// the workers' ready queues and wakes them. False when the workers lock is poisoned (a worker
/// thread panicked holding it): nothing can be delivered any more.
fn flush_due(hub: &mut Hub, sink: &mut ready::QueueSink, shared: &Shared) -> bool {
    match shared.workers.read() {
        Ok(w) => sink.refresh(&w),
        Err(_) => return false,
    }
    hub.run_due(Instant::now(), sink);
    sink.wake();
    true
}

/// The control lane's turn: every queued control command, up to `MAX_COMMANDS_PER_PASS`. The
/// replies they queued are flushed every `REPLY_FLUSH_EVERY` and as the turn ends (when it
/// handled anything), before the ingest turn.
fn control_turn(
    hub: &mut Hub,
    desk: &mut Option<OrderDesk>,
    lanes: &Lanes,
    shared: &Shared,
    stopping: &mut bool,
    sink: &mut ready::QueueSink,
) -> Turn {
    let mut handled = false;
    let mut since_flush = Instant::now();
    for _ in 0..MAX_COMMANDS_PER_PASS {
        if shared.stopping.overdue() {
            return Turn::Overdue;
        }
        match lanes.ctrl.try_recv() {
            // Ingest queued before the shutdown is still handled (within the drain deadline).
            Ok(Msg::Shutdown) => *stopping = true,
            Ok(msg) => {
                dispatch(hub, desk, msg, shared);
                handled = true;
                if since_flush.elapsed() >= REPLY_FLUSH_EVERY {
                    if !flush_due(hub, sink, shared) {
                        return Turn::Gone;
                    }
                    handled = false;
                    since_flush = Instant::now();
                }
            }
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Disconnected) => return Turn::Gone,
        }
    }
    if handled && !flush_due(hub, sink, shared) {
        return Turn::Gone;
    }
    Turn::Go
}

/// The ingest lane's turn: frames in queue order within the pass budget; cut short (after at
/// least one frame) when a control command is waiting.
fn ingest_turn(hub: &mut Hub, desk: &mut Option<OrderDesk>, lanes: &Lanes, shared: &Shared) -> Turn {
    let started = Instant::now();
    for _ in 0..INGEST_FRAMES_PER_PASS {
        if shared.stopping.overdue() {
            return Turn::Overdue;
        }
        let Ok(IngestMsg { cmd, bytes }) = lanes.ingest.try_recv() else {
            break;
        };
        dispatch(hub, desk, cmd, shared);
        // counted until applied: a reader right after `ingest` sees the frame being applied too
        shared.ingest_bytes.fetch_sub(bytes as u64, Ordering::Relaxed);
        if !lanes.ctrl.is_empty() || started.elapsed() >= INGEST_TIME_PER_PASS {
            break;
        }
    }
    Turn::Go
}

/// The engine thread.
fn run(mut hub: Hub, mut desk: Option<OrderDesk>, lanes: &Lanes, shared: &Shared) {
    let mut sink = ready::QueueSink::default();
    let mut stopping = false;
    // The last pass skipped its ingest turn for control commands queued during its flush.
    let mut yielded = false;
    loop {
        if !stopping && lanes.ctrl.is_empty() && lanes.ingest.is_empty() {
            let deadline = match (hub.next_deadline(), desk.as_ref().and_then(OrderDesk::next_deadline)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            lanes.wait(deadline);
        }
        let mut turn = control_turn(&mut hub, &mut desk, lanes, shared, &mut stopping, &mut sink);
        // Control commands that arrived while the turn's replies were flushed go before the next
        // ingest frame, in a new pass; once only, so the ingest lane still gets a frame at least
        // every other pass under a steady stream of control commands.
        let skip_ingest = !yielded && !lanes.ctrl.is_empty();
        yielded = skip_ingest;
        if turn == Turn::Go && !skip_ingest {
            turn = ingest_turn(&mut hub, &mut desk, lanes, shared);
        }
        match turn {
            Turn::Overdue => {
                shared.stopping.drop_rest(lanes, &shared.completions);
                shared.ingest_bytes.store(0, Ordering::Relaxed);
                shared.stats.publish(&hub.stats());
                return;
            }
            Turn::Gone => {
                shared.stats.publish(&hub.stats());
                return;
            }
            Turn::Go => {}
        }
        if stopping && lanes.ctrl.is_empty() && lanes.ingest.is_empty() {
            shared.stats.publish(&hub.stats());
            return;
        }
        match shared.workers.read() {
            Ok(w) => sink.refresh(&w),
            Err(_) => return, // a worker thread panicked holding the lock: nothing can be delivered
        }
        if let Some(d) = desk.as_mut() {
            d.run_due(&mut hub, Instant::now());
        }
        hub.records_end_pass();
        hub.run_due(Instant::now(), &mut sink);
        sink.wake();
        shared.stats.publish(&hub.stats());
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

#[cfg(test)]
mod reply_tests {
    use std::sync::{Arc, Condvar, Mutex, OnceLock};
    use std::time::Duration;

    use super::*;

    /// Parks the engine thread in its first wake until released; records the ingest lane's depth
    /// (frames not yet taken) at every wake.
    #[derive(Default)]
    struct Probe {
        engine: OnceLock<Engine>,
        /// (parked, released, depths seen at each wake)
        state: Mutex<(bool, bool, Vec<usize>)>,
        cv: Condvar,
    }

    struct ProbeWaker(Arc<Probe>);

    impl Waker for ProbeWaker {
        fn wake(&self) {
            let p = &self.0;
            let depth = p.engine.get().map_or(0, |e| e.ingest_queue().0);
            let mut g = p.state.lock().unwrap();
            g.2.push(depth);
            if g.1 {
                return;
            }
            g.0 = true;
            p.cv.notify_all();
            // bounded: a test that never releases fails on its own timeouts, not a hang here
            let _ = p.cv.wait_timeout_while(g, Duration::from_secs(10), |s| !s.1);
        }
    }

    #[test]
    fn a_reply_is_flushed_before_the_ingest_backlog_is_applied() {
        const N: usize = 2000;
        let engine = Engine::start(EngineConfig::default()).unwrap();
        let probe = Arc::new(Probe::default());
        assert!(probe.engine.set(engine.clone()).is_ok());
        let w = engine
            .register_worker(Box::new(ProbeWaker(Arc::clone(&probe))))
            .unwrap();
        let sid = engine.open_session(w, "u", "t").unwrap();
        engine.subscribe(sid, 1, vec!["/PARK".into()]).unwrap();
        {
            let g = probe.state.lock().unwrap();
            let (g, _) = probe
                .cv
                .wait_timeout_while(g, Duration::from_secs(5), |s| !s.0)
                .unwrap();
            assert!(g.0, "the engine thread parks in wake after the first ack");
        }
        // The first ack is taken, so the reply below wakes the worker again.
        assert!(engine.drain(w).unwrap().is_some());
        for i in 0..N {
            let f = format!(r#"[{{"type":"record.publish","subject":"/M/{i}","image":true,"fields":{{"n":{i}}}}}]"#);
            engine.ingest(f.as_bytes()).unwrap();
        }
        engine.subscribe(sid, 2, vec!["/M/0".into()]).unwrap();
        probe.state.lock().unwrap().1 = true;
        probe.cv.notify_all();
        let deadline = Instant::now() + Duration::from_secs(10);
        while probe.state.lock().unwrap().2.len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let depths = probe.state.lock().unwrap().2.clone();
        assert_eq!(depths.len(), 2, "woken for the first ack and for the reply: {depths:?}");
        assert_eq!(depths[1], N, "the reply went out before any of the backlog was taken");
        let frame = engine.drain(w).unwrap().expect("the reply is ready");
        let text = String::from_utf8(frame.data).unwrap();
        assert!(
            text.contains(r#""reqId":2"#) && text.contains(r#""pending":true"#),
            "{text}"
        );
        engine.shutdown().unwrap();
    }
}
