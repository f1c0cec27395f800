//! The hub's input: one `Command` per request, publish batch, session event or setting change,
//! applied in the order callers sent them (`Hub::handle`).

use crate::config::BatchingConfig;
use crate::wire::Publish;

use super::{ContainerOp, HistoryConfig, ResumeRecord, StatementQuota, StatusConfig, ViewResume, ViewResumeConfig};

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
    /// `worker` applies topic entries (`hub::ENTRY_*`): its sessions opened from now on may get
    /// record messages through topic publishes (hub `direct.rs`).
    TopicWorker {
        /// Worker id.
        worker: u32,
    },
    /// The worker went away: close all its sessions.
    CloseWorker {
        /// Worker id.
        worker: u32,
    },
}
