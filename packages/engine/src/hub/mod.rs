//! The hub: all engine state (store, subscriptions, sessions, timers), owned by one thread and
//! driven by `Command`s and the clock passed in. `runtime` feeds it; tests drive it directly.
//!
//! Encode once, send many: a publish is encoded once and the same bytes are appended to every
//! subscriber's outbox (`fan_out`). Subscriber lists are `Vec<u32>` of session slab slots with a
//! parallel `Vec<SubState>` holding throttle/conflation state, so the common path (no
//! throttling, not blocked) touches neither a map nor the state.

mod failover;
mod fan_out;
mod flush;
mod history;
mod members;
mod remote;
mod resume;
mod sampling;
mod statements;
mod status;
mod subscribe;
#[cfg(test)]
mod test_support;
mod tiers;
mod view_history;
mod view_resume;
mod views;

pub use history::{HistoryConfig, HistoryRule, DEFAULT_HISTORY_MAX_BYTES, DEFAULT_HISTORY_RULES};
pub use members::ContainerMembers;
pub use resume::ResumeRecord;
pub use statements::{is_stat_subject, statement_cost, StatementQuota, STAT_PREFIX};
pub use status::StatusConfig;
pub use subscribe::SessionView;
pub use view_history::{
    ViewHistoryConfig, DEFAULT_VIEW_HISTORY_BYTES, DEFAULT_VIEW_HISTORY_MESSAGES, DEFAULT_VIEW_HISTORY_MS,
    DEFAULT_VIEW_HISTORY_TOTAL_BYTES,
};
pub use view_resume::{
    ViewResume, ViewResumeConfig, DEFAULT_VIEW_RESUME_GRACE_MS, DEFAULT_VIEW_RESUME_MAX,
    DEFAULT_VIEW_RESUME_MAX_PER_USER,
};
pub use views::{ContainerOp, ViewStat, DEFAULT_MAX_VIEWS_PER_SESSION};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use crate::chunked::ChunkedVec;
use crate::config::{BatchingConfig, EngineConfig};
use crate::session::{FrameMeta, Session};
use crate::stats::EngineStats;
use crate::store::{Applied, Store};
use crate::view::{ViewSet, ViewsConfig};
use crate::wire::Publish;

/// WebSocket close code for a slow consumer (`CloseCodes.SLOW_CONSUMER`).
pub const CLOSE_SLOW_CONSUMER: u16 = 4008;

