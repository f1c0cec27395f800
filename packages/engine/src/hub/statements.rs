//! Statements in the hub: the engine's [`StatementSet`] fed by every source publish on the engine
//! thread, its results applied to the store as records `/STAT/<name>/<key>` (each with its seq,
//! delivered, viewed and tiered like any record), and each name's results gathered in the
//! container `/STAT/<name>` (members in order of first result), so a grid is a view over it.
//!
//! Per event: one check that statements exist; then the set's routing (docs/analytics.md) and,
//! per result row, a cached lookup of the result records (one per name of the computation) and
//! an in-place merge into each (`Store::apply_fields`): no allocation once a key's records exist.
//! Time windows expire by the engine clock: `next_deadline` includes the set's next timer and
//! `run_due` advances it, so results change with no event.
//!
//! Ownership: a session's `statement.create` adds a reference held by the session (released by
//! `statement.close` or when the session goes); the server's (config) statements hold theirs for
//! the engine's life. A name's last reference gone, its records get a last image with no fields
//! and leave its container. Result records are never fed back to statements.

use std::time::Instant;

use rustc_hash::FxHashMap;

use super::subscribe::ReqError;
use super::Hub;
use crate::analytics::{self, AnalyticsLimits, Output, ResultRow, Source, StatementId, StatementSet, WindowSpec};
use crate::error::{EngineError, ErrorCode, Result};
use crate::value::Value;
use crate::wire::statement::{statement_closed, statement_created};

/// Prefix of result records and containers: `/STAT/<name>/<key>`, `/STAT/<name>`.
pub const STAT_PREFIX: &str = "/STAT/";

/// True for `/STAT` and every subject under it: the engine's statement results, which no source
/// may publish.
pub fn is_stat_subject(subject: &str) -> bool {
    subject == "/STAT" || subject.starts_with(STAT_PREFIX)
}

/// Per-user bounds on `statement.create`, as the server configures them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementQuota {
    /// Statement references a user's sessions may hold together.
    pub max_count: u32,
    /// Sum of [`statement_cost`] over them.
    pub max_cost: u64,
}

/// The cost of a statement against a user's quota: the events one key's window may hold (`window
/// length n`: n; `window time T`: T in ms, at most 1,000,000), 1 without a window (a running
/// aggregate or a filtered stream).
pub fn statement_cost(st: &analytics::Statement) -> u64 {
    match st.window {
        WindowSpec::None => 1,
        WindowSpec::Length(n) => u64::from(n),
        WindowSpec::Time(d) => (d.as_millis() as u64).clamp(1, 1_000_000),
    }
}

/// The hub's statements and their bookkeeping.
#[derive(Debug, Default)]
pub(super) struct HubStatements {
    /// Made at the first create (it counts time from then).
    set: Option<StatementSet>,
    /// Result rows, reused.
    out: Output,
    /// Result record ids by statement, by key: one per name, in `names_of` order. Dropped for a
    /// statement whose names change.
    ids: FxHashMap<StatementId, Vec<Vec<u32>>>,
    /// Record ids of the row being applied (reused).
    scratch: Vec<u32>,
    /// References per name (sessions' and the server's).
    refs: FxHashMap<Box<str>, u32>,
    /// Per session id: the names it created, one entry per reference, with their cost.
    by_session: FxHashMap<u32, Vec<(Box<str>, u64)>>,
    /// Per user: (references, cost) its sessions hold.
    by_user: FxHashMap<Box<str>, (u32, u64)>,
    /// (engine clock, epoch ms) of the latest source publish: the `ts` of results written by a
    /// timer (epoch ms of that instant).
    wall: Option<(Instant, f64)>,
}

impl HubStatements {
    /// True when there is at least one statement (the publish path skips everything else).
    #[inline]
    pub(super) fn active(&self) -> bool {
        self.set.as_ref().is_some_and(|s| !s.is_empty())
    }

    /// Notes the epoch ms of a source publish received at `now`.
    pub(super) fn note_wall(&mut self, now: Instant, received_ms: f64) {
        self.wall = Some((now, received_ms));
    }

    fn wall_ms(&self, now: Instant) -> f64 {
        match self.wall {
            Some((at, ms)) => ms + now.saturating_duration_since(at).as_secs_f64() * 1000.0,
            None => 0.0,
        }
    }

    /// The set's next timer.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.set.as_ref().and_then(StatementSet::next_due)
    }

    /// The statement set (read-only), once a statement was created.
    pub(super) fn set(&self) -> Option<&StatementSet> {
        self.set.as_ref()
    }
}

impl Hub {
    /// The engine's statements (read-only), once one was created.
    pub fn statements(&self) -> Option<&StatementSet> {
        self.statements.set()
    }

