//! The order lifecycle as clients see it: the execution simulator fills on market ticks and the
//! periodic pass, each durable transition updates the trade record, blotters list the user's
//! trades newest first (and a `statusCode < 10` view drops done orders), and other users' trade
//! records and blotters are refused with NOT_ENTITLED, as are sources publishing under them.

#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use journal_util::TempDir;
use orders_util::{order, orders_config, Rig};
use serde_json::Value;
use tidewire_engine::hub::ContainerOp;
use tidewire_engine::order_book::{Side, TimeInForce};
use tidewire_engine::ErrorCode;

fn status(m: &Value) -> Option<&str> {
    m["fields"]["status"].as_str()
}

/// The rows of a `view.created` reply, each mapped by `f`, in row order.
fn rows<T>(v: &Value, f: impl Fn(&Value) -> T) -> Vec<T> {
    v["rows"].as_array().unwrap().iter().map(f).collect()
}

/// The order ids of a `view.created` reply's rows, in row order.
fn order_ids(v: &Value) -> Vec<u64> {
    rows(v, |r| r["fields"]["orderId"].as_u64().unwrap())
}

/// Submits (request `req`) a buy limit `cid` of 10 /FX/EURUSD at 1.0: below the market, it rests.
fn submit_resting(rig: &Rig, sid: u32, req: u32, cid: &str) {
    rig.engine
        .order_submit(sid, req, order(cid, "/FX/EURUSD", Side::Buy, 10.0, Some(1.0)))
        .unwrap();
}

/// Opens (request `req`) a view of rows `0..size` of `user`'s blotter (natural order: newest
/// first) with filter `filter` ("" for none).
fn view_blotter(rig: &Rig, sid: u32, req: u32, user: &str, filter: &str, size: u32) {
    rig.engine
        .view_create(
            sid,
            req,
            format!("/BLOTTER/{user}"),
            filter.into(),
            String::new(),
            0,
            size,
        )
        .unwrap();
}

/// A rig where only ticks fill orders, in one fill; alice (the session returned) subscribed to
/// `/TRADE/alice/1` and submitted `l-1`, a sell limit of 50 /FX/GBPUSD at 1.2510 above the market
/// (1.2500 / 1.2502). Also returns the trade record's first image.
fn resting_sell_limit(dir: &TempDir) -> (Rig, u32, Value) {
    let mut cfg = orders_config(dir.path());
    cfg.simulator.max_partials = 0; // one fill: the whole order
    cfg.pass_interval = std::time::Duration::from_secs(3600); // only ticks drive it here
    let mut rig = Rig::start(cfg);
    let sid = rig.session("alice");
    rig.market("/FX/GBPUSD", 1.2500, 1.2502);
    rig.engine.subscribe(sid, 1, vec!["/TRADE/alice/1".into()]).unwrap();
    rig.reply(sid, 1);
    rig.engine
        .order_submit(sid, 2, order("l-1", "/FX/GBPUSD", Side::Sell, 50.0, Some(1.2510)))
        .unwrap();
    rig.reply(sid, 2);
    let image = rig.wait(sid, "image", |m| m["type"] == "record.image");
    (rig, sid, image)
}

