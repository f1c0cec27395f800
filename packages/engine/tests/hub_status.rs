//! Record status through the hub: a source's records turn stale after its grace, records age out
//! by pattern, a publish makes them ok again; subscribers get `record.status` in order with the
//! updates (and after an image of a stale record); views filter on `_status`.

mod common;

use std::time::Duration;

use common::{batching, msgs, H};
use serde_json::json;
use tidewire_engine::analytics::Pattern;
use tidewire_engine::hub::{Command, ContainerOp, StatusConfig};
use tidewire_engine::wire::decode_source_frame;

fn h(grace_ms: u64, max_age: &[(&str, u64)]) -> H {
    let mut h = H::with_batching(batching(0, 0, 0, 0));
    h.cmd(Command::SetStatus(StatusConfig {
        stale_grace: Duration::from_millis(grace_ms),
        max_age: max_age
            .iter()
            .map(|&(p, ms)| (Pattern::parse(p).expect("pattern"), Duration::from_millis(ms)))
            .collect(),
    }));
    h
}

/// Publishes `frame` as source session `source`.
fn source_publish(h: &mut H, source: u32, frame: &str) {
    let batch = decode_source_frame(frame).expect("valid frame");
    h.cmd(Command::SourcePublish {
        source,
        batch,
        received_ms: 1000.0,
    });
}

fn px(subject: &str, bid: f64) -> String {
    format!(
        r#"{{"type":"record.publish","subject":"{subject}","fields":{{"bid":{bid},"ask":{}}}}}"#,
        bid + 1.0
    )
}