    /// Record `id` was just updated by a source publish: offers it to the statements and applies
    /// their results.
    pub(super) fn feed_statements(&mut self, id: u32, now: Instant) {
        if self.store.subject(id).starts_with(STAT_PREFIX) {
            return; // results are never fed back
        }
        let mut out = std::mem::take(&mut self.statements.out);
        if self.statements.next_due().is_some_and(|t| t <= now) {
            if let Some(set) = self.statements.set.as_mut() {
                set.advance(now, &mut out);
            }
            let ts = self.statements.wall_ms(now);
            self.apply_results(&out, ts, now);
            out.clear();
        }
        let (Some(set), Some(rec)) = (self.statements.set.as_mut(), self.store.get(id)) else {
            self.statements.out = out;
            return;
        };
        let ts = rec.ts;
        set.on_record(id, self.store.subject(id), rec, now, &mut out);
        self.apply_results(&out, ts, now);
        out.clear();
        self.statements.out = out;
    }

    /// Runs the statements' due timers (expiry, output intervals) and applies their results.
    pub(super) fn run_statement_timers(&mut self, now: Instant) {
        if self.statements.next_due().is_none_or(|t| t > now) {
            return;
        }
        let mut out = std::mem::take(&mut self.statements.out);
        if let Some(set) = self.statements.set.as_mut() {
            set.advance(now, &mut out);
        }
        let ts = self.statements.wall_ms(now);
        self.apply_results(&out, ts, now);
        out.clear();
        self.statements.out = out;
        while let Some(slot) = self.subscriptions.to_conflate.pop() {
            self.start_conflation(slot);
        }
        if !self.views.window_owner.is_empty() {
            self.flush_views(now);
        }
    }

    fn apply_results(&mut self, out: &Output, ts: f64, now: Instant) {
        let mut ids = std::mem::take(&mut self.statements.scratch);
        for row in out.rows() {
            ids.clear();
            self.result_ids(row, &mut ids);
            for &rid in &ids {
                self.apply_result(rid, out.fields(row), ts, now);
            }
        }
        self.statements.scratch = ids;
    }

    /// Writes `fields` as the whole of result record `rid` and delivers it like a publish.
    fn apply_result(&mut self, rid: u32, fields: &[(u32, Option<Value>)], ts: f64, now: Instant) {
        if self
            .store
            .apply_fields(rid, true, fields, ts, &mut self.applied)
            .is_err()
        {
            self.stats.publishes_rejected += 1; // only the field limit: 128 result fields cannot pass it
            return;
        }
        self.after_apply(false, now);
    }

    /// The result records of `row` (one per name of its statement), made on the key's first row:
    /// each joins its name's container.
    fn result_ids(&mut self, row: &ResultRow, into: &mut Vec<u32>) {
        if let Some(ids) = self
            .statements
            .ids
            .get(&row.statement)
            .and_then(|k| k.get(row.key as usize))
        {
            if !ids.is_empty() {
                into.extend_from_slice(ids);
                return;
            }
        }
        let Some(set) = self.statements.set.as_ref() else {
            return;
        };
        let store = &self.store;
        let Some(key) = set.key_text(row.statement, row.key, |s| store.subject(s)) else {
            return;
        };
        let names: Vec<String> = set.names_of(row.statement).map(str::to_owned).collect();
        let mut ids = Vec::with_capacity(names.len());
        for name in &names {
            ids.push(self.result_record(name, &key));
        }
        into.extend_from_slice(&ids);
        let per_key = self.statements.ids.entry(row.statement).or_default();
        if per_key.len() <= row.key as usize {
            per_key.resize_with(row.key as usize + 1, Vec::new);
        }
        per_key[row.key as usize] = ids;
    }

    /// The id of `/STAT/<name>/<key>`, a member of `/STAT/<name>` from now on unless it is a
    /// tier variant (last segment `X@T`: the result of a tier record is the tier variant of `X`'s
    /// result, which a session of tier T sees in its place, as in any container).
    fn result_record(&mut self, name: &str, key: &str) -> u32 {
        let rid = self.store.subject_id(&analytics::result_subject(name, key));
        if key.rsplit('/').next().is_some_and(|last| last.contains('@')) {
            return rid;
        }
        let c = self.store.subject_id(&format!("{STAT_PREFIX}{name}"));
        if !self.views.set.container(c).is_some_and(|k| k.contains(rid)) {
            // only the container's member limit can refuse: the record still exists
            if let Ok(pos) = self.views.set.insert(c, None, rid, &self.store) {
                self.mirror_insert(c, pos, rid);
            }
        }
        rid
    }

    /// Subject `member` joined (`joined`) or left container `container`: statements reading it
    /// route its updates accordingly.
    pub(super) fn statement_member(&mut self, container: u32, member: u32, joined: bool) {
        let Some(set) = self.statements.set.as_mut() else {
            return;
        };
        let name = self.store.subject(container);
        if !set.reads_container(name) {
            return;
        }
        if joined {
            set.add_member(name, member);
        } else {
            set.remove_member(name, member);
        }
    }