/// Work for the hub, in the order callers sent it.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A session was opened on `worker` (its frames go to that worker's ready queue).
    OpenSession {
        /// Session id (allocated by the caller).
        sid: u32,
        /// Worker id.
        worker: u32,
        /// Login name.
        user: String,
        /// Price tier.
        tier: String,
    },
    /// The session is gone (socket closed); its subscriptions and queue are dropped.
    CloseSession {
        /// Session id.
        sid: u32,
    },
    /// As `CloseSession`, for a connection that dropped (not closed by its client): the session's
    /// views are held detached for `view.resume` (`view_resume.rs`) instead of closed.
    DetachSession {
        /// Session id.
        sid: u32,
    },
    /// `view.resume`: `view.resumed` and the diff since the drop, or a `view.created` flagged
    /// `reset`, or an error frame (`view_resume.rs`).
    ViewResume {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply and tagging the view's `view.rows`.
        req_id: u32,
        /// What the client held, and the view's definition.
        resume: ViewResume,
    },
    /// New settings of held views (`view.resume`).
    SetViewResume(ViewResumeConfig),
    /// `record.subscribe`: ack (+ images) or an error frame go to the session.
    Subscribe {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply.
        req_id: u32,
        /// Subjects (validated here: the hub trusts no caller).
        subjects: Vec<String>,
    },
    /// `record.resume`: `record.resumed` then, per record, the missed messages from its history
    /// or a fresh image flagged `reset` (`resume.rs`); or an error frame.
    Resume {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply.
        req_id: u32,
        /// The epoch the client's seqs come from (`session.loggedIn`'s `epoch`).
        epoch: u64,
        /// What the client holds (validated here: the hub trusts no caller).
        records: Vec<ResumeRecord>,
    },
    /// New record history settings (`history.rs`); the history kept so far is dropped.
    SetHistory(HistoryConfig),
    /// `record.unsubscribe`: ack or an error frame go to the session.
    Unsubscribe {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply.
        req_id: u32,
        /// Subjects; unknown or not-subscribed ones are ignored.
        subjects: Vec<String>,
    },
    /// The worker's socket for `sid` is buffered (`true`) or drained (`false`).
    SetBlocked {
        /// Session id.
        sid: u32,
        /// Whether `ws.send` is currently buffering.
        blocked: bool,
    },
    /// A decoded, validated source frame.
    Publish {
        /// The publishes, in frame order.
        batch: Vec<Publish>,
        /// Receive time, epoch ms: the origin `ts` of publishes without one.
        received_ms: f64,
    },
    /// A decoded, validated frame of the source whose session is `source`: as `Publish`, and the
    /// records it publishes are that source's (stale once it is gone: `StatusConfig`).
    SourcePublish {
        /// Session id of the publishing source.
        source: u32,
        /// The publishes, in frame order.
        batch: Vec<Publish>,
        /// Receive time, epoch ms: the origin `ts` of publishes without one.
        received_ms: f64,
    },
    /// New record status settings (stale grace, age rules).
    SetStatus(StatusConfig),
    /// `source.register`: source session `sid` serves `patterns` (active, or standby by
    /// `priority`: lower takes over first); `source.registered` or an error goes to it.
    SourceRegister {
        /// The source's session id.
        sid: u32,
        /// Request id echoed in the reply.
        req_id: u32,
        /// Subject patterns (validated here).
        patterns: Vec<String>,
        /// Standby order: lower takes over first.
        priority: u32,
    },
    /// New batching/throttle settings, applied from the next message on.
    SetBatching(BatchingConfig),
    /// A source's `container.publish`: ops applied in order (ingest validated them).
    ContainerPublish {
        /// Container subject.
        subject: String,
        /// The ops, in order.
        ops: Vec<ContainerOp>,
    },
    /// `view.create`: `view.created` (count + the window's rows) or an error frame.
    ViewCreate {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply and tagging `view.rows` until the next `ViewChange`.
        req_id: u32,
        /// Container subject.
        container: String,
        /// Filter text (docs/views.md); empty: every member.
        filter: String,
        /// Sort text (`name asc, bid desc`); empty: natural order.
        sort: String,
        /// First row of the window.
        offset: u32,
        /// Rows in the window (1..=10,000).
        size: u32,
    },
    /// `view.change`: moves the session's window on view `view_id` (no filter work).
    ViewChange {
        /// Session id.
        sid: u32,
        /// Request id tagging the next `view.rows`.
        req_id: u32,
        /// The session's view id (from `view.created`).
        view_id: u32,
        /// New first row.
        offset: u32,
        /// New size (1..=10,000).
        size: u32,
    },
    /// `view.close`: `view.closed`; the shared view is released (freed after the grace period).
    ViewClose {
        /// Session id.
        sid: u32,
        /// Request id echoed in `view.closed`.
        req_id: u32,
        /// The session's view id.
        view_id: u32,
    },
    /// A rule reload: session `sid` may no longer read view `view_id`'s container. The view is
    /// closed with an `error` NOT_ENTITLED (`field: "viewId"`, message `reason`) then
    /// `view.closed` with reqId 0; nothing when the view is no longer open.
    ViewRevoke {
        /// Session id.
        sid: u32,
        /// The session's view id.
        view_id: u32,
        /// The error message (names the view, its container and the rule).
        reason: String,
    },
    /// `statement.create`: `statement.created` or an error frame (docs/analytics.md).
    StatementCreate {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply.
        req_id: u32,
        /// Statement name (a subject segment: `/STAT/<name>/<key>`).
        name: String,
        /// Statement text.
        text: String,
        /// The user's bounds (the server's `limits.maxStatementsPerUser`, `limits.maxStatementCostPerUser`).
        quota: StatementQuota,
    },
    /// `statement.close`: releases one of the session's references to statement `name`;
    /// `statement.closed` or an error frame (NOT_FOUND when the session holds none).
    StatementClose {
        /// Session id.
        sid: u32,
        /// Request id echoed in the reply.
        req_id: u32,
        /// Statement name.
        name: String,
    },
    /// Latency samples of the sessions of `worker`: one record message or updated view row in
    /// `every` (`session::Sampler`).
    SetLatencySampling {
        /// Worker id.
        worker: u32,
        /// Sampling period (0 counts as 1).
        every: u32,
    },
    /// The worker went away: close all its sessions.
    CloseWorker {
        /// Worker id.
        worker: u32,
    },
}

