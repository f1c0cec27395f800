//! Orders through the running engine: submit -> durable -> `order.ack` (never before the journal's
//! fdatasync returned), rejects that change nothing, cancel and amend.

#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use journal_util::TempDir;
use orders_util::{order, orders_config, Rig};
use tidewire_engine::order_book::Side;
use tidewire_engine::runtime::Engine;
use tidewire_engine::ErrorCode;

/// Holds the journal writer inside its sync hook while closed.
#[derive(Default)]
struct Gate {
    state: Mutex<(bool, Vec<u64>)>,
    cv: Condvar,
}

impl Gate {
    fn hold(&self) {
        self.state.lock().unwrap().0 = true;
    }
    fn release(&self) {
        self.state.lock().unwrap().0 = false;
        self.cv.notify_all();
    }
    fn passed(&self, seq: u64) {
        let mut g = self.state.lock().unwrap();
        g.1.push(seq);
        self.cv.notify_all();
        let deadline = Instant::now() + Duration::from_secs(10);
        while g.0 && Instant::now() < deadline {
            g = self.cv.wait_timeout(g, Duration::from_millis(50)).unwrap().0;
        }
    }
    fn wait_synced(&self, seq: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut g = self.state.lock().unwrap();
        while !g.1.contains(&seq) {
            assert!(Instant::now() < deadline, "fsync of seq {seq} never happened");
            g = self.cv.wait_timeout(g, Duration::from_millis(50)).unwrap().0;
        }
    }
}

#[test]
fn ack_only_after_the_journal_entry_is_durable() {
    let dir = TempDir::new("orders-durable");
    let gate = Arc::new(Gate::default());
    let mut cfg = orders_config(dir.path());
    let g = Arc::clone(&gate);
    cfg.sync_hook = Some(Arc::new(move |seq| g.passed(seq)));
    let mut rig = Rig::start(cfg);
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    gate.hold();
    rig.engine
        .order_submit(sid, 7, order("c-1", "/FX/EURUSD", Side::Buy, 1_000_000.0, Some(1.0)))
        .unwrap();
    // The writer has fdatasynced seq 1 and is held before acknowledging: no ack may exist yet.
    gate.wait_synced(1);
    rig.pump();
    assert!(
        rig.msgs.iter().all(|(_, m)| m["type"] != "order.ack"),
        "ack before durable: {:?}",
        rig.msgs
    );
    assert_eq!(rig.engine.stats().journal_durable_seq, 0);
    gate.release();
    let ack = rig.reply(sid, 7);
    assert_eq!(
        ack.to_string(),
        r#"{"type":"order.ack","reqId":7,"action":"submit","clientOrderId":"c-1","orderId":1,"seq":1,"status":"acknowledged"}"#
    );
    assert_eq!(
        rig.engine.stats().journal_durable_seq,
        1,
        "one entry accepts and acknowledges"
    );
    let s = rig.engine.stats();
    assert_eq!((s.orders_accepted, s.orders_rejected, s.orders_open), (1, 0, 1));
    let lat = rig.engine.take_order_ack_latencies();
    assert_eq!(lat.len(), 1);
    assert!(lat[0] > 0.0);
    assert!(rig.engine.take_order_ack_latencies().is_empty(), "taken once");
    rig.engine.shutdown().unwrap();
}

