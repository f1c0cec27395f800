//! `ViewSet` expiry unlinks views from their container's lists by index (swap-remove): views
//! opened and expired in any order must leave the survivors' fan-out, windows and membership
//! exactly right.

use super::test_rows::{Rec, Rows};
use super::{Records, ViewSet, ViewsConfig, WindowDiff};
use crate::filter::{parse, Filter, FilterLimits};
use crate::value::Value;

/// Records with fields 0 (`p`, a number) and 1 (`q`, a number), by id.
struct Recs(Vec<[f64; 2]>);
impl Recs {
    fn rows(&self) -> Rows {
        Rows(
            self.0
                .iter()
                .map(|r| Rec([Value::Number(r[0]), Value::Number(r[1])]))
                .collect(),
        )
    }
}

/// Moves the records `ids` by `add` (fields kept within 0..50 and 0..7), tells `set`, then
/// flushes and recycles the diffs.
fn tick(set: &mut ViewSet, recs: &mut Recs, ids: impl Iterator<Item = u32>, add: [f64; 2]) {
    for id in ids {
        let r = &mut recs.0[id as usize];
        r[0] = (r[0] + add[0]) % 50.0;
        r[1] = (r[1] + add[1]) % 7.0;
        let rows = recs.rows();
        set.record_updated(id, &[0, 1], &rows);
    }
    let mut out: Vec<WindowDiff> = Vec::new();
    set.flush(&mut out);
    set.recycle(&mut out);
}

/// Asserts that view `v` holds exactly the records of `recs` that `text` matches.
fn assert_members(set: &ViewSet, v: u32, text: &str, recs: &Recs, what: &str) {
    let rows = recs.rows();
    let f = Filter::compile(&parse(text, &FilterLimits::default()).unwrap(), &mut |n: &str| field(n));
    let mut want: Vec<u32> = (0..200).filter(|&id| f.matches(rows.row(id).unwrap())).collect();
    let mut got: Vec<u32> = set.view(v).unwrap().ids().collect();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want, "view {what} ({text})");
}

fn field(name: &str) -> u32 {
    if name == "p" {
        0
    } else {
        1
    }
}

#[test]
fn views_expired_in_any_order_leave_the_others_right() {
    let mut recs = Recs((0..200).map(|i| [(i % 50) as f64, (i % 7) as f64]).collect());
    let mut set = ViewSet::new(ViewsConfig {
        grace_ms: 10,
        ..ViewsConfig::default()
    });
    let rows = recs.rows();
    for id in 0..200 {
        set.insert(1, None, id, &rows).unwrap();
    }
    // 70 distinct views (two bit words per member) reading p, q or both, some sorted (the
    // always-true `p != 100 + k` keeps any two from sharing).
    let texts: Vec<(String, &str)> = (0..70)
        .map(|k| match k % 3 {
            0 => (
                format!("p >= {} and p < {} and p != {}", k % 40, k % 40 + 5, 100 + k),
                "",
            ),
            1 => (format!("q = {} and p != {}", k % 7, 100 + k), "p desc"),
            _ => (format!("p < {} and q > {} and p != {}", k % 45, k % 5, 100 + k), "q"),
        })
        .collect();
    let mut views: Vec<u32> = texts
        .iter()
        .map(|(f, s)| set.open(1, f, s, 0, &rows, &mut |n: &str| field(n)).unwrap())
        .collect();
    // Expire every third view, in an order unlike the opening order; then tick records.
    let mut t = 0;
    for (round, k) in [5usize, 68, 0, 33, 34, 12, 69, 1, 50].iter().enumerate() {
        t += 100;
        set.release(views[*k], t).unwrap();
        assert_eq!(set.expire(t + 10), 1);
        views[*k] = u32::MAX;
        set.assert_links();
        tick(&mut set, &mut recs, (round as u32 * 13..200).step_by(17), [3.0, 1.0]);
    }
    for (k, &v) in views.iter().enumerate() {
        if v == u32::MAX {
            assert!(set.view(v).is_none());
            continue;
        }
        assert_members(&set, v, &texts[k].0, &recs, &format!("{k} after the others expired"));
    }
    assert_eq!(set.view_count(), 70 - 9);
    // Every survivor can still expire; the container ends with no views.
    for &v in views.iter().filter(|&&v| v != u32::MAX) {
        set.release(v, t).unwrap();
    }
    assert_eq!(set.expire(t + 10), 61);
    assert_eq!(set.view_count(), 0);
}

#[test]
fn membership_bits_widen_by_doubling_and_keep_every_view_right() {
    let mut recs = Recs((0..200).map(|i| [(i % 50) as f64, (i % 7) as f64]).collect());
    let mut set = ViewSet::new(ViewsConfig::default());
    let rows = recs.rows();
    for id in 0..200 {
        set.insert(1, None, id, &rows).unwrap();
    }
    // 300 distinct views (the `p != 1000 + k` keeps any two from sharing): bit words per member
    // go 1, 2, 4, 8 (widened at views 65, 129 and 257), not one more word per 64 views.
    let texts: Vec<String> = (0..300)
        .map(|k| {
            format!(
                "p >= {} and p < {} and q != {} and p != {}",
                k % 45,
                k % 45 + 6,
                k % 7,
                1000 + k
            )
        })
        .collect();
    let mut words_seen = Vec::new();
    let mut views = Vec::new();
    for t in &texts {
        views.push(set.open(1, t, "", 0, &rows, &mut |n: &str| field(n)).unwrap());
        let w = set.bit_words(1);
        if words_seen.last() != Some(&w) {
            words_seen.push(w);
        }
    }
    assert_eq!(words_seen, [1, 2, 4, 8]);
    // Ticks after the widenings: every view still holds exactly the rows its filter matches.
    for round in 0..3u32 {
        tick(&mut set, &mut recs, (round * 11..200).step_by(7), [7.0, 3.0]);
    }
    for (k, &v) in views.iter().enumerate() {
        assert_members(&set, v, &texts[k], &recs, &k.to_string());
    }
}
