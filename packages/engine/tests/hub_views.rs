//! Views through the hub: container ops, view.create -> view.created, live window diffs,
//! scrolling, close, sharing across sessions, grace-period release, and every error path.

mod common;

use common::{batching, msgs, types, H};
use serde_json::json;
use tidewire_engine::hub::{Command, ContainerOp};

const C: &str = "/CONTAINER/P";

fn h() -> H {
    H::with_batching(batching(0, 0, 0, 0))
}

fn p(i: u32) -> String {
    format!("/PRODUCT/P{i}")
}

/// Ten products P0..P9 with bid = 10 * (i + 1), sector A for even, B for odd; all in `C`.
fn catalog(h: &mut H) {
    for i in 0..10u32 {
        let sector = if i % 2 == 0 { "A" } else { "B" };
        h.image(
            &p(i),
            &format!(r#"{{"name":"p{i}","bid":{},"sector":"{sector}"}}"#, 10 * (i + 1)),
        );
    }
    h.cmd(Command::ContainerPublish {
        subject: C.into(),
        ops: vec![ContainerOp::Add((0..10).map(p).collect())],
    });
}

fn create(h: &mut H, sid: u32, req_id: u32, filter: &str, sort: &str, offset: u32, size: u32) {
    h.cmd(Command::ViewCreate {
        sid,
        req_id,
        container: C.into(),
        filter: filter.into(),
        sort: sort.into(),
        offset,
        size,
    });
}

fn names(rows: &serde_json::Value) -> Vec<String> {
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|r| r["fields"]["name"].as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn create_answers_the_count_and_the_window_rows_in_view_order() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "sector = 'A'", "bid desc", 1, 2);
    let m = msgs(&h.run_for(1));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["type"], "view.created");
    assert_eq!(m[0]["reqId"], 7);
    assert_eq!(m[0]["viewId"], 1);
    assert_eq!(m[0]["count"], 5);
    assert_eq!(names(&m[0]["rows"]), ["p6", "p4"]);
    assert_eq!(m[0]["rows"][0]["index"], 1);
    assert_eq!(m[0]["rows"][0]["subject"], "/PRODUCT/P6");
    assert_eq!(m[0]["rows"][0]["fields"], json!({"name":"p6","bid":70,"sector":"A"}));
}

#[test]
fn replies_skip_the_burst_window_and_live_rows_keep_it() {
    let mut h = H::with_batching(batching(100, 100, 50, 0));
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "sector = 'A'", "bid desc", 0, 2);
    let m = msgs(&h.run_for(1));
    assert_eq!(m.len(), 1, "view.created flushed at once, not after 100 ms: {m:?}");
    assert_eq!(m[0]["type"], "view.created");
    // A live row update waits for the session's batching interval...
    h.now_ms += 1;
    h.delta(&p(8), r#"{"name":"p8x"}"#);
    assert!(h.run_for(1).is_empty());
    // ...until a reply (here the answer to a window move) flushes it with the reply, in order.
    h.now_ms += 1;
    h.cmd(Command::ViewChange {
        sid: 1,
        req_id: 8,
        view_id: 1,
        offset: 1,
        size: 2,
    });
    let m = msgs(&h.run_for(1));
    assert!(!m.is_empty());
    assert!(m.iter().any(|x| x["reqId"] == 8), "the move is answered at once: {m:?}");
    assert_eq!(m[0]["reqId"], 7, "the held update goes first: {m:?}");
}

#[test]
fn stats_count_containers_unique_views_and_windows() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    h.open(2);
    create(&mut h, 1, 7, "sector = 'A'", "bid desc", 0, 2);
    create(&mut h, 2, 8, "sector = 'A'", "bid desc", 0, 5); // identical request: shared view
    create(&mut h, 2, 9, "sector = 'B'", "", 0, 5);
    h.run();
    let s = h.hub.stats();
    assert_eq!((s.views, s.view_windows), (2, 3));
    // the published container and its T1 tier copy the views compute on
    assert_eq!(s.containers, 2);
}

