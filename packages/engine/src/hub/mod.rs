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
mod sessions;
mod statements;
mod status;
mod subscribe;
mod subscriptions;
#[cfg(test)]
mod test_support;
mod tiers;
mod view_resume;
mod views;

pub use history::{HistoryConfig, HistoryRule, DEFAULT_HISTORY_MAX_BYTES, DEFAULT_HISTORY_RULES};
pub use members::ContainerMembers;
pub use resume::ResumeRecord;
pub use statements::{is_stat_subject, statement_cost, StatementQuota, STAT_PREFIX};
pub use status::StatusConfig;
pub use subscribe::SessionView;
pub use view_resume::{
    ViewResume, ViewResumeConfig, DEFAULT_VIEW_RESUME_GRACE_MS, DEFAULT_VIEW_RESUME_MAX,
    DEFAULT_VIEW_RESUME_MAX_PER_USER,
};
pub use views::{ContainerOp, ViewStat, DEFAULT_MAX_VIEWS_PER_SESSION};

use std::time::Instant;

use crate::config::{BatchingConfig, EngineConfig};
use crate::session::Session;
use crate::stats::EngineStats;
use crate::store::{Applied, Store};
use crate::view::ViewSet;
use crate::wire::Publish;
use sessions::Sessions;
use subscriptions::Subscriptions;
use views::HubViews;

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
}

/// All engine state, as parts that own their state (each file's header states its invariants).
/// Single-threaded; see the module doc.
#[derive(Debug)]
pub struct Hub {
    cfg: EngineConfig,
    /// Records by subject id (the tick's first stage applies publishes here).
    store: Store,
    /// Subscribers per record, and the sessions waiting to start conflating.
    subscriptions: Subscriptions,
    /// Session slots with their outboxes, the sid index and the flush timers.
    sessions: Sessions,
    /// `,` + the message being fanned out (encoded once, copied to every outbox).
    scratch: Vec<u8>,
    /// What the store's last apply changed.
    applied: Applied,
    stats: EngineStats,
    /// Containers, views, their per-session subscriptions and the views held for `view.resume`.
    views: HubViews,
    tiers: tiers::TierMap,
    statements: statements::HubStatements,
    /// Cluster record replication (`remote.rs`); `None` on a single node.
    records: Option<Box<crate::cluster::records::Replica>>,
    status: status::StatusTable,
    failover: failover::Failover,
    /// Recent record messages per record, for `record.resume`.
    history: history::History,
    /// This hub's epoch: seqs of a resume from another epoch are not comparable (0: none).
    epoch: u64,
}

