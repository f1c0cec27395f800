//! Detached windows (`ViewSet::detach_window` / `attach_window`): while detached a window gets
//! no diff; the first diff after the re-attach, applied to the rows last sent, gives exactly the
//! rows a fresh window shows, and carries every field change of the rows that stayed.

use super::test_rows::{Rec, Rows};
use super::{ViewSet, ViewsConfig, WindowDiff};
use crate::value::Value;

fn rows_of(recs: &[[f64; 2]]) -> Rows {
    Rows(
        recs.iter()
            .map(|r| Rec([Value::Number(r[0]), Value::Number(r[1])]))
            .collect(),
    )
}

fn field(name: &str) -> u32 {
    u32::from(name != "p")
}

fn flush(set: &mut ViewSet) -> Vec<WindowDiff> {
    let mut out = Vec::new();
    set.flush(&mut out);
    out
}

/// A small deterministic generator (tests must not depend on a seed from the clock).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % u64::from(n)) as u32
    }
}

#[test]
fn a_reattached_window_gets_the_diff_since_its_detach() {
    for seed in 0..40u64 {
        let mut rng = Lcg(seed);
        let mut recs: Vec<[f64; 2]> = (0..60).map(|i| [f64::from(i % 50), f64::from(i % 7)]).collect();
        let mut set = ViewSet::new(ViewsConfig::default());
        let rows = rows_of(&recs);
        for id in 0..60 {
            set.insert(1, None, id, &rows).unwrap();
        }
        let v = set
            .open(1, "p < 30", "p desc", 0, &rows, &mut |n: &str| field(n))
            .unwrap();
        let w = set.open_window(v, 5, 10).unwrap();
        let live = set.open_window(v, 5, 10).unwrap();
        let mut held: Vec<u32> = Vec::new();
        for d in flush(&mut set).iter().filter(|d| d.window == w) {
            d.apply_to(&mut held);
        }
        set.detach_window(w).unwrap();
        // updates while detached: sort key moves (rows enter, leave, move) and plain field changes
        let mut changed_q: Vec<u32> = Vec::new();
        for _ in 0..(1 + rng.next(30)) {
            let id = rng.next(60);
            let f = rng.next(2);
            recs[id as usize][f as usize] = f64::from(rng.next(50));
            if f == 1 {
                changed_q.push(id);
            }
            set.record_updated(id, &[f], &rows_of(&recs));
            if rng.next(3) == 0 {
                let out = flush(&mut set);
                assert!(
                    out.iter().all(|d| d.window != w),
                    "seed {seed}: a detached window got a diff"
                );
            }
        }
        let out = flush(&mut set);
        assert!(out.iter().all(|d| d.window != w));
        let offset = rng.next(8) as usize;
        set.attach_window(w, offset, 10).unwrap();
        let out = flush(&mut set);
        let d = out.iter().find(|d| d.window == w);
        if let Some(d) = d {
            d.apply_to(&mut held);
        }
        let fresh: Vec<u32> = set.view(v).unwrap().rows(offset, 10).collect();
        assert_eq!(
            held, fresh,
            "seed {seed}: the resumed rows differ from a fresh window's"
        );
        // every row that stayed and whose q changed is in `updated` with field 1
        let empty = WindowDiff::default();
        let d = d.unwrap_or(&empty);
        for id in &changed_q {
            let stayed = fresh.contains(id) && !d.entered.iter().any(|e| e.1 == *id);
            if stayed {
                let u = d.updated.iter().find(|u| u.0 == *id);
                assert!(
                    u.is_some_and(|u| u.1.contains(&1)),
                    "seed {seed}: row {id}'s change is missing"
                );
            }
        }
        // the other window kept getting its diffs all along
        assert!(set.window_seq(live).is_some());
    }
}

#[test]
fn a_row_updated_twice_while_detached_is_sent_conflated() {
    let mut recs: Vec<[f64; 2]> = (0..5).map(|i| [f64::from(i), 0.0]).collect();
    let mut set = ViewSet::new(ViewsConfig::default());
    let rows = rows_of(&recs);
    for id in 0..5 {
        set.insert(1, None, id, &rows).unwrap();
    }
    let v = set.open(1, "", "p", 0, &rows, &mut |n: &str| field(n)).unwrap();
    let w = set.open_window(v, 0, 5).unwrap();
    flush(&mut set);
    set.detach_window(w).unwrap();
    for (id, q) in [(1, 1.0), (2, 1.0), (2, 2.0)] {
        recs[id as usize][1] = q;
        set.record_updated(id, &[1], &rows_of(&recs));
        assert!(flush(&mut set).is_empty());
    }
    set.attach_window(w, 0, 5).unwrap();
    let out = flush(&mut set);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].updated, [(1, vec![1]), (2, vec![1])]);
    assert_eq!(out[0].conflated, [2]);
    assert!(out[0].entered.is_empty() && out[0].left.is_empty() && out[0].count.is_none());
    // attached again: live diffs as before, nothing gathered left over
    recs[3][1] = 5.0;
    set.record_updated(3, &[1], &rows_of(&recs));
    let out = flush(&mut set);
    assert_eq!(
        (out[0].updated.clone(), out[0].conflated.clone()),
        (vec![(3, vec![1])], vec![])
    );
}
