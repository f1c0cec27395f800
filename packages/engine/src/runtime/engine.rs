//! `Engine`: the handle any thread uses to start, feed, query and stop the engine thread.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::engine_thread::{ingest_inline, run, Core, Lanes};
use super::lane::{lane, Bell};
use super::ready::{self, Drained, TakeInto, Waker, WorkerQueue, Workers};
use super::shutdown::ShutdownReport;
use super::stats::AtomicStats;
use super::{
    cluster_error, cluster_link, internal, new_epoch, orders, registry, shutdown, statements, ClusterStart, Engine,
    IngestMsg, Msg, Shared, INLINE_INGEST_MAX_BYTES, NEXT_ENGINE_ID,
};
use crate::cluster::{ClusterConfig, Link};
use crate::config::{BatchingConfig, EngineConfig, OrdersConfig};
use crate::error::{EngineError, Result};
use crate::hub::{Command, ContainerOp, Hub};
use crate::order_desk::OrderDesk;
use crate::stats::EngineStats;
use crate::wire::decode::decode_source_frame_as;
use crate::wire::PublishGrants;
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
        let bell = Arc::new(Bell::default());
        let (tx, rx) = lane(&bell);
        let (ingest_tx, ingest_rx) = lane(&bell);
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
        let orders_shared = desk.as_ref().map(|d| Arc::clone(d.shared()));
        let cluster_orders = desk.as_ref().and_then(|d| d.cluster_stats().cloned());
        let core = Core::new(hub, desk);
        let stats = AtomicStats::default();
        stats.publish(&core.stats());
        let shared = Arc::new(Shared {
            id,
            epoch,
            tx,
            ingest_tx,
            lanes: Lanes {
                ctrl: rx,
                ingest: ingest_rx,
                bell,
            },
            core: Mutex::new(Some(core)),
            ingest_bytes: AtomicU64::new(0),
            workers,
            next_sid: AtomicU32::new(1),
            stats,
            thread: Mutex::new(None),
            shut: AtomicBool::new(false),
            orders: orders_shared,
            completions,
            stopping: shutdown::Stopping::default(),
            shutdown_drain: cfg.shutdown_drain,
            records,
            cluster_orders,
            cluster: link,
        });
        let for_thread = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name(format!("tidewire-engine-{id}"))
            .spawn(move || run(&for_thread))
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

    pub(super) fn send(&self, cmd: Command) -> Result<()> {
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
    pub(super) fn send_ingest(&self, cmd: Command, bytes: usize) -> Result<()> {
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

    /// `send_ingest`, then (a frame up to `INLINE_INGEST_MAX_BYTES`) the lane is applied on this
    /// thread when the engine thread is parked
    /// (`engine_thread::ingest_inline`: no wake-up of the engine thread; `drainer`, when not 0,
    /// the worker of this thread, not woken by that pass), else the engine thread is rung.
    pub(super) fn send_ingest_inline(&self, cmd: Command, bytes: usize, drainer: u32) -> Result<()> {
        if self.is_shut() {
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        if bytes > INLINE_INGEST_MAX_BYTES {
            return self.send_ingest(cmd, bytes);
        }
        self.shared.ingest_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        let msg = IngestMsg {
            cmd: Msg::Cmd(cmd),
            bytes,
        };
        if self.shared.ingest_tx.send_quiet(msg).is_err() {
            self.shared.ingest_bytes.fetch_sub(bytes as u64, Ordering::Relaxed);
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        ingest_inline(&self.shared, drainer);
        Ok(())
    }

    /// Queues `msg` on the ingest lane (its bytes already counted in `ingest_bytes`).
    pub(super) fn send_ingest_msg(&self, msg: IngestMsg) -> Result<()> {
        let unavailable = || EngineError::Unavailable {
            engine_id: self.shared.id,
        };
        let bytes = msg.bytes;
        self.shared.ingest_tx.send(msg).map_err(|_| {
            self.shared.ingest_bytes.fetch_sub(bytes as u64, Ordering::Relaxed);
            unavailable()
        })
    }

    pub(super) fn is_shut(&self) -> bool {
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

    /// `register_worker` for a worker that applies topic entries (`hub::ENTRY_*`: subscribe,
    /// unsubscribe, publish) in its drains: its sessions on the hot path get record messages
    /// through one topic publish per worker instead of a copy each (hub `direct.rs`).
    pub fn register_topic_worker(&self, waker: Box<dyn Waker>) -> Result<u32> {
        let worker = self.register_worker(waker)?;
        self.send(Command::TopicWorker { worker })?;
        Ok(worker)
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

    /// Closes a session whose connection dropped (not closed by its client): as `close_session`,
    /// but its views are held for `view.resume` (`ViewResumeConfig`). Ignored on a shut engine.
    pub fn detach_session(&self, sid: u32) -> Result<()> {
        if self.is_shut() {
            return Ok(());
        }
        self.send(Command::DetachSession { sid })
    }

    /// `view.resume`: `view.resumed` and the missed diff, or a `view.created` flagged `reset`
    /// (or an error frame), arrive in the session's stream.
    pub fn view_resume(&self, sid: u32, req_id: u32, resume: crate::hub::ViewResume) -> Result<()> {
        self.send(Command::ViewResume { sid, req_id, resume })
    }

    /// New settings of held views (`view.resume`).
    pub fn set_view_resume(&self, cfg: crate::hub::ViewResumeConfig) -> Result<()> {
        self.send(Command::SetViewResume(cfg))
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
        self.ingest_str_draining(text, grants, source, 0)
    }

    /// `ingest_from` on the thread of worker `worker`, which drains its ready queue as this
    /// returns: when the frame is applied on this thread (`engine_thread::ingest_inline`), the
    /// worker is not woken for the frames that pass readied for it (the others are).
    pub fn ingest_draining(
        &self,
        frame: &[u8],
        grants: Option<&PublishGrants>,
        source: u32,
        worker: u32,
    ) -> Result<usize> {
        let text = std::str::from_utf8(frame).map_err(|e| EngineError::BadFrame {
            message: format!("frame is not valid UTF-8: {e}"),
            index: None,
        })?;
        self.ingest_str_draining(text, grants, source, worker)
    }

    /// `ingest_draining` of a frame that is already a string (`worker` 0: none, every worker is
    /// woken).
    pub fn ingest_str_draining(
        &self,
        text: &str,
        grants: Option<&PublishGrants>,
        source: u32,
        worker: u32,
    ) -> Result<usize> {
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
        self.send_ingest_inline(cmd, text.len(), worker)?;
        self.shared.stats.publishes_in.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    /// Takes everything ready for `worker`; `None` when nothing is. `NOT_FOUND` for an unknown worker.
    pub fn drain(&self, worker: u32) -> Result<Option<Drained>> {
        self.queue(worker)?.take()
    }

    /// Moves everything ready for `worker` into the caller's buffers (`WorkerQueue::take_into`;
    /// `arm`: the caller does not call again, the next frame wakes it). `NOT_FOUND` for an
    /// unknown worker.
    pub fn drain_into(
        &self,
        worker: u32,
        data: &mut [u8],
        index: &mut [u32],
        samples: &mut [f64],
        arm: bool,
    ) -> Result<TakeInto> {
        self.queue(worker)?.take_into(data, index, samples, arm)
    }

    fn queue(&self, worker: u32) -> Result<Arc<WorkerQueue>> {
        let workers = self.shared.workers.read().map_err(|_| internal("workers"))?;
        match ready::queue_of(&workers, worker) {
            Some(q) => Ok(q.clone()),
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

    /// Latency samples for worker `worker`'s sessions: the origin `ts` of one record message or
    /// updated view row in `every` (0 counts as 1) comes back with the drained frames.
    pub fn set_latency_sampling(&self, worker: u32, every: u32) -> Result<()> {
        self.send(Command::SetLatencySampling { worker, every })
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
    pub(super) fn ask<T>(
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
            let c = r.counters();
            s.cluster_batches_sent = c.batches_sent;
            s.cluster_records_sent = c.records_sent;
            s.cluster_bytes_sent = c.bytes_sent;
            s.cluster_batches_received = c.batches_received;
            s.cluster_records_received = c.records_received;
            s.cluster_bytes_received = c.bytes_received;
            s.cluster_image_requests_sent = c.image_requests_sent;
            s.cluster_image_requests_answered = c.image_requests_answered;
            s.cluster_gaps = c.gaps;
            s.cluster_batches_dropped = c.batches_dropped;
            s.cluster_publishes_refused = c.publishes_refused;
            s.cluster_decode_errors = c.decode_errors;
            s.cluster_conflicts = c.conflicts;
            s.cluster_peers = c.peers;
        }
        if let Some(c) = &self.shared.cluster_orders {
            let r = Ordering::Relaxed;
            s.order_leader = u64::from(c.leader.load(r));
            s.order_lease_provisional = u64::from(c.lease_provisional.load(r));
            s.order_stream_seq = c.applied_seq.load(r);
            s.order_stream_diverged_at = c.diverged_at.load(r);
            s.orders_forwarded = c.forwarded.load(r);
            s.order_publish_failures = c.publish_failures.load(r);
            let b = c.batches.counts();
            s.order_batches = b.messages;
            s.order_batch_events = b.events;
            s.order_batch_bytes = b.bytes;
            s.order_batches_in_flight = b.in_flight;
            [
                s.order_batches_le_1,
                s.order_batches_le_2,
                s.order_batches_le_4,
                s.order_batches_le_8,
                s.order_batches_le_16,
                s.order_batches_le_32,
                s.order_batches_le_64,
                s.order_batches_le_128,
                s.order_batches_le_256,
            ] = b.le;
        }
        s
    }

    /// Cluster mode: the version the NATS server named at connect and, when Tidewire is known
    /// not to run safely on it, the warning to log (`cluster::nats_version`); `None` on a single
    /// node.
    pub fn cluster_nats_server(&self) -> Option<(String, Option<String>)> {
        self.shared
            .cluster
            .as_ref()
            .map(|l| (l.server_version().to_owned(), l.server_verdict().warning()))
    }

    /// Cluster mode: where an order's time goes in this node, per stage (`cluster/stages.rs`);
    /// empty on a single node.
    pub fn order_stages(&self) -> Vec<crate::cluster::stages::StageCounts> {
        self.shared
            .cluster_orders
            .as_ref()
            .map(|c| c.stages.counts())
            .unwrap_or_default()
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
