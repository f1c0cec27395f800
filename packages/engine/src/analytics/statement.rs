//! A compiled statement: field names resolved to field ids, its keys (each with a window), the
//! time queue of its time windows, and how it writes results.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash, Hasher};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::parser::{Agg, ItemKind, KeySpec, OutputSpec, Statement, WindowSpec};
use super::set::AnalyticsStats;
use super::window::{ColNeeds, Kind, Window};
use super::{AnalyticsLimits, Output, StatementId};
use crate::filter::{Filter, Row};
use crate::store::Record;
use crate::value::{SmallStr, Value};

/// The value a statement keys a result by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyValue {
    /// The source record's subject id (`group by` absent).
    Subject(u32),
    /// A string field value.
    Str(SmallStr),
    /// A number (or timestamp, as epoch ms) field value; -0 is stored as 0.
    Num(f64),
    /// A bool field value.
    Bool(bool),
}

/// A key as read from an event, before it is looked up (no copy of a string).
#[derive(Clone, Copy)]
enum KeyRef<'a> {
    Subject(u32),
    Str(&'a str),
    Num(f64),
    Bool(bool),
}

impl KeyRef<'_> {
    fn hash(&self) -> u64 {
        let mut h = FxBuildHasher.build_hasher();
        match *self {
            KeyRef::Subject(id) => (0u8, id).hash(&mut h),
            KeyRef::Str(s) => (1u8, s).hash(&mut h),
            KeyRef::Num(x) => (2u8, x.to_bits()).hash(&mut h),
            KeyRef::Bool(b) => (3u8, b).hash(&mut h),
        }
        h.finish()
    }

    fn is(&self, k: &KeyValue) -> bool {
        match (*self, k) {
            (KeyRef::Subject(a), KeyValue::Subject(b)) => a == *b,
            (KeyRef::Str(a), KeyValue::Str(b)) => a == b.as_str(),
            (KeyRef::Num(a), KeyValue::Num(b)) => a.to_bits() == b.to_bits(),
            (KeyRef::Bool(a), KeyValue::Bool(b)) => a == *b,
            _ => false,
        }
    }

    fn to_owned(self) -> KeyValue {
        match self {
            KeyRef::Subject(id) => KeyValue::Subject(id),
            KeyRef::Str(s) => KeyValue::Str(s.into()),
            KeyRef::Num(x) => KeyValue::Num(x),
            KeyRef::Bool(b) => KeyValue::Bool(b),
        }
    }
}

impl KeyValue {
    fn as_ref(&self) -> KeyRef<'_> {
        match self {
            KeyValue::Subject(id) => KeyRef::Subject(*id),
            KeyValue::Str(s) => KeyRef::Str(s),
            KeyValue::Num(x) => KeyRef::Num(*x),
            KeyValue::Bool(b) => KeyRef::Bool(*b),
        }
    }
}

/// How one result field is computed. Column and pair numbers index the statement's columns.
#[derive(Debug, Clone, Copy)]
enum OutKind {
    CountAll,
    Count(usize),
    Sum(usize),
    Avg(usize),
    Min(usize),
    Max(usize),
    First(usize),
    Last(usize),
    Stddev(usize),
    Vwap(usize),
    /// A field of the event (projection), by field id.
    Field(u32),
}

/// One key of a statement.
#[derive(Debug)]
pub(crate) struct KeyState {
    pub key: KeyValue,
    /// Aggregating statements only.
    win: Option<Window>,
    /// Listed in the statement's `dirty` list.
    dirty: bool,
    /// Streams with `output last every`: the key's latest event's result fields.
    last: Vec<(u32, Option<Value>)>,
}

