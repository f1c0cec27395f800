//! Property test: every aggregate under every window kind and both key kinds, against a naive
//! recomputation from the list of events, over random events, values (missing ones too) and
//! times (bursts at one instant, jumps past the window, expiry with no event via `advance`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;
use crate::store::{Record, Slot};

const OUTS: [&str; 10] = ["n", "np", "s", "a", "lo", "hi", "f", "l", "sd", "w"];
const SELECT: &str = "select count(*) as n, count(p) as np, sum(p) as s, avg(p) as a, min(p) as lo, max(p) as hi, \
                      first(p) as f, last(p) as l, stddev(p) as sd, vwap(p, v) as w";

fn field_id(names: &mut Vec<String>, name: &str) -> u32 {
    match names.iter().position(|n| n == name) {
        Some(i) => i as u32 + 1,
        None => {
            names.push(name.to_owned());
            names.len() as u32
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// An update of subject `/S/<subject>` after `dt_ms`.
    Event {
        subject: u8,
        p: Option<f64>,
        v: Option<f64>,
        g: u8,
        dt_ms: u64,
    },
    /// `advance` after `dt_ms`, no event.
    Advance { dt_ms: u64 },
}

fn value() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        1 => Just(None),
        6 => (-100_000i64..100_000).prop_map(|c| Some(c as f64 / 100.0)),
        1 => (-1e6f64..1e6).prop_map(Some),
        1 => prop_oneof![Just(Some(0.0)), Just(Some(-0.0)), Just(Some(1e9)), Just(Some(1e-9))],
    ]
}

fn dt() -> impl Strategy<Value = u64> {
    prop_oneof![3 => Just(0u64), 6 => 1u64..20, 1 => 20u64..400]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..3, value(), value(), 0u8..3, dt()).prop_map(|(subject, p, v, g, dt_ms)| Op::Event { subject, p, v, g, dt_ms }),
        1 => dt().prop_map(|dt_ms| Op::Advance { dt_ms }),
    ]
}

#[derive(Debug, Clone, Copy)]
enum Win {
    None,
    Length(usize),
    TimeMs(u64),
}

fn win() -> impl Strategy<Value = Win> {
    prop_oneof![
        Just(Win::None),
        (1usize..8).prop_map(Win::Length),
        (1u64..60).prop_map(Win::TimeMs),
    ]
}

/// What each output should be for these (p, v) pairs of a key's window.
fn naive(events: &[(Option<f64>, Option<f64>)]) -> [Option<f64>; 10] {
    let ps: Vec<f64> = events.iter().filter_map(|e| e.0).collect();
    let n = ps.len() as f64;
    let sum: f64 = ps.iter().sum();
    let mean = sum / n;
    let var = ps.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let both: Vec<(f64, f64)> = events.iter().filter_map(|e| Some((e.0?, e.1?))).collect();
    let sv: f64 = both.iter().map(|b| b.1).sum();
    let spv: f64 = both.iter().map(|b| b.0 * b.1).sum();
    let some = |b: bool, x: f64| b.then_some(x);
    [
        Some(events.len() as f64),
        Some(n),
        some(!ps.is_empty(), sum),
        some(!ps.is_empty(), mean),
        ps.iter().copied().reduce(f64::min),
        ps.iter().copied().reduce(f64::max),
        events.first().and_then(|e| e.0),
        events.last().and_then(|e| e.0),
        some(ps.len() >= 2, var.sqrt()),
        some(!both.is_empty() && sv != 0.0, spv / sv),
    ]
}

