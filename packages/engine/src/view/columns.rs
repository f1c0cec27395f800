//! Column copies of the fields views read, per container, indexed by member slot: what makes a
//! new view's build a sequential scan instead of a walk over scattered records.
//!
//! Building a view used to evaluate its filter against every member's record: 64,000 records
//! spread over the heap cost ~2-3 cache misses each (record, field slots, string), ~6 ms per
//! build, which at 166.7 unique requests/s alone saturated the engine thread. A column holds one
//! [`Cell`] per member slot, contiguous; strings are interned per container (refcounted, so
//! changing text values do not accumulate), so a low-cardinality text field (sector, currency)
//! reads from a handful of hot strings. Columns exist only for fields some view of the container
//! reads (reference-counted by the views), are filled once when the first such view opens, and
//! follow every insert, remove, clear and record update of the container.

use rustc_hash::FxHashMap;

use super::key::KeyBuf;
use super::{Records, ScanRow};
use crate::filter::{Conjunct, Filter, Row};
use crate::value::Value;

/// One member's value of a column's field.
#[derive(Debug, Clone, Default)]
enum Cell {
    /// Field absent (or the record not published yet).
    #[default]
    Missing,
    /// A number, timestamp or bool.
    Plain(Value),
    /// A string: index into the container's interned strings.
    Sym(u32),
}

/// `Column::syms` entry of a cell that holds no string.
const NO_SYM: u32 = u32::MAX;

#[derive(Debug, Default)]
struct Column {
    /// Views reading the field.
    refs: u32,
    cells: Vec<Cell>,
    /// Typed copies of `cells` for scans, one entry per cell (or empty until the column first
    /// holds a number, resp. a string): the cell's number as filters read it (a timestamp as
    /// its f64; NaN for any other cell, which fails every numeric test as a missing field does),
    /// and the cell's string symbol (`NO_SYM` for any other cell). A scan then runs a tight loop
    /// over a flat `f64` or `u32` slice instead of matching a 16-byte enum per member.
    nums: Vec<f64>,
    syms: Vec<u32>,
}

impl Column {
    /// Stores `cell` in `slot` (growing the column) and returns the cell it replaced.
    fn put(&mut self, slot: usize, cell: Cell) -> Cell {
        let num = match &cell {
            Cell::Plain(Value::Number(x)) => Some(*x),
            Cell::Plain(Value::Timestamp(t)) => Some(*t as f64),
            _ => None,
        };
        let sym = match cell {
            Cell::Sym(s) => Some(s),
            _ => None,
        };
        if self.cells.len() <= slot {
            let n = slot + 1;
            self.cells.resize(n, Cell::Missing);
            if !self.nums.is_empty() {
                self.nums.resize(n, f64::NAN);
            }
            if !self.syms.is_empty() {
                self.syms.resize(n, NO_SYM);
            }
        }
        if num.is_some() && self.nums.is_empty() {
            self.nums = vec![f64::NAN; self.cells.len()];
        }
        if sym.is_some() && self.syms.is_empty() {
            self.syms = vec![NO_SYM; self.cells.len()];
        }
        if !self.nums.is_empty() {
            self.nums[slot] = num.unwrap_or(f64::NAN);
        }
        if !self.syms.is_empty() {
            self.syms[slot] = sym.unwrap_or(NO_SYM);
        }
        std::mem::replace(&mut self.cells[slot], cell)
    }

    /// Empties the column (it stays, for the views reading it).
    fn clear(&mut self) {
        self.cells.clear();
        self.nums.clear();
        self.syms.clear();
    }
}

/// The columns of one container.
#[derive(Debug, Default)]
pub(super) struct Columns {
    /// Member slot -> member id (`u32::MAX` = free slot).
    ids: Vec<u32>,
    cols: FxHashMap<u32, Column>,
    /// Interned strings: symbol -> value (`Value::Str`), its reference count, and the reverse map.
    strs: Vec<Value>,
    str_refs: Vec<u32>,
    by_str: FxHashMap<Box<str>, u32>,
    free_syms: Vec<u32>,
    /// Fields whose column no view reads now, longest idle first.
    idle: Vec<u32>,
}

