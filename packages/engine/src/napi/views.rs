//! The view and container objects of the JS `Engine`: container ops and view resumes in, the admin views table,
//! sessions' open views and containers' members out (a rule reload re-checks the last two).

use napi_derive::napi;

use crate::error::EngineError;
use crate::hub::ContainerOp;

/// A `view.resume` as the server passes it (`Engine.viewResume`).
#[napi(object)]
pub struct ViewResumeInput {
    /// `epoch` of the `session.loggedIn` the view comes from.
    pub epoch: f64,
    /// The session id the view was opened in.
    pub session_id: u32,
    /// The view's id in that session.
    pub view_id: u32,
    /// Seq of the last view message the client holds.
    pub seq: f64,
    /// Container subject.
    pub container: String,
    /// Filter text (empty: every member).
    pub filter: String,
    /// Sort text (`name asc, bid desc`; empty: natural order).
    pub sort: String,
    /// First row of the window.
    pub offset: u32,
    /// Rows in the window.
    pub size: u32,
}

/// A whole number from JavaScript (the protocol decoder allows integers 0..2^53 only); anything
/// else is 0, which no epoch or seq the engine sent equals.
pub fn whole(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// One op of a `container.publish` (packages/protocol `ContainerOp`, already validated by the
/// server's decoder): `op` is `add` / `insertAt` / `remove` / `clear`.
#[napi(object)]
pub struct ContainerOpInput {
    /// `add`, `insertAt`, `remove` or `clear`.
    pub op: String,
    /// Position for `insertAt` (0-based; past the end appends).
    pub index: Option<u32>,
    /// Subjects of `add` / `insertAt` / `remove`.
    pub subjects: Option<Vec<String>>,
}

pub fn container_op(i: usize, o: ContainerOpInput) -> crate::error::Result<ContainerOp> {
    let subjects = o.subjects.unwrap_or_default();
    Ok(match o.op.as_str() {
        "add" => ContainerOp::Add(subjects),
        "insertAt" => ContainerOp::InsertAt(o.index.unwrap_or(0) as usize, subjects),
        "remove" => ContainerOp::Remove(subjects),
        "clear" => ContainerOp::Clear,
        other => {
            return Err(EngineError::bad_request(
                format!("'ops.{i}.op' ({other:?}) must be 'add', 'insertAt', 'remove' or 'clear'"),
                Some(&format!("ops.{i}.op")),
                None,
            ))
        }
    })
}

/// One materialised view (the admin views table).
#[napi(object)]
pub struct ViewStat {
    /// Container subject.
    pub container: String,
    /// Tier the view computes on (empty: the constituents themselves).
    pub tier: String,
    /// Canonical filter text (empty = every member).
    pub filter: String,
    /// Canonical sort text (empty = natural order).
    pub sort: String,
    /// Rows now.
    pub rows: f64,
    /// Subscriber windows (0 while the view waits out its grace period).
    pub subscribers: f64,
    /// Cumulative updates to its rows (each updated or entered row once per flush): sample twice for a rate.
    pub updates: f64,
    /// Cost of its last full computation (filter scan, sort, index load), microseconds.
    pub last_recompute_us: f64,
}

/// One open view of a session (`Engine.sessionViews`), as a rule reload re-checks it.
#[napi(object)]
pub struct SessionViewInfo {
    /// Session id.
    pub session_id: u32,
    /// The session's view id (from `view.created`).
    pub view_id: u32,
    /// Container subject as requested.
    pub container: String,
    /// Tier the view computes on (empty: the constituents themselves).
    pub tier: String,
}

/// One container and its members (`Engine.containerMembers`), as a rule reload re-checks them.
#[napi(object)]
pub struct ContainerMembersInfo {
    /// Container subject.
    pub container: String,
    /// Member subjects in natural order (empty: an empty or unknown container).
    pub members: Vec<String>,
}

/// The admin views table as JS objects.
pub fn view_stats(out: Vec<crate::hub::ViewStat>) -> Vec<ViewStat> {
    out.into_iter()
        .map(|v| ViewStat {
            container: v.container,
            tier: v.tier,
            filter: v.filter,
            sort: v.sort,
            rows: v.rows as f64,
            subscribers: v.subscribers as f64,
            updates: v.updates as f64,
            last_recompute_us: v.last_recompute_us as f64,
        })
        .collect()
}

/// Sessions' open views as JS objects.
pub fn session_views(out: Vec<crate::hub::SessionView>) -> Vec<SessionViewInfo> {
    out.into_iter()
        .map(|v| SessionViewInfo {
            session_id: v.sid,
            view_id: v.view_id,
            container: v.container,
            tier: v.tier,
        })
        .collect()
}

/// Containers' members as JS objects.
pub fn container_members(out: Vec<crate::hub::ContainerMembers>) -> Vec<ContainerMembersInfo> {
    out.into_iter()
        .map(|c| ContainerMembersInfo {
            container: c.container,
            members: c.members,
        })
        .collect()
}
