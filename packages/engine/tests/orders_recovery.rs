//! Restart on the same journal: trade records and blotters are rebuilt (newest first), order ids
//! and journal seqs continue without gaps, duplicates stay duplicates; a torn tail is cut and
//! reported.

#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::io::{Seek, SeekFrom, Write};

use journal_util::TempDir;
use orders_util::{order, orders_config, Rig};
use tidewire_engine::journal::Journal;
use tidewire_engine::order_book::{OrderEvent, Side, TimeInForce};

/// Alice: limit orders a, b (working), c (cancelled), a filled market order m. Returns the last seq.
fn trade(rig: &mut Rig) -> u64 {
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    for (i, cid) in ["a", "b", "c"].into_iter().enumerate() {
        rig.engine
            .order_submit(sid, i as u32 + 1, order(cid, "/FX/EURUSD", Side::Buy, 10.0, Some(1.0)))
            .unwrap();
        assert_eq!(rig.reply(sid, i as u32 + 1)["type"], "order.ack");
    }
    rig.engine.order_cancel(sid, 4, "c".into()).unwrap();
    assert_eq!(rig.reply(sid, 4)["status"], "cancelled");
    rig.engine
        .order_submit(sid, 5, order("m", "/FX/EURUSD", Side::Sell, 10.0, None))
        .unwrap();
    rig.reply(sid, 5);
    rig.until("all done", |e| e.stats().orders_open == 2);
    // accepts 4 (each acknowledged by its entry) + cancel 1 + fills 3 = 8
    rig.until("fills durable", |e| e.stats().journal_durable_seq == 8);
    8
}