fn statuses(m: &[serde_json::Value]) -> Vec<(u64, String)> {
    m.iter()
        .filter(|m| m["type"] == "record.status")
        .map(|m| {
            (
                m["id"].as_u64().expect("id"),
                m["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_gone_sources_records_turn_stale_after_the_grace_and_ok_when_published() {
    let mut h = h(500, &[]);
    h.open(10); // the source's own session
    source_publish(&mut h, 10, &px("/FX/A", 1.0));
    source_publish(&mut h, 10, &px("/FX/B", 2.0));
    h.image("/FX/C", r#"{"bid":3}"#); // not a source session's: never goes stale this way
    h.open(1);
    h.sub(1, 1, &["/FX/A", "/FX/B", "/FX/C"]);
    h.run();
    h.at(100).cmd(Command::CloseSession { sid: 10 });
    assert!(h.at(599).run().is_empty(), "still within the grace");
    let m = msgs(&h.at(600).run_for(1));
    assert_eq!(statuses(&m), [(1, "stale".into()), (2, "stale".into())]);
    assert!(h.hub.store().get(1).expect("A").stale);
    assert!(!h.hub.store().get(3).expect("C").stale);

    // a subscriber arriving now gets the image and then the status
    h.open(2);
    h.sub(2, 1, &["/FX/A"]);
    let m = msgs(&h.run_for(2));
    assert_eq!(
        m.iter().map(|m| m["type"].as_str().unwrap()).collect::<Vec<_>>(),
        ["record.subscribed", "record.image", "record.status"]
    );
    assert_eq!(m[2], json!({"type":"record.status","id":1,"status":"stale"}));

    // another source publishes /FX/A: ok again, after the update, for both subscribers
    h.open(11);
    source_publish(&mut h, 11, &px("/FX/A", 1.5));
    let out = h.run();
    for sid in [1, 2] {
        let m = msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
        assert_eq!(m[0]["type"], "record.update");
        assert_eq!(m[1], json!({"type":"record.status","id":1,"status":"ok"}));
    }
    assert_eq!(h.hub.stats().status_changes, 3);
}

#[test]
fn a_source_that_comes_back_within_the_grace_keeps_its_records_ok() {
    let mut h = h(1000, &[]);
    h.open(10);
    source_publish(&mut h, 10, &px("/FX/A", 1.0));
    h.open(1);
    h.sub(1, 1, &["/FX/A"]);
    h.run();
    h.at(0).cmd(Command::CloseSession { sid: 10 });
    h.open(12); // reconnected: a new session id
    h.at(500);
    source_publish(&mut h, 12, &px("/FX/A", 1.1));
    h.run();
    let m = msgs(&h.at(2000).run_for(1));
    assert!(statuses(&m).is_empty(), "{m:?}");
    assert!(!h.hub.store().get(1).expect("A").stale);
    // the new session's records go stale when it goes
    h.cmd(Command::CloseSession { sid: 12 });
    let m = msgs(&h.at(3000).run_for(1));
    assert_eq!(statuses(&m), [(1, "stale".into())]);
}

#[test]
fn records_past_their_maximum_age_turn_stale_by_pattern() {
    let mut h = h(0, &[("/FX/**", 1000), ("/EQ/*", 5000)]);
    h.at(0);
    h.image("/FX/A", r#"{"bid":1}"#);
    h.image("/EQ/X", r#"{"bid":1}"#);
    h.image("/NEWS/1", r#"{"h":"x"}"#);
    h.open(1);
    h.sub(1, 1, &["/FX/A", "/EQ/X", "/NEWS/1"]);
    h.run();
    h.at(600).delta("/FX/A", r#"{"bid":2}"#);
    h.run();
    assert!(
        statuses(&msgs(&h.at(1000).run_for(1))).is_empty(),
        "updated at 600: fresh until 1600"
    );
    assert_eq!(statuses(&msgs(&h.at(1600).run_for(1))), [(1, "stale".into())]);
    assert_eq!(statuses(&msgs(&h.at(5000).run_for(1))), [(2, "stale".into())]);
    assert!(!h.hub.store().get(3).expect("news").stale, "no rule: never ages");
    h.at(5001).delta("/FX/A", r#"{"bid":3}"#);
    let m = msgs(&h.run_for(1));
    assert_eq!(statuses(&m), [(1, "ok".into())]);
    assert_eq!(statuses(&msgs(&h.at(6001).run_for(1))), [(1, "stale".into())]);
}

#[test]
fn views_filter_on_the_status_pseudo_field() {
    let mut h = h(0, &[]);
    h.open(10);
    for (i, s) in ["/P/0", "/P/1", "/P/2"].iter().enumerate() {
        source_publish(&mut h, 10, &px(s, i as f64));
    }
    h.open(11);
    source_publish(&mut h, 11, &px("/P/3", 3.0));
    h.cmd(Command::ContainerPublish {
        subject: "/CONTAINER/P".into(),
        ops: vec![ContainerOp::Add(vec![
            "/P/0".into(),
            "/P/1".into(),
            "/P/2".into(),
            "/P/3".into(),
        ])],
    });
    h.open(1);
    h.cmd(Command::ViewCreate {
        sid: 1,
        req_id: 1,
        container: "/CONTAINER/P".into(),
        filter: "_status = 'ok'".into(),
        sort: "bid asc".into(),
        offset: 0,
        size: 10,
    });
    let m = msgs(&h.run_for(1));
    assert_eq!(m[0]["count"], 4);
    h.cmd(Command::CloseSession { sid: 10 });
    let m = msgs(&h.run_for(1));
    let size = m.iter().find(|m| m["type"] == "view.size").expect("view.size");
    assert_eq!(size["count"], 1, "{m:?}");
    // back to ok: the rows come back
    h.open(12);
    source_publish(&mut h, 12, &px("/P/1", 1.0));
    let m = msgs(&h.run_for(1));
    let size = m.iter().find(|m| m["type"] == "view.size").expect("view.size");
    assert_eq!(size["count"], 2, "{m:?}");
}

#[test]
fn max_age_rules_are_checked() {
    assert!(StatusConfig::parse_max_age(&["/FX/**=30000", " /EQ/* = 5 "]).is_ok());
    for (rule, why) in [
        ("/FX/**", "pattern=ms"),
        ("/FX/**=0", "1..86400000"),
        ("/FX/**=abc", "1..86400000"),
        ("FX=10", "recordMaxAge.0"),
    ] {
        let e = StatusConfig::parse_max_age(&[rule]).expect_err(rule).to_string();
        assert!(e.contains(why), "{rule}: {e}");
    }
}
