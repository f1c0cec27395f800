//! FIX order round trip (STAC's shape): one FIX 4.4 initiator session sends NewOrderSingles at
//! a fixed rate, evenly spaced, to the FIX gateway in front of the real order desk (journal on
//! disk, fdatasync on); latency per order = reading its ExecutionReport New (150=0, sent once the
//! desk made the order durable) minus writing the D. Limit buys far below the market: no fills,
//! one report per order. Reports min, p50, p90, p99, p99.9, max and the rate achieved, per rate.
//!
//! `cargo bench --no-default-features --bench fix_order -- [--rates 1000,5000,20000]
//!  [--orders 20000] [--dir /path/on/the/disk/to/measure]`

use hdrhistogram::Histogram;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tidewire_engine::config::{EngineConfig, OrdersConfig};
use tidewire_engine::fix::acceptor::{AcceptorConfig, SessionSettings};
use tidewire_engine::fix::codec::{Builder, Frame, Framer, Parser};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::gateway::{FixGateway, GatewayConfig, OrderPort};
use tidewire_engine::fix::session::SessionConfig;
use tidewire_engine::runtime::Engine;

struct Args {
    rates: Vec<u64>,
    orders: usize,
    dir: std::path::PathBuf,
}

fn args() -> Args {
    let mut a = Args {
        rates: vec![1000, 5000, 20000],
        orders: 20_000,
        dir: std::env::temp_dir(),
    };
    let argv: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < argv.len() {
        let v = argv.get(i + 1).cloned().unwrap_or_default();
        match argv[i].as_str() {
            "--rates" => a.rates = v.split(',').map(|r| r.parse().expect("--rates: integers")).collect(),
            "--orders" => a.orders = v.parse().expect("--orders: an integer"),
            "--dir" => a.dir = v.into(),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    a
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// One message from the initiator (CLIENT -> TW, FIX 4.4).
fn message(b: &mut Builder, seq: u64, msg_type: &[u8], body: &str) -> Vec<u8> {
    b.begin(msg_type)
        .field(49, b"CLIENT")
        .field(56, b"TW")
        .field_u64(34, seq)
        .field_timestamp(52, now_ms())
        .raw(body.as_bytes());
    b.finish(b"FIX.4.4").to_vec()
}

fn run(rate: u64, orders: usize, dir: &std::path::Path) -> (Histogram<u64>, f64) {
    let journal = dir.join(format!("tw-fix-order-bench-{}-{rate}", std::process::id()));
    let _ = std::fs::remove_dir_all(&journal);
    let engine = Engine::start_with_orders(
        EngineConfig::default(),
        Some(OrdersConfig::new(journal.join("journal"))),
    )
    .expect("engine");
    engine
        .ingest_str(
            r#"[{"type":"record.publish","subject":"/FX/EURUSD","image":true,"fields":{"bid":1.085,"ask":1.0852}}]"#,
        )
        .expect("market");
    while engine.ingest_queue() != (0, 0) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let settings = SessionSettings {
        config: SessionConfig::new(Dictionary::fix44(), "TW", "CLIENT"),
        user: "bench".into(),
    };
    let mut acceptor = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), vec![settings]);
    acceptor.store_dir = Some(journal.join("fix"));
    let mut cfg = GatewayConfig::new(acceptor);
    cfg.symbol_prefixes = vec!["/FX/".into()];
    let port: Arc<dyn OrderPort> = Arc::new(engine.clone());
    let gw = FixGateway::start(cfg, port, None).expect("gateway");
    let mut s = TcpStream::connect(gw.local_addr().expect("addr")).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let mut b = Builder::new();
    s.write_all(&message(&mut b, 1, b"A", "98=0\x01108=30\x01"))
        .expect("logon");

    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..orders).map(|_| AtomicU64::new(0)).collect());
    let t0 = Instant::now();
    let reader = {
        let mut r = s.try_clone().expect("clone");
        let sent = Arc::clone(&sent);
        std::thread::spawn(move || {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
            let mut framer = Framer::new(1 << 16);
            let mut parser = Parser::new();
            let mut buf = vec![0u8; 1 << 16];
            let mut got = 0;
            while got < orders {
                let n = r.read(&mut buf).expect("read");
                assert!(n > 0, "the gateway closed the connection");
                framer.push(&buf[..n]);
                while let Some(f) = framer.next_frame() {
                    let Frame::Message(range) = f else { continue };
                    let m = parser.parse(&framer.bytes()[range]).expect("parse");
                    if m.msg_type() != b"8" || m.get(150) != Some(b"0") {
                        continue;
                    }
                    let i: usize = m.get_str(11).and_then(|c| c.parse().ok()).expect("ClOrdID");
                    let at = t0.elapsed().as_micros() as u64;
                    h.record((at - sent[i].load(Ordering::Acquire)).max(1)).expect("record");
                    got += 1;
                }
            }
            (h, t0.elapsed())
        })
    };
    let gap = Duration::from_nanos(1_000_000_000 / rate);
    for i in 0..orders {
        let due = gap * i as u32;
        while t0.elapsed() < due {
            std::hint::spin_loop();
        }
        let body =
            format!("11={i}\x0155=EURUSD\x0154=1\x0160=20260101-00:00:00.000\x0138=1\x0140=2\x0144=1\x0159=1\x01");
        let msg = message(&mut b, i as u64 + 2, b"D", &body);
        sent[i].store(t0.elapsed().as_micros() as u64, Ordering::Release);
        s.write_all(&msg).expect("write");
    }
    let (h, took) = reader.join().expect("reader");
    gw.stop();
    let _ = engine.shutdown();
    let _ = std::fs::remove_dir_all(&journal);
    (h, orders as f64 / took.as_secs_f64())
}

fn main() {
    let a = args();
    println!(
        "FIX order round trip: NewOrderSingle -> ExecutionReport New (durable), {} orders per rate, journal under {}",
        a.orders,
        a.dir.display()
    );
    println!("rate/s    achieved/s  min µs  p50 µs  p90 µs  p99 µs  p99.9 µs  max µs");
    for rate in &a.rates {
        let (h, achieved) = run(*rate, a.orders, &a.dir);
        println!(
            "{rate:<9} {achieved:<11.0} {:<7} {:<7} {:<7} {:<7} {:<9} {}",
            h.min(),
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.9),
            h.value_at_quantile(0.99),
            h.value_at_quantile(0.999),
            h.max()
        );
    }
}
