//! Property test: after any sequence of record updates, container inserts/removes/clears and
//! window moves, every window equals the slice of (filter, then stable sort) of the container,
//! counts match, field updates of staying rows are reported once per flush; plus view sharing.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;
use tidewire_engine::filter::Row;
use tidewire_engine::value::Value;
use tidewire_engine::view::{Records, ViewSet, ViewsConfig, WindowDiff};

const PRICE: u32 = 0;
const NAME: u32 = 1;
const FLAG: u32 = 2;
const QTY: u32 = 3;

#[derive(Default, Clone)]
struct TestRow(Vec<Option<Value>>);
impl Row for TestRow {
    fn get(&self, field: u32) -> Option<&Value> {
        self.0.get(field as usize).and_then(Option::as_ref)
    }
}

#[derive(Default)]
struct TestRecords(HashMap<u32, TestRow>);
impl Records for TestRecords {
    type Row = TestRow;
    fn row(&self, id: u32) -> Option<&TestRow> {
        self.0.get(&id)
    }
}

fn field_id(name: &str) -> u32 {
    ["price", "name", "flag", "qty"]
        .iter()
        .position(|n| *n == name)
        .unwrap() as u32
}

fn num(r: &TestRow, f: u32) -> Option<f64> {
    match r.get(f) {
        Some(Value::Number(x)) => Some(*x),
        _ => None,
    }
}

fn string(r: &TestRow, f: u32) -> Option<&str> {
    match r.get(f) {
        Some(Value::Str(s)) => Some(s),
        _ => None,
    }
}

type Pred = fn(&TestRow) -> bool;
/// (filter text, model predicate), (sort text, model key order).
const FILTERS: [(&str, Pred); 5] = [
    ("price > 40", |r| num(r, PRICE).is_some_and(|p| p > 40.0)),
    ("price <= 60 and not flag = true", |r| {
        num(r, PRICE).is_some_and(|p| p <= 60.0) && !matches!(r.get(FLAG), Some(Value::Bool(true)))
    }),
    ("name startsWith 'b' or qty in (1, 2)", |r| {
        string(r, NAME).is_some_and(|s| s.starts_with('b')) || num(r, QTY).is_some_and(|q| q == 1.0 || q == 2.0)
    }),
    ("", |_| true),
    ("name = 'bx' and price >= 20 and price < 90", |r| {
        string(r, NAME) == Some("bx") && num(r, PRICE).is_some_and(|p| (20.0..90.0).contains(&p))
    }),
];