/// Columns no view reads kept per container (for the next view reading their field).
pub(super) const MAX_IDLE_COLUMNS: usize = 8;

/// A member seen through the columns (fields without a column read as missing).
#[derive(Clone, Copy)]
struct ColRow<'a> {
    cols: &'a [(u32, &'a [Cell])],
    strs: &'a [Value],
    slot: usize,
}

impl Row for ColRow<'_> {
    #[inline]
    fn get(&self, field: u32) -> Option<&Value> {
        // A view reads a handful of fields: a linear scan beats a hash lookup.
        let (_, cells) = self.cols.iter().find(|(f, _)| *f == field)?;
        match cells.get(self.slot)? {
            Cell::Missing => None,
            Cell::Plain(v) => Some(v),
            Cell::Sym(s) => self.strs.get(*s as usize),
        }
    }
}

/// The slots of `sel` whose entry of the typed column `col` passes `test`, or, when `sel` is
/// `None`, every slot of `col` that passes (a test that only a member's value can pass, so free
/// slots never do). The full pass tests 32 entries at a time into a bit mask (the compiler turns
/// it into vector compares) and visits only the set bits.
#[inline]
fn keep<T: Copy>(sel: Option<Vec<u32>>, col: &[T], test: impl Fn(T) -> bool) -> Vec<u32> {
    const LANES: usize = 32;
    match sel {
        None => {
            let mut out = Vec::new();
            let chunks = col.chunks_exact(LANES);
            let tail = chunks.remainder();
            for (c, chunk) in chunks.enumerate() {
                let mut m = 0u32;
                for (j, &x) in chunk.iter().enumerate() {
                    m |= (test(x) as u32) << j;
                }
                while m != 0 {
                    out.push((c * LANES) as u32 + m.trailing_zeros());
                    m &= m - 1;
                }
            }
            let base = col.len() - tail.len();
            out.extend(
                tail.iter()
                    .enumerate()
                    .filter(|&(_, &x)| test(x))
                    .map(|(j, _)| (base + j) as u32),
            );
            out
        }
        Some(mut v) => {
            v.retain(|&s| col.get(s as usize).is_some_and(|&x| test(x)));
            v
        }
    }
}