/// Receives flushed frames and close instructions.
pub trait FrameSink {
    /// `parts` concatenated is the frame (close code 0) or the UTF-8 close reason.
    fn frame(&mut self, worker: u32, sid: u32, parts: &[&[u8]], close_code: u16);

    /// A text frame (`parts` concatenated) with its message count and latency samples; sinks
    /// that do not carry them take it as `frame`.
    fn frame_with(&mut self, worker: u32, sid: u32, parts: &[&[u8]], meta: &FrameMeta<'_>) {
        let _ = meta;
        self.frame(worker, sid, parts, 0);
    }
}

/// Throttle / conflation state of one (session, record) subscription.
#[derive(Debug, Default, Clone)]
struct SubState {
    /// When the last message for this record went into the session's outbox.
    last_sent: Option<Instant>,
    /// Changed slots held back by throttling.
    mask: u128,
    /// Updates merged into `mask`.
    merged: u32,
    /// Record layout `mask` refers to (a different one: send an image).
    layout: u32,
    /// An update is held back (listed in `Session::throttled`).
    held: bool,
    /// Changes not sent because the session is conflating (listed in `Session::dirty`).
    dirty: bool,
}

/// Subscribers of one record.
#[derive(Debug, Default)]
struct SubList {
    slots: Vec<u32>,
    state: Vec<SubState>,
}

/// All engine state. Single-threaded; see the module doc.
#[derive(Debug)]
pub struct Hub {
    cfg: EngineConfig,
    store: Store,
    /// Subscribers by subject id - 1, in chunks that never move as subjects are added.
    subs: ChunkedVec<SubList>,
    sessions: Vec<Option<Session>>,
    free: Vec<u32>,
    by_sid: HashMap<u32, u32>,
    timers: BinaryHeap<Reverse<(Instant, u32)>>,
    scratch: Vec<u8>,
    applied: Applied,
    to_conflate: Vec<u32>,
    stats: EngineStats,
    views: ViewSet,
    tiers: tiers::TierMap,
    session_views: HashMap<u32, views::SessionViews>,
    window_owner: HashMap<u32, (u32, u32)>,
    views_epoch: Option<Instant>,
    views_expire_at: Option<Instant>,
    views_grace_ms: u64,
    max_views_per_session: usize,
    changed_ids: Vec<u32>,
    diffs: Vec<crate::view::WindowDiff>,
    statements: statements::HubStatements,
    /// Cluster record replication (`remote.rs`); `None` on a single node.
    records: Option<Box<crate::cluster::records::Replica>>,
    /// The control messages of a blocked session's reply frame (reused).
    reply_scratch: Vec<u8>,
    status: status::StatusTable,
    failover: failover::Failover,
    /// Recent record messages per record, for `record.resume`.
    history: history::History,
    /// This hub's epoch: seqs of a resume from another epoch are not comparable (0: none).
    epoch: u64,
    /// Views of dropped sessions, held for `view.resume`.
    detached: view_resume::DetachedViews,
    /// The view messages each window sent last, replayed by `view.resume`.
    view_history: view_history::ViewHistories,
    /// Latency sampling periods and the view-row samples being queued.
    sampling: sampling::Sampling,
}

