//! Order journal bench (SCENARIOS §3 shape): ~305-byte orders appended at a steady rate with group
//! commit; latency = append call -> durable acknowledgement (after fdatasync). Reports mean, p50, p90,
//! p95, p99, max, std dev and achieved throughput per rate, plus an unpaced run for peak throughput.
//!
//! Latency counts from each order's scheduled creation time (open loop, no coordinated omission).
//!
//! `cargo bench --no-default-features --bench journal [-- --secs 10 --rates 1000,5000 --dir /path]`
//! The journal lives under Cargo's target tmp dir (same disk as the build) unless `--dir` is given.
//!
//! `-- --disk [--syncs 5000]`: instead, the disk alone: latency of one durable 4 KiB append per way
//! of making it durable (fdatasync, O_DSYNC, O_DIRECT|O_DSYNC, sync_file_range + fdatasync); see
//! `support/disk.rs`.

#[path = "support/disk.rs"]
mod disk;
#[path = "support/mod.rs"]
mod support;

use hdrhistogram::Histogram;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tidewire_engine::journal::{CommitTiming, Journal, JournalOptions};

/// A 305-byte FIX-like order body (the STAC message size).
fn order_body(i: u64) -> Vec<u8> {
    let s = format!(
        "8=FIX.4.2|35=D|49=TRADER{:04}|56=TIDEWIRE|11=ORD{:012}|55=/FX/EURUSD|54={}|38={}|40=2|44=1.{:05}|59=0|60=20261122-23:00:00.000|",
        i % 2000,
        i,
        1 + i % 2,
        1000 + i % 9000,
        i % 100_000
    );
    let mut b = s.into_bytes();
    b.resize(305, b'.');
    b
}

fn fresh_journal(dir: &std::path::Path, commits: Arc<Mutex<Vec<CommitTiming>>>) -> Journal {
    let _ = std::fs::remove_dir_all(dir);
    let mut o = JournalOptions::new(dir);
    o.commit_hook = Some(Arc::new(move |t: &CommitTiming| commits.lock().unwrap().push(*t)));
    Journal::open(o).expect("open journal").0
}

/// Where commit time went, by kind of group: a histogram (ns) per kind, printed as one row.
struct Breakdown {
    rows: Vec<(&'static str, Histogram<u64>)>,
}

impl Breakdown {
    fn new(commits: &[CommitTiming]) -> Breakdown {
        let h = || Histogram::<u64>::new_with_bounds(1_000, 60_000_000_000, 3).unwrap();
        let mut rows = vec![
            ("sync, plain", h()),
            ("sync, zero writes running", h()),
            ("sync, file grew", h()),
            ("group with rotation: rotate", h()),
            ("wait for group (oldest)", h()),
            ("write", h()),
            ("completions", h()),
        ];
        for c in commits {
            let class = if c.grew {
                2
            } else if c.zero_fill_overlap {
                1
            } else {
                0
            };
            let mut rec = |i: usize, ns: u64| rows[i].1.record(ns.max(1_000)).unwrap();
            rec(class, c.sync_nanos);
            if c.rotations > 0 {
                rec(3, c.rotate_nanos);
            }
            rec(4, c.queued_nanos);
            rec(5, c.write_nanos);
            rec(6, c.complete_nanos);
        }
        Breakdown { rows }
    }

