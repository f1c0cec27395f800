//! Tier mapping of plain record subscriptions: a session of tier `T` subscribing to `X` gets
//! `X@T`'s data under the subject it asked for (views map tiers in tests/hub_views.rs).

mod common;

use common::{batching, msgs, H};
use serde_json::json;

fn h() -> H {
    H::with_batching(batching(0, 0, 0, 0))
}

#[test]
fn a_tiered_session_gets_the_tier_record_under_the_subject_it_asked_for() {
    let mut h = h();
    h.image("/PRODUCT/X", r#"{"bid":10,"ask":11}"#); // id 1
    h.image("/PRODUCT/X@T2", r#"{"bid":9,"ask":12}"#); // id 2
    h.open_tier(1, "T2");
    h.open_tier(2, "T1"); // no T1 records: the constituent itself
    h.sub(1, 5, &["/PRODUCT/X"]);
    h.sub(2, 5, &["/PRODUCT/X"]);
    let out = h.run();
    let of = |sid: u32| msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
    assert_eq!(
        of(1),
        vec![
            json!({"type":"record.subscribed","reqId":5,"records":[{"subject":"/PRODUCT/X","id":2,"pending":false}]}),
            json!({"type":"record.image","id":2,"subject":"/PRODUCT/X","seq":1,"ts":1000,"fields":{"bid":9,"ask":12}}),
        ]
    );
    assert_eq!(of(2)[1]["fields"], json!({"bid":10,"ask":11}));
    // Each session hears only its own record's updates.
    h.delta("/PRODUCT/X", r#"{"bid":10.5}"#);
    h.delta("/PRODUCT/X@T2", r#"{"bid":9.5}"#);
    let out = h.run();
    let of = |sid: u32| msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
    assert_eq!(
        of(1),
        vec![json!({"type":"record.update","id":2,"seq":2,"ts":1000,"fields":{"bid":9.5}})]
    );
    assert_eq!(
        of(2),
        vec![json!({"type":"record.update","id":1,"seq":2,"ts":1000,"fields":{"bid":10.5}})]
    );
    // Unsubscribing the subject asked for ends the tier subscription.
    h.unsub(1, 6, &["/PRODUCT/X"]);
    h.run();
    assert_eq!(h.hub.stats().subscriptions, 1);
    h.delta("/PRODUCT/X@T2", r#"{"bid":9.6}"#);
    assert!(h.run_for(1).is_empty());
}

#[test]
fn a_tier_record_published_later_takes_over_the_subscription() {
    let mut h = h();
    h.image("/PRODUCT/Y", r#"{"bid":20}"#);
    h.open_tier(1, "T3");
    h.open_tier(2, "T2");
    h.sub(1, 1, &["/PRODUCT/Y"]);
    h.sub(2, 1, &["/PRODUCT/Y"]);
    let m = msgs(&h.run_for(1));
    assert_eq!(
        m[0]["records"][0],
        json!({"subject":"/PRODUCT/Y","id":1,"pending":false})
    );
    // Y@T3 appears: the T3 session moves to it (image under Y, Y@T3's id); T2 stays on Y.
    h.image("/PRODUCT/Y@T3", r#"{"bid":19}"#);
    let out = h.run();
    let of = |sid: u32| msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
    assert_eq!(
        of(1),
        vec![json!({"type":"record.image","id":2,"subject":"/PRODUCT/Y","seq":1,"ts":1000,"fields":{"bid":19}})]
    );
    assert!(of(2).is_empty());
    h.delta("/PRODUCT/Y", r#"{"bid":21}"#);
    let out = h.run();
    assert!(out.iter().all(|o| o.sid == 2), "the T3 session no longer hears Y");
    h.delta("/PRODUCT/Y@T3", r#"{"bid":18}"#);
    assert_eq!(msgs(&h.run_for(1))[0]["fields"], json!({"bid":18}));
    assert_eq!(h.hub.stats().subscriptions, 2);
    // Subscribing again (same subject) is the same subscription: a fresh image of Y@T3.
    h.sub(1, 2, &["/PRODUCT/Y"]);
    let m = msgs(&h.run_for(1));
    assert_eq!(
        m[0]["records"][0],
        json!({"subject":"/PRODUCT/Y","id":2,"pending":false})
    );
    assert_eq!(m[1]["fields"], json!({"bid":18}));
    assert_eq!(h.hub.stats().subscriptions, 2);
    h.unsub(1, 3, &["/PRODUCT/Y"]);
    h.run();
    assert_eq!(h.hub.stats().subscriptions, 1);
}

#[test]
fn a_pending_subject_of_a_tiered_session_resolves_to_the_tier_record() {
    let mut h = h();
    h.open_tier(1, "T2");
    h.sub(1, 1, &["/PRODUCT/Z"]);
    let m = msgs(&h.run_for(1));
    assert_eq!(m[0]["records"][0]["pending"], true);
    // The tier record is published first: the session moves to it at once.
    h.image("/PRODUCT/Z@T2", r#"{"bid":5}"#);
    let m = msgs(&h.run_for(1));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["subject"], "/PRODUCT/Z");
    assert_eq!(m[0]["fields"], json!({"bid":5}));
    // The constituent appearing later does not reach it.
    h.image("/PRODUCT/Z", r#"{"bid":6}"#);
    assert!(h.run_for(1).is_empty());
}