#[test]
fn updates_become_field_deltas_moves_entries_and_size_changes() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "sector = 'A'", "bid desc", 0, 2); // p8 (90), p6 (70)
    h.run();
    // A field no view reads, on a row in the window: a delta.
    h.delta(&p(8), r#"{"name":"p8x"}"#);
    let m = msgs(&h.run_for(1));
    assert_eq!(
        m,
        vec![
            json!({"type":"view.rows","reqId":7,"viewId":1,"seq":2,"updated":[{"id":9,"seq":2,"ts":1000,"fields":{"name":"p8x"}}]})
        ]
    );
    // p0 jumps to the top: enters at index 0, p6 leaves the window, p8 shifts down.
    h.delta(&p(0), r#"{"bid":100}"#);
    let m = msgs(&h.run_for(1));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["left"], json!([7]));
    assert_eq!(m[0]["entered"][0]["index"], 0);
    assert_eq!(m[0]["entered"][0]["subject"], "/PRODUCT/P0");
    assert_eq!(m[0]["entered"][0]["fields"]["bid"], 100);
    assert!(
        m[0].get("moved").is_none(),
        "p8 keeps its order relative to the rest: no move listed"
    );
    // A row leaves the filter: the count changes (view.size) and the window refills.
    h.delta(&p(0), r#"{"sector":"B"}"#);
    let m = msgs(&h.run_for(1));
    assert_eq!(m[0], json!({"type":"view.size","viewId":1,"seq":4,"count":4}));
    assert_eq!(m[1]["type"], "view.rows");
    assert_eq!(m[1]["left"], json!([1]));
    // A record outside the container or outside the filter sends nothing.
    h.image("/PRODUCT/OTHER", r#"{"bid":1}"#);
    h.delta(&p(1), r#"{"bid":1000}"#);
    assert!(h.run_for(1).is_empty());
}

#[test]
fn scrolling_moves_the_window_and_tags_rows_with_the_change() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "", "bid asc", 0, 3);
    h.run();
    h.cmd(Command::ViewChange {
        sid: 1,
        req_id: 8,
        view_id: 1,
        offset: 2,
        size: 3,
    });
    let m = msgs(&h.run_for(1));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["reqId"], 8);
    let mut left: Vec<u64> = m[0]["left"]
        .as_array()
        .expect("left")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    left.sort_unstable();
    assert_eq!(left, [1, 2], "p0 and p1 left");
    assert_eq!(names(&m[0]["entered"]), ["p3", "p4"]);
    assert_eq!(m[0]["entered"][0]["index"], 3);
}

#[test]
fn every_change_is_answered_even_when_the_window_shows_the_same_rows() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "", "bid asc", 8, 5); // rows 8..9: the window reaches past the end
    h.run();
    // same window, then a bigger one that still shows rows 8..9: nothing changes, both answered
    for (req_id, size) in [(8, 5), (9, 20)] {
        h.cmd(Command::ViewChange {
            sid: 1,
            req_id,
            view_id: 1,
            offset: 8,
            size,
        });
        let m = msgs(&h.run_for(1));
        assert_eq!(
            m,
            [json!({"type":"view.rows","reqId":req_id,"viewId":1,"seq":req_id - 6})],
            "an empty view.rows answers view.change #{req_id}"
        );
    }
    // a move that changes rows is answered by its diff alone, not twice
    h.cmd(Command::ViewChange {
        sid: 1,
        req_id: 10,
        view_id: 1,
        offset: 7,
        size: 5,
    });
    let m = msgs(&h.run_for(1));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["reqId"], 10);
    assert_eq!(names(&m[0]["entered"]), ["p7"]);
}