impl Columns {
    /// True when no column exists.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.cols.is_empty()
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&sym) = self.by_str.get(s) {
            self.str_refs[sym as usize] += 1;
            return sym;
        }
        let v = Value::Str(s.into());
        let sym = match self.free_syms.pop() {
            Some(sym) => {
                self.strs[sym as usize] = v;
                self.str_refs[sym as usize] = 1;
                sym
            }
            None => {
                self.strs.push(v);
                self.str_refs.push(1);
                self.strs.len() as u32 - 1
            }
        };
        self.by_str.insert(s.into(), sym);
        sym
    }

    fn unref(&mut self, cell: &Cell) {
        if let Cell::Sym(sym) = *cell {
            let r = &mut self.str_refs[sym as usize];
            *r -= 1;
            if *r == 0 {
                if let Value::Str(s) = std::mem::replace(&mut self.strs[sym as usize], Value::Bool(false)) {
                    self.by_str.remove(s.as_str());
                }
                self.free_syms.push(sym);
            }
        }
    }

    fn cell_of(&mut self, v: Option<&Value>) -> Cell {
        match v {
            None => Cell::Missing,
            Some(Value::Str(s)) => Cell::Sym(self.intern(s)),
            Some(v) => Cell::Plain(v.clone()),
        }
    }

    /// Sets field `field`'s cell of `slot` from `value`.
    fn set(&mut self, field: u32, slot: usize, value: Option<&Value>) {
        if !self.cols.contains_key(&field) {
            return;
        }
        let cell = self.cell_of(value);
        let Some(col) = self.cols.get_mut(&field) else {
            return self.unref(&cell);
        };
        let old = col.put(slot, cell);
        self.unref(&old);
    }

    /// A view reading `fields` opened: takes a reference on each field's column, creating and
    /// filling missing ones from the container's members (one pass over their records).
    pub(super) fn acquire<R: Records + ?Sized>(&mut self, fields: &[u32], records: &R) {
        for &f in fields {
            if let Some(col) = self.cols.get_mut(&f) {
                col.refs += 1;
                self.idle.retain(|&x| x != f);
                continue;
            }
            self.cols.insert(
                f,
                Column {
                    refs: 1,
                    ..Column::default()
                },
            );
            let ids = std::mem::take(&mut self.ids);
            for (slot, &id) in ids.iter().enumerate() {
                if id != u32::MAX {
                    self.set(f, slot, records.row(id).and_then(|r| r.get(f)));
                }
            }
            self.ids = ids;
        }
    }

    /// A view reading `fields` went away. A column no view reads any more stays (filled and
    /// maintained) for the next view that reads its field: filling one costs a pass over every
    /// member's record (~80 ms for three fields of 64,000 records), which a finder whose
    /// requests come and go must not pay per request. At most [`MAX_IDLE_COLUMNS`] such columns
    /// are kept per container; past that the longest idle is dropped.
    pub(super) fn release(&mut self, fields: &[u32]) {
        for &f in fields {
            let Some(col) = self.cols.get_mut(&f) else { continue };
            col.refs = col.refs.saturating_sub(1);
            if col.refs == 0 {
                self.idle.retain(|&x| x != f);
                self.idle.push(f);
            }
        }
        while self.idle.len() > MAX_IDLE_COLUMNS {
            let f = self.idle.remove(0);
            if let Some(col) = self.cols.remove(&f) {
                for c in &col.cells {
                    self.unref(c);
                }
            }
        }
    }

    /// Member `id` now holds `slot`: records it and fills its cells.
    pub(super) fn inserted<R: Records + ?Sized>(&mut self, id: u32, slot: u32, records: &R) {
        let slot = slot as usize;
        if self.ids.len() <= slot {
            self.ids.resize(slot + 1, u32::MAX);
        }
        self.ids[slot] = id;
        if self.cols.is_empty() {
            return;
        }
        let row = records.row(id);
        let fields: Vec<u32> = self.cols.keys().copied().collect();
        for f in fields {
            self.set(f, slot, row.and_then(|r| r.get(f)));
        }
    }

    /// The member in `slot` left: frees its cells.
    pub(super) fn removed(&mut self, slot: u32) {
        let slot = slot as usize;
        if let Some(id) = self.ids.get_mut(slot) {
            *id = u32::MAX;
        }
        let fields: Vec<u32> = self.cols.keys().copied().collect();
        for f in fields {
            self.set(f, slot, None);
        }
    }

    /// Every member left (columns stay, empty).
    pub(super) fn cleared(&mut self) {
        self.ids.clear();
        for col in self.cols.values_mut() {
            col.clear();
        }
        self.strs.clear();
        self.str_refs.clear();
        self.by_str.clear();
        self.free_syms.clear();
    }

    /// Member in `slot` (record `id`) changed fields `changed` (sorted): refreshes their cells
    /// and appends to `differ` the fields whose value really changed, plus any field without a
    /// column (its old value is unknown here). A source republishing an image reports every
    /// field as changed; static fields that kept their value must not re-evaluate every view.
    pub(super) fn updated<R: Records + ?Sized>(
        &mut self,
        slot: u32,
        id: u32,
        changed: &[u32],
        records: &R,
        differ: &mut Vec<u32>,
    ) {
        let row = records.row(id);
        for &f in changed {
            let new = row.and_then(|r| r.get(f));
            let same = match self.cols.get(&f).and_then(|c| c.cells.get(slot as usize)) {
                None if !self.cols.contains_key(&f) => false,
                None | Some(Cell::Missing) => new.is_none(),
                Some(Cell::Plain(v)) => new == Some(v),
                Some(Cell::Sym(s)) => match (new, self.strs.get(*s as usize)) {
                    (Some(Value::Str(x)), Some(Value::Str(old))) => x == old,
                    _ => false,
                },
            };
            if same {
                continue;
            }
            differ.push(f);
            if self.cols.contains_key(&f) {
                self.set(f, slot as usize, new);
            }
        }
    }

    /// The column of `field`, if any view reads it.
    fn column(&self, field: u32) -> Option<&Column> {
        self.cols.get(&field)
    }

    /// Members passing `filter`, as `(id, slot, sort key)` with the key read for `sort_fields`
    /// (one `Option<Value>` per key field, in key order), in slot order. Column at a time: the
    /// operands of the filter's top-level `and` run one after the other, each over the members
    /// the previous ones kept, cheapest first: a string equality compares `u32` symbols of a
    /// flat slice (text no member holds matches nothing), a numeric test compares a flat `f64`
    /// slice against one closed interval, anything else evaluates the compiled predicate per
    /// row. Sort keys are read only for the rows that pass. O(members) for the first operand,
    /// O(kept) for the others; no allocation scales with the container beyond the kept slots.
    pub(super) fn scan(&self, filter: &Filter, sort_fields: &[u32]) -> Vec<ScanRow> {
        let mut conj = filter.conjuncts();
        conj.sort_by_key(|c| match c {
            Conjunct::StrEq { .. } => 0,
            Conjunct::Numeric { node, .. } if node.num_range().is_some() => 1,
            Conjunct::Numeric { .. } => 2,
            Conjunct::Other(_) => 3,
        });
        let mut sel: Option<Vec<u32>> = None; // None = every live slot
        for c in &conj {
            let kept = match *c {
                // Interned: equal text is an equal symbol.
                Conjunct::StrEq { field, text } => {
                    let syms = self.column(field).map_or(&[][..], |c| c.syms.as_slice());
                    match self.by_str.get(text) {
                        Some(&sym) if !syms.is_empty() => keep(sel, syms, |x| x == sym),
                        _ => Vec::new(),
                    }
                }
                Conjunct::Numeric { field, node } => {
                    let col = self.column(field);
                    let nums = col.map_or(&[][..], |c| c.nums.as_slice());
                    match node.num_range() {
                        // NaN (no number in the cell) fails both comparisons.
                        Some((lo, hi)) if !nums.is_empty() => keep(sel, nums, |x| x >= lo && x <= hi),
                        Some(_) => Vec::new(),
                        None => {
                            let cells = col.map_or(&[][..], |c| c.cells.as_slice());
                            let missing = node.test(None);
                            let test = |s: usize| match cells.get(s) {
                                Some(Cell::Plain(v)) => node.test(Some(v)),
                                Some(Cell::Sym(x)) => node.test(self.strs.get(*x as usize)),
                                _ => missing,
                            };
                            self.narrow(sel, test)
                        }
                    }
                }
                Conjunct::Other(p) => {
                    let cols: Vec<(u32, &[Cell])> = filter
                        .fields()
                        .iter()
                        .map(|&f| (f, self.column(f).map_or(&[][..], |c| c.cells.as_slice())))
                        .collect();
                    self.narrow(sel, |s| {
                        p.matches(&ColRow {
                            cols: &cols,
                            strs: &self.strs,
                            slot: s,
                        })
                    })
                }
            };
            if kept.is_empty() {
                return Vec::new();
            }
            sel = Some(kept);
        }
        let sel = sel.unwrap_or_else(|| self.live_slots().collect());
        // Per sort field, its cells and its string symbols: a string cell is read through the
        // 4-byte symbol column (a quarter of the cache lines of the 16-byte cells), the cell
        // only when the slot holds no string.
        let keys: Vec<(&[Cell], &[u32])> = sort_fields
            .iter()
            .map(|&f| {
                self.column(f)
                    .map_or((&[][..], &[][..]), |c| (c.cells.as_slice(), c.syms.as_slice()))
            })
            .collect();
        if keys.is_empty() {
            return sel
                .into_iter()
                .map(|s| (self.ids[s as usize], s, KeyBuf::Empty))
                .collect();
        }
        // Staged: the kept rows' cells, interned strings, string headers and string bytes sit
        // far apart in memory; each stage's loads (one per row) are independent of each other,
        // so many are in flight at once instead of one chain of four misses per row.
        let ids: Vec<u32> = sel.iter().map(|&s| self.ids[s as usize]).collect();
        let vals: Vec<Option<&Value>> = sel
            .iter()
            .flat_map(|&slot| {
                keys.iter().map(move |&(cells, syms)| match syms.get(slot as usize) {
                    Some(&x) if x != NO_SYM => self.strs.get(x as usize),
                    _ => match cells.get(slot as usize) {
                        Some(Cell::Plain(v)) => Some(v),
                        Some(Cell::Sym(x)) => self.strs.get(*x as usize),
                        _ => None,
                    },
                })
            })
            .collect();
        let texts: Vec<&[u8]> = vals
            .iter()
            .filter_map(|v| match v {
                Some(Value::Str(s)) => Some(s.as_bytes()),
                _ => None,
            })
            .collect();
        std::hint::black_box(texts.iter().fold(0u8, |a, t| a ^ t.first().copied().unwrap_or(0)));
        sel.iter()
            .zip(ids)
            .zip(vals.chunks_exact(keys.len()))
            .map(|((&slot, id), vals)| (id, slot, vals.iter().map(|v| v.cloned()).collect()))
            .collect()
    }

    /// The slots of `sel` (every live slot when `None`) that pass `test`.
    fn narrow(&self, sel: Option<Vec<u32>>, mut test: impl FnMut(usize) -> bool) -> Vec<u32> {
        match sel {
            None => self.live_slots().filter(|&s| test(s as usize)).collect(),
            Some(mut v) => {
                v.retain(|&s| test(s as usize));
                v
            }
        }
    }

    fn live_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.ids
            .iter()
            .enumerate()
            .filter(|(_, &id)| id != u32::MAX)
            .map(|(s, _)| s as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::Container;
    use crate::filter::{parse, FilterLimits};

    struct R(Vec<(u32, Value)>);
    impl Row for R {
        fn get(&self, f: u32) -> Option<&Value> {
            self.0.iter().find(|x| x.0 == f).map(|x| &x.1)
        }
    }
    impl Records for Vec<R> {
        type Row = R;
        fn row(&self, id: u32) -> Option<&R> {
            self.get(id as usize)
        }
    }

    #[test]
    fn follows_inserts_updates_removes_and_frees_strings() {
        let s = |x: &str| Value::Str(x.into());
        let mut recs: Vec<R> = vec![
            R(vec![(1, s("a")), (2, Value::Number(1.0))]),
            R(vec![(1, s("b")), (2, Value::Number(2.0))]),
            R(vec![(1, s("a"))]),
        ];
        let mut container = Container::new();
        let mut cols = Columns::default();
        for id in 0..3 {
            container.push(id).unwrap();
            cols.inserted(id, container.slot_of(id).unwrap(), &recs);
        }
        cols.acquire(&[1, 2], &recs);
        let f = Filter::compile(&parse("k = 'a'", &FilterLimits::default()).unwrap(), &mut |_| 1);
        let ids = |v: Vec<ScanRow>| v.into_iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(ids(cols.scan(&f, &[2])), [0, 2]);
        assert_eq!(cols.scan(&f, &[2])[0].2[..], [Some(Value::Number(1.0))]);
        assert_eq!(cols.by_str.len(), 2);
        recs[0].0[0].1 = s("c");
        let mut differ = Vec::new();
        cols.updated(container.slot_of(0).unwrap(), 0, &[1, 2, 7], &recs, &mut differ);
        assert_eq!(differ, [1, 7], "2 kept its value; 7 has no column");
        assert_eq!(ids(cols.scan(&f, &[])), [2]);
        cols.removed(container.slot_of(2).unwrap());
        container.remove(2);
        assert!(cols.scan(&f, &[]).is_empty());
        // "a" has no holder left: its symbol is free for reuse.
        assert_eq!(cols.by_str.len(), 2);
        assert!(!cols.by_str.contains_key("a"));
        // Released columns stay for the next view (no refill), up to MAX_IDLE_COLUMNS idle ones.
        cols.release(&[1, 2]);
        assert!(!cols.is_empty());
        cols.acquire(&[1], &recs);
        assert_eq!(ids(cols.scan(&f, &[])), Vec::<u32>::new());
        cols.release(&[1]);
        let many: Vec<u32> = (10..10 + MAX_IDLE_COLUMNS as u32).collect();
        cols.acquire(&many, &recs);
        cols.release(&many);
        assert_eq!(cols.cols.len(), MAX_IDLE_COLUMNS);
        assert!(
            !cols.cols.contains_key(&1) && !cols.cols.contains_key(&2),
            "the longest idle went first"
        );
        assert!(cols.by_str.is_empty(), "their strings are freed");
    }

    #[test]
    fn keep_finds_every_passing_slot_at_lane_edges() {
        for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 100] {
            let col: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
            let want: Vec<u32> = (0..n as u32).filter(|i| i % 3 == 1).collect();
            assert_eq!(keep(None, &col, |x| x == 1), want, "{n} entries");
            let sel: Vec<u32> = (0..n as u32 + 5).step_by(2).collect();
            let narrowed: Vec<u32> = sel
                .iter()
                .copied()
                .filter(|&i| (i as usize) < n && i % 3 == 1)
                .collect();
            assert_eq!(
                keep(Some(sel), &col, |x| x == 1),
                narrowed,
                "{n} entries, a selection past the end"
            );
        }
    }

    /// The typed scan agrees with the compiled filter evaluated on each record, for every kind
    /// of operand, mixed value types, missing fields, removed members and member counts around
    /// a 32-lane chunk.
    #[test]
    fn scan_matches_row_by_row_evaluation() {
        let names = ["n", "s", "t", "b"];
        let filters = [
            "",
            "n >= 2 and n < 5",
            "n > 2",
            "n != 3",
            "n = 4",
            "s = 'x'",
            "s = 'none'",
            "s = 'y' and n <= 6",
            "t > 1000 and s != 'x'",
            "t < 2000 and t >= 1000",
            "b = true or n = 1",
            "s startsWith 'x' and n > 0",
            "n in (1, 2) and s = 'y'",
            "not n < 3",
            "n > 'x'",
        ];
        for members in [0u32, 5, 32, 63, 64, 65, 97] {
            let recs: Vec<R> = (0..members)
                .map(|i| {
                    let mut f = Vec::new();
                    match i % 5 {
                        0 => {}
                        1 => f.push((0, Value::Str("7".into()))),
                        _ => f.push((0, Value::Number((i % 9) as f64))),
                    }
                    if i % 4 != 0 {
                        f.push((1, Value::Str(["x", "y", "xy"][i as usize % 3].into())));
                    }
                    match i % 3 {
                        0 => f.push((2, Value::Timestamp(900 + 50 * i as i64))),
                        1 => f.push((2, Value::Number(1500.0))),
                        _ => {}
                    }
                    f.push((3, Value::Bool(i % 2 == 0)));
                    R(f)
                })
                .collect();
            let mut container = Container::new();
            let mut cols = Columns::default();
            for id in 0..members {
                container.push(id).unwrap();
                cols.inserted(id, container.slot_of(id).unwrap(), &recs);
            }
            cols.acquire(&[0, 1, 2, 3], &recs);
            for id in (0..members).filter(|i| i % 7 == 3) {
                cols.removed(container.slot_of(id).unwrap());
                container.remove(id);
            }
            for text in filters {
                let e = parse(text, &FilterLimits::default()).unwrap();
                let f = Filter::compile(&e, &mut |n| names.iter().position(|x| *x == n).unwrap() as u32);
                let mut got: Vec<(u32, Box<[Option<Value>]>)> = cols
                    .scan(&f, &[1, 2])
                    .into_iter()
                    .map(|r| (r.0, Box::from(&*r.2)))
                    .collect();
                got.sort_by_key(|r| r.0);
                let want: Vec<(u32, Box<[Option<Value>]>)> = (0..members)
                    .filter(|&id| container.contains(id) && f.matches(&recs[id as usize]))
                    .map(|id| {
                        let r = &recs[id as usize];
                        (id, Box::from([r.get(1).cloned(), r.get(2).cloned()]))
                    })
                    .collect();
                assert_eq!(got, want, "{text:?} over {members} members");
            }
        }
    }
}