/// A compiled statement (one computation, shared by every name it was created under).
#[derive(Debug)]
pub(crate) struct Stmt {
    pub id: StatementId,
    pub filter: Filter,
    key_field: Option<u32>,
    /// Field ids of the numeric columns the aggregates read.
    columns: Box<[u32]>,
    needs: Box<[ColNeeds]>,
    pairs: Box<[(usize, usize)]>,
    /// (result field id, how) per select item; empty for `select *`.
    outs: Box<[(u32, OutKind)]>,
    stream: bool,
    kind: Kind,
    /// Time window span, ns (0 otherwise).
    span: u64,
    /// Time windows: (arrival ns, key) of every event held, oldest first.
    queue: VecDeque<(u64, u32)>,
    /// `output last every`: interval ns (0 = every event) and the statement's creation time.
    every: u64,
    created: u64,
    keys: Vec<KeyState>,
    index: HashTable<u32>,
    /// Keys changed since their last result, in the order they changed.
    dirty: Vec<u32>,
    /// Column values of the event being added (reused).
    scratch: Vec<f64>,
    /// Scheduled timers (ns), as pushed on the set's timer heap.
    pub expiry_at: Option<u64>,
    pub output_at: Option<u64>,
}

impl Stmt {
    /// Compiles `st`, resolving field names with `field_id`; `now` (ns) aligns `output last every`.
    pub fn compile(id: StatementId, st: &Statement, now: u64, field_id: &mut dyn FnMut(&str) -> u32) -> Stmt {
        let filter = Filter::compile(&st.filter, field_id);
        let mut columns: Vec<u32> = Vec::new();
        let mut needs: Vec<ColNeeds> = Vec::new();
        let mut col = |name: &str, needs: &mut Vec<ColNeeds>, field_id: &mut dyn FnMut(&str) -> u32| {
            let f = field_id(name);
            match columns.iter().position(|&c| c == f) {
                Some(i) => i,
                None => {
                    columns.push(f);
                    needs.push(ColNeeds::default());
                    columns.len() - 1
                }
            }
        };
        let mut pairs = Vec::new();
        let mut outs = Vec::new();
        for item in &st.items {
            let kind = match &item.kind {
                ItemKind::Field(f) => OutKind::Field(field_id(f)),
                ItemKind::Agg(a) => match a {
                    Agg::CountAll => OutKind::CountAll,
                    Agg::Count(f) => OutKind::Count(col(f, &mut needs, field_id)),
                    Agg::Sum(f) => OutKind::Sum(col(f, &mut needs, field_id)),
                    Agg::Avg(f) => OutKind::Avg(col(f, &mut needs, field_id)),
                    Agg::Min(f) => {
                        let c = col(f, &mut needs, field_id);
                        needs[c].min = true;
                        OutKind::Min(c)
                    }
                    Agg::Max(f) => {
                        let c = col(f, &mut needs, field_id);
                        needs[c].max = true;
                        OutKind::Max(c)
                    }
                    Agg::First(f) => OutKind::First(col(f, &mut needs, field_id)),
                    Agg::Last(f) => OutKind::Last(col(f, &mut needs, field_id)),
                    Agg::Stddev(f) => {
                        let c = col(f, &mut needs, field_id);
                        needs[c].stddev = true;
                        OutKind::Stddev(c)
                    }
                    Agg::Vwap(p, v) => {
                        let pair = (col(p, &mut needs, field_id), col(v, &mut needs, field_id));
                        let i = pairs.iter().position(|&q| q == pair).unwrap_or_else(|| {
                            pairs.push(pair);
                            pairs.len() - 1
                        });
                        OutKind::Vwap(i)
                    }
                },
            };
            outs.push((field_id(&item.alias), kind));
        }
        let (kind, span) = match st.window {
            WindowSpec::None => (Kind::Cumulative, 0),
            WindowSpec::Length(n) => (Kind::Length(n as usize), 0),
            WindowSpec::Time(d) => (Kind::Time, d.as_nanos() as u64),
        };
        let every = match st.output {
            OutputSpec::EveryEvent => 0,
            OutputSpec::LastEvery(d) => d.as_nanos() as u64,
        };
        let width = columns.len();
        Stmt {
            id,
            filter,
            key_field: match &st.key {
                KeySpec::Subject => None,
                KeySpec::Field(f) => Some(field_id(f)),
            },
            columns: columns.into(),
            needs: needs.into(),
            pairs: pairs.into(),
            outs: outs.into(),
            stream: st.is_stream(),
            kind,
            span,
            queue: VecDeque::new(),
            every,
            created: now,
            keys: Vec::new(),
            index: HashTable::new(),
            dirty: Vec::new(),
            scratch: vec![f64::NAN; width],
            expiry_at: None,
            output_at: None,
        }
    }

