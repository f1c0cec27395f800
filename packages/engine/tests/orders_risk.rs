//! Pre-trade risk checks through the running engine: each rule refuses with its own typed
//! reject and writes nothing; open notional follows accepts, amends and cancels; a quote older
//! than the rule's maximum age refuses orders until it is updated.

#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use journal_util::TempDir;
use orders_util::{order, orders_config, Rig};
use serde_json::Value;
use tidewire_engine::analytics::pattern::Pattern;
use tidewire_engine::order_book::{NotionalBasis, RiskRule, RiskRules, Side};

fn rules() -> RiskRules {
    RiskRules::new(vec![
        RiskRule {
            pattern: Pattern::parse("/FX/*").unwrap(),
            basis: NotionalBasis::Price,
            collar_pct: Some(1.0),
            max_notional: Some(5_000_000.0),
            max_open_notional: Some(8_000_000.0),
            max_quote_age_ms: Some(60_000),
        },
        RiskRule {
            pattern: Pattern::parse("/EQ/**").unwrap(),
            basis: NotionalBasis::Price,
            collar_pct: None,
            max_notional: Some(1_000.0),
            max_open_notional: None,
            max_quote_age_ms: None,
        },
    ])
    .unwrap()
}

fn rule_of(r: &Value) -> (Option<&str>, Option<&str>, Option<&str>) {
    (r["type"].as_str(), r["field"].as_str(), r["rule"].as_str())
}

#[test]
fn every_rule_refuses_by_name_and_open_notional_follows_the_orders() {
    let dir = TempDir::new("orders-risk");
    let mut cfg = orders_config(dir.path());
    cfg.risk = rules();
    let mut rig = Rig::start(cfg);
    let sid = rig.session("alice");
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.market("/EQ/SAP", 43.0, 43.1);

    // Collar: a buy 2% above the ask; a sell 2% below the bid. Passive prices rest.
    rig.engine
        .order_submit(sid, 1, order("c1", "/FX/EURUSD", Side::Buy, 1_000.0, Some(1.1069)))
        .unwrap();
    let r = rig.reply(sid, 1);
    assert_eq!(
        rule_of(&r),
        (Some("order.reject"), Some("price"), Some("collar")),
        "{r}"
    );
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("above the ask 1.0852 (collar 1%)"),
        "{r}"
    );
    rig.engine
        .order_submit(sid, 2, order("c2", "/FX/EURUSD", Side::Sell, 1_000.0, Some(1.0633)))
        .unwrap();
    assert_eq!(rule_of(&rig.reply(sid, 2)).2, Some("collar"));

    // Max notional per order: 5,000,000 units at 1.08 is 5.4 M.
    rig.engine
        .order_submit(sid, 3, order("n1", "/FX/EURUSD", Side::Buy, 5_000_000.0, Some(1.08)))
        .unwrap();
    let r = rig.reply(sid, 3);
    assert_eq!(
        rule_of(&r),
        (Some("order.reject"), Some("quantity"), Some("maxNotional")),
        "{r}"
    );
    // A market order counts at the touch: 30 x 43.1 = 1,293 > 1,000 on /EQ/.
    rig.engine
        .order_submit(sid, 4, order("n2", "/EQ/SAP", Side::Buy, 30.0, None))
        .unwrap();
    assert_eq!(rule_of(&rig.reply(sid, 4)).2, Some("maxNotional"));

    // Open notional: 4 M resting at 1.08 = 4.32 M; a second 4 M would make 8.64 M > 8 M.
    rig.engine
        .order_submit(sid, 5, order("o1", "/FX/EURUSD", Side::Buy, 4_000_000.0, Some(1.08)))
        .unwrap();
    assert_eq!(rig.reply(sid, 5)["type"], "order.ack");
    rig.engine
        .order_submit(sid, 6, order("o2", "/FX/EURUSD", Side::Buy, 4_000_000.0, Some(1.08)))
        .unwrap();
    let r = rig.reply(sid, 6);
    assert_eq!(
        rule_of(&r),
        (Some("order.reject"), Some("quantity"), Some("openNotional")),
        "{r}"
    );
    // The same order smaller fits: 4.32 M + 3.24 M = 7.56 M.
    rig.engine
        .order_submit(sid, 7, order("o3", "/FX/EURUSD", Side::Buy, 3_000_000.0, Some(1.08)))
        .unwrap();
    assert_eq!(rig.reply(sid, 7)["type"], "order.ack");
    // Amending o1 up to 4.5 M would pass 8 M (4.86 + 3.24); down to 3 M is fine.
    rig.engine
        .order_amend(sid, 8, "o1".into(), Some(4_500_000.0), None)
        .unwrap();
    assert_eq!(rule_of(&rig.reply(sid, 8)).2, Some("openNotional"));
    rig.engine
        .order_amend(sid, 9, "o1".into(), Some(3_000_000.0), None)
        .unwrap();
    assert_eq!(rig.reply(sid, 9)["type"], "order.ack");
    // Cancelling o3 frees its 3.24 M: another 4 M now fits (3.24 + 4.32).
    rig.engine.order_cancel(sid, 10, "o3".into()).unwrap();
    assert_eq!(rig.reply(sid, 10)["type"], "order.ack");
    rig.engine
        .order_submit(sid, 11, order("o4", "/FX/EURUSD", Side::Buy, 4_000_000.0, Some(1.08)))
        .unwrap();
    assert_eq!(rig.reply(sid, 11)["type"], "order.ack");
    // Open notional is per user: bob starts at 0.
    let bob = rig.session("bob");
    rig.engine
        .order_submit(bob, 12, order("b1", "/FX/EURUSD", Side::Buy, 4_000_000.0, Some(1.08)))
        .unwrap();
    assert_eq!(rig.reply(bob, 12)["type"], "order.ack");

    // Stale quote: a record last updated two minutes ago (its origin ts) refuses orders.
    let old = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        - 120_000;
    rig.publish(&format!(
        r#"[{{"type":"record.publish","subject":"/FX/GBPUSD","ts":{old},"fields":{{"bid":1.25,"ask":1.2502}}}}]"#
    ));
    rig.engine
        .order_submit(sid, 13, order("s1", "/FX/GBPUSD", Side::Buy, 1_000.0, Some(1.25)))
        .unwrap();
    let r = rig.reply(sid, 13);
    assert_eq!(
        rule_of(&r),
        (Some("order.reject"), Some("instrument"), Some("stale")),
        "{r}"
    );
    // A fresh update makes it tradable again.
    rig.market("/FX/GBPUSD", 1.25, 1.2502);
    rig.engine
        .order_submit(sid, 14, order("s2", "/FX/GBPUSD", Side::Buy, 1_000.0, Some(1.25)))
        .unwrap();
    assert_eq!(rig.reply(sid, 14)["type"], "order.ack");

    let s = rig.engine.stats();
    assert_eq!((s.orders_accepted, s.orders_rejected), (5, 7));
    rig.engine.shutdown().unwrap();
}