#[test]
fn close_acks_and_stops_the_view_then_the_grace_period_frees_it() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "", "", 0, 5);
    h.run();
    assert_eq!(h.hub.views().view_count(), 1);
    h.cmd(Command::ViewClose {
        sid: 1,
        req_id: 9,
        view_id: 1,
    });
    assert_eq!(
        msgs(&h.run_for(1)),
        vec![json!({"type":"view.closed","reqId":9,"viewId":1})]
    );
    h.delta(&p(0), r#"{"bid":1}"#);
    assert!(h.run_for(1).is_empty());
    h.at(4_000);
    h.run();
    assert_eq!(h.hub.views().view_count(), 1, "kept for the grace period");
    assert!(h.hub.next_deadline().is_some(), "the engine thread wakes to expire it");
    h.at(5_001);
    h.run();
    assert_eq!(h.hub.views().view_count(), 0);
}

#[test]
fn a_row_updated_twice_before_a_flush_gets_one_conflated_update() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 7, "sector = 'A'", "bid desc", 0, 2); // p8, p6
    h.run();
    // One source frame, two updates of p8 (and one of p6): the view flushes once after it.
    let one = |s: &str, f: &str| format!(r#"{{"type":"record.publish","subject":"{s}","fields":{f}}}"#);
    h.publish(&format!(
        "[{},{},{}]",
        one(&p(8), r#"{"name":"a"}"#),
        one(&p(6), r#"{"name":"b"}"#),
        one(&p(8), r#"{"qty":5}"#)
    ));
    let m = msgs(&h.run_for(1));
    assert_eq!(
        m,
        vec![json!({"type":"view.rows","reqId":7,"viewId":1,"seq":2,"updated":[
            {"id":7,"seq":2,"ts":1000,"fields":{"name":"b"}},
            {"id":9,"seq":3,"ts":1000,"fields":{"name":"a","qty":5},"conflated":true}
        ]})]
    );
}

#[test]
fn view_stats_list_each_materialised_view_with_its_tier_rows_subscribers_and_updates() {
    let mut h = h();
    catalog(&mut h);
    h.image("/PRODUCT/P0@T2", r#"{"name":"p0","bid":11,"sector":"A"}"#);
    h.open(1);
    h.cmd(Command::OpenSession {
        sid: 2,
        worker: 1,
        user: "bob".into(),
        tier: "T2".into(),
    });
    create(&mut h, 1, 1, "sector = 'A'", "bid desc", 0, 2);
    create(&mut h, 2, 1, "sector='A'", "bid desc", 0, 2);
    h.run();
    let mut stats = h.hub.view_stats();
    stats.sort_by(|a, b| a.tier.cmp(&b.tier));
    assert_eq!(stats.len(), 2, "tiers never share a view");
    let (t1, t2) = (&stats[0], &stats[1]);
    assert_eq!((t1.container.as_str(), t1.tier.as_str()), (C, "T1"));
    assert_eq!((t2.container.as_str(), t2.tier.as_str()), (C, "T2"));
    assert_eq!(t1.filter, r#"sector = "A""#, "canonical text");
    assert_eq!(t1.sort, "bid desc");
    assert_eq!((t1.rows, t1.subscribers, t1.updates), (5, 1, 0));
    assert_eq!(t2.rows, 5);
    // Two updates of a row of the T1 view before one flush count once; a row in no view, not at all.
    h.publish(&format!(
        r#"[{{"type":"record.publish","subject":"{}","fields":{{"qty":1}}}},{{"type":"record.publish","subject":"{}","fields":{{"qty":2}}}},{{"type":"record.publish","subject":"{}","fields":{{"qty":3}}}}]"#,
        p(2),
        p(2),
        p(1)
    ));
    h.run();
    let after = h.hub.view_stats();
    let t1 = after.iter().find(|v| v.tier == "T1").expect("T1 view");
    assert_eq!(t1.updates, 1);
    h.cmd(Command::ViewClose {
        sid: 1,
        req_id: 2,
        view_id: 1,
    });
    h.run();
    let t1 = h
        .hub
        .view_stats()
        .into_iter()
        .find(|v| v.tier == "T1")
        .expect("in grace");
    assert_eq!(t1.subscribers, 0, "kept for its grace period without subscribers");
}

#[test]
fn steady_churn_still_frees_each_view_after_its_own_grace_period() {
    // A view released every second: a later release must not postpone earlier expiries.
    let mut h = h();
    catalog(&mut h);
    for k in 0..20u32 {
        h.at(u64::from(k) * 1_000);
        h.open(k + 1);
        create(&mut h, k + 1, 1, &format!("bid > {k}"), "", 0, 5);
        h.run();
        h.cmd(Command::ViewClose {
            sid: k + 1,
            req_id: 2,
            view_id: 1,
        });
        h.run();
        // Released at 0, 1000, ..., k*1000; each is freed 5,000 ms after its release.
        assert_eq!(h.hub.views().view_count(), (k + 1).min(5) as usize, "at {k} s");
    }
    h.at(24_000);
    h.run();
    assert_eq!(h.hub.views().view_count(), 0);
    assert_eq!(h.hub.next_deadline(), None, "no timer left once every view is gone");
}

#[test]
fn identical_requests_share_one_view_each_with_its_own_window() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    h.open(2);
    create(&mut h, 1, 1, "bid >= 50", "name asc", 0, 2);
    create(&mut h, 2, 1, "bid>=50", "name asc", 3, 2);
    let out = h.run();
    assert_eq!(
        h.hub.views().view_count(),
        1,
        "canonical filter text is the sharing key"
    );
    let of = |sid: u32| msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
    assert_eq!(names(&of(1)[0]["rows"]), ["p4", "p5"]);
    assert_eq!(names(&of(2)[0]["rows"]), ["p7", "p8"]);
    assert_eq!(of(2)[0]["viewId"], 1, "view ids are per session");
    h.delta(&p(4), r#"{"name":"p4x"}"#);
    let out = h.run();
    let to2: Vec<_> = out.iter().filter(|o| o.sid == 2).collect();
    assert!(to2.is_empty(), "p4 is not in session 2's window");
    assert_eq!(
        msgs(&out.into_iter().filter(|o| o.sid == 1).collect::<Vec<_>>())[0]["updated"][0]["fields"],
        json!({"name":"p4x"})
    );
    // Closing one session keeps the view for the other.
    h.cmd(Command::CloseSession { sid: 1 });
    h.delta(&p(7), r#"{"name":"p7x"}"#);
    assert_eq!(types(&h.run_for(2)), ["view.rows"]);
}

#[test]
fn container_ops_insert_remove_and_clear_reach_the_views() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    create(&mut h, 1, 1, "", "", 0, 3);
    h.run();
    h.cmd(Command::ContainerPublish {
        subject: C.into(),
        ops: vec![ContainerOp::Remove(vec![p(0)]), ContainerOp::InsertAt(1, vec![p(9)])],
    });
    let m = msgs(&h.run_for(1));
    assert_eq!(
        m[0],
        json!({"type":"view.size","viewId":1,"seq":2,"count":9}),
        "remove then insert of a member: one fewer"
    );
    h.cmd(Command::ContainerPublish {
        subject: C.into(),
        ops: vec![ContainerOp::Clear],
    });
    let m = msgs(&h.run_for(1));
    assert_eq!(m[0], json!({"type":"view.size","viewId":1,"seq":4,"count":0}));
    assert_eq!(m[1]["left"].as_array().map(Vec::len), Some(3));
}

#[test]
fn every_request_error_is_a_typed_error_frame() {
    let mut h = h();
    catalog(&mut h);
    h.open(1);
    let err = |h: &mut H| msgs(&h.run_for(1)).remove(0);
    create(&mut h, 1, 1, "bid >", "", 0, 5);
    let e = err(&mut h);
    assert_eq!(
        (e["code"].as_str(), e["field"].as_str(), e["reqId"].as_u64()),
        (Some("BAD_REQUEST"), Some("filter"), Some(1))
    );
    assert!(e["message"].as_str().unwrap().contains("at 6"), "{e}");
    create(&mut h, 1, 2, "", "name sideways", 0, 5);
    assert_eq!(err(&mut h)["field"], "sort");
    create(&mut h, 1, 3, "", "", 0, 0);
    assert_eq!(err(&mut h)["field"], "window.size");
    h.cmd(Command::ViewCreate {
        sid: 1,
        req_id: 4,
        container: "nope".into(),
        filter: String::new(),
        sort: String::new(),
        offset: 0,
        size: 1,
    });
    assert_eq!(err(&mut h)["field"], "container");
    h.cmd(Command::ViewChange {
        sid: 1,
        req_id: 5,
        view_id: 42,
        offset: 0,
        size: 1,
    });
    assert_eq!(err(&mut h)["code"], "NOT_FOUND");
    h.cmd(Command::ViewClose {
        sid: 1,
        req_id: 6,
        view_id: 42,
    });
    assert_eq!(err(&mut h)["code"], "NOT_FOUND");
    assert_eq!(h.hub.views().view_count(), 0, "failed creates hold no view");
    for i in 0..tidewire_engine::hub::DEFAULT_MAX_VIEWS_PER_SESSION as u32 {
        create(&mut h, 1, 100 + i, &format!("bid > {i}"), "", 0, 1);
    }
    h.run();
    create(&mut h, 1, 999, "", "", 0, 1);
    let e = err(&mut h);
    assert_eq!(
        (e["code"].as_str(), e["reqId"].as_u64()),
        (Some("LIMIT_EXCEEDED"), Some(999))
    );
}

#[test]
fn views_compute_on_the_users_tier_records_and_share_only_within_a_tier() {
    let mut h = h();
    catalog(&mut h);
    // Tier T2 has its own records for P8 and P9 (a wider spread: lower bids).
    h.image("/PRODUCT/P8@T2", r#"{"name":"p8","bid":5,"sector":"A"}"#);
    h.image("/PRODUCT/P9@T2", r#"{"name":"p9","bid":6,"sector":"B"}"#);
    h.open_tier(1, "T1");
    h.open_tier(2, "T2");
    h.open_tier(3, "T2");
    create(&mut h, 1, 1, "", "bid asc", 0, 2);
    create(&mut h, 2, 1, "", "bid asc", 0, 2);
    create(&mut h, 3, 1, "", "bid asc", 0, 2);
    let out = h.run();
    let of = |sid: u32| msgs(&out.iter().filter(|o| o.sid == sid).cloned().collect::<Vec<_>>());
    let subjects = |m: &serde_json::Value| -> Vec<String> {
        m["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["subject"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(subjects(&of(1)[0]), ["/PRODUCT/P0", "/PRODUCT/P1"]);
    assert_eq!(subjects(&of(2)[0]), ["/PRODUCT/P8@T2", "/PRODUCT/P9@T2"]);
    assert_eq!(subjects(&of(3)[0]), subjects(&of(2)[0]));
    assert_eq!(
        h.hub.views().view_count(),
        2,
        "T1 and T2 views are not shared; the two T2 sessions share"
    );
    // A tiered record published later replaces its constituent in T2 views at once.
    h.image("/PRODUCT/P5@T2", r#"{"name":"p5","bid":1,"sector":"B"}"#);
    let m = msgs(&h.run_for(2));
    assert_eq!(m[0]["entered"][0]["subject"], "/PRODUCT/P5@T2");
    assert_eq!(m[0]["entered"][0]["index"], 0);
    // Container ops reach the tier mirrors: removing P8 removes P8@T2 for T2.
    h.cmd(Command::ContainerPublish {
        subject: C.into(),
        ops: vec![ContainerOp::Remove(vec![p(8)])],
    });
    let out = h.run();
    let to2 = msgs(&out.iter().filter(|o| o.sid == 2).cloned().collect::<Vec<_>>());
    assert_eq!(to2[0], json!({"type":"view.size","viewId":1,"seq":3,"count":9}));
    // Updates of the constituent do not reach T2 rows showing the tiered record.
    h.delta(&p(9), r#"{"name":"base only"}"#);
    assert!(h.run_for(2).is_empty());
}
