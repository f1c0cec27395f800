//! The hub: all engine state, owned by one thread and driven by `Command`s and the clock passed
//! in. `runtime` feeds it; tests drive it directly.
//!
//! `Hub` is a composition of parts that own their state (each file's header states its
//! invariants): the record `Store`, `Sessions` (session slots with their outboxes, the sid index,
//! the flush timers: `sessions.rs`), `Subscriptions` (subscribers per record with their throttle
//! and conflation state: `subscriptions.rs`), `HubViews` (containers, views, per-session views
//! and the views held for `view.resume`: `views/`), tier mirrors (`tiers.rs`), statements,
//! record statuses and source failover, the record history, latency sampling (`sampling.rs`)
//! and, in cluster mode, the record replica (`remote.rs`). A method that needs two parts takes them as arguments; `Hub` routes.
//!
//! The tick path, one stage per file: `command.rs` (the input) -> `apply.rs` (ingest: merge
//! into the store, deliver each change) -> `fan_out.rs` (encode once, append the same bytes to
//! every subscriber's outbox) -> `flush.rs` (timers fire: due outboxes become frames for the
//! `FrameSink`). Subscriber lists are `Vec<u32>` of session slots with a parallel
//! `Vec<SubState>`, so the common path (no throttling, not blocked) touches neither a map nor
//! the state.

mod apply;
mod command;
mod direct;
mod failover;
mod fan_out;
mod flush;
mod history;
mod members;
mod remote;
mod resume;
mod sampling;
mod sessions;
mod statements;
mod status;
mod subscribe;
mod subscriptions;
#[cfg(test)]
mod test_support;
mod tiers;
mod view_history;
mod view_resume;
mod views;

pub use command::Command;
pub use direct::{ENTRY_PUBLISH, ENTRY_SUBSCRIBE, ENTRY_UNSUBSCRIBE};
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

use std::time::Instant;

use crate::config::EngineConfig;
use crate::session::{FrameMeta, Session};
use crate::stats::EngineStats;
use crate::store::{Applied, Store};
use crate::view::ViewSet;
use sessions::Sessions;
use subscriptions::Subscriptions;
use views::HubViews;

/// WebSocket close code for a slow consumer (`CloseCodes.SLOW_CONSUMER`).
pub const CLOSE_SLOW_CONSUMER: u16 = 4008;

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

    /// A topic entry for `worker` (`direct.rs`): `kind` is ENTRY_SUBSCRIBE / ENTRY_UNSUBSCRIBE
    /// (`key` a session id, `meta.messages` the record id, 0: every record) or ENTRY_PUBLISH
    /// (`key` a record id, `parts` the frame, `meta` its subscriber count and samples). Sinks
    /// that deliver nothing to sockets ignore it.
    fn entry(&mut self, worker: u32, key: u32, parts: &[&[u8]], kind: u16, meta: &FrameMeta<'_>) {
        let _ = (worker, key, parts, kind, meta);
    }
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
    /// Encode buffer (reused): `,` + the record message being fanned out (encoded once, copied
    /// to every outbox), or a reply being queued.
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
    /// Latency sampling periods and the view-row samples being queued.
    sampling: sampling::Sampling,
    /// Workers that apply topic entries (`Command::TopicWorker`, `direct.rs`).
    topic_workers: Vec<u32>,
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
            sampling: sampling::Sampling::default(),
            topic_workers: Vec::new(),
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
            Command::SetBatching(b) => self.set_batching(b, now),
            Command::SetLatencySampling { worker, every } => self.set_latency_sampling(worker, every),
            Command::TopicWorker { worker } => {
                if !self.topic_workers.contains(&worker) {
                    self.topic_workers.push(worker);
                }
            }
            Command::CloseWorker { worker } => {
                self.topic_workers.retain(|&w| w != worker);
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
            view_history_bytes: self.views.history.bytes() as u64,
            view_history_evicted: self.views.history.evicted(),
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
        let mut session = Session::new(sid, worker, user, tier, &self.cfg.batching);
        session.topics = self.topic_workers.contains(&worker);
        let slot = self.sessions.insert(session);
        self.stats.sessions += 1;
        self.init_sampling(slot, worker);
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
            self.subscriptions.remove(&mut self.sessions.slots, rid, idx, s.worker);
            self.stats.subscriptions -= 1;
        }
        if s.direct > 0 {
            // the socket may outlive the engine's session (a closing handshake): off every topic now
            self.subscriptions.direct.unsubscribe(s.worker, s.sid, 0);
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
            // off the topics before anything else: from now on it queues (and conflates) as before
            self.subscriptions.end_all_direct(s);
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