/// Acks leave the journal writer thread for the worker right after the fdatasync: a session's
/// acks keep journal order, none is seen before the sync covering it, and each comes before any
/// frame of its order's trade record.
#[test]
fn acks_keep_journal_order_and_come_before_their_trade_records() {
    const N: u32 = 300;
    let dir = TempDir::new("orders-ack-order");
    let synced = Arc::new(AtomicU64::new(0));
    let mut cfg = orders_config(dir.path());
    let s = Arc::clone(&synced);
    cfg.sync_hook = Some(Arc::new(move |seq| {
        s.fetch_max(seq, Ordering::SeqCst);
    }));
    let mut rig = Rig::start(cfg);
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let subjects: Vec<String> = (1..=N).map(|id| format!("/TRADE/alice/{id}")).collect();
    rig.engine.subscribe(sid, 100_000, subjects).unwrap();
    assert_eq!(rig.reply(sid, 100_000)["type"], "record.subscribed");
    for i in 1..=N {
        // buy limits far under the ask: they stay working (no fills)
        let cid = format!("c-{i}");
        rig.engine
            .order_submit(sid, i, order(&cid, "/FX/EURUSD", Side::Buy, 10.0, Some(1.0)))
            .unwrap();
    }
    let (mut acked, mut last_seq, mut records) = (0u32, 0u64, 0u32);
    let deadline = Instant::now() + orders_util::WAIT;
    while acked < N || records < N {
        assert!(Instant::now() < deadline, "{acked} acks, {records} trade records seen");
        rig.pump();
        let durable = synced.load(Ordering::SeqCst);
        for (_, m) in rig.msgs.drain(..) {
            if m["type"] == "order.ack" {
                let seq = m["seq"].as_u64().unwrap();
                assert!(
                    seq <= durable,
                    "ack of seq {seq} before its fdatasync (synced {durable})"
                );
                assert!(seq > last_seq, "acks out of journal order: {seq} after {last_seq}");
                last_seq = seq;
                acked += 1;
                assert_eq!(m["reqId"], acked, "{m}");
                assert_eq!(m["orderId"], u64::from(acked), "{m}");
                assert_eq!(m["status"], "acknowledged", "{m}");
            } else if let Some(subject) = m["subject"].as_str() {
                let id: u32 = subject.rsplit('/').next().unwrap().parse().unwrap();
                assert!(id <= acked, "trade record of order {id} before its ack ({acked} acked)");
                records += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    rig.engine.shutdown().unwrap();
}

#[test]
fn rejects_name_field_and_rule_and_write_nothing() {
    let dir = TempDir::new("orders-reject");
    let mut rig = Rig::start(orders_config(dir.path()));
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.publish(r#"[{"type":"record.publish","subject":"/NEWS/1","fields":{"headline":"x"}}]"#);
    let cases: [(u32, _, &str, &str); 5] = [
        (
            1,
            order("a", "/FX/EURUSD", Side::Buy, 0.0, None),
            "quantity",
            "notPositive",
        ),
        (
            2,
            order("b", "/FX/EURUSD", Side::Buy, 5e9, None),
            "quantity",
            "aboveLimit",
        ),
        (
            3,
            order("c", "/FX/NOPE", Side::Buy, 1.0, None),
            "instrument",
            "unknownInstrument",
        ),
        (
            4,
            order("d", "/NEWS/1", Side::Buy, 1.0, None),
            "instrument",
            "unknownInstrument",
        ),
        (
            5,
            order("e", "/FX/EURUSD", Side::Buy, 1.0, Some(1.08505)),
            "price",
            "offTick",
        ),
    ];
    for (req, o, field, rule) in cases {
        rig.engine.order_submit(sid, req, o).unwrap();
        let r = rig.reply(sid, req);
        assert_eq!(r["type"], "order.reject", "{r}");
        assert_eq!(
            (r["field"].as_str(), r["rule"].as_str()),
            (Some(field), Some(rule)),
            "{r}"
        );
        assert_eq!(r["action"], "submit");
    }
    rig.engine.order_cancel(sid, 6, "zzz".into()).unwrap();
    let r = rig.reply(sid, 6);
    assert_eq!(
        (r["field"].as_str(), r["rule"].as_str()),
        (Some("clientOrderId"), Some("unknownOrder"))
    );
    // A user name that cannot be a subject segment cannot own /TRADE/<user>/... records.
    let odd = rig.session("a b");
    rig.engine
        .order_submit(odd, 7, order("f", "/FX/EURUSD", Side::Buy, 1.0, None))
        .unwrap();
    let r = rig.reply(odd, 7);
    assert_eq!(
        (r["field"].as_str(), r["rule"].as_str()),
        (Some("user"), Some("notEntitled")),
        "{r}"
    );
    let s = rig.engine.stats();
    assert_eq!((s.orders_accepted, s.orders_rejected, s.journal_durable_seq), (0, 7, 0));
    rig.engine.shutdown().unwrap();
    let again = Engine::start_with_orders(Default::default(), Some(orders_config(dir.path()))).unwrap();
    let rec = again.recovery().unwrap();
    assert_eq!(
        (rec.records, rec.last_seq, rec.orders),
        (0, 0, 0),
        "nothing was journaled"
    );
    again.shutdown().unwrap();
}

#[test]
fn cancel_and_amend_are_acked_when_durable() {
    let dir = TempDir::new("orders-cancel");
    let mut rig = Rig::start(orders_config(dir.path()));
    let sid = rig.session("alice");
    let other = rig.session("bob");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    // A buy limit far under the ask never fills.
    rig.engine
        .order_submit(sid, 1, order("c-1", "/FX/EURUSD", Side::Buy, 100.0, Some(1.0)))
        .unwrap();
    assert_eq!(rig.reply(sid, 1)["type"], "order.ack");
    rig.engine
        .order_submit(sid, 2, order("c-1", "/FX/EURUSD", Side::Buy, 1.0, None))
        .unwrap();
    let dup = rig.reply(sid, 2);
    assert_eq!(
        (dup["field"].as_str(), dup["rule"].as_str()),
        (Some("clientOrderId"), Some("duplicate"))
    );
    rig.engine
        .order_amend(sid, 3, "c-1".into(), Some(200.0), Some(1.0001))
        .unwrap();
    let a = rig.reply(sid, 3);
    assert_eq!(
        (a["type"].as_str(), a["action"].as_str()),
        (Some("order.ack"), Some("amend")),
        "{a}"
    );
    assert_eq!(a["status"], "acknowledged");
    rig.engine.order_amend(sid, 4, "c-1".into(), None, None).unwrap();
    assert_eq!(rig.reply(sid, 4)["rule"], "noChange");
    // Another user's session cannot touch it (client order ids are per user).
    rig.engine.order_cancel(other, 5, "c-1".into()).unwrap();
    assert_eq!(rig.reply(other, 5)["rule"], "unknownOrder");
    rig.engine.order_cancel(sid, 6, "c-1".into()).unwrap();
    let c = rig.reply(sid, 6);
    assert_eq!(
        (c["status"].as_str(), c["orderId"].as_u64()),
        (Some("cancelled"), Some(1)),
        "{c}"
    );
    let seq = c["seq"].as_u64().unwrap();
    assert_eq!(seq, 3, "accept and acknowledge 1, amend 2, cancel 3");
    rig.engine.order_cancel(sid, 7, "c-1".into()).unwrap();
    let r = rig.reply(sid, 7);
    assert_eq!(
        (r["field"].as_str(), r["rule"].as_str()),
        (Some("order"), Some("notOpen"))
    );
    let s = rig.engine.stats();
    assert_eq!((s.orders_accepted, s.orders_open, s.journal_durable_seq), (1, 0, 3));
    rig.engine.shutdown().unwrap();
}

#[test]
fn orders_disabled_without_a_journal() {
    let e = Engine::start(Default::default()).unwrap();
    let err = e
        .order_submit(1, 1, order("c", "/FX/EURUSD", Side::Buy, 1.0, None))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable);
    assert!(err.to_string().contains("journalDir"), "{err}");
    assert!(e.recovery().is_none());
    assert!(e.take_order_ack_latencies().is_empty());
    e.shutdown().unwrap();
}

#[test]
fn an_unusable_journal_dir_stops_startup_naming_the_setting() {
    let dir = TempDir::new("orders-badjournal");
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let err = Engine::start_with_orders(Default::default(), Some(orders_config(&file))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Internal);
    assert!(err.to_string().contains("journalDir"), "{err}");
    // A journal holding something that is not an order event is refused too (not silently skipped).
    let other = dir.path().join("foreign");
    let (j, _) =
        tidewire_engine::journal::Journal::open(tidewire_engine::journal::JournalOptions::new(&other)).unwrap();
    j.append_wait(b"not an order event".to_vec()).unwrap();
    j.close().unwrap();
    let err = Engine::start_with_orders(Default::default(), Some(orders_config(&other))).unwrap_err();
    assert!(err.to_string().contains("journal seq 1"), "{err}");
}

/// The one-call submit of a client frame: entitlement, then the caller's order token, then the
/// order; frames the reader does not take are left alone whatever the grants.
#[test]
fn order_frames_are_checked_against_the_grants_then_the_token_then_submitted() {
    use tidewire_engine::runtime::FrameSubmit;
    use tidewire_engine::wire::OrderGrants;

    let dir = TempDir::new("orders-frame");
    let mut rig = Rig::start(orders_config(dir.path()));
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let grants = OrderGrants::compile("alice", "trader", &["/FX/*", "!/FX/USDRUB"], None, &["T2"]).unwrap();
    let frame = |req: u32, cid: &str, instrument: &str| {
        format!(
            r#"{{"type":"order.submit","reqId":{req},"clientOrderId":"{cid}","instrument":"{instrument}","side":"buy","quantity":1000,"price":1.0,"timeInForce":"day"}}"#
        )
    };
    let e = rig
        .engine
        .order_submit_frame(sid, frame(3, "c-1", "/FX/USDRUB").as_bytes(), &grants, true)
        .unwrap_err();
    assert_eq!(
        (e.code(), e.field(), e.to_string().as_str()),
        (
            ErrorCode::NotEntitled,
            Some("instrument"),
            "user 'alice' (role trader) may not order '/FX/USDRUB'"
        )
    );
    // another tier's price is refused before the token counts
    let e = rig
        .engine
        .order_submit_frame(sid, frame(4, "c-1", "/FX/EURUSD@T2").as_bytes(), &grants, false)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotEntitled);
    let f = frame(5, "c-1", "/FX/EURUSD");
    assert_eq!(
        rig.engine
            .order_submit_frame(sid, f.as_bytes(), &grants, false)
            .unwrap(),
        FrameSubmit::NoToken
    );
    for other in [
        r#"{"type":"order.cancel","reqId":6,"clientOrderId":"c-1"}"#,
        "[1]",
        "",
        r#"{"type":"order.submit"}"#,
    ] {
        assert_eq!(
            rig.engine
                .order_submit_frame(sid, other.as_bytes(), &grants, true)
                .unwrap(),
            FrameSubmit::NotTaken
        );
    }
    assert_eq!(
        rig.engine.order_submit_frame(sid, f.as_bytes(), &grants, true).unwrap(),
        FrameSubmit::Submitted(5)
    );
    let ack = rig.reply(sid, 5);
    assert_eq!(
        (ack["type"].as_str(), ack["orderId"].as_u64()),
        (Some("order.ack"), Some(1))
    );
    // nothing of the refused or token-less frames reached the desk
    rig.pump();
    assert!(
        rig.msgs.iter().all(|(_, m)| m["reqId"] != 3 && m["reqId"] != 4),
        "{:?}",
        rig.msgs
    );
    assert_eq!(rig.engine.stats().journal_durable_seq, 1);
}
