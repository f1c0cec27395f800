//! Create-to-ack of orders through the replicated order stream (cluster mode, a 3-server NATS
//! cluster with JetStream on 127.0.0.1, stream replicas 3) beside the local journal (fdatasync),
//! in one sitting. Orders are paced at a steady rate from one producer per node (open loop: the
//! latency runs from each order's scheduled time to the drain of its `order.ack`); in cluster mode
//! two nodes submit, half the orders on the leader, half forwarded by the follower.
//!
//! After the runs it prints each node's stage timing (`cluster/stages.rs`: where an order's time
//! went inside the leader and the forwarding node).
//!
//! Needs `nats-server` on the PATH. Run on purpose (with `uptime` beside it):
//! `cargo bench --no-default-features --bench cluster_orders [-- --secs 3 --rate 1000]`

#[path = "../tests/nats_util/mod.rs"]
mod nats_util;

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tidewire_engine::cluster::stages::BOUNDS_US;
use tidewire_engine::cluster::ClusterConfig;
use tidewire_engine::config::{EngineConfig, OrdersConfig};
use tidewire_engine::order_book::{Side, TimeInForce};
use tidewire_engine::runtime::{Engine, OrderSubmit, Waker};

struct Unpark(std::thread::Thread);

impl Waker for Unpark {
    fn wake(&self) {
        self.0.unpark();
    }
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn orders_config(dir: &std::path::Path) -> OrdersConfig {
    let mut c = OrdersConfig::new(dir);
    c.default_tick = 0.0001;
    c
}

/// Submits `n` orders at `rate`/s on `engine` (user `user`) and returns create-to-ack latencies
/// in µs (orders not acked within 10 s after the last one count as lost and are reported).
fn run(engine: &Engine, user: &str, n: u64, rate: u64) -> (Histogram<u64>, u64) {
    let start = Instant::now() + Duration::from_millis(50);
    let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let worker = engine
        .register_worker(Box::new(Unpark(std::thread::current())))
        .expect("worker");
    let sid = engine.open_session(worker, user, "").expect("session");
    let engine2 = engine;
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    let mut acked = 0u64;
    let mut handle = |data: &[u8], now: Instant| -> u64 {
        let mut n = 0;
        let text = String::from_utf8_lossy(data);
        for part in text.split("\"type\":\"order.ack\",\"reqId\":").skip(1) {
            let req: u64 = part
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            if req == 0 {
                continue;
            }
            let due = start + period * (req as u32 - 1);
            hist.record(now.saturating_duration_since(due).as_micros() as u64).ok();
            n += 1;
        }
        n
    };
    for i in 0..n {
        let due = start + period * i as u32;
        loop {
            let now = Instant::now();
            if let Ok(Some(d)) = engine2.drain(worker) {
                acked += handle(&d.data, now);
            }
            if now >= due {
                break;
            }
            std::thread::park_timeout(due - now);
        }
        let order = OrderSubmit {
            client_order_id: format!("{user}-{i}"),
            instrument: "/FX/EURUSD".into(),
            side: Side::Buy,
            quantity: 10.0,
            price: Some(1.0),
            time_in_force: TimeInForce::Gtc,
        };
        engine2.order_submit(sid, i as u32 + 1, order).expect("submit");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while acked < n && Instant::now() < deadline {
        if let Ok(Some(d)) = engine2.drain(worker) {
            acked += handle(&d.data, Instant::now());
        } else {
            std::thread::park_timeout(Duration::from_millis(5));
        }
    }
    (hist, n - acked)
}

fn report(label: &str, h: &Histogram<u64>, lost: u64) {
    println!(
        "{label:<34} n={:<6} mean {:>7.0} µs  p50 {:>6}  p90 {:>6}  p99 {:>6}  max {:>7}  sd {:>6.0}  not acked {lost}",
        h.len(),
        h.mean(),
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.9),
        h.value_at_quantile(0.99),
        h.max(),
        h.stdev()
    );
}

fn main() {
    if !nats_util::nats_available() {
        eprintln!("nats-server not found: nothing measured");
        return;
    }
    let secs = arg("--secs", 3);
    let rate = arg("--rate", 1000);
    let n = secs * rate;
    let market = r#"[{"type":"record.publish","subject":"/FX/EURUSD","fields":{"bid":1.1,"ask":1.1002}}]"#;

    let dir = std::env::temp_dir().join(format!("tw-bench-corders-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let local = Engine::start_with_orders(EngineConfig::default(), Some(orders_config(&dir))).expect("engine");
    local.ingest_str(market).expect("market");
    local.ingest_barrier(Duration::from_secs(5)).expect("market applied");
    let (h, lost) = run(&local, "local", n, rate);
    report(&format!("local journal, {rate}/s"), &h, lost);
    local.shutdown().expect("shutdown");
    let _ = std::fs::remove_dir_all(&dir);

    let nats = nats_util::NatsCluster::start("bench");
    let node = |name: &str| {
        let cc = ClusterConfig::new(nats.urls(), name);
        let e = Engine::start_node(EngineConfig::default(), Some(orders_config("".as_ref())), Some(cc))
            .expect("cluster node");
        e.ingest_str(market).expect("market");
        e.ingest_barrier(Duration::from_secs(5)).expect("market applied");
        e
    };
    let (a, b) = (node("a"), node("b"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while a.stats().order_leader + b.stats().order_leader == 0 {
        assert!(Instant::now() < deadline, "no order leader within 30 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (leader, follower) = if a.stats().order_leader == 1 { (a, b) } else { (b, a) };
    let half = (rate / 2).max(1);
    let l = std::thread::spawn({
        let leader = leader.clone();
        move || run(&leader, "onleader", n / 2, half)
    });
    let (hf, lost_f) = run(&follower, "onfollower", n / 2, half);
    let (hl, lost_l) = l.join().expect("leader run");
    report(&format!("stream R3, on the leader, {half}/s"), &hl, lost_l);
    report(&format!("stream R3, forwarded, {half}/s"), &hf, lost_f);
    let mut all = hl.clone();
    all.add(&hf).expect("same bounds");
    report(&format!("stream R3, both nodes, {rate}/s"), &all, lost_l + lost_f);
    // where the time went inside each node (`cluster/stages.rs`; warmup-free: the nodes took
    // nothing else)
    for (node, e) in [("leader", &leader), ("follower", &follower)] {
        for c in e.order_stages().iter().filter(|c| c.count > 0) {
            let share = |us: u64| {
                let i = BOUNDS_US.iter().position(|&b| b == us).expect("a bound");
                100.0 * c.le[i] as f64 / c.count as f64
            };
            println!(
                "  {node:<8} {:<18} n={:<7} mean {:>7.0} µs  <=1 ms {:>5.1}%  <=5 ms {:>5.1}%  <=25 ms {:>5.1}%",
                c.stage.name(),
                c.count,
                c.mean_us(),
                share(1_000),
                share(5_000),
                share(25_000)
            );
        }
    }
}