    fn print(&self, rate: u64) {
        let us = |ns: u64| ns as f64 / 1_000.0;
        for (name, h) in &self.rows {
            if h.is_empty() {
                continue;
            }
            let over: u64 = h
                .iter_recorded()
                .filter(|v| v.value_iterated_to() > 2_000_000)
                .map(|v| v.count_at_value())
                .sum();
            println!(
                "| {rate} | {name} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {over} |",
                h.len(),
                h.mean() / 1_000.0,
                us(h.value_at_quantile(0.5)),
                us(h.value_at_quantile(0.99)),
                us(h.max()),
                h.mean() * h.len() as f64 / 1e6,
            );
        }
    }
}

/// One run: `count` appends, paced at `rate`/s (0 = unpaced). Returns (histogram ns, elapsed to last ack).
fn run(
    dir: &std::path::Path,
    rate: u64,
    count: u64,
) -> (
    Histogram<u64>,
    Duration,
    tidewire_engine::journal::JournalStats,
    f64,
    Breakdown,
) {
    let commits = Arc::new(Mutex::new(Vec::with_capacity(100_000)));
    let journal = fresh_journal(dir, commits.clone());
    let mut lag_total = 0u128;
    let hist = Arc::new(Mutex::new(
        Histogram::<u64>::new_with_bounds(1_000, 60_000_000_000, 3).unwrap(),
    ));
    let (done_tx, done_rx) = crossbeam_channel::bounded::<Instant>(1);
    let start = Instant::now();
    for i in 0..count {
        // Open-loop schedule: order i is created at start + i / rate. The producer sleeps (never
        // spins: on 2 cores a spinning producer starves the writer) and, when a sleep overshoots,
        // submits the orders that fell due in a burst. Latency counts from the scheduled creation
        // time, so producer lateness is charged to the measurement, not hidden.
        let created = match (1_000_000_000u64).checked_div(rate) {
            Some(period) => {
                let due = start + Duration::from_nanos(i * period);
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                due
            }
            None => Instant::now(),
        };
        lag_total += (Instant::now() - created).as_nanos();
        let h = hist.clone();
        let last = i + 1 == count;
        let done = done_tx.clone();
        journal
            .append(order_body(i), move |r| {
                r.expect("durable");
                let now = Instant::now();
                h.lock().unwrap().record((now - created).as_nanos() as u64).unwrap();
                if last {
                    let _ = done.send(now);
                }
            })
            .expect("append");
    }
    let end = done_rx.recv_timeout(Duration::from_secs(120)).expect("last ack");
    let stats = journal.stats();
    journal.close().unwrap();
    let h = hist.lock().unwrap().clone();
    let breakdown = Breakdown::new(&commits.lock().unwrap());
    (h, end - start, stats, lag_total as f64 / count as f64, breakdown)
}

fn main() {
    let a = support::rate_args(
        10,
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("journal-bench"),
    );
    if std::env::args().any(|x| x == "--list") {
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    if support::has_flag(&args, "--disk") {
        let syncs = support::arg_value(&args, "--syncs").map_or(5_000, |s| s.parse().expect("--syncs N"));
        disk::run(&a.dir, syncs);
        let _ = std::fs::remove_dir_all(&a.dir);
        return;
    }
    support::print_header(&[
        "fsyncs",
        "orders/fsync",
        "mean fsync µs",
        "max fsync µs",
        "producer lag µs",
    ]);
    let _ = run(&a.dir, 5_000, 5_000); // warm-up (file system, page cache, threads)
    let mut runs: Vec<(u64, u64)> = a.rates.iter().map(|r| (*r, r * a.secs)).collect();
    runs.push((0, 200_000));
    let mut breakdowns = Vec::new();
    for (rate, count) in runs {
        let (h, elapsed, s, lag, b) = run(&a.dir, rate, count);
        breakdowns.push((rate, b));
        let us = |ns: f64| ns / 1_000.0;
        println!(
            "{} {} | {:.1} | {:.0} | {:.0} | {:.0} |",
            support::rate_row(rate, count, elapsed, &h),
            s.syncs,
            count as f64 / s.syncs.max(1) as f64,
            us(s.sync_nanos_total as f64 / s.syncs.max(1) as f64),
            us(s.sync_nanos_max as f64),
            us(lag),
        );
    }
    println!();
    println!("Commit groups by kind (journal clock): time per group");
    println!("| rate | kind | groups | mean µs | p50 µs | p99 µs | max µs | total ms | > 2 ms |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (rate, b) in &breakdowns {
        b.print(*rate);
    }
    let _ = std::fs::remove_dir_all(&a.dir);
}