impl Hub {
    /// An empty hub.
    pub fn new(cfg: EngineConfig) -> Self {
        Hub {
            cfg,
            store: Store::new(),
            subs: ChunkedVec::default(),
            sessions: Vec::new(),
            free: Vec::new(),
            by_sid: HashMap::new(),
            timers: BinaryHeap::new(),
            scratch: Vec::with_capacity(1024),
            applied: Applied::default(),
            to_conflate: Vec::new(),
            stats: EngineStats::default(),
            views: ViewSet::new(ViewsConfig::default()),
            tiers: tiers::TierMap::default(),
            session_views: HashMap::new(),
            window_owner: HashMap::new(),
            views_epoch: None,
            views_expire_at: None,
            views_grace_ms: ViewsConfig::default().grace_ms,
            max_views_per_session: DEFAULT_MAX_VIEWS_PER_SESSION,
            changed_ids: Vec::new(),
            diffs: Vec::new(),
            statements: statements::HubStatements::default(),
            records: None,
            reply_scratch: Vec::new(),
            status: status::StatusTable::default(),
            failover: failover::Failover::default(),
            history: history::History::default(),
            epoch: 0,
            detached: view_resume::DetachedViews::default(),
            view_history: view_history::ViewHistories::default(),
            sampling: sampling::Sampling::default(),
        }
    }