impl Hub {
    /// An empty hub.
    pub fn new(cfg: EngineConfig) -> Self {
        Hub {
            cfg,
            store: Store::new(),
            subscriptions: Subscriptions::default(),
            sessions: Sessions::default(),
            scratch: Vec::with_capacity(1024),
            applied: Applied::default(),
            stats: EngineStats::default(),
            views: HubViews::default(),
            tiers: tiers::TierMap::default(),
            statements: statements::HubStatements::default(),
            records: None,
            status: status::StatusTable::default(),
            failover: failover::Failover::default(),
            history: history::History::default(),
            epoch: 0,
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
                if let Some(slot) = self.sessions.slot(sid) {
                    self.drop_session(slot, now);
                }
                self.source_closed(sid, now);
            }
            Command::DetachSession { sid } => {
                if let Some(slot) = self.sessions.slot(sid) {
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
                for s in self.sessions.iter_mut() {
                    s.refresh_fast(&b);
                }
            }
            Command::CloseWorker { worker } => {
                for slot in self.sessions.slots_of_worker(worker) {
                    let sid = self.sessions.get(slot).map_or(0, |s| s.sid);
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
            containers: self.views.set.container_count() as u64,
            views: self.views.set.view_count() as u64,
            view_windows: self.views.set.window_count() as u64,
            views_detached: self.views.detached.len() as u64,
            history_bytes: self.history.bytes() as u64,
            history_entries: self.history.entries() as u64,
            history_evicted: self.history.evicted(),
            ..self.stats
        }
    }

    /// Containers and views (read-only), for tests and diagnostics.
    pub fn views(&self) -> &ViewSet {
        &self.views.set
    }

    /// The record store (read-only).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Earliest pending timer (may be stale: waking early is harmless).
    pub fn next_deadline(&self) -> Option<Instant> {
        let t = self.sessions.next_timer();
        [
            self.views.expire_at,
            self.views.detached.next_due(),
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
        self.sessions.by_sid(sid).map(|s| &*s.user)
    }

    /// The user of session `sid` and the worker that owns it; `None` when there is no such session.
    pub fn session_user_and_worker(&self, sid: u32) -> Option<(&str, u32)> {
        self.sessions.by_sid(sid).map(|s| (&*s.user, s.worker))
    }

    /// Queues `msg` (one encoded server message) for session `sid` as a control message and makes
    /// the session due now: it is flushed at the end of this pass instead of waiting for the burst
    /// window (order acks are replies a client waits on); a blocked session sends its control
    /// messages now and keeps its record messages held. Unknown sid: ignored.
    pub fn reply_now(&mut self, sid: u32, msg: &[u8], now: Instant) {
        self.sessions
            .push_reply_now(sid, msg, &self.cfg.batching, &mut self.stats, now);
    }

    /// Session `sid` closed: a standby of its failover group takes over (its records turn
    /// stale at once, until the standby's images), else its records turn stale after the grace.
    fn source_closed(&mut self, sid: u32, now: Instant) {
        let took_over = self.failover_leave(sid, now);
        self.status_session_closed(sid, took_over, now);
    }

    /// Queued (unflushed) bytes of a session, for tests and diagnostics.
    pub fn queued(&self, sid: u32) -> Option<&[u8]> {
        self.sessions.by_sid(sid).map(|s| s.outbox.bytes())
    }

    /// Current batching interval of a session.
    pub fn burst_interval(&self, sid: u32) -> Option<std::time::Duration> {
        self.sessions.by_sid(sid).map(|s| s.burst.interval(&self.cfg.batching))
    }

    fn open_session(&mut self, sid: u32, worker: u32, user: &str, tier: &str, now: Instant) {
        if let Some(old) = self.sessions.slot(sid) {
            // A reused id replaces the old session rather than leaking it.
            self.drop_session(old, now);
        }
        self.sessions
            .insert(Session::new(sid, worker, user, tier, &self.cfg.batching));
        self.stats.sessions += 1;
    }

    /// Session `slot` is going: its views and statements are released, then the session.
    fn drop_session(&mut self, slot: u32, now: Instant) {
        self.views.close_session(slot, now);
        if let Some(sid) = self.sessions.get(slot).map(|s| s.sid) {
            self.drop_session_statements(sid, now);
        }
        self.remove_session(slot);
    }

    fn remove_session(&mut self, slot: u32) {
        let Some(s) = self.sessions.take(slot) else {
            return;
        };
        for (&rid, &idx) in &s.subs {
            self.subscriptions.remove(&mut self.sessions.slots, rid, idx);
            self.stats.subscriptions -= 1;
        }
        self.stats.sessions -= 1;
    }

    fn set_blocked(&mut self, sid: u32, blocked: bool, now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        if blocked {
            let Some(s) = self.sessions.get_mut(slot) else {
                return;
            };
            if s.blocked_since.is_some() {
                return;
            }
            s.blocked_since = Some(now);
            s.refresh_fast(&self.cfg.batching);
            let deadline = now + self.cfg.slow_consumer;
            let conflate = s.outbox.len() > self.cfg.outbox_conflate_bytes;
            self.sessions.schedule(slot, deadline);
            if conflate {
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
        while let Some(slot) = self.subscriptions.to_conflate.pop() {
            self.start_conflation(slot);
        }
        if !self.views.window_owner.is_empty() {
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
        self.subscriptions.ensure(id);
        let created = self.applied.created;
        let image = created || as_image;
        let encoded = self.subscriptions.has_subscribers(id);
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