    /// Container `container` is about to be cleared: its members leave the statements reading it.
    pub(super) fn statement_members_cleared(&mut self, container: u32) {
        let Some(set) = self.statements.set.as_mut() else {
            return;
        };
        let name = self.store.subject(container);
        if !set.reads_container(name) {
            return;
        }
        if let Some(c) = self.views.set.container(container) {
            for m in c.iter() {
                set.remove_member(name, m);
            }
        }
    }

    /// Creates (or adds a reference to) statement `name`; the canonical text on success.
    fn create_statement(&mut self, name: &str, text: &str, now: Instant) -> Result<String> {
        let set = self
            .statements
            .set
            .get_or_insert_with(|| StatementSet::new(AnalyticsLimits::default(), now));
        let before = set.len();
        let had_name = set.id_of(name).is_some();
        let store = &mut self.store;
        let id = set.create(name, text, now, &mut |f| store.field_id(f))?;
        let canonical = set.text_of(id).unwrap_or_default().to_owned();
        *self.statements.refs.entry(name.into()).or_insert(0) += 1;
        if set.len() > before {
            // a new computation over a container starts from its current members
            if let Some(Source::Container(c)) = analytics::parse(&canonical, set.limits()).ok().map(|s| s.source) {
                let cid = self.store.subject_id(c.as_str());
                let members: Vec<u32> = self
                    .views
                    .set
                    .container(cid)
                    .map(|k| k.iter().collect())
                    .unwrap_or_default();
                for m in members {
                    self.statement_member(cid, m, true);
                }
            }
        } else if !had_name {
            // another name of a running computation: its results so far, under the new name
            self.statements.ids.remove(&id);
            self.seed_name(id, name, now);
        }
        Ok(canonical)
    }

    /// Writes statement `id`'s current results to `name`'s records (a name just added to it).
    fn seed_name(&mut self, id: StatementId, name: &str, now: Instant) {
        let Some(set) = self.statements.set.as_ref() else {
            return;
        };
        let mut out = Output::new();
        let mut keys = Vec::new();
        for k in 0..set.key_count(id) as u32 {
            if set.current(id, k, &mut out) {
                let store = &self.store;
                keys.push(set.key_text(id, k, |s| store.subject(s)).unwrap_or_default());
            }
        }
        let ts = self.statements.wall_ms(now);
        for (row, key) in out.rows().iter().zip(&keys) {
            if out.fields(row).is_empty() {
                continue; // a stream with nothing waiting: its next event writes it
            }
            let rid = self.result_record(name, key);
            self.apply_result(rid, out.fields(row), ts, now);
        }
    }

    /// Drops one reference to `name`; when it was the last, the name's records get an empty
    /// image and its container is cleared.
    fn release_statement(&mut self, name: &str, now: Instant) -> Result<()> {
        let Some(set) = self.statements.set.as_mut() else {
            return Err(EngineError::NotFound {
                message: format!("no statement named '{name}'"),
            });
        };
        let id = set.id_of(name);
        let last = self.statements.refs.get(name).copied().unwrap_or(0) <= 1;
        let mut records = Vec::new();
        if let (true, Some(id)) = (last, id) {
            let store = &self.store;
            for k in 0..set.key_count(id) as u32 {
                if let Some(key) = set.key_text(id, k, |s| store.subject(s)) {
                    records.push(analytics::result_subject(name, &key));
                }
            }
        }
        set.release(name)?;
        if let Some(id) = id {
            self.statements.ids.remove(&id);
        }
        match self.statements.refs.get_mut(name) {
            Some(n) if *n > 1 => *n -= 1,
            _ => {
                self.statements.refs.remove(name);
            }
        }
        if !last {
            return Ok(());
        }
        let ts = self.statements.wall_ms(now);
        for subject in records {
            if let Some(rid) = self.store.lookup(&subject) {
                if self.store.get(rid).is_some() {
                    self.apply_result(rid, &[], ts, now);
                }
            }
        }
        if let Some(c) = self.store.lookup(&format!("{STAT_PREFIX}{name}")) {
            self.views.set.clear(c);
            self.mirror_clear(c);
        }
        while let Some(slot) = self.subscriptions.to_conflate.pop() {
            self.start_conflation(slot);
        }
        if !self.views.window_owner.is_empty() {
            self.flush_views(now);
        }
        Ok(())
    }

    /// A server (config) statement: held for the engine's life, no quota. Errors as
    /// `StatementSet::create`.
    pub fn create_server_statement(&mut self, name: &str, text: &str, now: Instant) -> Result<String> {
        self.create_statement(name, text, now)
    }