    /// Applies one command at `now`. Never fails: request errors become error frames.
    pub fn handle(&mut self, cmd: Command, now: Instant) {
        match cmd {
            Command::OpenSession {
                sid,
                worker,
                user,
                tier,
            } => self.open_session(sid, worker, &user, &tier, now),
            Command::CloseSession { sid } => {
                if let Some(slot) = self.by_sid.get(&sid).copied() {
                    self.drop_session(slot, now);
                }
                self.source_closed(sid, now);
            }
            Command::DetachSession { sid } => {
                if let Some(slot) = self.by_sid.get(&sid).copied() {
                    self.detach_session_views(slot, now);
                    self.drop_session(slot, now);
                }
                self.source_closed(sid, now);
            }
            Command::ViewResume {
                sid,
                req_id,
                ref resume,
            } if self.refuse_private(sid, req_id, &resume.container, "container", now) => {}
            Command::ViewResume { sid, req_id, resume } => self.view_resume(sid, req_id, &resume, now),
            Command::SetViewResume(cfg) => self.set_view_resume(cfg),
            Command::ContainerPublish { subject, ops } => self.container_publish(&subject, &ops, now),
            // Privacy: a view of another user's blotter is refused before any view work.
            Command::ViewCreate {
                sid,
                req_id,
                ref container,
                ..
            } if self.refuse_private(sid, req_id, container, "container", now) => {}
            Command::ViewCreate {
                sid,
                req_id,
                container,
                filter,
                sort,
                offset,
                size,
            } => self.view_create(
                sid,
                req_id,
                &container,
                &filter,
                &sort,
                offset as usize,
                size as usize,
                now,
            ),
            Command::ViewChange {
                sid,
                req_id,
                view_id,
                offset,
                size,
            } => self.view_change(sid, req_id, view_id, offset as usize, size as usize, now),
            Command::ViewClose { sid, req_id, view_id } => self.view_close(sid, req_id, view_id, now),
            Command::ViewRevoke { sid, view_id, reason } => self.revoke_view(sid, view_id, &reason, now),
            Command::Subscribe { sid, req_id, subjects } => self.subscribe(sid, req_id, &subjects, now),
            Command::Resume {
                sid,
                req_id,
                epoch,
                records,
            } => self.resume(sid, req_id, epoch, &records, now),
            Command::SetHistory(cfg) => self.history.set_config(cfg),
            Command::Unsubscribe { sid, req_id, subjects } => self.unsubscribe(sid, req_id, &subjects, now),
            Command::SetBlocked { sid, blocked } => self.set_blocked(sid, blocked, now),
            Command::Publish { batch, received_ms } => self.publish(&batch, received_ms, 0, now),
            Command::StatementCreate {
                sid,
                req_id,
                name,
                text,
                quota,
            } => self.session_statement_create(sid, req_id, &name, &text, quota, now),
            Command::StatementClose { sid, req_id, name } => self.session_statement_close(sid, req_id, &name, now),
            Command::SourcePublish {
                source,
                batch,
                received_ms,
            } => self.publish(&batch, received_ms, source, now),
            Command::SetStatus(cfg) => self.set_status_config(cfg),
            Command::SourceRegister {
                sid,
                req_id,
                patterns,
                priority,
            } => self.source_register(sid, req_id, &patterns, priority, now),
            Command::SetBatching(b) => {
                self.cfg.batching = b;
                for s in self.sessions.iter_mut().flatten() {
                    s.refresh_fast(&b);
                }
            }
            Command::SetLatencySampling { worker, every } => self.set_latency_sampling(worker, every),
            Command::CloseWorker { worker } => {
                let slots: Vec<u32> = self
                    .sessions
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.as_ref().is_some_and(|s| s.worker == worker))
                    .map(|(i, _)| i as u32)
                    .collect();
                for slot in slots {
                    let sid = self.sessions[slot as usize].as_ref().map_or(0, |s| s.sid);
                    self.drop_session(slot, now);
                    self.source_closed(sid, now);
                }
            }
        }
    }

    /// Current configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    /// Counters and gauges of the hub's parts (the ingest lane's, the desk's and the cluster
    /// fields stay 0: `runtime::Engine::stats` fills them).
    pub fn stats(&self) -> EngineStats {
        EngineStats {
            records: self.store.len() as u64,
            containers: self.views.container_count() as u64,
            views: self.views.view_count() as u64,
            view_windows: self.views.window_count() as u64,
            views_detached: self.detached.len() as u64,
            view_history_bytes: self.view_history.bytes() as u64,
            view_history_evicted: self.view_history.evicted(),
            history_bytes: self.history.bytes() as u64,
            history_entries: self.history.entries() as u64,
            history_evicted: self.history.evicted(),
            ..self.stats
        }
    }

    /// Containers and views (read-only), for tests and diagnostics.
    pub fn views(&self) -> &ViewSet {
        &self.views
    }

    /// The record store (read-only).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Earliest pending timer (may be stale: waking early is harmless).
    pub fn next_deadline(&self) -> Option<Instant> {
        let t = self.timers.peek().map(|Reverse((t, _))| *t);
        [
            self.views_expire_at,
            self.detached.next_due(),
            self.statements.next_due(),
            self.status.next_deadline(),
        ]
        .into_iter()
        .fold(t, |a, b| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// The login name of session `sid`, if it is open.
    pub fn session_user(&self, sid: u32) -> Option<&str> {
        self.session_by_sid(sid).map(|s| &*s.user)
    }

    /// The user of session `sid` and the worker that owns it; `None` when there is no such session.
    pub fn session_user_and_worker(&self, sid: u32) -> Option<(&str, u32)> {
        self.session_by_sid(sid).map(|s| (&*s.user, s.worker))
    }

    /// Queues `msg` (one encoded server message) for session `sid` as a control message and makes
    /// the session due now: it is flushed at the end of this pass instead of waiting for the burst
    /// window (order acks are replies a client waits on); a blocked session sends its control
    /// messages now and keeps its record messages held. Unknown sid: ignored.
    pub fn reply_now(&mut self, sid: u32, msg: &[u8], now: Instant) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        s.outbox.push_reply(msg);
        self.stats.deliveries += 1;
        s.burst.on_message(&self.cfg.batching, now);
        s.due = Some(now);
        schedule(&mut self.timers, s, slot, now);
    }

    /// Session `sid` closed: a standby of its failover group takes over (its records turn
    /// stale at once, until the standby's images), else its records turn stale after the grace.
    fn source_closed(&mut self, sid: u32, now: Instant) {
        let took_over = self.failover_leave(sid, now);
        self.status_session_closed(sid, took_over, now);
    }

    /// Queued (unflushed) bytes of a session, for tests and diagnostics.
    pub fn queued(&self, sid: u32) -> Option<&[u8]> {
        self.session_by_sid(sid).map(|s| s.outbox.bytes())
    }

    /// Current batching interval of a session.
    pub fn burst_interval(&self, sid: u32) -> Option<std::time::Duration> {
        self.session_by_sid(sid).map(|s| s.burst.interval(&self.cfg.batching))
    }

    fn session_by_sid(&self, sid: u32) -> Option<&Session> {
        let slot = *self.by_sid.get(&sid)?;
        self.sessions.get(slot as usize)?.as_ref()
    }

    fn open_session(&mut self, sid: u32, worker: u32, user: &str, tier: &str, now: Instant) {
        if let Some(old) = self.by_sid.get(&sid).copied() {
            // A reused id replaces the old session rather than leaking it.
            self.drop_session(old, now);
        }
        let session = Session::new(sid, worker, user, tier, &self.cfg.batching);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.sessions[slot as usize] = Some(session);
                slot
            }
            None => {
                self.sessions.push(Some(session));
                (self.sessions.len() - 1) as u32
            }
        };
        self.by_sid.insert(sid, slot);
        self.stats.sessions += 1;
        self.init_sampling(slot, worker);
    }

    /// Session `slot` is going: its views and statements are released, then the session.
    fn drop_session(&mut self, slot: u32, now: Instant) {
        self.drop_session_views(slot, now);
        if let Some(sid) = self.sessions.get(slot as usize).and_then(Option::as_ref).map(|s| s.sid) {
            self.drop_session_statements(sid, now);
        }
        self.remove_session(slot);
    }

    fn remove_session(&mut self, slot: u32) {
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        for (&rid, &idx) in &s.subs {
            remove_sub_at(&mut self.subs, &mut self.sessions, rid, idx);
            self.stats.subscriptions -= 1;
        }
        self.by_sid.remove(&s.sid);
        self.free.push(slot);
        self.stats.sessions -= 1;
    }

    fn set_blocked(&mut self, sid: u32, blocked: bool, now: Instant) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        if blocked {
            let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                return;
            };
            if s.blocked_since.is_some() {
                return;
            }
            s.blocked_since = Some(now);
            s.refresh_fast(&self.cfg.batching);
            let deadline = now + self.cfg.slow_consumer;
            schedule(&mut self.timers, s, slot, deadline);
            if s.outbox.len() > self.cfg.outbox_conflate_bytes {
                self.start_conflation(slot);
            }
        } else {
            self.unblock(slot, now);
        }
    }

    fn publish(&mut self, batch: &[Publish], received_ms: f64, source: u32, now: Instant) {
        let statements = self.statements.active();
        if statements {
            self.statements.note_wall(now, received_ms);
        }
        for p in batch {
            // Cluster mode: this node's own publishes are captured for the other nodes, except
            // the order desk's (every node derives those from the replicated order stream).
            let captured = match self.records.as_deref_mut() {
                Some(r) if !crate::order_desk::privacy::is_private(&p.subject) => {
                    let id = self.store.subject_id(&p.subject);
                    if !r.admit(id, &p.subject) {
                        continue;
                    }
                    true
                }
                _ => false,
            };
            if !self.apply_one(p, received_ms, None, false, now) {
                continue;
            }
            let id = self.applied.id;
            if captured {
                if let (Some(r), Some(rec)) = (self.records.as_deref_mut(), self.store.get(id)) {
                    r.capture(p, rec.seq, rec.ts);
                }
            }
            self.status_published(id, source, now);
            if statements {
                // last: statement results reuse `applied`
                self.feed_statements(id, now);
            }
        }
        self.publish_tail(now);
    }

    /// Merges one publish into the store (with `seq` when another node applied it first) and
    /// delivers it: to subscribers (an image when it created the record or `as_image`), views
    /// and tiers. False when the store refused it.
    fn apply_one(&mut self, p: &Publish, received_ms: f64, seq: Option<u64>, as_image: bool, now: Instant) -> bool {
        let applied = match seq {
            None => self.store.apply(p, received_ms, &mut self.applied),
            Some(seq) => self.store.apply_with_seq(p, seq, received_ms, &mut self.applied),
        };
        if applied.is_err() {
            // Only the field limit can fail here; the frame was validated on ingest.
            self.stats.publishes_rejected += 1;
            return false;
        }
        self.stats.publishes_applied += 1;
        self.after_apply(as_image, now);
        true
    }

    /// After a batch of publishes: slow sessions start conflating, views flush.
    fn publish_tail(&mut self, now: Instant) {
        while let Some(slot) = self.to_conflate.pop() {
            self.start_conflation(slot);
        }
        if !self.window_owner.is_empty() {
            self.flush_views(now);
        }
    }

    /// Delivers the record update just applied (`self.applied`) to views, subscribers (an image
    /// when it created the record or `as_image`) and tiers, and keeps it in the record's history.
    fn after_apply(&mut self, as_image: bool, now: Instant) {
        if self.applied.created && !self.tiers.is_empty() {
            self.tier_record_created(self.applied.id);
        }
        self.views_record_updated();
        let id = self.applied.id;
        ensure_list(&mut self.subs, id);
        let created = self.applied.created;
        let image = created || as_image;
        let encoded = !self.subs[id as usize - 1].slots.is_empty();
        if encoded {
            self.encode_publish(id, image);
            self.fan_out(id, image, self.applied.mask, now);
        }
        if self.history.enabled() {
            self.record_history(id, image, encoded, now);
        }
        if created {
            self.retarget_tier_subscribers(id, now);
        }
    }

    /// Encodes `,` + the message for the publish just applied into `scratch`: an image when it
    /// created the record (pending subscribers), else an update of the changed fields.
    fn encode_publish(&mut self, id: u32, created: bool) {
        use crate::wire::encode;
        self.scratch.clear();
        self.scratch.push(b',');
        let Some(rec) = self.store.get(id) else { return };
        if created {
            let fields = self.store.image_fields(rec);
            encode::image(&mut self.scratch, id, self.store.subject(id), rec.seq, rec.ts, fields);
        } else {
            let fields = self
                .store
                .fields_at(rec, self.applied.changed.iter().map(|&c| c as usize));
            encode::update(&mut self.scratch, id, rec.seq, rec.ts, fields, false);
        }
    }
}