fn cmp_opt<T: PartialOrd>(a: Option<T>, b: Option<T>, desc: bool) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Greater,
        (_, None) => Ordering::Less,
        (Some(x), Some(y)) => {
            let o = x.partial_cmp(&y).unwrap();
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

type Order = fn(&TestRow, &TestRow) -> Ordering;
const SORTS: [(&str, Order); 3] = [
    ("price desc", |a, b| cmp_opt(num(a, PRICE), num(b, PRICE), true)),
    ("name, qty desc", |a, b| {
        cmp_opt(string(a, NAME), string(b, NAME), false).then(cmp_opt(num(a, QTY), num(b, QTY), true))
    }),
    ("", |_, _| Ordering::Equal),
];

#[derive(Debug, Clone)]
enum Op {
    Update {
        member: usize,
        field: u32,
        value: u8,
    },
    Insert {
        pos: usize,
    },
    Remove {
        member: usize,
    },
    Clear,
    Move {
        window: usize,
        offset: usize,
        size: usize,
    },
    Flush,
    /// A new view built now (from the container's columns as maintained so far).
    Open {
        filter: usize,
        sort: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (any::<usize>(), 0u32..4, 0u8..12).prop_map(|(member, field, value)| Op::Update { member, field, value }),
        3 => any::<usize>().prop_map(|pos| Op::Insert { pos }),
        2 => any::<usize>().prop_map(|member| Op::Remove { member }),
        1 => Just(Op::Clear),
        2 => (0usize..4, 0usize..30, 1usize..12).prop_map(|(window, offset, size)| Op::Move { window, offset, size }),
        3 => Just(Op::Flush),
        1 => (0usize..5, 0usize..3).prop_map(|(filter, sort)| Op::Open { filter, sort }),
    ]
}

fn value_for(field: u32, v: u8) -> Option<Value> {
    if v == 0 {
        return None; // deleted field
    }
    Some(match field {
        PRICE => Value::Number((v as f64) * 10.0),
        NAME => Value::Str(["a", "b", "bx", "c", "B"][v as usize % 5].into()),
        FLAG => Value::Bool(v.is_multiple_of(2)),
        _ => Value::Number((v % 4) as f64),
    })
}

struct Harness {
    set: ViewSet,
    records: TestRecords,
    members: Vec<u32>,
    next_id: u32,
    /// (window id, filter index, sort index, offset, size, client rows)
    windows: Vec<(u32, usize, usize, usize, usize, Vec<u32>)>,
    updated: HashMap<u32, BTreeSet<u32>>,
    /// Updates per row since the last flush.
    update_counts: HashMap<u32, u32>,
}

const C: u32 = 1000;

impl Harness {
    fn new(seed_rows: u8, combos: &[(usize, usize)]) -> Harness {
        let mut h = Harness {
            set: ViewSet::new(ViewsConfig::default()),
            records: TestRecords::default(),
            members: Vec::new(),
            next_id: 1,
            windows: Vec::new(),
            updated: HashMap::new(),
            update_counts: HashMap::new(),
        };
        for i in 0..seed_rows {
            h.insert(usize::MAX, i);
        }
        for (k, &(f, s)) in combos.iter().enumerate() {
            let v = h
                .set
                .open(C, FILTERS[f].0, SORTS[s].0, 0, &h.records, &mut field_id)
                .unwrap();
            let (offset, size) = (k * 3 % 7, 5 + k);
            let w = h.set.open_window(v, offset, size).unwrap();
            h.windows.push((w, f, s, offset, size, Vec::new()));
        }
        h
    }

    fn insert(&mut self, pos: usize, seed: u8) {
        let id = self.next_id;
        self.next_id += 1;
        let row = TestRow(
            (0..4)
                .map(|f| value_for(f, (seed.wrapping_mul(7).wrapping_add(f as u8 * 5)) % 12))
                .collect(),
        );
        self.records.0.insert(id, row);
        let at = pos.min(self.members.len());
        assert_eq!(self.set.insert(C, Some(at), id, &self.records).unwrap(), at);
        self.members.insert(at, id);
    }

    fn expected(&self, f: usize, s: usize) -> Vec<u32> {
        let mut rows: Vec<u32> = self
            .members
            .iter()
            .copied()
            .filter(|id| (FILTERS[f].1)(&self.records.0[id]))
            .collect();
        rows.sort_by(|a, b| (SORTS[s].1)(&self.records.0[a], &self.records.0[b])); // stable
        rows
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Update { member, field, value } if !self.members.is_empty() => {
                let id = self.members[member % self.members.len()];
                self.records.0.get_mut(&id).unwrap().0[field as usize] = value_for(field, value);
                self.set.record_updated(id, &[field], &self.records);
                self.updated.entry(id).or_default().insert(field);
                *self.update_counts.entry(id).or_default() += 1;
            }
            Op::Insert { pos } => self.insert(pos % (self.members.len() + 1), pos as u8),
            Op::Remove { member } if !self.members.is_empty() => {
                let at = member % self.members.len();
                let id = self.members.remove(at);
                assert_eq!(self.set.remove(C, id), Some(at));
                self.updated.remove(&id);
                self.update_counts.remove(&id);
            }
            Op::Clear => {
                self.set.clear(C);
                self.members.clear();
                self.updated.clear();
                self.update_counts.clear();
            }
            Op::Move { window, offset, size } if window < self.windows.len() => {
                let w = &mut self.windows[window];
                self.set.move_window(w.0, offset, size).unwrap();
                (w.3, w.4) = (offset, size);
            }
            Op::Flush => self.flush(),
            Op::Open { filter, sort } if self.windows.len() < 12 => {
                // A tier no other view has: never shared, so this is a fresh build.
                let tier = 100 + self.windows.len() as u32;
                let v = self
                    .set
                    .open(C, FILTERS[filter].0, SORTS[sort].0, tier, &self.records, &mut field_id)
                    .unwrap();
                let w = self.set.open_window(v, 0, 10).unwrap();
                self.windows.push((w, filter, sort, 0, 10, Vec::new()));
            }
            _ => {}
        }
    }

    fn flush(&mut self) {
        let mut diffs: Vec<WindowDiff> = Vec::new();
        self.set.flush(&mut diffs);
        let by_window: HashMap<u32, &WindowDiff> = diffs.iter().map(|d| (d.window, d)).collect();
        for k in 0..self.windows.len() {
            let (w, f, s, offset, size, _) = self.windows[k];
            let all = self.expected(f, s);
            let want: Vec<u32> = all.iter().copied().skip(offset).take(size).collect();
            let before = self.windows[k].5.clone();
            if let Some(d) = by_window.get(&w) {
                d.apply_to(&mut self.windows[k].5);
                if let Some(n) = d.count {
                    assert_eq!(n, all.len(), "count of window {w}");
                }
                // Field updates: exactly the staying rows updated since the last flush.
                let mut got: Vec<(u32, Vec<u32>)> = d.updated.clone();
                got.sort();
                let mut exp: Vec<(u32, Vec<u32>)> = want
                    .iter()
                    .filter(|id| before.contains(id) && !d.snapshot)
                    .filter_map(|id| self.updated.get(id).map(|fs| (*id, fs.iter().copied().collect())))
                    .collect();
                exp.sort();
                assert_eq!(got, exp, "updated rows of window {w}");
                // Conflated: exactly the updated rows that were updated more than once.
                let merged: Vec<u32> = exp
                    .iter()
                    .map(|e| e.0)
                    .filter(|id| self.update_counts[id] > 1)
                    .collect();
                assert_eq!(d.conflated, merged, "conflated rows of window {w}");
            }
            assert_eq!(
                self.windows[k].5, want,
                "window {w} (filter {f}, sort {s}, {offset}+{size})"
            );
            let v = self.set.window_view(w).unwrap();
            assert_eq!(self.set.view(v).unwrap().len(), all.len());
        }
        self.updated.clear();
        self.update_counts.clear();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn windows_equal_filter_then_sort(
        seed_rows in 0u8..40,
        combos in proptest::collection::vec((0usize..5, 0usize..3), 1..5),
        ops in proptest::collection::vec(op(), 0..120),
    ) {
        let mut h = Harness::new(seed_rows, &combos);
        h.flush();
        for op in &ops {
            h.apply(op);
        }
        h.flush();
        // Ranks agree with the full expected order, too.
        for &(w, f, s, ..) in &h.windows {
            let v = h.set.window_view(w).unwrap();
            let view = h.set.view(v).unwrap();
            for (rank, id) in h.expected(f, s).into_iter().enumerate() {
                prop_assert_eq!(view.rank_of(id), Some(rank));
                prop_assert_eq!(view.row_at(rank), Some(id));
            }
        }
    }
}

#[test]
fn identical_requests_share_and_release_after_grace() {
    let mut set = ViewSet::new(ViewsConfig {
        grace_ms: 1000,
        ..ViewsConfig::default()
    });
    let records = TestRecords::default();
    let a = set
        .open(C, "price > 1 AND name = 'x'", "price DESC", 0, &records, &mut field_id)
        .unwrap();
    let b = set
        .open(C, "  price>1 and name=\"x\"", "price desc", 0, &records, &mut field_id)
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(set.refs(a), Some(2));
    // Different tier, sort or container: separate views.
    let t = set
        .open(C, "price > 1 and name = 'x'", "price desc", 2, &records, &mut field_id)
        .unwrap();
    let s = set
        .open(C, "price > 1 and name = 'x'", "price asc", 0, &records, &mut field_id)
        .unwrap();
    let c = set
        .open(
            C + 1,
            "price > 1 and name = 'x'",
            "price desc",
            0,
            &records,
            &mut field_id,
        )
        .unwrap();
    assert_eq!(BTreeSet::from([a, t, s, c]).len(), 4);
    let w = set.open_window(a, 0, 10).unwrap();
    assert_eq!(set.release(a, 100).unwrap(), 1);
    assert_eq!(set.release(a, 200).unwrap(), 0);
    assert_eq!(
        set.release(a, 200).unwrap_err().code(),
        tidewire_engine::ErrorCode::NotFound
    );
    assert_eq!(set.expire(1199), 0);
    // Reopened inside the grace period: the same view comes back.
    assert_eq!(
        set.open(C, "price > 1 and name = 'x'", "price desc", 0, &records, &mut field_id)
            .unwrap(),
        a
    );
    set.release(a, 5000).unwrap();
    assert_eq!(set.expire(6000), 1);
    assert!(set.view(a).is_none());
    assert!(set.window_view(w).is_none());
    assert_eq!(set.view_count(), 3);
    // A fresh open after expiry builds a new view (slot reuse is fine; refs start at 1).
    let again = set
        .open(C, "price > 1 and name = 'x'", "price desc", 0, &records, &mut field_id)
        .unwrap();
    assert_eq!(set.refs(again), Some(1));
}

#[test]
fn bad_requests_are_typed_errors() {
    let mut set = ViewSet::new(ViewsConfig::default());
    let records = TestRecords::default();
    let e = set.open(C, "price >= ", "", 0, &records, &mut field_id).unwrap_err();
    assert_eq!(
        e.to_string(),
        "filter at 10: expected a value after '>=', found end of filter"
    );
    assert_eq!(e.field(), Some("filter"));
    let e = set
        .open(C, "", "price sideways", 0, &records, &mut field_id)
        .unwrap_err();
    assert_eq!(e.field(), Some("sort"));
    let v = set.open(C, "", "", 0, &records, &mut field_id).unwrap();
    assert_eq!(set.open_window(v, 0, 0).unwrap_err().field(), Some("window.size"));
    assert_eq!(set.open_window(v, 0, 10_001).unwrap_err().field(), Some("window.size"));
    assert_eq!(
        set.open_window(99, 0, 1).unwrap_err().code(),
        tidewire_engine::ErrorCode::NotFound
    );
    assert_eq!(
        set.move_window(42, 0, 1).unwrap_err().code(),
        tidewire_engine::ErrorCode::NotFound
    );
    let w = set.open_window(v, 0, 5).unwrap();
    set.close_window(w).unwrap();
    assert_eq!(
        set.close_window(w).unwrap_err().code(),
        tidewire_engine::ErrorCode::NotFound
    );
    assert_eq!(set.insert(C, None, 7, &records).unwrap(), 0);
    assert_eq!(
        set.insert(C, None, 7, &records).unwrap_err().code(),
        tidewire_engine::ErrorCode::BadRequest
    );
}

#[test]
fn many_views_widen_member_bits_and_reuse_them() {
    let mut set = ViewSet::new(ViewsConfig {
        grace_ms: 0,
        ..ViewsConfig::default()
    });
    let mut records = TestRecords::default();
    let row = |p: f64| TestRow(vec![Some(Value::Number(p)), None, None, None]);
    for id in 1..=50u32 {
        records.0.insert(id, row(id as f64));
        set.insert(C, None, id, &records).unwrap();
    }
    // 130 views: member bitsets widen from one word to three while rows are live.
    let views: Vec<u32> = (0..130)
        .map(|k| {
            set.open(C, &format!("price >= {k}"), "price desc", 0, &records, &mut field_id)
                .unwrap()
        })
        .collect();
    let check = |set: &ViewSet, records: &TestRecords, views: &[u32]| {
        for (k, &v) in views.iter().enumerate() {
            let mut want: Vec<u32> = (1..=50u32)
                .filter(|id| matches!(records.0[id].get(PRICE), Some(Value::Number(p)) if *p >= k as f64))
                .collect();
            want.sort_by(|a, b| {
                let p = |id: &u32| match records.0[id].get(PRICE) {
                    Some(Value::Number(p)) => *p,
                    _ => f64::NAN,
                };
                p(b).total_cmp(&p(a)).then(a.cmp(b))
            });
            let got: Vec<u32> = set.view(v).unwrap().ids().collect();
            assert_eq!(got, want, "view price >= {k}");
        }
    };
    check(&set, &records, &views);
    for (i, id) in (1..=50u32).enumerate() {
        records.0.insert(id, row(((i * 37) % 140) as f64));
        assert_eq!(set.record_updated(id, &[PRICE], &records), 130);
    }
    check(&set, &records, &views);
    // Free 10 views, open 10 new ones (their bits are reused and start clear), update again.
    for &v in &views[..10] {
        set.release(v, 0).unwrap();
    }
    assert_eq!(set.expire(0), 10);
    let mut views = views[10..].to_vec();
    for k in 0..10 {
        let v = set
            .open(C, &format!("price >= {k}"), "price desc", 0, &records, &mut field_id)
            .unwrap();
        views.insert(k, v);
    }
    for id in 1..=50u32 {
        records.0.insert(id, row(((id * 53) % 140) as f64));
        set.record_updated(id, &[PRICE], &records);
    }
    check(&set, &records, &views);
}

/// Counts record reads, to show which operations evaluate filters.
struct Counting<'a>(&'a TestRecords, std::cell::Cell<usize>);
impl Records for Counting<'_> {
    type Row = TestRow;
    fn row(&self, id: u32) -> Option<&TestRow> {
        self.1.set(self.1.get() + 1);
        self.0.row(id)
    }
}

