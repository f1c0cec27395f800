//! Streaming analytics statements on the engine thread (the Esper benchmark kit's shape):
//! 1,000 symbols (`S0AA` ... `S999`: the index padded with `A` to 4 characters), events
//! {ticker, price (random walk: unchanged or +-1-9 %), volume 1-9, time} round-robin over the
//! symbols, one statement per symbol (1,000 statements) of one mode at a time:
//!
//! - `STP`: `select * from /MKT/* where ticker = '<sym>'` (every event of the symbol);
//! - `L1000`: `vwap(price, volume)` over `window length 1000`;
//! - `T2s`: `vwap(price, volume)` over `window time 2 s`;
//! - `simpleL1000`: `avg(price), count(*), sum(price)` over `window length 1000`;
//! - `simpleT2s`: the same over `window time 2 s`.
//!
//! Each event is one `StatementSet::on_record` (the record as the store's `apply` leaves it:
//! its price, volume and time slots rewritten in place), the result rows cleared as a publisher
//! would take them. Per mode: a warm-up (length windows filled, time windows expiring), then
//! `--secs` of events as fast as one thread goes, each timed (`Instant` before and after: the
//! engine's latency per event, in the kit's buckets, plus mean and p99), then the same again
//! untimed (the clock read once per 256 events) for sustained events/s without the timer's cost,
//! also per second of this thread's CPU time (`ev/CPU-s`: what a core of its own does; on a
//! shared machine the wall-clock rate includes the time other processes had the core).
//!
//! `cargo bench --no-default-features --bench analytics [-- --secs 3 --modes L1000,T2s]`

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tidewire_engine::analytics::{AnalyticsLimits, Output, StatementSet};
use tidewire_engine::store::{Record, Slot};
use tidewire_engine::value::Value;

const SYMBOLS: usize = 1_000;
/// The kit's latency buckets, µs.
const BUCKETS_US: [u64; 9] = [5, 10, 15, 20, 25, 50, 100, 500, 1000];
const MODES: [&str; 5] = ["STP", "L1000", "T2s", "simpleL1000", "simpleT2s"];

/// `S0AA`, `S1AA`, ..., `S999`: `S` + the index, padded with `A` to 4 characters.
fn ticker(i: usize) -> String {
    format!("{:A<4}", format!("S{i}"))
}

fn statement(mode: &str, sym: &str) -> String {
    let from = format!("from /MKT/* where ticker = '{sym}'");
    match mode {
        "STP" => format!("select * {from}"),
        "L1000" => format!("select vwap(price, volume) as vwap {from} window length 1000"),
        "T2s" => format!("select vwap(price, volume) as vwap {from} window time 2 s"),
        "simpleL1000" => {
            format!("select avg(price) as avg, count(*) as count, sum(price) as sum {from} window length 1000")
        }
        "simpleT2s" => format!("select avg(price) as avg, count(*) as count, sum(price) as sum {from} window time 2 s"),
        _ => panic!("--modes takes {}", MODES.join(",")),
    }
}

/// xorshift64: the same walk every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The engine side of the feed: interned field ids, one record per symbol, the random walk.
struct Feed {
    subjects: Vec<String>,
    records: Vec<Record>,
    prices: Vec<f64>,
    rng: Rng,
    next: usize,
    time_ms: i64,
}

impl Feed {
    fn new(field: &mut dyn FnMut(&str) -> u32) -> Feed {
        let (t, p, v, ts) = (field("ticker"), field("price"), field("volume"), field("time"));
        let records = (0..SYMBOLS)
            .map(|i| Record {
                seq: 0,
                ts: 0.0,
                slots: vec![
                    Slot {
                        name: t,
                        value: Some(Value::Str(ticker(i).as_str().into())),
                    },
                    Slot {
                        name: p,
                        value: Some(Value::Number(100.0)),
                    },
                    Slot {
                        name: v,
                        value: Some(Value::Number(1.0)),
                    },
                    Slot {
                        name: ts,
                        value: Some(Value::Timestamp(0)),
                    },
                ],
                layout: 0,
                stale: false,
            })
            .collect();
        Feed {
            subjects: (0..SYMBOLS).map(|i| format!("/MKT/{}", ticker(i))).collect(),
            records,
            prices: vec![100.0; SYMBOLS],
            rng: Rng(0x9E37_79B9_7F4A_7C15),
            next: 0,
            time_ms: 1_700_000_000_000,
        }
    }

    /// The next event, round-robin: (subject id, subject, record), the record updated in place.
    #[inline]
    fn step(&mut self) -> (u32, &str, &Record) {
        let i = self.next;
        self.next = if i + 1 == SYMBOLS { 0 } else { i + 1 };
        let r = self.rng.next();
        // unchanged, or up or down 1-9 %
        let pct = (r % 19) as f64 - 9.0;
        self.prices[i] *= 1.0 + pct / 100.0;
        self.time_ms += 1;
        let rec = &mut self.records[i];
        rec.seq += 1;
        rec.slots[1].value = Some(Value::Number(self.prices[i]));
        rec.slots[2].value = Some(Value::Number((r >> 8) as f64 % 9.0 + 1.0));
        rec.slots[3].value = Some(Value::Timestamp(self.time_ms));
        (i as u32 + 1, &self.subjects[i], &self.records[i])
    }
}

