//! [`StatementSet`]: the statements of an engine, identical ones computed once, with the index
//! that routes a record update to the statements that read it, and the timers of time windows
//! and output intervals.
//!
//! Routing: statements are grouped by stream (their pattern or container); each subject's list of
//! matching streams is worked out the first time the subject updates after the set changed, then
//! cached by subject id. Within a stream, a statement whose filter has a top-level
//! `field = 'text'` conjunct is indexed by that (field, text): an update reads the field once and
//! reaches only the statements waiting for its value (1,000 statements of one pattern, one per
//! ticker: one hash lookup, one statement). Other statements of the stream run their filter.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use super::parser::{parse, Source};
use super::statement::{KeyValue, Stmt};
use super::{AnalyticsLimits, Output, StatementId};
use crate::error::{EngineError, Result};
use crate::filter::{Conjunct, Row};
use crate::store::Record;
use crate::value::Value;

/// Counters of a [`StatementSet`] since it was made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AnalyticsStats {
    /// Record updates offered ([`StatementSet::on_record`] calls).
    pub events: u64,
    /// (update, statement) pairs that passed the statement's filter.
    pub events_matched: u64,
    /// Result rows written.
    pub rows: u64,
    /// Matching events not counted because their statement already has `max_keys` keys.
    pub keys_refused: u64,
    /// Matching events not counted because they lack the `group by` field.
    pub events_without_key: u64,
    /// Events that left a time window before their time because the statement held
    /// `max_time_events`.
    pub evicted_early: u64,
}

/// Longest statement name (it is a subject segment: `/STAT/<name>/<key>`).
pub const MAX_NAME_BYTES: usize = 64;

const EXPIRY: u8 = 0;
const OUTPUT: u8 = 1;

#[derive(Debug)]
struct Entry {
    stmt: Stmt,
    text: String,
    source: Source,
    /// The names it was created under, each with its create count.
    names: Vec<(Box<str>, u32)>,
}

/// Statement slots by the text their filter's indexed `field = 'text'` conjunct waits for.
type ByText = FxHashMap<Box<str>, Vec<u32>>;

/// The statements sharing one stream, split by how their filter is indexed.
#[derive(Debug)]
struct Stream {
    source: Source,
    /// Statements whose filter is run on every update of the stream.
    scan: Vec<u32>,
    /// (field id, text -> statements) for filters with a top-level `field = 'text'`.
    eq: Vec<(u32, ByText)>,
}

/// A subject's matching streams, valid while `gen` is the set's generation.
#[derive(Debug, Default)]
struct Route {
    gen: u32,
    streams: Box<[u32]>,
}

/// Many statements over the record updates of one engine. Time comes in as the engine clock's
/// `Instant` on every call; nothing here reads a clock.
#[derive(Debug)]
pub struct StatementSet {
    limits: AnalyticsLimits,
    origin: Instant,
    /// Latest time seen, ns since `origin` (time never goes back).
    t: u64,
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    by_text: FxHashMap<String, u32>,
    by_name: FxHashMap<Box<str>, u32>,
    by_id: FxHashMap<StatementId, u32>,
    next_id: u32,
    streams: Vec<Stream>,
    /// By subject id.
    routes: Vec<Route>,
    gen: u32,
    /// Members of the containers statements read, by container subject.
    members: FxHashMap<Box<str>, FxHashSet<u32>>,
    /// (due ns, slot, statement id, EXPIRY | OUTPUT).
    timers: BinaryHeap<Reverse<(u64, u32, u32, u8)>>,
    stats: AnalyticsStats,
}

impl StatementSet {
    /// An empty set; `now` is the engine clock's time (time windows count from it).
    pub fn new(limits: AnalyticsLimits, now: Instant) -> Self {
        Self {
            limits,
            origin: now,
            t: 0,
            slots: Vec::new(),
            free: Vec::new(),
            by_text: FxHashMap::default(),
            by_name: FxHashMap::default(),
            by_id: FxHashMap::default(),
            next_id: 1,
            streams: Vec::new(),
            routes: Vec::new(),
            gen: 1,
            members: FxHashMap::default(),
            timers: BinaryHeap::new(),
            stats: AnalyticsStats::default(),
        }
    }

    /// The limits it checks.
    pub fn limits(&self) -> &AnalyticsLimits {
        &self.limits
    }

    /// Counters since the set was made.
    pub fn stats(&self) -> AnalyticsStats {
        self.stats
    }

    /// Number of distinct statements (computations).
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when there is no statement.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    fn time(&mut self, now: Instant) -> u64 {
        let t = now.saturating_duration_since(self.origin).as_nanos() as u64;
        self.t = self.t.max(t);
        self.t
    }

