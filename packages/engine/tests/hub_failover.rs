//! Source failover through the hub: sources registering the same patterns form a group, the first
//! is active; when it goes, the best standby (lowest priority, then earliest) is told
//! `source.activate`, the records turn stale at once and ok with the standby's images.

mod common;

use std::time::Duration;

use common::{batching, msgs, H};
use serde_json::json;
use tidewire_engine::hub::{Command, StatusConfig};
use tidewire_engine::wire::decode_source_frame;

fn h() -> H {
    let mut h = H::with_batching(batching(0, 0, 0, 0));
    h.cmd(Command::SetStatus(StatusConfig {
        stale_grace: Duration::from_secs(60),
        max_age: Vec::new(),
    }));
    h
}

fn register(h: &mut H, sid: u32, req_id: u32, patterns: &[&str], priority: u32) {
    h.cmd(Command::SourceRegister {
        sid,
        req_id,
        patterns: patterns.iter().map(|p| p.to_string()).collect(),
        priority,
    });
}

fn source_publish(h: &mut H, source: u32, subject: &str, bid: f64) {
    let frame = format!(r#"{{"type":"record.publish","subject":"{subject}","image":true,"fields":{{"bid":{bid}}}}}"#);
    h.cmd(Command::SourcePublish {
        source,
        batch: decode_source_frame(&frame).expect("frame"),
        received_ms: 1000.0,
    });
}

#[test]
fn the_best_standby_takes_over_when_the_active_source_goes() {
    let mut h = h();
    for sid in [10, 11, 12] {
        h.open(sid);
    }
    register(&mut h, 10, 1, &["/FX/**"], 5);
    register(&mut h, 11, 1, &["/FX/**"], 2);
    register(&mut h, 12, 1, &["/FX/**"], 1);
    let out = h.run();
    for (sid, active) in [(10, true), (11, false), (12, false)] {
        let m = msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
        assert_eq!(
            m,
            [json!({"type":"source.registered","reqId":1,"active":active})],
            "sid {sid}"
        );
    }
    source_publish(&mut h, 10, "/FX/A", 1.0);
    h.open(1);
    h.sub(1, 1, &["/FX/A"]);
    h.run();

    // the active source goes: priority 1 (sid 12) takes over, not the earlier 11; the record is
    // stale at once (no 60 s grace: a standby is taking over)
    h.cmd(Command::CloseSession { sid: 10 });
    let out = h.run();
    let to12 = msgs(&out.iter().filter(|o| o.sid == 12).cloned().collect::<Vec<_>>());
    assert_eq!(to12, [json!({"type":"source.activate","patterns":["/FX/**"]})]);
    assert!(out.iter().all(|o| o.sid != 11), "the other standby hears nothing");
    let to1 = msgs(&out.iter().filter(|o| o.sid == 1).cloned().collect::<Vec<_>>());
    assert_eq!(to1, [json!({"type":"record.status","id":1,"status":"stale"})]);
    assert_eq!(h.hub.stats().failovers, 1);

    // the new active source publishes its image: ok again, no resubscribe
    source_publish(&mut h, 12, "/FX/A", 1.5);
    let m = msgs(&h.run_for(1));
    assert_eq!(m[0]["type"], "record.update");
    assert_eq!(m[1], json!({"type":"record.status","id":1,"status":"ok"}));

    // a standby leaving changes nothing; the last active going leaves no one: grace applies
    h.cmd(Command::CloseSession { sid: 11 });
    assert!(h.run().is_empty());
    h.cmd(Command::CloseSession { sid: 12 });
    assert!(h.run().is_empty(), "stale only after the grace");
    assert_eq!(h.hub.stats().failovers, 1);
}

#[test]
fn groups_are_per_pattern_set_and_bad_patterns_are_refused() {
    let mut h = h();
    for sid in [10, 11] {
        h.open(sid);
    }
    // the same set in another order and with a duplicate is the same group
    register(&mut h, 10, 1, &["/EQ/*", "/FX/**"], 1);
    register(&mut h, 11, 1, &["/FX/**", "/EQ/*", "/EQ/*"], 1);
    let out = h.run();
    assert_eq!(msgs(&out[1..])[0]["active"], false);
    h.open(12);
    register(&mut h, 12, 2, &["/EQ/*"], 1);
    assert_eq!(msgs(&h.run())[0]["active"], true, "another set: its own group");
    register(&mut h, 12, 3, &["FX"], 1);
    let m = msgs(&h.run());
    assert_eq!(m[0]["type"], "error");
    assert_eq!(m[0]["code"], "BAD_REQUEST");
    assert_eq!(m[0]["field"], "patterns.0");
    register(&mut h, 12, 4, &[], 1);
    assert_eq!(msgs(&h.run())[0]["field"], "patterns");
}
