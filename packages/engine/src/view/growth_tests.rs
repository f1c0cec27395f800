//! Containers and views past the size where their id maps split in shards (`IdMap`): members,
//! rows, ranks and update routing (record -> containers) must stay exactly right through the
//! split and the shards' growths, on both paths a view's row map fills (inserts one by one, and
//! a view's bulk load).

use super::test_rows::{Rec, Rows};
use super::{ViewSet, ViewsConfig, WindowDiff};
use crate::container::id_map::SPLIT_AT;
use crate::value::Value;

// Records by id: field 0 `p` (0..50), field 1 `q` (0..7).
impl Rows {
    fn num(&self, id: u32, f: usize) -> f64 {
        match self.0[id as usize].0[f] {
            Value::Number(x) => x,
            _ => unreachable!("numbers only"),
        }
    }
}

fn field(name: &str) -> u32 {
    u32::from(name != "p")
}

/// Asserts view `v` of `container` holds the members passing `pass`, ordered by `key` (ties in
/// natural order), and that each row's rank is its index.
fn assert_view(
    set: &ViewSet,
    container: u32,
    v: u32,
    pass: impl Fn(u32) -> bool,
    key: impl Fn(u32) -> i64,
    what: &str,
) {
    let c = set.container(container).unwrap();
    let mut want: Vec<u32> = c.iter().filter(|&id| pass(id)).collect();
    want.sort_by_key(|&id| key(id)); // stable: natural order within equal keys
    let view = set.view(v).unwrap();
    let got: Vec<u32> = view.ids().collect();
    assert_eq!(got.len(), want.len(), "{what}: row count");
    assert!(got == want, "{what}: rows differ");
    for (i, &id) in want.iter().enumerate().step_by(97) {
        assert_eq!(view.rank_of(id), Some(i), "{what}: rank of {id}");
    }
}

#[test]
fn views_and_update_routing_stay_right_past_the_id_map_split() {
    let n = 3 * SPLIT_AT as u32 + 100;
    let num = |x: u32| Value::Number(f64::from(x));
    let mut rows = Rows((0..n).map(|id| Rec([num(id % 50), num(id % 7)])).collect());
    let mut set = ViewSet::new(ViewsConfig::default());
    let mut f = |name: &str| field(name);
    // Opened on an empty blotter: its rows arrive one insert at a time.
    let early = set.open(1, "p < 25", "", 0, &rows, &mut f).unwrap();
    for id in 0..n {
        set.insert(1, Some(0), id, &rows).unwrap(); // newest first, like a blotter
        if id % 3 == 0 {
            set.insert(2, None, id, &rows).unwrap();
        }
    }
    // Opened on the full containers: bulk loads.
    let sorted = set.open(1, "q = 3", "p desc", 0, &rows, &mut f).unwrap();
    let second = set.open(2, "p >= 10", "", 0, &rows, &mut f).unwrap();
    for id in (0..n).step_by(5) {
        assert!(set.remove(1, id).is_some());
    }
    // Updates reach the views of every container holding the record (1 and 2, or only one).
    for id in (0..n).step_by(4) {
        let p = (rows.num(id, 0) as u32 + 20) % 50;
        rows.0[id as usize].0[0] = num(p);
        let reevaluated = set.record_updated(id, &[0], &rows);
        let in1 = id % 5 != 0;
        let in2 = id % 3 == 0;
        assert_eq!(reevaluated, 2 * usize::from(in1) + usize::from(in2), "record {id}");
    }
    let mut out: Vec<WindowDiff> = Vec::new();
    set.flush(&mut out);
    set.recycle(&mut out);
    assert_eq!(set.container(1).unwrap().len(), (n - n.div_ceil(5)) as usize);
    let (p, q) = (|id| rows.num(id, 0), |id| rows.num(id, 1));
    assert_view(&set, 1, early, |id| p(id) < 25.0, |_| 0, "early");
    assert_view(&set, 1, sorted, |id| q(id) == 3.0, |id| -(p(id) as i64), "sorted");
    assert_view(&set, 2, second, |id| p(id) >= 10.0, |_| 0, "second");
    // A record that left every container is routed nowhere.
    assert!(set.remove(2, 0).is_some());
    assert_eq!(set.record_updated(0, &[0], &rows), 0);
}

/// Past 512 views the membership bits grow by whole planes (no copy of the bits set): every view
/// keeps exactly its rows through the growth, through updates that move rows in and out of
/// views on every plane, through a clear and refill of the container, and through expiries.
#[test]
fn views_stay_right_as_membership_bits_grow_by_planes() {
    let n = 200u32;
    let num = |x: u32| Value::Number(f64::from(x));
    let mut rows = Rows((0..n).map(|id| Rec([num(id % 50), num(id % 7)])).collect());
    let mut set = ViewSet::new(ViewsConfig {
        grace_ms: 0,
        ..ViewsConfig::default()
    });
    let mut f = |name: &str| field(name);
    for id in 0..n {
        set.insert(1, None, id, &rows).unwrap();
    }
    // 1,300 distinct views: three planes of 512 bits; (lo, width, view) each.
    let views: Vec<(u32, u32, u32)> = (0..1_300u32)
        .map(|k| {
            let (lo, width) = (k % 45, 1 + k % 6);
            let text = format!("p >= {lo} and p < {} and q != {}", lo + width, 100 + k);
            (lo, width, set.open(1, &text, "", 0, &rows, &mut f).unwrap())
        })
        .collect();
    assert_eq!(set.bit_words(1), 3 * super::fanout::PLANE_WORDS);
    // Every 7th view, or after the expiry every 7th of those left (odd positions).
    let check = |set: &ViewSet, rows: &Rows, step: usize, what: &str| {
        for &(lo, width, v) in views.iter().skip(1).step_by(step) {
            let p = |id| rows.num(id, 0);
            let pass = |id| p(id) >= f64::from(lo) && p(id) < f64::from(lo + width);
            assert_view(set, 1, v, pass, |_| 0, what);
        }
    };
    check(&set, &rows, 7, "built");
    for round in 1..4u32 {
        for id in (0..n).filter(|id| id % 3 == round % 3) {
            rows.0[id as usize].0[0] = num((id + 7 * round) % 50);
            set.record_updated(id, &[0], &rows);
        }
        check(&set, &rows, 7, "updated");
    }
    set.clear(1);
    for id in 0..n {
        set.insert(1, None, id, &rows).unwrap();
    }
    check(&set, &rows, 7, "refilled");
    // Expire every other view; the freed bits are reused without another plane.
    for (i, &(_, _, v)) in views.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        set.release(v, i as u64).unwrap();
    }
    set.expire(u64::MAX);
    let again: Vec<u32> = (0..600u32)
        .map(|k| {
            set.open(
                1,
                &format!("p = {} and q != {}", k % 50, 5000 + k),
                "",
                0,
                &rows,
                &mut f,
            )
            .unwrap()
        })
        .collect();
    assert_eq!(set.bit_words(1), 3 * super::fanout::PLANE_WORDS);
    for id in (0..n).step_by(2) {
        rows.0[id as usize].0[0] = num((id + 1) % 50);
        set.record_updated(id, &[0], &rows);
    }
    for (k, &v) in again.iter().enumerate().step_by(13) {
        assert_view(&set, 1, v, |id| rows.num(id, 0) == (k % 50) as f64, |_| 0, "reopened");
    }
    check(&set, &rows, 14, "after expiry");
}