    /// `statement.create` of session `sid`: `statement.created` or an `error` (a parse error names
    /// its column: BAD_REQUEST, field `statement`; past the user's quota: LIMIT_EXCEEDED).
    pub(super) fn session_statement_create(
        &mut self,
        sid: u32,
        req_id: u32,
        name: &str,
        text: &str,
        quota: StatementQuota,
        now: Instant,
    ) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let Some(user) = self.sessions.get(slot).map(|s| s.user.clone()) else {
            return;
        };
        let limits = self
            .statements
            .set
            .as_ref()
            .map_or_else(AnalyticsLimits::default, |s| *s.limits());
        let cost = match analytics::parse(text, &limits) {
            Ok(st) => statement_cost(&st),
            Err(e) => return self.send_error(slot, req_id, req_error(&e.into_engine_error("statement")), now),
        };
        let (count, spent) = self.statements.by_user.get(&*user).copied().unwrap_or((0, 0));
        if count >= quota.max_count {
            let message = format!(
                "user '{user}' holds {count} statements; at most {} are allowed per user (limits.maxStatementsPerUser): close one first",
                quota.max_count
            );
            return self.send_error(slot, req_id, limit_error(message), now);
        }
        if spent + cost > quota.max_cost {
            let message = format!(
                "this statement costs {cost} (its window's events per key) and user '{user}' holds {spent}; at most {} per user (limits.maxStatementCostPerUser)",
                quota.max_cost
            );
            return self.send_error(slot, req_id, limit_error(message), now);
        }
        match self.create_statement(name, text, now) {
            Ok(canonical) => {
                self.statements
                    .by_session
                    .entry(sid)
                    .or_default()
                    .push((name.into(), cost));
                let u = self.statements.by_user.entry(user).or_default();
                u.0 += 1;
                u.1 += cost;
                self.scratch.clear();
                statement_created(
                    &mut self.scratch,
                    req_id,
                    name,
                    &canonical,
                    &format!("{STAT_PREFIX}{name}"),
                );
                self.send_reply(slot, now);
            }
            Err(e) => self.send_error(slot, req_id, req_error(&e), now),
        }
    }

    /// `statement.close` of session `sid`: releases one of the session's references to `name`;
    /// NOT_FOUND when the session holds none.
    pub(super) fn session_statement_close(&mut self, sid: u32, req_id: u32, name: &str, now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let held = self
            .statements
            .by_session
            .get(&sid)
            .and_then(|v| v.iter().position(|(n, _)| &**n == name));
        let Some(i) = held else {
            let message =
                format!("this session holds no statement named '{name}' (it closes only statements it created)");
            let e = ReqError {
                code: ErrorCode::NotFound,
                message,
                field: Some("name".into()),
            };
            return self.send_error(slot, req_id, e, now);
        };
        self.drop_reference(sid, i, now);
        self.scratch.clear();
        statement_closed(&mut self.scratch, req_id, name);
        self.send_reply(slot, now);
    }

    /// Releases the `i`th reference session `sid` holds.
    fn drop_reference(&mut self, sid: u32, i: usize, now: Instant) {
        let Some(list) = self.statements.by_session.get_mut(&sid) else {
            return;
        };
        let (name, cost) = list.swap_remove(i);
        if list.is_empty() {
            self.statements.by_session.remove(&sid);
        }
        let user = self.sessions.by_sid(sid).map(|s| s.user.clone());
        if let Some(u) = user.and_then(|u| self.statements.by_user.get_mut(&*u).map(|e| (u.clone(), e))) {
            let (key, e) = u;
            e.0 -= 1;
            e.1 -= cost;
            if e.0 == 0 {
                self.statements.by_user.remove(&*key);
            }
        }
        // the reference was counted at create: release cannot fail
        let _ = self.release_statement(&name, now);
    }

    /// Session `sid` is going: its statement references are released.
    pub(super) fn drop_session_statements(&mut self, sid: u32, now: Instant) {
        while self.statements.by_session.get(&sid).is_some_and(|v| !v.is_empty()) {
            let last = self.statements.by_session[&sid].len() - 1;
            self.drop_reference(sid, last, now);
        }
    }

    /// Names of the statements session `sid` holds, one per reference (diagnostics and tests).
    pub fn session_statements(&self, sid: u32) -> Vec<String> {
        self.statements
            .by_session
            .get(&sid)
            .map(|v| v.iter().map(|(n, _)| n.to_string()).collect())
            .unwrap_or_default()
    }
}

fn req_error(e: &EngineError) -> ReqError {
    ReqError {
        code: e.code(),
        message: e.to_string(),
        field: e.field().map(str::to_owned),
    }
}

fn limit_error(message: String) -> ReqError {
    ReqError {
        code: ErrorCode::LimitExceeded,
        message,
        field: None,
    }
}

#[cfg(test)]
#[path = "statements_tests.rs"]
mod tests;