/// The comparison tolerance of output `i` for this window (relative to the magnitudes summed).
fn close(i: usize, got: Option<f64>, want: Option<f64>, events: &[(Option<f64>, Option<f64>)]) -> bool {
    let (got, want) = match (got, want) {
        (None, None) => return true,
        (Some(g), Some(w)) => (g, w),
        _ => return false,
    };
    let ps = events.iter().filter_map(|e| e.0);
    let abs: f64 = ps.clone().map(f64::abs).sum();
    match OUTS[i] {
        "n" | "np" | "lo" | "hi" | "f" | "l" => got == want || (got == 0.0 && want == 0.0),
        "s" => (got - want).abs() <= 1e-9 * abs + 1e-12,
        "a" => (got - want).abs() <= 1e-9 * abs / events.len() as f64 + 1e-12,
        "sd" => {
            // compare variances: their rounding error scales with the squares summed
            let sq: f64 = ps.map(|x| x * x).sum();
            (got * got - want * want).abs() <= 1e-8 * sq + 1e-12
        }
        _ => {
            let pv: f64 = events.iter().filter_map(|e| Some((e.0? * e.1?).abs())).sum();
            let v: f64 = events.iter().filter_map(|e| Some(e.1?.abs())).sum();
            (got - want).abs() <= 1e-9 * (pv + want.abs() * v) / v.max(1e-300) + 1e-12
        }
    }
}

