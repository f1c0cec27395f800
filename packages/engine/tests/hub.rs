//! Hub behaviour across store -> subscriptions -> outboxes -> flush, on an injected clock.

mod common;

use common::{batching, msgs, types, H};
use serde_json::json;
use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::CLOSE_SLOW_CONSUMER;

const EUR: &str = "/FX/EURUSD";

/// `h` with record `subject` published as an image of `fields` and session 1 subscribed to it
/// (reqId 1), its ack and image flushed.
fn subscribed(mut h: H, subject: &str, fields: &str) -> H {
    h.image(subject, fields);
    h.open(1);
    h.sub(1, 1, &[subject]);
    h.run();
    h
}

#[test]
fn image_on_subscribe_then_deltas_in_order() {
    let mut h = H::with_batching(batching(100, 0, 50, 0));
    h.image(EUR, r#"{"bid":1.1,"ask":1.2,"name":"EUR/USD"}"#);
    h.open(1);
    h.sub(1, 7, &[EUR]);
    let out = h.run();
    assert_eq!(out.len(), 1, "ack and image coalesce into one frame");
    assert_eq!(
        out[0].bytes,
        r#"[{"type":"record.subscribed","reqId":7,"records":[{"subject":"/FX/EURUSD","id":1,"pending":false}]},{"type":"record.image","id":1,"subject":"/FX/EURUSD","seq":1,"ts":1000,"fields":{"bid":1.1,"ask":1.2,"name":"EUR/USD"}}]"#
    );
    h.delta(EUR, r#"{"ask":1.3}"#);
    h.delta(EUR, r#"{"bid":1.15,"name":null}"#);
    let m = msgs(&h.run());
    assert_eq!(m.len(), 2);
    assert_eq!(
        m[0],
        json!({"type":"record.update","id":1,"seq":2,"ts":1000,"fields":{"ask":1.3}})
    );
    assert_eq!(
        m[1],
        json!({"type":"record.update","id":1,"seq":3,"ts":1000,"fields":{"bid":1.15,"name":null}})
    );
    // A later subscriber's image has the merged state.
    h.open(2);
    h.sub(2, 1, &[EUR]);
    let m = msgs(&h.run());
    assert_eq!(m[1]["fields"], json!({"bid":1.15,"ask":1.3}));
    assert_eq!(m[1]["seq"], 3);
}

#[test]
fn pending_subscription_gets_image_when_first_published() {
    let mut h = H::with_batching(batching(100, 0, 50, 0));
    h.open(1);
    h.sub(1, 1, &["/FX/NEW"]);
    let m = msgs(&h.run());
    assert_eq!(
        m,
        [json!({"type":"record.subscribed","reqId":1,"records":[{"subject":"/FX/NEW","id":1,"pending":true}]})]
    );
    h.publish(r#"{"type":"record.publish","subject":"/FX/NEW","ts":5.5,"fields":{"m":1924992000000},"types":{"m":"timestamp"}}"#);
    let out = h.run();
    assert_eq!(
        out[0].bytes,
        r#"[{"type":"record.image","id":1,"subject":"/FX/NEW","seq":1,"ts":5.5,"fields":{"m":1924992000000},"types":{"m":"timestamp"}}]"#
    );
    h.delta("/FX/NEW", r#"{"m":1924992000001}"#);
    let m = msgs(&h.run());
    assert_eq!(m[0]["type"], "record.update");
    assert_eq!(m[0]["types"], json!({"m":"timestamp"}), "a timestamp stays a timestamp");
}

#[test]
fn fan_out_appends_the_same_bytes_to_every_subscriber() {
    let mut h = H::with_batching(batching(100, 0, 50, 0));
    h.image(EUR, r#"{"bid":1}"#);
    for sid in 1..=200 {
        h.open(sid);
        h.sub(sid, 1, &[EUR]);
    }
    h.run();
    let before = h.hub.stats().deliveries;
    h.delta(EUR, r#"{"bid":2}"#);
    h.delta(EUR, r#"{"bid":3}"#);
    let out = h.run();
    assert_eq!(out.len(), 200);
    for o in &out {
        assert_eq!(o.bytes, out[0].bytes);
    }
    assert_eq!(msgs(&out[..1]).len(), 2);
    assert_eq!(h.hub.stats().deliveries - before, 400);
    assert_eq!(h.hub.stats().subscriptions, 200);
}

#[test]
fn batching_off_coalesces_everything_queued_into_one_frame() {
    let mut h = subscribed(H::with_batching(batching(100, 0, 50, 0)), EUR, r#"{"bid":1}"#);
    for i in 0..5 {
        h.delta(EUR, &format!(r#"{{"bid":{i}}}"#));
    }
    let out = h.run();
    assert_eq!(out.len(), 1);
    assert_eq!(types(&out), vec!["record.update"; 5]);
    assert!(h.run().is_empty());
}

#[test]
fn batching_holds_messages_for_the_interval_and_grows_then_shrinks() {
    let mut h = H::with_batching(batching(100, 200, 50, 0));
    h.image(EUR, r#"{"bid":1}"#);
    h.open(1);
    h.at(0).sub(1, 1, &[EUR]);
    // The subscription's answer is a reply: flushed at once (with the image), never held.
    assert_eq!(types(&h.run()), ["record.subscribed", "record.image"]);
    for i in 0..4 {
        h.delta(EUR, &format!(r#"{{"bid":{i}}}"#));
    }
    // 4 updates (> 3: a busy window) wait for burst-min.
    assert!(h.at(99).run().is_empty(), "held until burst-min");
    let out = h.at(100).run();
    assert_eq!(out.len(), 1);
    assert_eq!(types(&out).len(), 4);
    assert_eq!(h.hub.burst_interval(1), Some(std::time::Duration::from_millis(150)));
    // Next window [100, 250): 4 messages -> grows to 200 (max).
    h.at(120);
    for i in 0..4 {
        h.delta(EUR, &format!(r#"{{"bid":{i}}}"#));
    }
    assert!(h.at(249).run().is_empty());
    assert_eq!(types(&h.at(250).run()).len(), 4);
    assert_eq!(h.hub.burst_interval(1), Some(std::time::Duration::from_millis(200)));
    // Quiet: [250, 450) empty -> 150; the message at 460 falls in [450, 600).
    h.at(460).delta(EUR, r#"{"bid":9}"#);
    assert!(h.at(599).run().is_empty());
    assert_eq!(types(&h.at(600).run()).len(), 1);
    assert_eq!(h.hub.burst_interval(1), Some(std::time::Duration::from_millis(150)));
    // Two quiet windows (150, then 100): back to burst-min.
    h.at(600 + 150 + 100 + 10).delta(EUR, r#"{"bid":10}"#);
    assert_eq!(h.hub.burst_interval(1), Some(std::time::Duration::from_millis(100)));
    assert!(h.at(949).run().is_empty());
    assert_eq!(types(&h.at(950).run()).len(), 1);
}

#[test]
fn throttle_conflates_to_latest_values() {
    // ack + image at t=0: the record's throttle interval starts
    let mut h = subscribed(
        H::with_batching(batching(100, 0, 50, 1000)),
        EUR,
        r#"{"bid":1,"ask":2,"name":"x"}"#,
    );
    h.at(10).delta(EUR, r#"{"bid":1.1}"#);
    h.at(20).delta(EUR, r#"{"ask":2.1}"#);
    h.at(30).delta(EUR, r#"{"bid":1.2,"name":null}"#);
    assert!(h.at(999).run().is_empty(), "held for the throttle interval");
    let out = h.at(1000).run();
    assert_eq!(
        msgs(&out),
        [
            json!({"type":"record.update","id":1,"seq":4,"ts":1000,"fields":{"bid":1.2,"ask":2.1,"name":null},"conflated":true})
        ]
    );
    assert_eq!(h.hub.stats().conflated_updates, 2);
    // Next update within [1000, 2000) is held alone: sent unconflated.
    h.at(1500).delta(EUR, r#"{"ask":3}"#);
    assert!(h.at(1999).run().is_empty());
    assert_eq!(
        msgs(&h.at(2000).run()),
        [json!({"type":"record.update","id":1,"seq":5,"ts":1000,"fields":{"ask":3}})]
    );
    // After a quiet interval an update goes at once.
    h.at(3500).delta(EUR, r#"{"ask":4}"#);
    assert_eq!(msgs(&h.run()).len(), 1);
}

#[test]
fn throttle_is_per_record() {
    let mut h = H::with_batching(batching(100, 0, 50, 1000));
    h.image("/A", r#"{"x":1}"#);
    h.image("/B", r#"{"x":1}"#);
    h.open(1);
    h.sub(1, 1, &["/A"]);
    h.run();
    h.at(500).sub(1, 2, &["/B"]);
    h.run();
    h.at(1000).delta("/A", r#"{"x":2}"#);
    h.delta("/B", r#"{"x":2}"#);
    let m = msgs(&h.run());
    assert_eq!(m.len(), 1, "only /A's interval has passed");
    assert_eq!(m[0]["id"], 1);
    assert_eq!(msgs(&h.at(1500).run())[0]["id"], 2);
}

#[test]
fn unsubscribe_acks_and_stops_messages_and_held_state() {
    let mut h = subscribed(H::with_batching(batching(100, 0, 50, 1000)), EUR, r#"{"bid":1}"#);
    h.at(10).delta(EUR, r#"{"bid":2}"#); // held by the throttle
    h.unsub(1, 2, &[EUR, "/NEVER/SEEN"]);
    assert_eq!(
        msgs(&h.run()),
        [json!({"type":"record.unsubscribed","reqId":2,"subjects":["/FX/EURUSD","/NEVER/SEEN"]})]
    );
    h.delta(EUR, r#"{"bid":3}"#);
    assert!(h.at(5000).run().is_empty());
    assert_eq!(h.hub.stats().subscriptions, 0);
}

#[test]
fn resubscribe_acks_again_with_a_fresh_image() {
    let mut h = subscribed(H::with_batching(batching(100, 0, 50, 0)), EUR, r#"{"bid":1}"#);
    h.delta(EUR, r#"{"bid":2}"#);
    h.sub(1, 2, &[EUR]);
    let m = msgs(&h.run());
    assert_eq!(types_of(&m), ["record.update", "record.subscribed", "record.image"]);
    assert_eq!(m[2]["seq"], 2);
    assert_eq!(h.hub.stats().subscriptions, 1);
}

fn types_of(m: &[serde_json::Value]) -> Vec<&str> {
    m.iter().map(|m| m["type"].as_str().unwrap_or("?")).collect()
}

#[test]
fn bad_subjects_and_limits_get_error_frames() {
    let mut h = H::new(EngineConfig {
        max_subscriptions_per_session: 2,
        ..EngineConfig::default()
    });
    h.open(1);
    h.sub(1, 3, &["/A", "EURUSD"]);
    assert_eq!(
        msgs(&h.run()),
        [
            json!({"type":"error","reqId":3,"code":"BAD_REQUEST","message":"'subjects.1' (\"EURUSD\") must be a subject starting with '/'","field":"subjects.1"})
        ]
    );
    h.sub(1, 4, &[]);
    assert_eq!(msgs(&h.run())[0]["field"], "subjects");
    h.sub(1, 5, &["/A", "/B"]);
    h.run();
    h.sub(1, 6, &["/A", "/C"]);
    let m = msgs(&h.run());
    assert_eq!(m[0]["code"], "LIMIT_EXCEEDED");
    assert_eq!(m[0]["reqId"], 6);
    // Re-subscribing what is held does not count against the limit.
    h.sub(1, 7, &["/B"]);
    assert_eq!(msgs(&h.run())[0]["type"], "record.subscribed");
    h.unsub(1, 8, &["bad subject"]);
    assert_eq!(msgs(&h.run())[0]["code"], "BAD_REQUEST");
    assert_eq!(h.hub.stats().subscriptions, 2);
}

#[test]
fn closing_a_session_keeps_other_subscribers_intact() {
    let mut h = H::with_batching(batching(100, 0, 50, 0));
    h.image(EUR, r#"{"bid":1}"#);
    for sid in 1..=3 {
        h.open(sid);
        h.sub(sid, 1, &[EUR, "/B"]);
    }
    h.run();
    h.cmd(tidewire_engine::hub::Command::CloseSession { sid: 1 });
    h.unsub(3, 2, &["/B"]);
    h.run();
    h.delta(EUR, r#"{"bid":2}"#);
    let out = h.run();
    let mut sids: Vec<u32> = out.iter().map(|o| o.sid).collect();
    sids.sort_unstable();
    assert_eq!(sids, [2, 3]);
    assert_eq!(h.hub.stats().sessions, 2);
    assert_eq!(h.hub.stats().subscriptions, 3);
    // A new session reuses the freed slot and works.
    h.open(4);
    h.sub(4, 1, &[EUR]);
    h.delta(EUR, r#"{"bid":3}"#);
    assert_eq!(h.run().len(), 3);
}

#[test]
fn slow_consumer_is_conflated_then_gets_images_then_is_cut_off() {
    let cfg = EngineConfig {
        batching: batching(100, 0, 50, 0),
        outbox_conflate_bytes: 1024,
        slow_consumer: std::time::Duration::from_millis(10_000),
        ..EngineConfig::default()
    };
    let mut h = H::new(cfg);
    h.image(
        "/A",
        r#"{"x":0,"pad":"................................................................"}"#,
    );
    h.image("/B", r#"{"y":0}"#);
    for sid in 1..=2 {
        h.open(sid);
        h.sub(sid, 1, &["/A", "/B"]);
    }
    h.run();
    h.at(10).block(1, true);
    h.delta("/B", r#"{"y":1}"#);
    for i in 1..=40 {
        h.delta("/A", &format!(r#"{{"x":{i}}}"#));
    }
    let out = h.run();
    assert_eq!(out.len(), 1, "the blocked session gets nothing");
    assert_eq!(out[0].sid, 2);
    assert_eq!(types(&out).len(), 41, "the other session gets every update");
    assert!(h.hub.queued(1).unwrap().len() < 1024, "queued bytes were dropped");
    assert!(h.hub.stats().dropped_updates > 0);
    assert_eq!(h.hub.stats().conflated_updates, 0, "no throttling here");
    // a reply to a blocked session leaves at once; its records stay conflated
    h.sub(1, 2, &["/C"]);
    assert_eq!(types(&h.run_for(1)), ["record.subscribed"]);

    h.at(20).block(1, false);
    let m = msgs(&h.run_for(1));
    assert_eq!(types_of(&m), ["record.image", "record.image"]);
    let img_a = m.iter().find(|m| m["subject"] == "/A").unwrap();
    assert_eq!(img_a["seq"], 41);
    assert_eq!(img_a["fields"]["x"], 40);
    assert_eq!(m.iter().find(|m| m["subject"] == "/B").unwrap()["fields"]["y"], 1);

    // Blocked past slowConsumerMs: closed with 4008 and a reason; session 2 unaffected.
    h.at(100).block(1, true);
    h.delta("/A", r#"{"x":99}"#);
    assert_eq!(h.run().len(), 1);
    let out = h.at(10_099).run();
    assert!(out.is_empty(), "not yet: {out:?}");
    let out = h.at(10_100).run();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].sid, 1);
    assert_eq!(out[0].close, CLOSE_SLOW_CONSUMER);
    assert!(
        out[0].bytes.starts_with("slow consumer: blocked 10000 ms with "),
        "{}",
        out[0].bytes
    );
    assert_eq!(h.hub.stats().slow_consumer_closes, 1);
    assert_eq!(h.hub.stats().sessions, 1);
    h.delta("/A", r#"{"x":100}"#);
    let out = h.run();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].sid, 2);
}

#[test]
fn replies_to_a_blocked_session_overtake_its_held_record_messages() {
    let cfg = EngineConfig {
        batching: batching(100, 0, 50, 0),
        outbox_conflate_bytes: 1 << 20,
        ..EngineConfig::default()
    };
    let mut h = H::new(cfg);
    h.image("/A", r#"{"x":0}"#);
    h.image("/B", r#"{"y":0}"#);
    h.open(1);
    h.sub(1, 1, &["/A"]);
    h.run();
    h.at(10).block(1, true);
    for i in 1..=5 {
        h.delta("/A", &format!(r#"{{"x":{i}}}"#));
    }
    assert!(h.run().is_empty(), "record updates are held while blocked");
    // a subscribe's ack and an engine reply (an order reject) leave at once, in their order; the
    // new record's image is a record message: held behind the earlier updates
    h.sub(1, 2, &["/B"]);
    h.hub.reply_now(1, br#"{"type":"order.reject","reqId":3}"#, h.now());
    let m = msgs(&h.run_for(1));
    assert_eq!(types_of(&m), ["record.subscribed", "order.reject"]);
    assert_eq!(h.hub.stats().replies_ahead, 1);
    assert_eq!(h.hub.stats().dropped_updates, 0, "nothing conflated");
    h.block(1, false);
    let m = msgs(&h.run_for(1));
    assert_eq!(
        types_of(&m),
        [
            "record.update",
            "record.update",
            "record.update",
            "record.update",
            "record.update",
            "record.image"
        ],
        "the held updates follow in their order, then the image the subscribe queued"
    );
    assert_eq!(m[0]["seq"], 2);
    assert_eq!(m[4]["seq"], 6);

    // unsubscribing while updates are held: they are conflated first, so nothing for /A follows
    // record.unsubscribed; /B still subscribed gets its image on the drain
    h.block(1, true);
    h.delta("/A", r#"{"x":6}"#);
    h.delta("/B", r#"{"y":1}"#);
    h.unsub(1, 4, &["/A"]);
    let m = msgs(&h.run_for(1));
    assert_eq!(types_of(&m), ["record.unsubscribed"]);
    h.delta("/A", r#"{"x":7}"#);
    h.block(1, false);
    let m = msgs(&h.run_for(1));
    assert_eq!(types_of(&m), ["record.image"]);
    assert_eq!(m[0]["subject"], "/B");
    assert_eq!(m[0]["seq"], 2);
}

#[test]
fn unblocking_in_time_avoids_the_close() {
    let cfg = EngineConfig {
        batching: batching(100, 0, 50, 0),
        slow_consumer: std::time::Duration::from_millis(1000),
        ..EngineConfig::default()
    };
    let mut h = subscribed(H::new(cfg), "/A", r#"{"x":0}"#);
    h.at(0).block(1, true);
    h.delta("/A", r#"{"x":1}"#);
    assert!(h.at(500).run().is_empty());
    h.block(1, false);
    assert_eq!(
        types(&h.run()),
        ["record.update"],
        "small backlog: sent as queued, not conflated"
    );
    assert!(h.at(5000).run().is_empty());
    assert_eq!(h.hub.stats().slow_consumer_closes, 0);
}

#[test]
fn held_update_across_a_layout_change_becomes_an_image() {
    let mut h = H::with_batching(batching(100, 0, 50, 1000));
    let fields: Vec<String> = (0..128).map(|i| format!("\"f{i}\":{i}")).collect();
    h.image("/A", &format!("{{{}}}", fields.join(",")));
    h.open(1);
    h.sub(1, 1, &["/A"]);
    h.run();
    h.at(10).delta("/A", r#"{"f0":null}"#);
    h.delta("/A", r#"{"g":1}"#); // compacts the slots
    let m = msgs(&h.at(1000).run());
    assert_eq!(m[0]["type"], "record.image");
    assert_eq!(m[0]["fields"].as_object().unwrap().len(), 128);
    assert_eq!(m[0]["fields"]["g"], 1);
    // A 129th live field is refused; the others still apply.
    h.delta("/A", r#"{"h":1}"#);
    assert_eq!(h.hub.stats().publishes_rejected, 1);
}

#[test]
fn set_batching_applies_to_live_sessions() {
    use tidewire_engine::hub::Command::SetBatching;
    let mut h = subscribed(H::with_batching(batching(100, 0, 50, 0)), EUR, r#"{"bid":1}"#);
    h.delta(EUR, r#"{"bid":2}"#);
    assert_eq!(types(&h.run()).len(), 1, "batching off: flushed in the same pass");
    h.cmd(SetBatching(batching(100, 300, 50, 0)));
    h.at(10).delta(EUR, r#"{"bid":3}"#);
    assert!(h.run().is_empty(), "now batched");
    assert_eq!(types(&h.at(110).run()).len(), 1);
    h.at(600).cmd(SetBatching(batching(100, 0, 50, 500)));
    h.delta(EUR, r#"{"bid":4}"#);
    assert_eq!(types(&h.run()).len(), 1, "first update of the interval goes at once");
    h.at(610).delta(EUR, r#"{"bid":5}"#);
    h.at(620).delta(EUR, r#"{"bid":6}"#);
    assert!(h.at(1099).run().is_empty(), "throttled until 600 + 500");
    let m = msgs(&h.at(1100).run());
    assert_eq!(
        m,
        [json!({"type":"record.update","id":1,"seq":6,"ts":1000,"fields":{"bid":6},"conflated":true})]
    );
    h.at(1200).cmd(SetBatching(batching(100, 0, 50, 0)));
    h.delta(EUR, r#"{"bid":7}"#);
    assert_eq!(types(&h.run()).len(), 1, "back to the direct path");
}