    /// Number of keys.
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Key `k`.
    pub fn key(&self, k: u32) -> Option<&KeyValue> {
        self.keys.get(k as usize).map(|s| &s.key)
    }

    /// Processes one event (the record `rec` of subject `subject` after an update) at `t` ns:
    /// filter, key, window, result.
    #[inline]
    pub fn on_event(
        &mut self,
        subject: u32,
        rec: &Record,
        t: u64,
        limits: &AnalyticsLimits,
        stats: &mut AnalyticsStats,
        out: &mut Output,
    ) {
        if !self.filter.matches(rec) {
            return;
        }
        stats.events_matched += 1;
        if self.span > 0 {
            self.expire(t);
        }
        let key = match self.key_field {
            None => KeyRef::Subject(subject),
            Some(f) => match rec.get(f) {
                Some(Value::Str(s)) => KeyRef::Str(s),
                Some(Value::Number(x)) => KeyRef::Num(if *x == 0.0 { 0.0 } else { *x }),
                Some(Value::Timestamp(ms)) => KeyRef::Num(*ms as f64),
                Some(Value::Bool(b)) => KeyRef::Bool(*b),
                None => {
                    stats.events_without_key += 1;
                    return;
                }
            },
        };
        let Some(k) = self.key_index(key, limits, stats) else {
            return;
        };
        let state = &mut self.keys[k as usize];
        if self.stream {
            if self.every == 0 {
                let start = out.begin_row();
                write_event(&self.outs, rec, &mut out.fields);
                out.end_row(self.id, k, start);
                stats.rows += 1;
            } else {
                state.last.clear();
                write_event(&self.outs, rec, &mut state.last);
                mark(&mut self.dirty, state, k);
            }
            return;
        }
        for (x, &f) in self.scratch.iter_mut().zip(self.columns.iter()) {
            *x = match rec.get(f) {
                Some(Value::Number(n)) => *n,
                Some(Value::Timestamp(ms)) => *ms as f64,
                _ => f64::NAN,
            };
        }
        if let Some(w) = &mut state.win {
            w.push(&self.scratch);
        }
        mark(&mut self.dirty, state, k);
        if self.span > 0 {
            self.queue.push_back((t, k));
            if self.queue.len() > limits.max_time_events {
                if let Some((_, old)) = self.queue.pop_front() {
                    self.evict_one(old);
                    stats.evicted_early += 1;
                }
            }
        }
        if self.every == 0 {
            self.flush(stats, out);
        }
    }

    /// The key's index, adding it (and its window) when new; `None` past `max_keys`.
    fn key_index(&mut self, key: KeyRef<'_>, limits: &AnalyticsLimits, stats: &mut AnalyticsStats) -> Option<u32> {
        let hash = key.hash();
        let keys = &self.keys;
        if let Some(&k) = self.index.find(hash, |&k| key.is(&keys[k as usize].key)) {
            return Some(k);
        }
        if self.keys.len() >= limits.max_keys {
            stats.keys_refused += 1;
            return None;
        }
        let k = self.keys.len() as u32;
        self.keys.push(KeyState {
            key: key.to_owned(),
            win: (!self.stream).then(|| Window::new(self.kind, &self.needs, &self.pairs)),
            dirty: false,
            last: Vec::new(),
        });
        let keys = &self.keys;
        self.index
            .insert_unique(hash, k, |&k| keys[k as usize].key.as_ref().hash());
        Some(k)
    }