/// Queues a timer for `slot` at `at` unless an earlier one is already queued.
fn schedule(timers: &mut BinaryHeap<Reverse<(Instant, u32)>>, s: &mut Session, slot: u32, at: Instant) {
    if s.timer.is_none_or(|t| at < t) {
        s.timer = Some(at);
        timers.push(Reverse((at, slot)));
    }
}

fn ensure_list(subs: &mut ChunkedVec<SubList>, id: u32) {
    subs.grow_with(id as usize, SubList::default);
}

/// Removes subscriber `idx` of record `rid` (swap-remove) and fixes the moved subscriber's index.
fn remove_sub_at(subs: &mut ChunkedVec<SubList>, sessions: &mut [Option<Session>], rid: u32, idx: u32) {
    let Some(list) = subs.get_mut(rid as usize - 1) else {
        return;
    };
    let idx = idx as usize;
    if idx >= list.slots.len() {
        return;
    }
    list.slots.swap_remove(idx);
    list.state.swap_remove(idx);
    if let Some(&moved) = list.slots.get(idx) {
        if let Some(m) = sessions.get_mut(moved as usize).and_then(Option::as_mut) {
            m.subs.insert(rid, idx as u32);
        }
    }
}

/// Iterates the set bits of a changed-field mask, lowest first.
#[derive(Debug, Clone, Copy)]
struct MaskBits(u128);

impl Iterator for MaskBits {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}
