//! Full engine order path (napi-free): `Engine::order_submit` -> engine thread (validation against
//! the store, order book) -> journal group commit (fdatasync) -> on the journal writer thread, at
//! the end of the group: `order.ack` into the worker's ready queue (the worker woken) and the
//! completion to the engine thread (trade record + blotter publish, acknowledgement journaled) ->
//! a worker thread drains the ack. Orders are paced at a steady rate from one
//! producer thread over 8 sessions (8 users); latency = the order's scheduled creation time -> the
//! worker sees its `order.ack` (open loop: a late producer is charged to the latency). Also prints
//! the engine's own accept -> ack-enqueued latency (`take_order_ack_latencies`).
//!
//! Orders are limit buys under the market (they stay working: every order is indexed for the
//! simulator and visited by its 250 ms pass, the worst case for the working set).
//!
//! `cargo bench --no-default-features --bench orders [-- --secs 5 --rates 1000,20000 --dir /path --no-fsync]`

#[path = "support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tidewire_engine::config::{EngineConfig, OrdersConfig};
use tidewire_engine::order_book::{Side, TimeInForce};
use tidewire_engine::runtime::{Engine, OrderSubmit, Waker};

const SESSIONS: u32 = 8;

struct Unpark(std::thread::Thread);

impl Waker for Unpark {
    fn wake(&self) {
        self.0.unpark();
    }
}

/// (reqId, journal seq) of every `order.ack` in `frame`.
fn acks(frame: &[u8], out: &mut Vec<(u64, u64)>) {
    const KEY: &[u8] = b"{\"type\":\"order.ack\",\"reqId\":";
    const SEQ: &[u8] = b",\"seq\":";
    let number = |j: &mut usize| {
        let mut n = 0u64;
        while let Some(d) = frame.get(*j).filter(|b| b.is_ascii_digit()) {
            n = n * 10 + u64::from(d - b'0');
            *j += 1;
        }
        n
    };
    let mut i = 0;
    while let Some(p) = frame[i..].windows(KEY.len()).position(|w| w == KEY) {
        let mut j = i + p + KEY.len();
        let req = number(&mut j);
        let seq = match frame[j..].windows(SEQ.len()).position(|w| w == SEQ) {
            Some(q) => {
                j += q + SEQ.len();
                number(&mut j)
            }
            None => 0,
        };
        out.push((req, seq));
        i = j;
    }
}

/// Splits each order's latency at the fdatasync that made its accept durable (the sync hook's
/// time for the first sync covering its journal seq): created -> durable, durable -> ack seen.
struct Split {
    to_durable: Histogram<u64>,
    to_ack: Histogram<u64>,
}

impl Split {
    /// `syncs`: (ns since start, last durable seq) in sync order; `seen`: (created ns, seq, seen ns).
    fn new(syncs: &[(u64, u64)], seen: &[(u64, u64, u64)]) -> Split {
        let h = || Histogram::<u64>::new_with_bounds(1_000, 120_000_000_000, 3).expect("hist");
        let (mut to_durable, mut to_ack) = (h(), h());
        for &(created, seq, at) in seen {
            let i = syncs.partition_point(|&(_, last)| last < seq);
            let Some(&(durable, _)) = syncs.get(i) else { continue };
            to_durable
                .record(durable.saturating_sub(created).max(1_000))
                .expect("record");
            to_ack.record(at.saturating_sub(durable).max(1_000)).expect("record");
        }
        Split { to_durable, to_ack }
    }
}

struct Run {
    hist: Histogram<u64>,
    split: Split,
    engine_hist: Histogram<u64>,
    elapsed: Duration,
    lag_us: f64,
    durable_seq: u64,
    engine_cpu_ns: u64,
    journal_cpu_ns: u64,
}