#[test]
fn moving_a_window_reads_no_records_and_updates_skip_unrelated_views() {
    let mut records = TestRecords::default();
    for id in 1..=200u32 {
        records.0.insert(
            id,
            TestRow(vec![
                Some(Value::Number(id as f64)),
                Some(Value::Str(format!("n{id}").into())),
                None,
                None,
            ]),
        );
    }
    let mut set = ViewSet::new(ViewsConfig::default());
    for id in 1..=200u32 {
        set.insert(C, None, id, &records).unwrap();
    }
    let by_price = set
        .open(C, "price > 50", "price desc", 0, &records, &mut field_id)
        .unwrap();
    let by_name = set
        .open(C, "name startsWith 'n1'", "", 0, &records, &mut field_id)
        .unwrap();
    let w = set.open_window(by_price, 0, 20).unwrap();
    let mut out = Vec::new();
    set.flush(&mut out);
    assert_eq!(out[0].entered.len(), 20);
    assert_eq!(out[0].entered[0], (0, 200));

    let counting = Counting(&records, std::cell::Cell::new(0));
    set.move_window(w, 100, 20).unwrap();
    out.clear();
    set.flush(&mut out);
    assert_eq!(counting.1.get(), 0);
    assert_eq!(out.len(), 1);
    assert_eq!(
        out[0].entered.iter().map(|e| e.1).collect::<Vec<_>>(),
        (81..=100).rev().collect::<Vec<u32>>()
    );
    assert_eq!(out[0].left.len(), 20);

    // An update of a field only `by_name` reads re-evaluates that view alone.
    assert!(set.view(by_name).unwrap().contains(15));
    records.0.get_mut(&15).unwrap().0[NAME as usize] = Some(Value::Str("x".into()));
    let counting = Counting(&records, std::cell::Cell::new(0));
    assert_eq!(set.record_updated(15, &[NAME], &counting), 1);
    assert!(!set.view(by_name).unwrap().contains(15));
    assert_eq!(set.view(by_price).unwrap().len(), 150);
    // A field nobody reads: no view is evaluated, no record read.
    let counting = Counting(&records, std::cell::Cell::new(0));
    assert_eq!(set.record_updated(15, &[QTY], &counting), 0);
    assert_eq!(counting.1.get(), 0);
}