    /// Time windows: drops every event that arrived at or before `t - span`.
    pub fn expire(&mut self, t: u64) {
        while let Some(&(at, k)) = self.queue.front() {
            if at.saturating_add(self.span) > t {
                break;
            }
            self.queue.pop_front();
            self.evict_one(k);
        }
    }

    fn evict_one(&mut self, k: u32) {
        let state = &mut self.keys[k as usize];
        if let Some(w) = &mut state.win {
            w.evict();
        }
        mark(&mut self.dirty, state, k);
    }

    /// When the oldest held event expires (ns), for time windows holding events.
    pub fn next_expiry(&self) -> Option<u64> {
        self.queue.front().map(|&(at, _)| at.saturating_add(self.span))
    }

    /// `output last every`: the end of the interval `t` falls in, when keys are waiting.
    pub fn next_output(&self, t: u64) -> Option<u64> {
        if self.every == 0 || self.dirty.is_empty() {
            return None;
        }
        let since = t.saturating_sub(self.created);
        Some(self.created + (since / self.every + 1) * self.every)
    }

    /// True for `output every event`.
    pub fn every_event(&self) -> bool {
        self.every == 0
    }

    /// Writes a row for every changed key, oldest change first.
    pub fn flush(&mut self, stats: &mut AnalyticsStats, out: &mut Output) {
        for i in 0..self.dirty.len() {
            let k = self.dirty[i];
            let state = &mut self.keys[k as usize];
            state.dirty = false;
            let start = out.begin_row();
            if self.stream {
                out.fields.append(&mut state.last);
            } else if let Some(w) = &state.win {
                write_aggs(&self.outs, w, &mut out.fields);
            }
            out.end_row(self.id, k, start);
            stats.rows += 1;
        }
        self.dirty.clear();
    }

    /// Appends key `k`'s current result (the last event's fields for a stream with
    /// `output last every` still waiting, else nothing for a stream). False for an unknown key.
    pub fn current(&self, k: u32, out: &mut Output) -> bool {
        let Some(state) = self.keys.get(k as usize) else {
            return false;
        };
        let start = out.begin_row();
        match &state.win {
            Some(w) => write_aggs(&self.outs, w, &mut out.fields),
            None => out.fields.extend(state.last.iter().cloned()),
        }
        out.end_row(self.id, k, start);
        true
    }
}

#[inline]
fn mark(dirty: &mut Vec<u32>, state: &mut KeyState, k: u32) {
    if !state.dirty {
        state.dirty = true;
        dirty.push(k);
    }
}

/// The event's result fields: every present field for `select *`, else the selected ones.
fn write_event(outs: &[(u32, OutKind)], rec: &Record, to: &mut Vec<(u32, Option<Value>)>) {
    if outs.is_empty() {
        to.extend(
            rec.slots
                .iter()
                .filter(|s| s.value.is_some())
                .map(|s| (s.name, s.value.clone())),
        );
        return;
    }
    for &(alias, kind) in outs {
        if let OutKind::Field(f) = kind {
            to.push((alias, rec.get(f).cloned()));
        }
    }
}

/// The aggregates of window `w` as result fields (a non-finite result, from overflow, is none).
#[inline]
fn write_aggs(outs: &[(u32, OutKind)], w: &Window, to: &mut Vec<(u32, Option<Value>)>) {
    for &(alias, kind) in outs {
        let v = match kind {
            OutKind::CountAll => Some(w.len() as f64),
            OutKind::Count(c) => Some(w.count(c) as f64),
            OutKind::Sum(c) => w.sum(c),
            OutKind::Avg(c) => w.avg(c),
            OutKind::Min(c) => w.min(c),
            OutKind::Max(c) => w.max(c),
            OutKind::First(c) => w.first(c),
            OutKind::Last(c) => w.last(c),
            OutKind::Stddev(c) => w.stddev(c),
            OutKind::Vwap(i) => w.vwap(i),
            OutKind::Field(_) => None,
        };
        to.push((alias, v.filter(|x| x.is_finite()).map(Value::Number)));
    }
}