struct Result {
    mode: String,
    timed_eps: f64,
    untimed_eps: f64,
    /// Untimed events per second of this thread's CPU time (what a core it had to itself does).
    cpu_eps: f64,
    hist: Histogram<u64>,
    rows_per_event: f64,
}

fn run(mode: &str, secs: u64) -> Result {
    let start = Instant::now();
    let mut fields: Vec<String> = Vec::new();
    let mut field = |n: &str| match fields.iter().position(|f| f == n) {
        Some(i) => i as u32 + 1,
        None => {
            fields.push(n.to_owned());
            fields.len() as u32
        }
    };
    let mut set = StatementSet::new(AnalyticsLimits::default(), start);
    for i in 0..SYMBOLS {
        set.create(&format!("q{i}"), &statement(mode, &ticker(i)), start, &mut field)
            .expect("statement");
    }
    let mut feed = Feed::new(&mut field);
    let mut out = Output::new();
    // warm-up: every length window full and time windows expiring (2.5 s of events)
    let warm_until = Instant::now() + Duration::from_millis(2_500);
    let mut n = 0u64;
    while n < 1_100 * SYMBOLS as u64 || Instant::now() < warm_until {
        let now = Instant::now();
        for _ in 0..256 {
            let (id, subject, rec) = feed.step();
            set.on_record(id, subject, rec, now, &mut out);
            out.clear();
        }
        n += 256;
    }
    // timed: each event between two clock reads
    let mut hist = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).expect("histogram");
    let rows_before = set.stats().rows;
    let t0 = Instant::now();
    let until = t0 + Duration::from_secs(secs);
    let mut timed = 0u64;
    loop {
        let a = Instant::now();
        if a >= until {
            break;
        }
        let (id, subject, rec) = feed.step();
        set.on_record(id, subject, rec, a, &mut out);
        out.clear();
        let ns = a.elapsed().as_nanos() as u64;
        hist.record(ns.max(1)).expect("record");
        timed += 1;
    }
    let timed_eps = timed as f64 / t0.elapsed().as_secs_f64();
    let rows_per_event = (set.stats().rows - rows_before) as f64 / timed as f64;
    // untimed: the engine clock read once per 256 events, as once per ingest batch
    let cpu0 = support::thread_cpu_ns("analytics");
    let t0 = Instant::now();
    let until = t0 + Duration::from_secs(secs);
    let mut untimed = 0u64;
    loop {
        let now = Instant::now();
        if now >= until {
            break;
        }
        for _ in 0..256 {
            let (id, subject, rec) = feed.step();
            set.on_record(id, subject, rec, now, &mut out);
            out.clear();
        }
        untimed += 256;
    }
    let untimed_eps = untimed as f64 / t0.elapsed().as_secs_f64();
    let cpu_ns = support::thread_cpu_ns("analytics").saturating_sub(cpu0);
    let cpu_eps = if cpu_ns > 0 {
        untimed as f64 * 1e9 / cpu_ns as f64
    } else {
        0.0
    };
    Result {
        mode: mode.to_owned(),
        timed_eps,
        untimed_eps,
        cpu_eps,
        hist,
        rows_per_event,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = support::arg_value(&args, "--secs").map_or(3, |s| s.parse().expect("--secs N"));
    let modes: Vec<String> = support::arg_value(&args, "--modes").map_or_else(
        || MODES.iter().map(|m| m.to_string()).collect(),
        |m| m.split(',').map(str::to_owned).collect(),
    );
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    println!(
        "analytics: {SYMBOLS} symbols, {SYMBOLS} statements per mode, {secs} s timed + {secs} s untimed per mode; load before: {}",
        load()
    );
    let mut header = format!(
        "{:<12} {:>11} {:>11} {:>11} {:>6} {:>8} {:>8} {:>8}",
        "mode", "ev/s", "ev/CPU-s", "ev/s timed", "rows", "mean µs", "p99 µs", "p99.9"
    );
    for b in BUCKETS_US {
        header += &format!(" {:>7}", format!("<={b}"));
    }
    header += &format!(" {:>7}", ">1000");
    println!("{header}");
    for mode in &modes {
        let r = run(mode, secs);
        let h = &r.hist;
        let us = |ns: u64| ns as f64 / 1000.0;
        let mut line = format!(
            "{:<12} {:>11.0} {:>11.0} {:>11.0} {:>6.2} {:>8.3} {:>8.3} {:>8.3}",
            r.mode,
            r.untimed_eps,
            r.cpu_eps,
            r.timed_eps,
            r.rows_per_event,
            h.mean() / 1000.0,
            us(h.value_at_quantile(0.99)),
            us(h.value_at_quantile(0.999)),
        );
        // share of events in each of the kit's buckets (the first: <= 5 µs)
        let mut below = 0u64;
        for b in BUCKETS_US {
            let upto = h.count_between(0, b * 1000);
            line += &format!(" {:>6.3}%", 100.0 * (upto - below) as f64 / h.len() as f64);
            below = upto;
        }
        line += &format!(" {:>6.3}%", 100.0 * (h.len() - below) as f64 / h.len() as f64);
        println!("{line}   (max {:.1} µs, load {})", us(h.max()), load());
    }
}
