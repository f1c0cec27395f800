//! Held views and `view.resume`: the decision, and the hub end to end (detach, resume with the
//! missed diff, reset, expiry, bounds).

use std::time::{Duration, Instant};

use super::super::{Command, ContainerOp, Hub};
use super::*;
use crate::config::EngineConfig;

fn publish(hub: &mut Hub, i: u32, bid: f64, now: Instant) {
    super::super::test_support::publish_number(hub, &format!("/P/{i}"), "bid", bid, false, now);
}

/// Messages queued to session `sid` since the last call; queues are then flushed.
fn take(hub: &mut Hub, sid: u32, now: Instant) -> Vec<serde_json::Value> {
    super::super::test_support::take_queued(hub, sid, now)
}

fn open(hub: &mut Hub, sid: u32, user: &str, now: Instant) {
    let cmd = Command::OpenSession {
        sid,
        worker: 0,
        user: user.into(),
        tier: String::new(),
    };
    hub.handle(cmd, now);
}

fn create(hub: &mut Hub, sid: u32, req_id: u32, now: Instant) {
    let cmd = Command::ViewCreate {
        sid,
        req_id,
        container: "/C".into(),
        filter: "bid < 100".into(),
        sort: "bid".into(),
        offset: 0,
        size: 3,
    };
    hub.handle(cmd, now);
}

fn resume(hub: &mut Hub, sid: u32, req_id: u32, (prev, view_id, seq): (u32, u32, u64), now: Instant) {
    let resume = ViewResume {
        epoch: 77,
        session_id: prev,
        view_id,
        seq,
        container: "/C".into(),
        filter: "bid < 100".into(),
        sort: "bid".into(),
        offset: 0,
        size: 3,
    };
    hub.handle(Command::ViewResume { sid, req_id, resume }, now);
}

/// A hub with records /P/0../P/5 (bid 10, 20, ... 60) in container /C, holding views 1 s.
fn hub(now: Instant) -> Hub {
    let mut hub = Hub::new(EngineConfig::default());
    hub.set_epoch(77);
    hub.handle(
        Command::SetViewResume(ViewResumeConfig {
            grace: Duration::from_secs(1),
            max_per_user: 3,
            max_total: 4,
            history: ViewHistoryConfig::default(),
        }),
        now,
    );
    for i in 0..6 {
        publish(&mut hub, i, f64::from(i + 1) * 10.0, now);
    }
    let members = (0..6).map(|i| format!("/P/{i}")).collect();
    hub.handle(
        Command::ContainerPublish {
            subject: "/C".into(),
            ops: vec![ContainerOp::Add(members)],
        },
        now,
    );
    hub
}

/// The window's row ids after applying `msgs` (a `view.created`, `view.rows`) to `rows`.
fn apply(rows: &mut Vec<u64>, msgs: &[serde_json::Value]) {
    for m in msgs {
        let ids = |k: &str| -> Vec<(u64, u64)> {
            m[k].as_array()
                .map(|a| {
                    a.iter()
                        .map(|r| (r["index"].as_u64().unwrap(), r["id"].as_u64().unwrap()))
                        .collect()
                })
                .unwrap_or_default()
        };
        match m["type"].as_str().unwrap() {
            "view.created" => *rows = ids("rows").into_iter().map(|r| r.1).collect(),
            "view.rows" => {
                let left: Vec<u64> = m["left"]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_u64().unwrap()).collect())
                    .unwrap_or_default();
                let moved = ids("moved");
                rows.retain(|id| !left.contains(id) && !moved.iter().any(|m| m.1 == *id));
                let mut ins: Vec<(u64, u64)> = moved.into_iter().chain(ids("entered")).collect();
                ins.sort_unstable();
                for (i, id) in ins {
                    rows.insert((i as usize).min(rows.len()), id);
                }
            }
            _ => {}
        }
    }
}

fn seqs(msgs: &[serde_json::Value]) -> Vec<(String, u64)> {
    msgs.iter()
        .filter(|m| m["seq"].is_u64())
        .map(|m| (m["type"].as_str().unwrap().to_owned(), m["seq"].as_u64().unwrap()))
        .collect()
}

