//! StatementSet: dedupe and names, routing (patterns, the equality index, containers), streams,
//! keys, output rates, expiry by the clock alone, limits.

use std::time::{Duration, Instant};

use super::*;
use crate::error::ErrorCode;
use crate::store::{Record, Slot};

/// Field names <-> ids as the store's interner would give them (from 1).
#[derive(Default)]
struct Names(Vec<String>);

impl Names {
    fn id(&mut self, name: &str) -> u32 {
        match self.0.iter().position(|n| n == name) {
            Some(i) => i as u32 + 1,
            None => {
                self.0.push(name.to_owned());
                self.0.len() as u32
            }
        }
    }

    fn name(&self, id: u32) -> &str {
        &self.0[id as usize - 1]
    }
}

/// A result row as (statement id, key text, [(field, value printed)]).
type Row = (u32, String, Vec<(String, String)>);

struct Fixture {
    set: StatementSet,
    names: Names,
    start: Instant,
    subjects: Vec<String>,
    out: Output,
}

impl Fixture {
    fn new() -> Self {
        Self::with(AnalyticsLimits::default())
    }

    fn with(limits: AnalyticsLimits) -> Self {
        let start = Instant::now();
        Self {
            set: StatementSet::new(limits, start),
            names: Names::default(),
            start,
            subjects: Vec::new(),
            out: Output::new(),
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn create(&mut self, name: &str, text: &str) -> Result<StatementId, crate::error::EngineError> {
        let names = &mut self.names;
        self.set.create(name, text, self.start, &mut |n| names.id(n))
    }

    fn subject_id(&mut self, subject: &str) -> u32 {
        match self.subjects.iter().position(|s| s == subject) {
            Some(i) => i as u32 + 1,
            None => {
                self.subjects.push(subject.to_owned());
                self.subjects.len() as u32
            }
        }
    }

    /// Offers an update of `subject` with `fields` at `ms`; returns the rows as
    /// (statement, key text, [(field, value)]) with numbers printed.
    fn publish(&mut self, subject: &str, fields: &[(&str, Value)], ms: u64) -> Vec<Row> {
        let sid = self.subject_id(subject);
        let slots = fields
            .iter()
            .map(|(n, v)| Slot {
                name: self.names.id(n),
                value: Some(v.clone()),
            })
            .collect();
        let rec = Record {
            seq: 1,
            ts: 0.0,
            slots,
            layout: 0,
            stale: false,
        };
        self.out.clear();
        let now = self.at(ms);
        self.set.on_record(sid, subject, &rec, now, &mut self.out);
        self.rows()
    }

    fn advance(&mut self, ms: u64) -> Vec<Row> {
        self.out.clear();
        let now = self.at(ms);
        self.set.advance(now, &mut self.out);
        self.rows()
    }

    fn rows(&self) -> Vec<Row> {
        self.out
            .rows()
            .iter()
            .map(|r| {
                let key = self
                    .set
                    .key_text(r.statement, r.key, |s| self.subjects[s as usize - 1].as_str())
                    .unwrap();
                let fields = self
                    .out
                    .fields(r)
                    .iter()
                    .map(|(f, v)| {
                        let v = match v {
                            None => "null".to_owned(),
                            Some(Value::Number(x)) => ryu_js::Buffer::new().format(*x).to_owned(),
                            Some(Value::Str(s)) => format!("'{s}'"),
                            Some(other) => format!("{other:?}"),
                        };
                        (self.names.name(*f).to_owned(), v)
                    })
                    .collect();
                (r.statement.0, key, fields)
            })
            .collect()
    }
}

fn num(x: f64) -> Value {
    Value::Number(x)
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn identical_statements_are_computed_once() {
    let mut f = Fixture::new();
    let a = f
        .create("a", "select avg(price) from /MKT/* where ticker = 'X' window length 3")
        .unwrap();
    // same text, other spelling and another name: the same computation
    let b = f
        .create(
            "b",
            "SELECT avg(price) AS avg_price FROM /MKT/* WHERE ticker = \"X\" WINDOW LENGTH 3 OUTPUT EVERY EVENT",
        )
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(f.set.len(), 1);
    assert_eq!(f.set.names_of(a).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(
        f.set.text_of(a),
        Some("select avg(price) as avg_price from /MKT/* where ticker = \"X\" window length 3")
    );
    // one row per event, not one per name
    let rows = f.publish("/MKT/X", &[("ticker", s("X")), ("price", num(2.0))], 0);
    assert_eq!(rows, [(a.0, "MKT/X".to_owned(), kv(&[("avg_price", "2")]))]);
    // the same name again is a reference; another statement under a taken name is refused
    assert_eq!(
        f.create("a", "select avg(price) from /MKT/* where ticker='X' window length 3"),
        Ok(a)
    );
    let e = f.create("a", "select avg(price) from /MKT/*").unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert!(
        e.to_string()
            .starts_with("statement name 'a' is taken by another statement"),
        "{e}"
    );
    // releases: a twice, b once; the computation lives until the last
    f.set.release("a").unwrap();
    f.set.release("b").unwrap();
    assert_eq!(f.set.len(), 1);
    assert_eq!(f.set.id_of("a"), Some(a));
    assert_eq!(f.set.id_of("b"), None);
    f.set.release("a").unwrap();
    assert!(f.set.is_empty());
    assert_eq!(f.set.release("a").unwrap_err().code(), ErrorCode::NotFound);
    assert!(f
        .publish("/MKT/X", &[("ticker", s("X")), ("price", num(2.0))], 1)
        .is_empty());
    // a new statement after a release gets a new id (ids are never reused)
    let c = f.create("a", "select avg(price) from /MKT/*").unwrap();
    assert!(c.0 > a.0);
}

#[test]
fn bad_names_and_statements_are_bad_requests() {
    let mut f = Fixture::new();
    for name in ["", "a/b", "with space", &"n".repeat(65)] {
        let e = f.create(name, "select * from /A").unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadRequest);
        assert_eq!(e.field(), Some("name"));
    }
    let e = f.create("x", "select avg(p) from /A where p >").unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest);
    assert_eq!(e.field(), Some("statement"));
    assert_eq!(
        e.to_string(),
        "statement at 32: expected a value after '>', found end of filter"
    );
    let mut f = Fixture::with(AnalyticsLimits {
        max_statements: 1,
        ..AnalyticsLimits::default()
    });
    f.create("x", "select * from /A").unwrap();
    f.create("y", "select * from /A").unwrap();
    assert_eq!(
        f.create("z", "select * from /B").unwrap_err().code(),
        ErrorCode::LimitExceeded
    );
}

#[test]
fn routing_reaches_only_matching_statements() {
    let mut f = Fixture::new();
    // 100 indexed statements of one pattern, one scanned, one of another pattern
    let ids: Vec<StatementId> = (0..100)
        .map(|i| {
            f.create(
                &format!("t{i}"),
                &format!("select count(*) from /MKT/* where ticker = 'T{i}'"),
            )
            .unwrap()
        })
        .collect();
    let big = f
        .create("big", "select count(*) from /MKT/* where price > 100")
        .unwrap();
    let fx = f.create("fx", "select count(*) from /FX/**").unwrap();
    let rows = f.publish("/MKT/A", &[("ticker", s("T7")), ("price", num(50.0))], 0);
    assert_eq!(rows, [(ids[7].0, "MKT/A".to_owned(), kv(&[("count", "1")]))]);
    let rows = f.publish("/MKT/A", &[("ticker", s("T7")), ("price", num(150.0))], 1);
    assert_eq!(
        rows,
        [
            (big.0, "MKT/A".to_owned(), kv(&[("count", "1")])),
            (ids[7].0, "MKT/A".to_owned(), kv(&[("count", "2")])),
        ]
    );
    let rows = f.publish("/FX/EUR/USD", &[("ticker", s("T7"))], 2);
    assert_eq!(rows, [(fx.0, "FX/EUR/USD".to_owned(), kv(&[("count", "1")]))]);
    // a ticker no statement waits for, a subject no pattern matches, a non-string ticker
    assert!(f.publish("/MKT/A", &[("ticker", s("ZZ"))], 3).is_empty());
    assert!(f.publish("/OTHER/A", &[("ticker", s("T1"))], 4).is_empty());
    assert!(f.publish("/MKT/B", &[("ticker", num(7.0))], 5).is_empty());
    let st = f.set.stats();
    assert_eq!(st.events, 6);
    assert_eq!(st.events_matched, 4);
    assert_eq!(st.rows, 4);
    // a statement created later is routed to subjects already seen
    let late = f.create("late", "select count(*) from /MKT/A").unwrap();
    let rows = f.publish("/MKT/A", &[("ticker", s("ZZ"))], 6);
    assert_eq!(rows, [(late.0, "MKT/A".to_owned(), kv(&[("count", "1")]))]);
}

#[test]
fn container_streams_follow_membership() {
    let mut f = Fixture::new();
    let id = f
        .create("c", "select sum(qty) as q from container /CONTAINER/BOOK")
        .unwrap();
    assert!(f.set.reads_container("/CONTAINER/BOOK"));
    assert!(!f.set.reads_container("/CONTAINER/OTHER"));
    assert!(f.publish("/ORD/1", &[("qty", num(5.0))], 0).is_empty());
    let ord1 = f.subject_id("/ORD/1");
    f.set.add_member("/CONTAINER/BOOK", ord1);
    let rows = f.publish("/ORD/1", &[("qty", num(5.0))], 1);
    assert_eq!(rows, [(id.0, "ORD/1".to_owned(), kv(&[("q", "5")]))]);
    f.set.remove_member("/CONTAINER/BOOK", ord1);
    assert!(f.publish("/ORD/1", &[("qty", num(5.0))], 2).is_empty());
    f.set.release("c").unwrap();
    assert!(!f.set.reads_container("/CONTAINER/BOOK"));
}

#[test]
fn streams_pass_the_event_through() {
    let mut f = Fixture::new();
    let all = f.create("all", "select * from /MKT/* where ticker = 'X'").unwrap();
    let some = f
        .create("some", "select price as px, missing from /MKT/* where ticker = 'X'")
        .unwrap();
    let rows = f.publish("/MKT/X", &[("ticker", s("X")), ("price", num(101.5))], 0);
    assert_eq!(
        rows,
        [
            (all.0, "MKT/X".to_owned(), kv(&[("ticker", "'X'"), ("price", "101.5")])),
            (some.0, "MKT/X".to_owned(), kv(&[("px", "101.5"), ("missing", "null")])),
        ]
    );
}

#[test]
fn group_by_keys_results_by_field_value() {
    let mut f = Fixture::new();
    let id = f.create("g", "select sum(qty) as q from /ORD/* group by side").unwrap();
    f.publish("/ORD/1", &[("side", s("buy")), ("qty", num(1.0))], 0);
    f.publish("/ORD/2", &[("side", s("sell")), ("qty", num(2.0))], 0);
    let rows = f.publish("/ORD/3", &[("side", s("buy")), ("qty", num(3.0))], 0);
    assert_eq!(rows, [(id.0, "buy".to_owned(), kv(&[("q", "4")]))]);
    assert_eq!(f.set.key_count(id), 2);
    // no key field: not counted; odd characters are escaped in the key text
    assert!(f.publish("/ORD/4", &[("qty", num(3.0))], 0).is_empty());
    assert_eq!(f.set.stats().events_without_key, 1);
    let rows = f.publish("/ORD/5", &[("side", s("a/b c")), ("qty", num(1.0))], 0);
    assert_eq!(rows[0].1, "a%2Fb%20c");
    let rows = f.publish("/ORD/5", &[("side", s("")), ("qty", num(1.0))], 0);
    assert_eq!(rows[0].1, "%");
    let rows = f.publish("/ORD/5", &[("side", num(-0.0)), ("qty", num(1.0))], 0);
    assert_eq!(rows[0].1, "0");
    let rows = f.publish("/ORD/5", &[("side", Value::Bool(true)), ("qty", num(1.0))], 0);
    assert_eq!(rows[0].1, "true");
    assert_eq!(result_subject("g", "buy"), "/STAT/g/buy");
}

#[test]
fn time_windows_expire_by_the_clock_alone() {
    let mut f = Fixture::new();
    let id = f
        .create("t", "select count(*) as n, avg(p) as a from /A/* window time 100 ms")
        .unwrap();
    f.publish("/A/1", &[("p", num(1.0))], 0);
    f.publish("/A/1", &[("p", num(3.0))], 50);
    assert_eq!(f.set.next_due(), Some(f.at(100)));
    assert!(f.advance(99).is_empty());
    // the first event leaves at 100 ms, the second at 150 ms: one row each, no event needed
    assert_eq!(
        f.advance(100),
        [(id.0, "A/1".to_owned(), kv(&[("n", "1"), ("a", "3")]))]
    );
    assert_eq!(
        f.advance(400),
        [(id.0, "A/1".to_owned(), kv(&[("n", "0"), ("a", "null")]))]
    );
    assert!(f.advance(500).is_empty());
    assert_eq!(f.set.next_due(), None);
}

#[test]
fn output_last_every_writes_once_per_interval() {
    let mut f = Fixture::new();
    let id = f
        .create(
            "o",
            "select last(p) as p, count(*) as n from /A/* output last every 100 ms",
        )
        .unwrap();
    let stream = f.create("s", "select * from /A/* output last every 100 ms").unwrap();
    assert!(f.publish("/A/1", &[("p", num(1.0))], 10).is_empty());
    assert!(f.publish("/A/1", &[("p", num(2.0))], 20).is_empty());
    assert!(f.publish("/A/2", &[("p", num(7.0))], 30).is_empty());
    assert!(f.advance(99).is_empty());
    let rows = f.advance(100);
    assert_eq!(
        rows,
        [
            (id.0, "A/1".to_owned(), kv(&[("p", "2"), ("n", "2")])),
            (id.0, "A/2".to_owned(), kv(&[("p", "7"), ("n", "1")])),
            (stream.0, "A/1".to_owned(), kv(&[("p", "2")])),
            (stream.0, "A/2".to_owned(), kv(&[("p", "7")])),
        ]
    );
    // a quiet interval writes nothing; the next change waits for its interval's end (300 ms)
    assert!(f.advance(200).is_empty());
    assert!(f.publish("/A/1", &[("p", num(3.0))], 250).is_empty());
    let rows = f.publish("/A/2", &[("p", num(8.0))], 301);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0], (id.0, "A/1".to_owned(), kv(&[("p", "3"), ("n", "3")])));
}