#[test]
fn market_order_fills_in_steps_and_the_trade_record_follows() {
    let dir = TempDir::new("orders-fill");
    let mut rig = Rig::start(orders_config(dir.path()));
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.engine.subscribe(sid, 1, vec!["/TRADE/alice/1".into()]).unwrap();
    let sub = rig.reply(sid, 1);
    assert_eq!(sub["records"][0]["pending"], true, "no record before the order exists");
    rig.engine
        .order_submit(sid, 2, order("m-1", "/FX/EURUSD", Side::Buy, 1000.0, None))
        .unwrap();
    assert_eq!(rig.reply(sid, 2)["status"], "acknowledged");
    let image = rig.wait(sid, "trade record image", |m| m["type"] == "record.image");
    assert_eq!(image["subject"], "/TRADE/alice/1");
    let f = &image["fields"];
    assert_eq!(
        (f["orderId"].as_u64(), f["clientOrderId"].as_str()),
        (Some(1), Some("m-1"))
    );
    assert_eq!(
        (f["orderType"].as_str(), f["side"].as_str()),
        (Some("market"), Some("buy"))
    );
    assert_eq!(
        (f["status"].as_str(), f["statusCode"].as_u64()),
        (Some("acknowledged"), Some(2))
    );
    assert_eq!(image["types"]["created"], "timestamp");
    // Default simulator: two partial fills, then the rest; each a durable, published transition.
    let mut seen = Vec::new();
    let mut last_seq = f["seq"].as_u64().unwrap();
    loop {
        let u = rig.wait(sid, "trade record update", |m| m["type"] == "record.update");
        let s = status(&u).unwrap().to_owned();
        let seq = u["fields"]["seq"].as_u64().unwrap();
        assert!(seq > last_seq, "journal seq grows with each transition");
        last_seq = seq;
        seen.push((s.clone(), u["fields"]["filledQuantity"].as_f64().unwrap()));
        if s == "filled" {
            let f = &u["fields"];
            assert_eq!(f["statusCode"], 10);
            assert_eq!(f["filledQuantity"], 1000);
            assert!((f["averagePrice"].as_f64().unwrap() - 1.0852).abs() < 1e-9, "{u}");
            assert_eq!(f["lastFillPrice"], 1.0852);
            break;
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[..2]
        .iter()
        .all(|(s, q)| s == "partiallyFilled" && *q > 0.0 && *q < 1000.0));
    assert!(seen[0].1 < seen[1].1);
    rig.until("open count drops", |e| e.stats().orders_open == 0);
    rig.engine.shutdown().unwrap();
}

#[test]
fn limit_order_waits_for_the_market_then_fills_on_a_tick() {
    let dir = TempDir::new("orders-tick");
    let (mut rig, sid, image) = resting_sell_limit(&dir);
    assert_eq!(status(&image), Some("acknowledged"));
    assert_eq!(image["fields"]["price"], 1.251);
    // A tick that does not reach the limit changes nothing; one that does fills at the bid.
    rig.market("/FX/GBPUSD", 1.2505, 1.2507);
    rig.market("/FX/GBPUSD", 1.2512, 1.2514);
    let u = rig.wait(sid, "fill", |m| m["type"] == "record.update");
    assert_eq!(status(&u), Some("filled"), "{u}");
    assert_eq!(u["fields"]["lastFillPrice"], 1.2512);
    rig.engine.shutdown().unwrap();
}

#[test]
fn a_resting_limit_amended_across_the_market_fills_on_the_next_tick() {
    let dir = TempDir::new("orders-amend-rest");
    let (mut rig, sid, _) = resting_sell_limit(&dir);
    // A tick short of the limit: the order rests in the price index at 1.2510.
    rig.market("/FX/GBPUSD", 1.2505, 1.2507);
    rig.engine
        .order_amend(sid, 3, "l-1".into(), None, Some(1.2504))
        .unwrap();
    assert_eq!(rig.reply(sid, 3)["type"], "order.ack");
    let amended = rig.wait(sid, "amend", |m| m["type"] == "record.update");
    assert_eq!(amended["fields"]["price"], 1.2504, "{amended}");
    // The same quote again: at the old limit it would still rest; at the new one it fills.
    rig.market("/FX/GBPUSD", 1.2505, 1.2507);
    let u = rig.wait(sid, "fill", |m| m["type"] == "record.update");
    assert_eq!(status(&u), Some("filled"), "{u}");
    assert_eq!(u["fields"]["lastFillPrice"], 1.2505);
    rig.engine.shutdown().unwrap();
}

#[test]
fn ioc_without_a_touch_is_cancelled_and_market_without_market_rejected() {
    let dir = TempDir::new("orders-ioc");
    let mut rig = Rig::start(orders_config(dir.path()));
    let sid = rig.session("alice");
    rig.publish(r#"[{"type":"record.publish","subject":"/P/1","fields":{"bid":10,"ask":null}}]"#);
    let mut ioc = order("i-1", "/P/1", Side::Sell, 5.0, Some(11.0));
    ioc.time_in_force = TimeInForce::Ioc;
    rig.engine.order_submit(sid, 1, ioc).unwrap();
    rig.engine
        .order_submit(sid, 2, order("m-1", "/P/1", Side::Buy, 5.0, None))
        .unwrap();
    rig.reply(sid, 1);
    rig.reply(sid, 2);
    rig.engine
        .subscribe(sid, 3, vec!["/TRADE/alice/1".into(), "/TRADE/alice/2".into()])
        .unwrap();
    rig.reply(sid, 3);
    let mut finals = std::collections::BTreeMap::new();
    while finals.len() < 2 {
        let m = rig.wait(sid, "final states", |m| {
            m["fields"]["statusCode"].as_u64().is_some_and(|c| c >= 10)
        });
        let id = m["id"].as_u64().unwrap();
        finals.insert(
            id,
            (
                status(&m).unwrap().to_owned(),
                m["fields"]["reason"].as_str().unwrap().to_owned(),
            ),
        );
    }
    let states: Vec<_> = finals.into_values().collect();
    assert!(states.contains(&("cancelled".into(), "ioc".into())), "{states:?}");
    assert!(states.contains(&("rejected".into(), "no market".into())), "{states:?}");
    rig.engine.shutdown().unwrap();
}

#[test]
fn blotter_lists_trades_newest_first_and_filters_in_progress() {
    let dir = TempDir::new("orders-blotter");
    let mut rig = Rig::start(orders_config(dir.path()));
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    for (i, cid) in ["a", "b", "c"].iter().enumerate() {
        submit_resting(&rig, sid, i as u32 + 1, cid);
        assert_eq!(rig.reply(sid, i as u32 + 1)["type"], "order.ack");
    }
    rig.until("records published", |e| e.stats().journal_durable_seq >= 3);
    view_blotter(&rig, sid, 10, "alice", "", 10);
    let v = rig.reply(sid, 10);
    assert_eq!(v["type"], "view.created", "{v}");
    let subjects = rows(&v, |r| r["subject"].as_str().unwrap().to_owned());
    assert_eq!(subjects, ["/TRADE/alice/3", "/TRADE/alice/2", "/TRADE/alice/1"]);
    // In progress = statusCode < 10: a filled market order enters, then leaves.
    view_blotter(&rig, sid, 11, "alice", "statusCode < 10", 10);
    let in_progress = rig.reply(sid, 11);
    assert_eq!(in_progress["count"], 3);
    let in_progress_id = in_progress["viewId"].clone();
    rig.engine
        .order_submit(sid, 12, order("m", "/FX/EURUSD", Side::Sell, 10.0, None))
        .unwrap();
    rig.reply(sid, 12);
    // The market order enters the in-progress view and leaves it once filled. When both happen in
    // one engine pass the view never shows 4 (nothing to send), so wait for the fill itself in the
    // whole blotter, not for a size of the in-progress view.
    // (the three resting orders never fill, so a filled row in the whole blotter is order m)
    let all_id = v["viewId"].clone();
    rig.wait(sid, "order m filled in the blotter", |m| {
        m["type"] == "view.rows" && m["viewId"] == all_id && m.to_string().contains("\"status\":\"filled\"")
    });
    // a cancel takes the in-progress view from 3 to 2: the filled order is not in it
    rig.engine.order_cancel(sid, 13, "a".into()).unwrap();
    assert_eq!(rig.reply(sid, 13)["status"], "cancelled");
    rig.wait(sid, "cancelled leaves", |m| {
        m["type"] == "view.size" && m["viewId"] == in_progress_id && m["count"] == 2
    });
    rig.engine.shutdown().unwrap();
}

#[test]
fn other_users_trades_and_blotters_are_private() {
    let dir = TempDir::new("orders-privacy");
    let mut rig = Rig::start(orders_config(dir.path()));
    let alice = rig.session("alice");
    let bob = rig.session("bob");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    submit_resting(&rig, bob, 1, "b");
    rig.reply(bob, 1);
    let refused = [
        vec!["/FX/EURUSD".to_owned(), "/BLOTTER/bob".to_owned()],
        vec!["/TRADE/bob/1".to_owned()],
        vec!["/TRADE".to_owned()],
    ];
    for (i, subjects) in refused.into_iter().enumerate() {
        let req = 10 + i as u32;
        rig.engine.subscribe(alice, req, subjects).unwrap();
        let e = rig.reply(alice, req);
        assert_eq!(
            (e["type"].as_str(), e["code"].as_str()),
            (Some("error"), Some("NOT_ENTITLED")),
            "{e}"
        );
    }
    view_blotter(&rig, alice, 20, "bob", "", 10);
    let e = rig.reply(alice, 20);
    assert_eq!(
        (e["code"].as_str(), e["field"].as_str()),
        (Some("NOT_ENTITLED"), Some("container"))
    );
    assert_eq!(rig.engine.stats().subscriptions, 0, "nothing was subscribed");
    // The owner may.
    rig.engine
        .subscribe(bob, 21, vec!["/TRADE/bob/1".into(), "/BLOTTER/bob".into()])
        .unwrap();
    assert_eq!(rig.reply(bob, 21)["type"], "record.subscribed");
    // Sources may not publish in the engine's namespace.
    let err = rig
        .engine
        .ingest_str(r#"[{"type":"record.publish","subject":"/FX/A","fields":{"bid":1}},{"type":"record.publish","subject":"/TRADE/bob/1","fields":{"status":"filled"}}]"#)
        .unwrap_err();
    assert_eq!(
        (err.code(), err.index(), err.field()),
        (ErrorCode::NotEntitled, Some(1), Some("subject"))
    );
    let err = rig
        .engine
        .container_publish("/BLOTTER/bob".into(), vec![ContainerOp::Clear])
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotEntitled);
    let err = rig
        .engine
        .container_publish(
            "/CONTAINER/X".into(),
            vec![ContainerOp::Add(vec!["/TRADE/bob/1".into()])],
        )
        .unwrap_err();
    assert_eq!(
        (err.code(), err.field()),
        (ErrorCode::NotEntitled, Some("ops.0.subjects.0"))
    );
    assert_eq!(rig.engine.stats().publishes_in, 1, "the refused frame was not accepted");
    rig.engine.shutdown().unwrap();
}

#[test]
fn blotters_stay_newest_first_when_many_orders_become_durable_together() {
    let dir = TempDir::new("orders-burst");
    let mut rig = Rig::start(orders_config(dir.path()));
    let alice = rig.session("alice");
    let bob = rig.session("bob");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    // Interleaved, not waiting: the orders' entries land in shared commit groups and passes.
    for i in 0..20u32 {
        let (sid, user) = if i % 2 == 0 { (alice, "a") } else { (bob, "b") };
        submit_resting(&rig, sid, i + 1, &format!("{user}{i}"));
    }
    for i in 0..20u32 {
        let sid = if i % 2 == 0 { alice } else { bob };
        assert_eq!(rig.reply(sid, i + 1)["type"], "order.ack");
    }
    rig.until("acknowledgements durable", |e| e.stats().journal_durable_seq >= 20);
    for (sid, user, first) in [(alice, "alice", 1u64), (bob, "bob", 2)] {
        view_blotter(&rig, sid, 100, user, "", 20);
        let ids = order_ids(&rig.reply(sid, 100));
        let want: Vec<u64> = (0..10).rev().map(|k| first + 2 * k).collect();
        assert_eq!(ids, want, "{user}");
    }
    rig.engine.shutdown().unwrap();
}

#[test]
fn a_burst_of_one_users_orders_stays_newest_first_past_many_front_inserts() {
    // 300 rows of one user becoming durable in few passes: each pass front-inserts its rows (a
    // run inserted at 0, 1, 2, ... would bisect one label gap per row and relabel the blotter).
    let dir = TempDir::new("orders-burst-one");
    let mut rig = Rig::start(orders_config(dir.path()));
    let alice = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let n = 300u32;
    for i in 0..n {
        submit_resting(&rig, alice, i + 1, &format!("one{i}"));
    }
    for i in 0..n {
        assert_eq!(rig.reply(alice, i + 1)["type"], "order.ack");
    }
    rig.until("acknowledgements durable", |e| {
        e.stats().journal_durable_seq >= u64::from(n)
    });
    view_blotter(&rig, alice, 1000, "alice", "", n);
    let ids = order_ids(&rig.reply(alice, 1000));
    let want: Vec<u64> = (1..=u64::from(n)).rev().collect();
    assert_eq!(ids, want);
    rig.engine.shutdown().unwrap();
}