#[test]
fn the_decision() {
    let held = |user, view, seq| {
        Some(HeldView {
            user,
            view,
            seq,
            oldest: seq,
        })
    };
    assert_eq!(decide(held("a", 4, 9), "a", true, 4, 9), Outcome::Continue);
    assert_eq!(decide(None, "a", true, 4, 9), Outcome::Reset { discard: false });
    assert_eq!(
        decide(held("b", 4, 9), "a", true, 4, 9),
        Outcome::Reset { discard: false }
    );
    assert_eq!(
        decide(held("a", 4, 9), "a", false, 4, 9),
        Outcome::Reset { discard: false }
    );
    assert_eq!(
        decide(held("a", 4, 9), "a", true, 5, 9),
        Outcome::Reset { discard: true }
    );
    assert_eq!(
        decide(held("a", 4, 9), "a", true, 4, 8),
        Outcome::Reset { discard: true }
    );
    assert_eq!(
        decide(held("a", 4, 9), "a", true, 4, 10),
        Outcome::Reset { discard: true }
    );
    // a history replaying from seq 5: a client holding 5..=9 continues
    let replays = Some(HeldView {
        user: "a",
        view: 4,
        seq: 9,
        oldest: 5,
    });
    for (seq, want) in [
        (4, Outcome::Reset { discard: true }),
        (5, Outcome::Continue),
        (8, Outcome::Continue),
    ] {
        assert_eq!(decide(replays, "a", true, 4, seq), want);
    }
}