#[test]
fn key_and_time_event_limits() {
    let mut f = Fixture::with(AnalyticsLimits {
        max_keys: 2,
        max_time_events: 3,
        ..AnalyticsLimits::default()
    });
    let id = f.create("k", "select count(*) as n from /A/* window time 1 h").unwrap();
    f.publish("/A/1", &[], 0);
    f.publish("/A/2", &[], 0);
    assert!(f.publish("/A/3", &[], 0).is_empty());
    assert_eq!(f.set.stats().keys_refused, 1);
    assert_eq!(f.set.key_count(id), 2);
    f.publish("/A/1", &[], 1);
    // the fourth held event pushes out the oldest (A/1's first) early
    let rows = f.publish("/A/2", &[], 2);
    assert_eq!(
        rows,
        [
            (id.0, "A/2".to_owned(), kv(&[("n", "2")])),
            (id.0, "A/1".to_owned(), kv(&[("n", "1")])),
        ]
    );
    assert_eq!(f.set.stats().evicted_early, 1);
}

#[test]
fn empty_windows_and_numeric_edges() {
    let mut f = Fixture::new();
    let id = f
        .create(
            "e",
            "select count(*) as n, sum(p) as s, stddev(p) as sd, vwap(p, v) as w, first(p) as f \
             from /A/* window length 2",
        )
        .unwrap();
    // an event without p: counted, but every p aggregate is null
    let rows = f.publish("/A/1", &[("v", num(1.0))], 0);
    assert_eq!(
        rows,
        [(
            id.0,
            "A/1".to_owned(),
            kv(&[("n", "1"), ("s", "null"), ("sd", "null"), ("w", "null"), ("f", "null")])
        )]
    );
    // one value: stddev null (sample); the only event with both fields has volume 0: vwap null
    let rows = f.publish("/A/1", &[("p", num(5.0)), ("v", num(0.0))], 1);
    assert_eq!(
        rows[0].2,
        kv(&[("n", "2"), ("s", "5"), ("sd", "null"), ("w", "null"), ("f", "null")])
    );
    // overflow to infinity is null, and the window recovers once the value leaves
    f.publish("/A/1", &[("p", num(f64::MAX)), ("v", num(1.0))], 2);
    let rows = f.publish("/A/1", &[("p", num(f64::MAX)), ("v", num(1.0))], 3);
    assert_eq!(rows[0].2[1], ("s".to_owned(), "null".to_owned()));
    f.publish("/A/1", &[("p", num(1.0)), ("v", num(1.0))], 4);
    let rows = f.publish("/A/1", &[("p", num(2.0)), ("v", num(1.0))], 5);
    assert_eq!(
        rows[0].2,
        kv(&[
            ("n", "2"),
            ("s", "3"),
            ("sd", "0.7071067811865476"),
            ("w", "1.5"),
            ("f", "1")
        ])
    );
    // a timestamp field counts as its epoch ms; strings and bools as missing
    let rows = f.publish("/A/1", &[("p", Value::Timestamp(10)), ("v", s("x"))], 6);
    assert_eq!(
        rows[0].2,
        kv(&[
            ("n", "2"),
            ("s", "12"),
            ("sd", "5.656854249492381"),
            ("w", "2"),
            ("f", "2")
        ])
    );
}