/// One run of `count` orders at `rate`/s on a fresh journal.
fn run(dir: &std::path::Path, rate: u64, count: u64, fsync: bool) -> Run {
    let _ = std::fs::remove_dir_all(dir);
    let start = Instant::now();
    let syncs = Arc::new(Mutex::new(Vec::<(u64, u64)>::with_capacity(1 << 16)));
    let mut oc = OrdersConfig::new(dir);
    oc.journal_fsync = fsync;
    let hook_syncs = Arc::clone(&syncs);
    oc.sync_hook = Some(Arc::new(move |last| {
        let now = start.elapsed().as_nanos() as u64;
        hook_syncs.lock().expect("syncs").push((now, last));
    }));
    let engine = Engine::start_with_orders(EngineConfig::default(), Some(oc)).expect("engine");
    engine
        .ingest_str(r#"[{"type":"record.publish","subject":"/FX/EURUSD","fields":{"bid":1.0850,"ask":1.0852}}]"#)
        .expect("market");
    // Orders take the control lane, served before queued ingest: wait until the market is applied.
    let applied_by = Instant::now() + Duration::from_secs(10);
    while engine.ingest_queue() != (0, 0) {
        assert!(Instant::now() < applied_by, "market publish not applied");
        std::thread::sleep(Duration::from_micros(100));
    }
    let created: Arc<Vec<AtomicU64>> = Arc::new((0..count).map(|_| AtomicU64::new(0)).collect());
    let consumer = {
        let engine = engine.clone();
        let created = Arc::clone(&created);
        let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
        let h = std::thread::spawn(move || {
            let worker = engine
                .register_worker(Box::new(Unpark(std::thread::current())))
                .expect("worker");
            ready_tx.send(worker).expect("ready");
            let mut hist = Histogram::<u64>::new_with_bounds(1_000, 120_000_000_000, 3).expect("hist");
            let mut ids = Vec::new();
            let mut seen = Vec::with_capacity(count as usize);
            let deadline = Instant::now() + Duration::from_secs(count / rate.max(1_000) + 120);
            while hist.len() < count && Instant::now() < deadline {
                match engine.drain(worker).expect("drain") {
                    Some(d) => {
                        let now = start.elapsed().as_nanos() as u64;
                        ids.clear();
                        acks(&d.data, &mut ids);
                        for &(id, seq) in &ids {
                            let c = created[id as usize].load(Ordering::Acquire);
                            hist.record(now.saturating_sub(c).max(1_000)).expect("record");
                            seen.push((c, seq, now));
                        }
                    }
                    None => std::thread::park_timeout(Duration::from_millis(5)),
                }
            }
            (hist, start.elapsed(), seen)
        });
        (h, ready_rx.recv().expect("worker id"))
    };
    let (consumer, worker) = consumer;
    let sids: Vec<u32> = (0..SESSIONS)
        .map(|u| engine.open_session(worker, &format!("trader{u}"), "").expect("session"))
        .collect();
    // rate 0: unpaced (every order due at once: peak throughput, latency = queueing).
    let period = 1_000_000_000u64.checked_div(rate).unwrap_or(0);
    let mut lag = 0u128;
    let t0 = start.elapsed().as_nanos() as u64 + 10_000_000;
    for i in 0..count {
        // Sleep (never spin: 2 cores) until order i is due; a late wake submits a burst.
        let due = t0 + i * period;
        let now = start.elapsed().as_nanos() as u64;
        if due > now {
            std::thread::sleep(Duration::from_nanos(due - now));
        }
        lag += u128::from((start.elapsed().as_nanos() as u64).saturating_sub(due));
        created[i as usize].store(due, Ordering::Release);
        let order = OrderSubmit {
            client_order_id: format!("c{i}"),
            instrument: "/FX/EURUSD".into(),
            side: Side::Buy,
            quantity: 1_000_000.0,
            price: Some(1.0),
            time_in_force: TimeInForce::Day,
        };
        engine
            .order_submit(sids[(i % u64::from(SESSIONS)) as usize], i as u32, order)
            .expect("submit");
    }
    let (hist, elapsed, seen) = consumer.join().expect("consumer");
    assert_eq!(hist.len(), count, "every order acknowledged");
    let mut engine_hist = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).expect("hist");
    for us in engine.take_order_ack_latencies() {
        engine_hist.record(us.max(1.0) as u64).expect("record");
    }
    let durable_seq = engine.stats().journal_durable_seq;
    let engine_cpu_ns = support::thread_cpu_ns("tidewire-engine");
    let journal_cpu_ns = support::thread_cpu_ns("tidewire-journa");
    engine.shutdown().expect("shutdown");
    let _ = std::fs::remove_dir_all(dir);
    let split = Split::new(&syncs.lock().expect("syncs"), &seen);
    Run {
        hist,
        split,
        engine_hist,
        elapsed: elapsed - Duration::from_nanos(t0),
        lag_us: lag as f64 / count as f64 / 1_000.0,
        durable_seq,
        engine_cpu_ns,
        journal_cpu_ns,
    }
}

fn main() {
    let a = support::rate_args(
        5,
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("orders-bench"),
    );
    if std::env::args().any(|x| x == "--list") {
        return;
    }
    support::print_header(&[
        "engine accept->ack mean / p99 µs",
        "producer lag µs",
        "journal entries",
        "engine thread CPU µs/order",
        "journal thread CPU µs/order",
        "created->durable mean / p99 µs",
        "durable->ack seen mean / p99 µs",
    ]);
    let _ = run(&a.dir, 5_000, 5_000, a.fsync); // warm-up (file system, page cache, threads)
    let mut runs: Vec<(u64, u64)> = a.rates.iter().map(|&r| (r, r * a.secs)).collect();
    runs.push((0, 100_000));
    for (rate, count) in runs {
        let r = run(&a.dir, rate, count, a.fsync);
        let us = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1_000.0;
        println!(
            "{} {:.0} / {:.0} | {:.0} | {} | {:.1} | {:.1} | {:.0} / {:.0} | {:.0} / {:.0} |",
            support::rate_row(rate, count, r.elapsed, &r.hist),
            r.engine_hist.mean(),
            r.engine_hist.value_at_quantile(0.99) as f64,
            r.lag_us,
            r.durable_seq,
            r.engine_cpu_ns as f64 / count as f64 / 1_000.0,
            r.journal_cpu_ns as f64 / count as f64 / 1_000.0,
            r.split.to_durable.mean() / 1_000.0,
            us(&r.split.to_durable, 0.99),
            r.split.to_ack.mean() / 1_000.0,
            us(&r.split.to_ack, 0.99),
        );
    }
}