fn run(win: Win, group: bool, ops: &[Op]) -> Result<(), TestCaseError> {
    let start = Instant::now();
    let mut names = Vec::new();
    let mut set = StatementSet::new(AnalyticsLimits::default(), start);
    let window = match win {
        Win::None => String::new(),
        Win::Length(n) => format!(" window length {n}"),
        Win::TimeMs(ms) => format!(" window time {ms} ms"),
    };
    let key = if group { " group by g" } else { "" };
    let text = format!("{SELECT} from /S/*{key}{window}");
    let id = set
        .create("t", &text, start, &mut |n| field_id(&mut names, n))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let outs: Vec<u32> = OUTS.iter().map(|o| field_id(&mut names, o)).collect();
    let subjects = ["/S/0", "/S/1", "/S/2"];
    // (arrival ms, key text, p, v) of every event so far
    let mut log: Vec<(u64, String, Option<f64>, Option<f64>)> = Vec::new();
    let mut now_ms = 0u64;
    let mut out = Output::new();
    let window_of = |log: &[(u64, String, Option<f64>, Option<f64>)], key: &str, now_ms: u64| {
        let mine: Vec<(Option<f64>, Option<f64>)> = log
            .iter()
            .filter(|e| e.1 == key)
            .filter(|e| match win {
                Win::TimeMs(ms) => e.0 + ms > now_ms,
                _ => true,
            })
            .map(|e| (e.2, e.3))
            .collect();
        match win {
            Win::Length(n) => mine[mine.len().saturating_sub(n)..].to_vec(),
            _ => mine,
        }
    };
    let mut before: HashMap<String, [Option<f64>; 10]> = HashMap::new();
    for op in ops {
        out.clear();
        match *op {
            Op::Event {
                subject,
                p,
                v,
                g,
                dt_ms,
            } => {
                now_ms += dt_ms;
                let mut slots = Vec::new();
                let mut put = |name: &str, value: Option<Value>| {
                    slots.push(Slot {
                        name: field_id(&mut names, name),
                        value,
                    })
                };
                put("p", p.map(Value::Number));
                put("v", v.map(Value::Number));
                put("g", Some(Value::Number(g as f64)));
                let rec = Record {
                    seq: 1,
                    ts: 0.0,
                    slots,
                    layout: 0,
                    stale: false,
                };
                let sid = subject as u32 + 1;
                set.on_record(
                    sid,
                    subjects[subject as usize],
                    &rec,
                    start + Duration::from_millis(now_ms),
                    &mut out,
                );
                let key = if group {
                    g.to_string()
                } else {
                    subjects[subject as usize][1..].to_owned()
                };
                log.push((now_ms, key, p, v));
            }
            Op::Advance { dt_ms } => {
                now_ms += dt_ms;
                set.advance(start + Duration::from_millis(now_ms), &mut out);
            }
        }
        // every key's current result matches the naive one
        let mut emitted: HashMap<String, Vec<(u32, Option<Value>)>> = HashMap::new();
        for row in out.rows() {
            prop_assert_eq!(row.statement, id);
            let k = set.key_text(id, row.key, |s| subjects[s as usize - 1]).unwrap();
            emitted.insert(k, out.fields(row).to_vec());
        }
        for k in 0..set.key_count(id) as u32 {
            let key = set.key_text(id, k, |s| subjects[s as usize - 1]).unwrap();
            let mut cur = Output::new();
            prop_assert!(set.current(id, k, &mut cur));
            let fields = cur.fields(&cur.rows()[0]).to_vec();
            let events = window_of(&log, &key, now_ms);
            let want = naive(&events);
            for (i, (&(f, ref got), w)) in fields.iter().zip(want).enumerate() {
                prop_assert_eq!(f, outs[i]);
                let got = got.as_ref().map(|v| match v {
                    Value::Number(x) => *x,
                    other => panic!("not a number: {other:?}"),
                });
                prop_assert!(
                    close(i, got, w, &events),
                    "{} of key {} at {} ms: got {:?}, want {:?} over {:?} ({})",
                    OUTS[i],
                    key,
                    now_ms,
                    got,
                    w,
                    events,
                    text
                );
            }
            // a key whose result changed wrote a row, and its last row is the current result
            let changed = before.get(&key).is_none_or(|b| {
                b.iter()
                    .zip(want.iter())
                    .any(|(x, y)| x.map(f64::to_bits) != y.map(f64::to_bits))
            });
            match emitted.get(&key) {
                Some(row) => prop_assert_eq!(row, &fields),
                None => prop_assert!(!changed, "key {} changed at {} ms but wrote no row", key, now_ms),
            }
            before.insert(key, want);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn aggregates_match_a_naive_recomputation(
        win in win(),
        group in any::<bool>(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        run(win, group, &ops)?;
    }
}

/// Long runs: the running sums must not drift from a recomputation (prices walking far from
/// where they started, magnitudes mixing), for the length and time windows.
#[test]
fn long_runs_do_not_drift() {
    for window in ["window length 500", "window time 50 ms"] {
        let start = Instant::now();
        let mut names = Vec::new();
        let mut set = StatementSet::new(AnalyticsLimits::default(), start);
        let text = format!("{SELECT} from /S/* {window}");
        let id = set.create("t", &text, start, &mut |n| field_id(&mut names, n)).unwrap();
        let (p, v) = (field_id(&mut names, "p"), field_id(&mut names, "v"));
        let mut out = Output::new();
        let mut price = 1000.0f64;
        let mut seed = 7u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut held: Vec<(u64, f64, f64)> = Vec::new();
        for i in 0..200_000u64 {
            price *= 1.0 + (rnd() % 19) as f64 / 1000.0 - 0.009;
            // now and then a huge print, to mix magnitudes
            let px = if i % 10_007 == 0 { 1e12 } else { price };
            let vol = (rnd() % 9 + 1) as f64;
            let rec = Record {
                seq: 1,
                ts: 0.0,
                slots: vec![
                    Slot {
                        name: p,
                        value: Some(Value::Number(px)),
                    },
                    Slot {
                        name: v,
                        value: Some(Value::Number(vol)),
                    },
                ],
                layout: 0,
                stale: false,
            };
            let t = i / 10; // 10 events per ms
            out.clear();
            set.on_record(1, "/S/0", &rec, start + Duration::from_millis(t), &mut out);
            held.push((t, px, vol));
        }
        let last_t = 199_999 / 10;
        let held_now: Vec<(f64, f64)> = if window.contains("length") {
            held[held.len() - 500..].iter().map(|e| (e.1, e.2)).collect()
        } else {
            held.iter().filter(|e| e.0 + 50 > last_t).map(|e| (e.1, e.2)).collect()
        };
        let events: Vec<(Option<f64>, Option<f64>)> = held_now.iter().map(|&(a, b)| (Some(a), Some(b))).collect();
        let want = naive(&events);
        let mut cur = Output::new();
        assert!(set.current(id, 0, &mut cur));
        for (i, (_, got)) in cur.fields(&cur.rows()[0]).iter().enumerate() {
            let got = got.as_ref().map(|v| match v {
                Value::Number(x) => *x,
                _ => f64::NAN,
            });
            assert!(
                close(i, got, want[i], &events),
                "{window}: {} got {got:?} want {:?}",
                OUTS[i],
                want[i]
            );
        }
    }
}