/// Alice's blotter, newest first: (subject, status, version, seq) per row.
fn blotter(rig: &mut Rig, sid: u32, req_id: u32) -> Vec<(String, String, u64, u64)> {
    rig.engine
        .view_create(
            sid,
            req_id,
            "/BLOTTER/alice".into(),
            String::new(),
            String::new(),
            0,
            10,
        )
        .unwrap();
    let v = rig.reply(sid, req_id);
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let f = &r["fields"];
            (
                r["subject"].as_str().unwrap().into(),
                f["status"].as_str().unwrap().into(),
                f["version"].as_u64().unwrap(),
                f["seq"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn row(id: u64, status: &str, version: u64, seq: u64) -> (String, String, u64, u64) {
    (format!("/TRADE/alice/{id}"), status.into(), version, seq)
}

#[test]
fn restart_rebuilds_records_and_blotters_and_continues() {
    let dir = TempDir::new("orders-restart");
    let mut rig = Rig::start(orders_config(dir.path()));
    let last = trade(&mut rig);
    rig.engine.shutdown().unwrap();

    let mut rig = Rig::start(orders_config(dir.path()));
    let rec = rig.engine.recovery().unwrap();
    assert_eq!((rec.records, rec.last_seq, rec.bytes_dropped), (last, last, 0));
    assert_eq!((rec.orders, rec.open_orders, rec.log_line), (4, 2, None));
    let s = rig.engine.stats();
    assert_eq!((s.orders_open, s.journal_durable_seq), (2, last));
    let sid = rig.session("alice");
    rig.engine
        .view_create(sid, 1, "/BLOTTER/alice".into(), String::new(), String::new(), 0, 10)
        .unwrap();
    let v = rig.reply(sid, 1);
    let rows: Vec<(String, String)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["subject"].as_str().unwrap().into(),
                r["fields"]["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("4", "filled"),
        ("3", "cancelled"),
        ("2", "acknowledged"),
        ("1", "acknowledged"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(id, s)| (format!("/TRADE/alice/{id}"), (*s).into()))
        .collect();
    assert_eq!(rows, want);
    let filled = &v["rows"][0]["fields"];
    assert_eq!(
        (filled["filledQuantity"].as_u64(), filled["seq"].as_u64()),
        (Some(10), Some(last))
    );
    // Ids, seqs and per-user client order ids carry on.
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.engine
        .order_submit(sid, 2, order("a", "/FX/EURUSD", Side::Buy, 1.0, Some(1.0)))
        .unwrap();
    assert_eq!(rig.reply(sid, 2)["rule"], "duplicate");
    rig.engine
        .order_submit(sid, 3, order("d", "/FX/EURUSD", Side::Buy, 1.0, Some(1.0)))
        .unwrap();
    let ack = rig.reply(sid, 3);
    assert_eq!(
        (ack["orderId"].as_u64(), ack["seq"].as_u64()),
        (Some(5), Some(last + 1)),
        "{ack}"
    );
    rig.engine.order_cancel(sid, 4, "b".into()).unwrap();
    assert_eq!(
        rig.reply(sid, 4)["status"],
        "cancelled",
        "recovered orders can be cancelled"
    );
    rig.engine.shutdown().unwrap();
}

#[test]
fn torn_tail_is_cut_and_reported() {
    let dir = TempDir::new("orders-torn");
    let mut rig = Rig::start(orders_config(dir.path()));
    let last = trade(&mut rig);
    rig.engine.shutdown().unwrap();
    // A crash mid-write leaves junk right after the last complete record of the live segment
    // (picked by its header: a preallocated spare may sort after it by name, or hold it).
    let seg = journal_util::live_segment(dir.path());
    let end = journal_util::data_end(&seg);
    let mut f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
    f.seek(SeekFrom::Start(end)).unwrap();
    f.write_all(&[0xAB; 37]).unwrap();
    f.sync_all().unwrap();
    drop(f);

    let mut rig = Rig::start(orders_config(dir.path()));
    let rec = rig.engine.recovery().unwrap();
    assert_eq!(rec.bytes_dropped, 37, "{rec:?}");
    let line = rec.log_line.clone().unwrap();
    assert!(
        line.contains("torn tail") && line.contains(&format!("after seq {last}")),
        "{line}"
    );
    assert_eq!((rec.records, rec.orders), (last, 4), "every durable entry survived");
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.engine
        .order_submit(sid, 1, order("e", "/FX/EURUSD", Side::Buy, 1.0, Some(1.0)))
        .unwrap();
    let ack = rig.reply(sid, 1);
    assert_eq!(ack["seq"].as_u64(), Some(last + 1), "{ack}");
    rig.engine.shutdown().unwrap();
    let again = Rig::start(orders_config(dir.path()));
    assert_eq!(again.engine.recovery().unwrap().bytes_dropped, 0, "clean after the cut");
    again.engine.shutdown().unwrap();
}

#[test]
fn a_journal_with_accept_and_acknowledgement_as_two_entries_replays() {
    let dir = TempDir::new("orders-two-entry");
    // The two-entry form: order 1 accepted, acknowledged, partly filled; order 2's accept durable
    // but its acknowledgement never written (the process stopped in between).
    let accept = |order_id: u64, cid: &str| OrderEvent::Accepted {
        order_id,
        ts: 1_700_000_000_000,
        user: "alice".into(),
        client_order_id: cid.into(),
        instrument: "/FX/EURUSD".into(),
        side: Side::Buy,
        quantity: 10,
        price: Some(1.0),
        time_in_force: TimeInForce::Gtc,
        acknowledged: false,
        origin: None,
    };
    let old = [
        accept(1, "a"),
        OrderEvent::Acknowledged {
            order_id: 1,
            ts: 1_700_000_000_001,
        },
        OrderEvent::Filled {
            order_id: 1,
            ts: 1_700_000_000_002,
            quantity: 4,
            price: 1.0,
        },
        accept(2, "b"),
    ];
    let (j, _) = Journal::open(journal_util::options(dir.path())).unwrap();
    for ev in &old {
        j.append_wait(ev.encode()).unwrap();
    }
    j.close().unwrap();

    let mut rig = Rig::start(orders_config(dir.path()));
    let rec = rig.engine.recovery().unwrap();
    assert_eq!((rec.records, rec.last_seq, rec.orders, rec.open_orders), (4, 4, 2, 2));
    // Order 2 is acknowledged at start, by an entry of its own (seq 5).
    rig.until("order 2 acknowledged", |e| e.stats().journal_durable_seq == 5);
    let sid = rig.session("alice");
    let want = [row(2, "acknowledged", 2, 5), row(1, "partiallyFilled", 3, 3)];
    assert_eq!(blotter(&mut rig, sid, 1), want);
    // New orders take one entry each, after the old ones.
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.engine
        .order_submit(sid, 2, order("c", "/FX/EURUSD", Side::Buy, 1.0, Some(1.0)))
        .unwrap();
    let ack = rig.reply(sid, 2);
    assert_eq!(
        (ack["orderId"].as_u64(), ack["seq"].as_u64()),
        (Some(3), Some(6)),
        "{ack}"
    );
    rig.engine.order_cancel(sid, 3, "a".into()).unwrap();
    assert_eq!(rig.reply(sid, 3)["seq"].as_u64(), Some(7));
    rig.engine.shutdown().unwrap();

    // Both forms in one journal replay (the blotter shows what restore published, before any
    // command: nothing was left New).
    let mut rig = Rig::start(orders_config(dir.path()));
    let rec = rig.engine.recovery().unwrap();
    assert_eq!((rec.records, rec.last_seq, rec.orders, rec.open_orders), (7, 7, 3, 2));
    let sid = rig.session("alice");
    let want = [
        row(3, "acknowledged", 2, 6),
        row(2, "acknowledged", 2, 5),
        row(1, "cancelled", 4, 7),
    ];
    assert_eq!(blotter(&mut rig, sid, 1), want);
    rig.engine.shutdown().unwrap();
}