    /// Creates statement `name` from `text` (field names resolved with `field_id`, e.g. the
    /// store's `field_id`), or adds a reference to it. The same name with the same statement
    /// (equal canonical text) adds a reference (release it as often); another name with an
    /// identical statement shares its computation (the same id). Errors: `BAD_REQUEST` for a bad
    /// name, a statement that does not parse (`statement at 14: expected ...`) or a name taken by
    /// another statement; `LIMIT_EXCEEDED` past `max_statements`.
    pub fn create(
        &mut self,
        name: &str,
        text: &str,
        now: Instant,
        field_id: &mut dyn FnMut(&str) -> u32,
    ) -> Result<StatementId> {
        check_name(name)?;
        let st = parse(text, &self.limits).map_err(|e| e.into_engine_error("statement"))?;
        let canonical = st.to_string();
        if let Some(&slot) = self.by_name.get(name) {
            let entry = self.entry_mut(slot);
            if entry.text != canonical {
                return Err(EngineError::bad_request(
                    format!("statement name '{name}' is taken by another statement: {}", entry.text),
                    Some("name"),
                    None,
                ));
            }
            if let Some(n) = entry.names.iter_mut().find(|(n, _)| &**n == name) {
                n.1 += 1;
            }
            return Ok(entry.stmt.id);
        }
        if let Some(&slot) = self.by_text.get(&canonical) {
            self.by_name.insert(name.into(), slot);
            let entry = self.entry_mut(slot);
            entry.names.push((name.into(), 1));
            return Ok(entry.stmt.id);
        }
        if self.by_id.len() >= self.limits.max_statements {
            return Err(EngineError::LimitExceeded {
                message: format!("at most {} distinct statements are allowed", self.limits.max_statements),
            });
        }
        let t = self.time(now);
        let id = StatementId(self.next_id);
        self.next_id += 1;
        let entry = Entry {
            stmt: Stmt::compile(id, &st, t, field_id),
            text: canonical.clone(),
            source: st.source.clone(),
            names: vec![(name.into(), 1)],
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(entry);
                s
            }
            None => {
                self.slots.push(Some(entry));
                self.slots.len() as u32 - 1
            }
        };
        if let Source::Container(c) = &st.source {
            self.members.entry(c.as_str().into()).or_default();
        }
        self.by_text.insert(canonical, slot);
        self.by_name.insert(name.into(), slot);
        self.by_id.insert(id, slot);
        self.rebuild_streams();
        Ok(id)
    }

    /// Drops one reference to statement `name`; the computation goes with its last name.
    /// `NOT_FOUND` for an unknown name.
    pub fn release(&mut self, name: &str) -> Result<()> {
        let Some(&slot) = self.by_name.get(name) else {
            return Err(EngineError::NotFound {
                message: format!("no statement named '{name}'"),
            });
        };
        let entry = self.entry_mut(slot);
        if let Some(i) = entry.names.iter().position(|(n, _)| &**n == name) {
            entry.names[i].1 -= 1;
            if entry.names[i].1 == 0 {
                entry.names.remove(i);
                self.by_name.remove(name);
            }
        }
        if !self.entry_mut(slot).names.is_empty() {
            return Ok(());
        }
        if let Some(entry) = self.slots[slot as usize].take() {
            self.by_text.remove(&entry.text);
            self.by_id.remove(&entry.stmt.id);
            self.free.push(slot);
            if let Source::Container(c) = &entry.source {
                let still_read = self
                    .slots
                    .iter()
                    .flatten()
                    .any(|e| matches!(&e.source, Source::Container(d) if d == c));
                if !still_read {
                    self.members.remove(c.as_str());
                }
            }
        }
        self.rebuild_streams();
        Ok(())
    }

    fn entry_mut(&mut self, slot: u32) -> &mut Entry {
        self.slots[slot as usize]
            .as_mut()
            .expect("by_name and by_text point at live slots")
    }

    fn entry(&self, id: StatementId) -> Option<&Entry> {
        let slot = *self.by_id.get(&id)?;
        self.slots[slot as usize].as_ref()
    }

    /// The statement created under `name`.
    pub fn id_of(&self, name: &str) -> Option<StatementId> {
        let slot = *self.by_name.get(name)?;
        self.slots[slot as usize].as_ref().map(|e| e.stmt.id)
    }

    /// The names statement `id` was created under (each publishes the same results).
    pub fn names_of(&self, id: StatementId) -> impl Iterator<Item = &str> + '_ {
        self.entry(id)
            .into_iter()
            .flat_map(|e| e.names.iter().map(|(n, _)| &**n))
    }

    /// The canonical text of statement `id`.
    pub fn text_of(&self, id: StatementId) -> Option<&str> {
        self.entry(id).map(|e| e.text.as_str())
    }

    /// Number of keys statement `id` has results for.
    pub fn key_count(&self, id: StatementId) -> usize {
        self.entry(id).map_or(0, |e| e.stmt.key_count())
    }

    /// The `<key>` part of key `key`'s result subject `/STAT/<name>/<key>`: the source subject
    /// without its leading `/` (`MKT/S0AA`) when keyed per subject (`subject_of` names a subject
    /// id), else the `group by` value: a number as JavaScript prints it, `true`/`false`, a string
    /// with every byte outside `[A-Za-z0-9_.@:-]` written `%XX` (the empty string: `%`).
    pub fn key_text<'s>(&self, id: StatementId, key: u32, subject_of: impl Fn(u32) -> &'s str) -> Option<String> {
        let key = self.entry(id)?.stmt.key(key)?;
        Some(match key {
            KeyValue::Subject(s) => subject_of(*s).trim_start_matches('/').to_owned(),
            KeyValue::Num(x) => ryu_js::Buffer::new().format(*x).to_owned(),
            KeyValue::Bool(b) => b.to_string(),
            KeyValue::Str(s) if s.is_empty() => "%".to_owned(),
            KeyValue::Str(s) => {
                let mut t = String::with_capacity(s.len());
                for &b in s.as_bytes() {
                    if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'@' | b':' | b'-') {
                        t.push(b as char);
                    } else {
                        t.push_str(&format!("%{b:02X}"));
                    }
                }
                t
            }
        })
    }

    /// Appends key `key`'s current result to `out` (aggregates: as of the last event or expiry;
    /// a stream: the event waiting for its interval, else no fields). False for an unknown
    /// statement or key.
    pub fn current(&self, id: StatementId, key: u32, out: &mut Output) -> bool {
        self.entry(id).is_some_and(|e| e.stmt.current(key, out))
    }

    /// True when a statement reads container `container` (its members are kept by
    /// [`StatementSet::add_member`] / [`StatementSet::remove_member`]).
    pub fn reads_container(&self, container: &str) -> bool {
        self.members.contains_key(container)
    }

    /// Subject `id` joined container `container` (ignored unless a statement reads it).
    pub fn add_member(&mut self, container: &str, id: u32) {
        if let Some(m) = self.members.get_mut(container) {
            if m.insert(id) {
                self.forget_route(id);
            }
        }
    }

    /// Subject `id` left container `container`.
    pub fn remove_member(&mut self, container: &str, id: u32) {
        if let Some(m) = self.members.get_mut(container) {
            if m.remove(&id) {
                self.forget_route(id);
            }
        }
    }

    fn forget_route(&mut self, id: u32) {
        if let Some(r) = self.routes.get_mut(id as usize) {
            r.gen = 0;
        }
    }

    /// Regroups statements by stream and invalidates every cached route (create/release only).
    fn rebuild_streams(&mut self) {
        self.streams.clear();
        for (slot, entry) in self.slots.iter().enumerate() {
            let Some(entry) = entry else { continue };
            let slot = slot as u32;
            let si = match self.streams.iter().position(|s| s.source == entry.source) {
                Some(i) => i,
                None => {
                    self.streams.push(Stream {
                        source: entry.source.clone(),
                        scan: Vec::new(),
                        eq: Vec::new(),
                    });
                    self.streams.len() - 1
                }
            };
            let stream = &mut self.streams[si];
            let eq = entry.stmt.filter.conjuncts().into_iter().find_map(|c| match c {
                Conjunct::StrEq { field, text } => Some((field, text)),
                _ => None,
            });
            match eq {
                Some((field, text)) => {
                    let i = match stream.eq.iter().position(|(f, _)| *f == field) {
                        Some(i) => i,
                        None => {
                            stream.eq.push((field, FxHashMap::default()));
                            stream.eq.len() - 1
                        }
                    };
                    stream.eq[i].1.entry(text.into()).or_default().push(slot);
                }
                None => stream.scan.push(slot),
            }
        }
        self.gen = self.gen.wrapping_add(1).max(1);
    }

    /// Offers one record update: `subject_id`/`subject` name the record, `rec` is the record
    /// after the update (what the store's `apply` left), `now` the engine clock. Due timers run
    /// first; result rows are appended to `out`.
    pub fn on_record(&mut self, subject_id: u32, subject: &str, rec: &Record, now: Instant, out: &mut Output) {
        let t = self.time(now);
        self.run_timers(t, out);
        self.stats.events += 1;
        let at = subject_id as usize;
        if at >= self.routes.len() {
            self.routes.resize_with(at + 1, Route::default);
        }
        if self.routes[at].gen != self.gen {
            let streams: Box<[u32]> = (0..self.streams.len() as u32)
                .filter(|&s| match &self.streams[s as usize].source {
                    Source::Pattern(p) => p.matches(subject),
                    Source::Container(c) => self.members.get(c.as_str()).is_some_and(|m| m.contains(&subject_id)),
                })
                .collect();
            self.routes[at] = Route { gen: self.gen, streams };
        }
        let Self {
            routes,
            streams,
            slots,
            timers,
            limits,
            stats,
            ..
        } = self;
        for &si in routes[at].streams.iter() {
            let stream = &streams[si as usize];
            for &slot in &stream.scan {
                process(slots, timers, slot, subject_id, rec, t, limits, stats, out);
            }
            for (field, by_text) in &stream.eq {
                let Some(Value::Str(v)) = rec.get(*field) else { continue };
                let Some(list) = by_text.get(v.as_str()) else { continue };
                for &slot in list {
                    process(slots, timers, slot, subject_id, rec, t, limits, stats, out);
                }
            }
        }
    }

    /// Moves the engine clock to `now`: time windows drop what expired (their results change
    /// with no event) and `output last every` intervals that ended write their rows to `out`.
    /// Call it on the engine's timer tick; cost is O(statements due), not O(statements).
    pub fn advance(&mut self, now: Instant, out: &mut Output) {
        let t = self.time(now);
        self.run_timers(t, out);
    }

    /// The earliest time a timer is due (when `advance` next has work), if any.
    pub fn next_due(&self) -> Option<Instant> {
        self.timers
            .peek()
            .map(|Reverse((due, ..))| self.origin + std::time::Duration::from_nanos(*due))
    }

    fn run_timers(&mut self, t: u64, out: &mut Output) {
        while let Some(&Reverse((due, slot, id, kind))) = self.timers.peek() {
            if due > t {
                break;
            }
            self.timers.pop();
            let Some(entry) = self.slots[slot as usize].as_mut().filter(|e| e.stmt.id.0 == id) else {
                continue;
            };
            let st = &mut entry.stmt;
            if kind == EXPIRY && st.expiry_at == Some(due) {
                st.expiry_at = None;
                st.expire(t);
                if st.every_event() {
                    st.flush(&mut self.stats, out);
                }
            } else if kind == OUTPUT && st.output_at == Some(due) {
                st.output_at = None;
                st.flush(&mut self.stats, out);
            } else {
                continue;
            }
            schedule(&mut self.timers, slot, st, t);
        }
    }
}

