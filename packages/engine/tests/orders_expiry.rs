//! DAY orders expire at the configured end of day (`OrdersConfig::end_of_day`), driven by the
//! injectable clock: each expiry is journaled like a cancel (reason `endOfDay`) and shows in the
//! trade record; GTC orders and DAY orders placed after the end of day stay; a restart keeps the
//! expiries, and a server down across an end of day expires the old DAY orders on its first pass.
//! Also: `shutdown` with a large queued backlog returns within its drain deadline.

#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use journal_util::TempDir;
use orders_util::{order, orders_config, Rig};
use serde_json::Value;
use tidewire_engine::config::{EndOfDay, EngineConfig, DAY_MS};
use tidewire_engine::journal::Clock;
use tidewire_engine::order_book::{Side, TimeInForce};
use tidewire_engine::runtime::Engine;

/// A wall clock the test sets (ms since the epoch).
struct TestClock(AtomicU64);

impl TestClock {
    fn set_ms(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for TestClock {
    fn now_nanos(&self) -> u64 {
        self.0.load(Ordering::SeqCst) * 1_000_000
    }
}

/// Some midnight UTC.
const DAY: u64 = 20_415 * DAY_MS;
const HOUR: u64 = 3_600_000;

fn start(dir: &TempDir, clock: &Arc<TestClock>) -> Rig {
    let mut cfg = orders_config(dir.path());
    cfg.clock = Arc::clone(clock) as Arc<dyn Clock>;
    cfg.end_of_day = Some(EndOfDay::parse("22:00").unwrap());
    let mut rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.2500, 1.2502);
    rig.pump();
    rig
}

fn status(m: &Value) -> Option<&str> {
    m["fields"]["status"].as_str()
}

#[test]
fn day_orders_expire_at_end_of_day_journaled_like_a_cancel() {
    let dir = TempDir::new("orders-expiry");
    let clock = Arc::new(TestClock(AtomicU64::new(DAY + 21 * HOUR)));
    let mut rig = start(&dir, &clock);
    let sid = rig.session("alice");
    rig.engine
        .subscribe(sid, 1, vec!["/TRADE/alice/1".into(), "/TRADE/alice/2".into()])
        .unwrap();
    rig.reply(sid, 1);
    // Limit buys far under the market: they stay working.
    rig.engine
        .order_submit(sid, 2, order("d-1", "/FX/EURUSD", Side::Buy, 10.0, Some(1.2)))
        .unwrap();
    let mut gtc = order("g-1", "/FX/EURUSD", Side::Buy, 10.0, Some(1.2));
    gtc.time_in_force = TimeInForce::Gtc;
    rig.engine.order_submit(sid, 3, gtc).unwrap();
    assert_eq!(rig.reply(sid, 2)["type"], "order.ack");
    assert_eq!(rig.reply(sid, 3)["type"], "order.ack");
    rig.until("both working", |e| e.stats().orders_open == 2);
    // Updates name records by the id their image gave.
    let id_of = |rig: &mut Rig, subject: &'static str| {
        rig.wait(sid, subject, |m| m["type"] == "record.image" && m["subject"] == subject)["id"].clone()
    };
    let (day_id, gtc_id) = (id_of(&mut rig, "/TRADE/alice/1"), id_of(&mut rig, "/TRADE/alice/2"));

    // A minute before the end of day nothing expires (a tick runs a pass).
    clock.set_ms(DAY + 22 * HOUR - 60_000);
    rig.market("/FX/EURUSD", 1.2501, 1.2503);
    rig.until("tick handled", |e| e.stats().publishes_in >= 2);
    assert_eq!(rig.engine.stats().orders_expired, 0);

    clock.set_ms(DAY + 22 * HOUR + 1);
    rig.market("/FX/EURUSD", 1.2500, 1.2502);
    let u = rig.wait(sid, "expiry of d-1", |m| {
        m["id"] == day_id && m["fields"]["status"] == "cancelled"
    });
    assert_eq!(u["fields"]["reason"], "endOfDay", "{u}");
    rig.until("expiry counted", |e| {
        e.stats().orders_expired == 1 && e.stats().orders_open == 1
    });
    assert!(
        !rig.msgs
            .iter()
            .any(|(_, m)| m["id"] == gtc_id && status(m) == Some("cancelled")),
        "GTC orders do not expire"
    );
    // A DAY order placed after the end of day lives to the next one.
    rig.engine
        .order_submit(sid, 4, order("d-2", "/FX/EURUSD", Side::Buy, 10.0, Some(1.2)))
        .unwrap();
    assert_eq!(rig.reply(sid, 4)["type"], "order.ack");
    rig.until("d-2 working", |e| e.stats().orders_open == 2);
    rig.engine.shutdown().unwrap();

    // Restart the same evening: the expiry was journaled (d-1 stays cancelled), nothing new expires.
    clock.set_ms(DAY + 22 * HOUR + 30 * 60_000);
    let mut rig = start(&dir, &clock);
    let r = rig.engine.recovery().unwrap();
    assert_eq!((r.orders, r.open_orders), (3, 2));
    let sid = rig.session("alice");
    rig.engine.subscribe(sid, 1, vec!["/TRADE/alice/1".into()]).unwrap();
    let img = rig.wait(sid, "d-1 image", |m| m["type"] == "record.image");
    assert_eq!(
        (status(&img), img["fields"]["reason"].as_str()),
        (Some("cancelled"), Some("endOfDay"))
    );
    rig.market("/FX/EURUSD", 1.2501, 1.2503);
    rig.until("tick handled", |e| e.stats().publishes_in >= 2);
    assert_eq!(rig.engine.stats().orders_expired, 0);
    rig.engine.shutdown().unwrap();

    // Down across the next end of day: d-2 expires on the first pass after the start.
    clock.set_ms(DAY + DAY_MS + 22 * HOUR + 5_000);
    let mut rig = start(&dir, &clock);
    rig.until("d-2 expired after restart", |e| {
        e.stats().orders_expired == 1 && e.stats().orders_open == 1
    });
    rig.engine.shutdown().unwrap();
    let rig = start(&dir, &clock);
    assert_eq!(rig.engine.recovery().unwrap().open_orders, 1, "only g-1 is left open");
    rig.engine.shutdown().unwrap();
}

#[test]
fn shutdown_with_a_backlog_is_bounded_by_its_drain_deadline() {
    let cfg = EngineConfig {
        shutdown_drain: Duration::ZERO,
        ..EngineConfig::default()
    };
    let engine = Engine::start(cfg).unwrap();
    let frame: String = {
        let recs: Vec<String> = (0..200)
            .map(|i| format!(r#"{{"type":"record.publish","subject":"/B/{i}","fields":{{"x":{i}}}}}"#))
            .collect();
        format!("[{}]", recs.join(","))
    };
    for _ in 0..5_000 {
        engine.ingest_str(&frame).unwrap();
    }
    let t = Instant::now();
    let report = engine.shutdown_report().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "shutdown bounded, took {:?}",
        t.elapsed()
    );
    // With no drain time, what was still queued is counted (one command per ingested frame).
    assert!(report.dropped_commands <= 5_000, "{report:?}");
    assert_eq!(report.dropped_order_requests, 0);
    assert_eq!(report.log_line().is_some(), report.dropped_commands > 0);
    assert_eq!(engine.shutdown_report().unwrap(), Default::default(), "idempotent");
    assert!(engine.ingest_str(&frame).is_err(), "shut down");
}