#[test]
fn a_dropped_view_resumes_with_the_diff_it_missed() {
    let now = Instant::now();
    let mut hub = hub(now);
    open(&mut hub, 1, "u", now);
    create(&mut hub, 1, 5, now);
    let mut rows = Vec::new();
    let first = take(&mut hub, 1, now);
    apply(&mut rows, &first);
    assert_eq!(
        (rows.clone(), seqs(&first)),
        (vec![1, 2, 3], vec![("view.created".into(), 1)])
    );
    publish(&mut hub, 1, 11.0, now); // an update of a shown row: view.rows seq 2
    let live = take(&mut hub, 1, now);
    assert_eq!(seqs(&live), [("view.rows".into(), 2)]);
    hub.handle(Command::DetachSession { sid: 1 }, now);
    assert_eq!(hub.stats().views_detached, 1);
    // while detached: /P/0 leaves (bid 500), /P/1's bid changes twice, /P/5 comes in first
    publish(&mut hub, 0, 500.0, now);
    publish(&mut hub, 1, 12.0, now);
    publish(&mut hub, 1, 13.0, now);
    publish(&mut hub, 5, 1.0, now);
    open(&mut hub, 2, "u", now);
    resume(&mut hub, 2, 9, (1, 1, 2), now);
    let msgs = take(&mut hub, 2, now);
    let kinds: Vec<&str> = msgs.iter().map(|m| m["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["view.resumed", "view.size", "view.rows"], "{msgs:?}");
    assert_eq!(
        (&msgs[0]["reqId"], &msgs[0]["viewId"], &msgs[0]["seq"]),
        (&9.into(), &1.into(), &2.into())
    );
    assert_eq!(seqs(&msgs[1..]), [("view.size".into(), 3), ("view.rows".into(), 4)]);
    assert_eq!(msgs[2]["reqId"], 9);
    apply(&mut rows, &msgs);
    assert_eq!(rows, [6, 2, 3]); // what a fresh view shows
    let updated = &msgs[2]["updated"][0];
    assert_eq!(
        (&updated["id"], &updated["fields"]["bid"], &updated["conflated"]),
        (&2.into(), &serde_json::json!(13), &true.into())
    );
    assert_eq!((hub.stats().view_resumes, hub.stats().views_detached), (1, 0));
    // live again on the new session, seqs continuing
    publish(&mut hub, 2, 14.0, now);
    assert_eq!(seqs(&take(&mut hub, 2, now)), [("view.rows".into(), 5)]);
    // a fresh view agrees
    create(&mut hub, 2, 10, now);
    let mut fresh = Vec::new();
    apply(&mut fresh, &take(&mut hub, 2, now));
    assert_eq!(fresh, rows);
}

#[test]
fn an_unchanged_view_resumes_with_the_ack_alone() {
    let now = Instant::now();
    let mut hub = hub(now);
    open(&mut hub, 1, "u", now);
    create(&mut hub, 1, 5, now);
    take(&mut hub, 1, now);
    hub.handle(Command::DetachSession { sid: 1 }, now);
    publish(&mut hub, 4, 45.0, now); // outside the window, count unchanged
    open(&mut hub, 2, "u", now);
    resume(&mut hub, 2, 9, (1, 1, 1), now);
    let msgs = take(&mut hub, 2, now);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!((&msgs[0]["type"], &msgs[0]["seq"]), (&"view.resumed".into(), &1.into()));
}

#[test]
fn resets_on_a_seq_mismatch_another_user_another_epoch_or_expiry() {
    let now = Instant::now();
    let mut hub = hub(now);
    open(&mut hub, 1, "u", now);
    create(&mut hub, 1, 5, now);
    take(&mut hub, 1, now);
    hub.handle(Command::DetachSession { sid: 1 }, now);
    // another user naming u's view: a fresh view of their own, u's stays held
    open(&mut hub, 2, "v", now);
    resume(&mut hub, 2, 9, (1, 1, 1), now);
    let msgs = take(&mut hub, 2, now);
    assert_eq!(
        (&msgs[0]["type"], &msgs[0]["reset"], &msgs[0]["seq"]),
        (&"view.created".into(), &true.into(), &1.into())
    );
    assert_eq!((hub.stats().views_detached, hub.stats().view_resets), (1, 1));
    // another epoch: reset, still held
    open(&mut hub, 3, "u", now);
    let other = ViewResume {
        epoch: 76,
        session_id: 1,
        view_id: 1,
        seq: 1,
        container: "/C".into(),
        filter: "bid < 100".into(),
        sort: "bid".into(),
        offset: 0,
        size: 3,
    };
    hub.handle(
        Command::ViewResume {
            sid: 3,
            req_id: 4,
            resume: other,
        },
        now,
    );
    assert_eq!(take(&mut hub, 3, now)[0]["reset"], true);
    assert_eq!(hub.stats().views_detached, 1);
    // u with a seq the server did not send last: reset, and the held view is closed
    resume(&mut hub, 3, 10, (1, 1, 7), now);
    let msgs = take(&mut hub, 3, now);
    assert_eq!(
        (&msgs[0]["type"], &msgs[0]["reset"]),
        (&"view.created".into(), &true.into())
    );
    assert_eq!(msgs[0]["rows"].as_array().map(Vec::len), Some(3));
    assert_eq!(hub.stats().views_detached, 0);
    // expiry: held views close after the grace, their windows freed (session 3 holds the two
    // reset views it was answered with)
    hub.handle(Command::DetachSession { sid: 3 }, now);
    assert_eq!(hub.stats().views_detached, 2);
    let windows = hub.stats().view_windows;
    let later = now + Duration::from_millis(1500);
    assert!(hub.next_deadline().is_some_and(|t| t <= now + Duration::from_secs(1)));
    take(&mut hub, 0, later);
    assert_eq!(hub.stats().views_detached, 0);
    assert_eq!(hub.stats().views_detached_closed, 2);
    assert_eq!(hub.stats().view_windows, windows - 2);
    open(&mut hub, 4, "u", later);
    resume(&mut hub, 4, 11, (3, 2, 1), later);
    assert_eq!(take(&mut hub, 4, later)[0]["reset"], true);
}

#[test]
fn holds_are_bounded_per_user_and_in_total() {
    let now = Instant::now();
    let mut hub = hub(now);
    for (sid, user, views) in [(1, "u", 4), (2, "v", 3)] {
        open(&mut hub, sid, user, now);
        for req in 1..=views {
            create(&mut hub, sid, req, now);
        }
        take(&mut hub, sid, now);
    }
    hub.handle(Command::DetachSession { sid: 1 }, now);
    // per user 3: u's oldest went
    assert_eq!((hub.stats().views_detached, hub.stats().views_detached_closed), (3, 1));
    hub.handle(Command::DetachSession { sid: 2 }, now);
    // in total 4: the oldest two of all (u's) went
    assert_eq!((hub.stats().views_detached, hub.stats().views_detached_closed), (4, 3));
    open(&mut hub, 3, "u", now);
    resume(&mut hub, 3, 9, (1, 2, 1), now);
    assert_eq!(take(&mut hub, 3, now)[0]["reset"], true);
    resume(&mut hub, 3, 10, (1, 4, 1), now);
    assert_eq!(take(&mut hub, 3, now)[0]["type"], "view.resumed");
}

#[test]
fn a_client_close_or_a_zero_grace_holds_nothing() {
    let now = Instant::now();
    let mut hub = hub(now);
    open(&mut hub, 1, "u", now);
    create(&mut hub, 1, 5, now);
    take(&mut hub, 1, now);
    hub.handle(Command::CloseSession { sid: 1 }, now);
    assert_eq!(hub.stats().views_detached, 0);
    hub.handle(
        Command::SetViewResume(ViewResumeConfig {
            grace: Duration::ZERO,
            ..ViewResumeConfig::default()
        }),
        now,
    );
    open(&mut hub, 2, "u", now);
    create(&mut hub, 2, 5, now);
    take(&mut hub, 2, now);
    hub.handle(Command::DetachSession { sid: 2 }, now);
    assert_eq!((hub.stats().views_detached, hub.stats().view_windows), (0, 0));
}