/// One statement's turn with an event, then its timers.
#[allow(clippy::too_many_arguments, reason = "disjoint borrows of the set's fields")]
#[inline]
fn process(
    slots: &mut [Option<Entry>],
    timers: &mut BinaryHeap<Reverse<(u64, u32, u32, u8)>>,
    slot: u32,
    subject_id: u32,
    rec: &Record,
    t: u64,
    limits: &AnalyticsLimits,
    stats: &mut AnalyticsStats,
    out: &mut Output,
) {
    let Some(entry) = slots[slot as usize].as_mut() else {
        return;
    };
    let st = &mut entry.stmt;
    st.on_event(subject_id, rec, t, limits, stats, out);
    schedule(timers, slot, st, t);
}

/// Queues the statement's next expiry unless an earlier one is queued (a later one left queued
/// finds `expiry_at` changed and is skipped), and its next output when keys wait for one.
#[inline]
fn schedule(timers: &mut BinaryHeap<Reverse<(u64, u32, u32, u8)>>, slot: u32, st: &mut Stmt, t: u64) {
    if let Some(next) = st.next_expiry() {
        if st.expiry_at.is_none_or(|at| next < at) {
            st.expiry_at = Some(next);
            timers.push(Reverse((next, slot, st.id.0, EXPIRY)));
        }
    }
    if st.output_at.is_none() {
        if let Some(next) = st.next_output(t) {
            st.output_at = Some(next);
            timers.push(Reverse((next, slot, st.id.0, OUTPUT)));
        }
    }
}

/// The subject of a result record: `/STAT/<name>/<key>` (`key` from [`StatementSet::key_text`]).
pub fn result_subject(name: &str, key: &str) -> String {
    format!("/STAT/{name}/{key}")
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'@' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(EngineError::bad_request(
            format!(
                "statement name {name:?} must be 1..{MAX_NAME_BYTES} characters [A-Za-z0-9_.@:-] (it is a subject segment of /STAT/<name>/<key>)"
            ),
            Some("name"),
            None,
        ))
    }
}
