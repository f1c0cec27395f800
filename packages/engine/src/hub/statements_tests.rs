//! Statements wired into the hub: results as records, time windows expiring by the clock alone,
//! identical statements computed once, containers, sessions' references and quotas.

use std::time::{Duration, Instant};

use super::*;
use crate::config::EngineConfig;
use crate::hub::{Command, ContainerOp, FrameSink};
use crate::wire::{PubField, Publish};

const QUOTA: StatementQuota = StatementQuota {
    max_count: 10,
    max_cost: 10_000,
};

fn trade(hub: &mut Hub, subject: &str, price: f64, volume: f64, now: Instant) {
    let field = |name: &str, v: f64| PubField {
        name: name.into(),
        value: Some(Value::Number(v)),
        typed: false,
    };
    let p = Publish {
        subject: subject.into(),
        ts: Some(1_000.0),
        image: true,
        fields: vec![field("price", price), field("volume", volume)],
    };
    hub.handle(
        Command::Publish {
            batch: vec![p],
            received_ms: 1_000.0,
        },
        now,
    );
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

fn create(hub: &mut Hub, sid: u32, req_id: u32, name: &str, text: &str, now: Instant) {
    let cmd = Command::StatementCreate {
        sid,
        req_id,
        name: name.into(),
        text: text.into(),
        quota: QUOTA,
    };
    hub.handle(cmd, now);
}

/// A result record's fields (None: no such record).
fn result(hub: &Hub, subject: &str) -> Option<(u64, Vec<(String, Value)>)> {
    let id = hub.store().lookup(subject)?;
    let rec = hub.store().get(id)?;
    let fields = hub
        .store()
        .image_fields(rec)
        .map(|(n, v, _)| (n.to_owned(), v.cloned().unwrap()))
        .collect();
    Some((rec.seq, fields))
}

fn num(hub: &Hub, subject: &str, field: &str) -> Option<f64> {
    let (_, fields) = result(hub, subject)?;
    fields.into_iter().find(|(n, _)| n == field).and_then(|(_, v)| match v {
        Value::Number(x) => Some(x),
        _ => None,
    })
}

/// The messages queued to session `sid` (the outbox is then flushed into a sink that drops them
/// by a `run_due` at `at`).
fn take(hub: &mut Hub, sid: u32, at: Instant) -> Vec<serde_json::Value> {
    struct Drop;
    impl FrameSink for Drop {
        fn frame(&mut self, _: u32, _: u32, _: &[&[u8]], _: u16) {}
    }
    let bytes = hub.queued(sid).unwrap_or_default().to_vec();
    hub.run_due(at, &mut Drop);
    let text = format!("[{}]", String::from_utf8(bytes).unwrap());
    serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap()
}

#[test]
fn a_time_window_expires_by_the_engine_clock_with_no_event() {
    let t0 = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    let text = "select count(*) as n, vwap(price, volume) as vwap from /MKT/* window time 2 s";
    hub.create_server_statement("t2", text, t0).unwrap();
    trade(&mut hub, "/MKT/A", 10.0, 1.0, t0);
    trade(&mut hub, "/MKT/A", 20.0, 3.0, t0 + Duration::from_millis(500));
    assert_eq!(num(&hub, "/STAT/t2/MKT/A", "n"), Some(2.0));
    assert_eq!(num(&hub, "/STAT/t2/MKT/A", "vwap"), Some(17.5));
    // the engine thread sleeps until the first event leaves: the hub's deadline says when
    assert_eq!(hub.next_deadline(), Some(t0 + Duration::from_secs(2)));
    struct Drop;
    impl FrameSink for Drop {
        fn frame(&mut self, _: u32, _: u32, _: &[&[u8]], _: u16) {}
    }
    hub.run_due(t0 + Duration::from_secs(2), &mut Drop);
    assert_eq!(num(&hub, "/STAT/t2/MKT/A", "n"), Some(1.0));
    assert_eq!(num(&hub, "/STAT/t2/MKT/A", "vwap"), Some(20.0));
    hub.run_due(t0 + Duration::from_millis(2_500), &mut Drop);
    let (seq, fields) = result(&hub, "/STAT/t2/MKT/A").unwrap();
    assert_eq!(
        fields,
        [("n".to_owned(), Value::Number(0.0))],
        "an empty window: count 0, vwap deleted"
    );
    assert_eq!(seq, 4, "two events, two expiries");
    assert_eq!(hub.next_deadline(), None);
}

#[test]
fn identical_statements_are_computed_once_and_published_under_each_name() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    open(&mut hub, 1, "alice", now);
    open(&mut hub, 2, "bob", now);
    create(
        &mut hub,
        1,
        7,
        "va",
        "select vwap(price, volume) from /MKT/* window length 2",
        now,
    );
    create(
        &mut hub,
        2,
        8,
        "vb",
        "SELECT VWAP(price,volume) AS vwap FROM /MKT/* WINDOW LENGTH 2",
        now,
    );
    assert_eq!(hub.statements().unwrap().len(), 1, "one computation");
    let created = take(&mut hub, 2, now);
    assert_eq!(created[0]["type"], "statement.created");
    assert_eq!(created[0]["reqId"], 8);
    assert_eq!(created[0]["container"], "/STAT/vb");
    assert_eq!(
        created[0]["statement"],
        "select vwap(price, volume) as vwap from /MKT/* window length 2"
    );
    trade(&mut hub, "/MKT/A", 10.0, 1.0, now);
    trade(&mut hub, "/MKT/A", 30.0, 1.0, now);
    trade(&mut hub, "/MKT/A", 40.0, 2.0, now);
    assert_eq!(num(&hub, "/STAT/va/MKT/A", "vwap"), Some(110.0 / 3.0));
    assert_eq!(num(&hub, "/STAT/vb/MKT/A", "vwap"), Some(110.0 / 3.0));
    // each name's container holds its results
    let members = hub.container_members(&["/STAT/va".into(), "/STAT/vb".into()]);
    assert_eq!(members[0].members, ["/STAT/va/MKT/A"]);
    assert_eq!(members[1].members, ["/STAT/vb/MKT/A"]);
    // bob closes his: alice's name keeps running, bob's records are emptied
    hub.handle(
        Command::StatementClose {
            sid: 2,
            req_id: 9,
            name: "vb".into(),
        },
        now,
    );
    let closed = take(&mut hub, 2, now);
    assert_eq!(closed.last().unwrap()["type"], "statement.closed");
    assert_eq!(result(&hub, "/STAT/vb/MKT/A").unwrap().1, []);
    assert!(hub.container_members(&["/STAT/vb".into()])[0].members.is_empty());
    trade(&mut hub, "/MKT/A", 50.0, 1.0, now);
    assert_eq!(num(&hub, "/STAT/va/MKT/A", "vwap"), Some(130.0 / 3.0));
    assert_eq!(result(&hub, "/STAT/vb/MKT/A").unwrap().1, [], "no longer written");
    assert_eq!(hub.statements().unwrap().len(), 1);
    // alice's session goes: so does the computation
    hub.handle(Command::CloseSession { sid: 1 }, now);
    assert!(hub.statements().unwrap().is_empty());
    assert_eq!(result(&hub, "/STAT/va/MKT/A").unwrap().1, []);
}

#[test]
fn a_second_name_starts_with_the_results_so_far() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    hub.create_server_statement("a", "select sum(price) as s from /MKT/*", now)
        .unwrap();
    trade(&mut hub, "/MKT/A", 2.0, 1.0, now);
    trade(&mut hub, "/MKT/A", 3.0, 1.0, now);
    hub.create_server_statement("b", "select sum(price) as s from /MKT/*", now)
        .unwrap();
    assert_eq!(num(&hub, "/STAT/b/MKT/A", "s"), Some(5.0));
    assert_eq!(result(&hub, "/STAT/b/MKT/A").unwrap().0, 1);
}

#[test]
fn results_are_delivered_to_subscribers_with_seqs() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    open(&mut hub, 1, "alice", now);
    create(&mut hub, 1, 1, "px", "select * from /MKT/* where price > 15", now);
    hub.handle(
        Command::Subscribe {
            sid: 1,
            req_id: 2,
            subjects: vec!["/STAT/px/MKT/A".into()],
        },
        now,
    );
    take(&mut hub, 1, now);
    trade(&mut hub, "/MKT/A", 10.0, 1.0, now); // filtered out
    trade(&mut hub, "/MKT/A", 20.0, 2.0, now);
    trade(&mut hub, "/MKT/A", 30.0, 3.0, now);
    let got = take(&mut hub, 1, now + Duration::from_secs(1));
    let records: Vec<_> = got.iter().filter(|m| m["type"] != "error").collect();
    assert_eq!(records[0]["type"], "record.image");
    assert_eq!(records[0]["subject"], "/STAT/px/MKT/A");
    assert_eq!(records[0]["seq"], 1);
    assert_eq!(records[0]["fields"]["price"], 20.0);
    assert_eq!(records[0]["fields"]["volume"], 2.0);
    assert_eq!(records[1]["type"], "record.update");
    assert_eq!(records[1]["seq"], 2);
    assert_eq!(records[1]["fields"]["price"], 30.0);
}

#[test]
fn a_container_statement_follows_member_changes() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    let ops = |op: ContainerOp| Command::ContainerPublish {
        subject: "/C/W".into(),
        ops: vec![op],
    };
    hub.handle(ops(ContainerOp::Add(vec!["/MKT/A".into()])), now);
    hub.create_server_statement("w", "select count(*) as n from container /C/W", now)
        .unwrap();
    trade(&mut hub, "/MKT/A", 1.0, 1.0, now);
    trade(&mut hub, "/MKT/B", 1.0, 1.0, now);
    assert_eq!(num(&hub, "/STAT/w/MKT/A", "n"), Some(1.0));
    assert_eq!(result(&hub, "/STAT/w/MKT/B"), None, "not a member yet");
    hub.handle(ops(ContainerOp::InsertAt(0, vec!["/MKT/B".into()])), now);
    trade(&mut hub, "/MKT/B", 1.0, 1.0, now);
    assert_eq!(num(&hub, "/STAT/w/MKT/B", "n"), Some(1.0));
    hub.handle(ops(ContainerOp::Remove(vec!["/MKT/A".into()])), now);
    trade(&mut hub, "/MKT/A", 1.0, 1.0, now);
    assert_eq!(num(&hub, "/STAT/w/MKT/A", "n"), Some(1.0), "left: not counted");
    hub.handle(ops(ContainerOp::Clear), now);
    trade(&mut hub, "/MKT/B", 1.0, 1.0, now);
    assert_eq!(num(&hub, "/STAT/w/MKT/B", "n"), Some(1.0), "cleared: not counted");
    hub.handle(ops(ContainerOp::Add(vec!["/MKT/A".into(), "/MKT/B".into()])), now);
    trade(&mut hub, "/MKT/A", 1.0, 1.0, now);
    assert_eq!(num(&hub, "/STAT/w/MKT/A", "n"), Some(2.0));
}

#[test]
fn a_view_over_a_statements_container_sorts_by_its_results() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    hub.create_server_statement("vwap", "select vwap(price, volume) as vwap from /MKT/*", now)
        .unwrap();
    for (s, p) in [("/MKT/A", 3.0), ("/MKT/B", 1.0), ("/MKT/C", 2.0)] {
        trade(&mut hub, s, p, 1.0, now);
    }
    open(&mut hub, 1, "alice", now);
    hub.handle(
        Command::ViewCreate {
            sid: 1,
            req_id: 1,
            container: "/STAT/vwap".into(),
            filter: String::new(),
            sort: "vwap desc".into(),
            offset: 0,
            size: 10,
        },
        now,
    );
    let m = take(&mut hub, 1, now);
    let subjects: Vec<_> = m[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subject"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(subjects, ["/STAT/vwap/MKT/A", "/STAT/vwap/MKT/C", "/STAT/vwap/MKT/B"]);
    trade(&mut hub, "/MKT/B", 9.0, 3.0, now); // B's vwap 7: first now
    let m = take(&mut hub, 1, now + Duration::from_secs(1));
    assert_eq!(m[0]["type"], "view.rows");
    assert_eq!(m[0]["moved"][0]["index"], 0, "{m:?}");
    assert_eq!(m[0]["updated"][0]["fields"]["vwap"], 7.0);
}

#[test]
fn refusals_are_error_frames_naming_what_to_fix() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    open(&mut hub, 1, "alice", now);
    create(&mut hub, 1, 1, "bad", "select avg(p) from /A window length 0", now);
    create(&mut hub, 1, 2, "a", "select avg(p) from /A window length 10000", now);
    create(&mut hub, 1, 3, "b", "select avg(p) from /A window length 1", now);
    hub.handle(
        Command::StatementClose {
            sid: 1,
            req_id: 4,
            name: "nope".into(),
        },
        now,
    );
    let m = take(&mut hub, 1, now);
    assert_eq!(m[0]["code"], "BAD_REQUEST");
    assert_eq!(m[0]["field"], "statement");
    assert_eq!(
        m[0]["message"],
        "statement at 37: a length window holds 1..100000 events, got 0"
    );
    assert_eq!(m[1]["type"], "statement.created");
    assert_eq!((&m[2]["reqId"], &m[2]["code"]), (&3.into(), &"LIMIT_EXCEEDED".into()));
    assert!(
        m[2]["message"]
            .as_str()
            .unwrap()
            .contains("limits.maxStatementCostPerUser"),
        "{m:?}"
    );
    assert_eq!((&m[3]["code"], &m[3]["field"]), (&"NOT_FOUND".into(), &"name".into()));
    // the quota is the user's, over all its sessions
    open(&mut hub, 2, "alice", now);
    create(&mut hub, 2, 5, "c", "select avg(p) from /A window length 1", now);
    assert_eq!(take(&mut hub, 2, now)[0]["code"], "LIMIT_EXCEEDED");
    hub.handle(Command::CloseSession { sid: 1 }, now);
    create(&mut hub, 2, 6, "c", "select avg(p) from /A window length 1", now);
    assert_eq!(take(&mut hub, 2, now)[0]["type"], "statement.created");
}

#[test]
fn a_session_closes_only_what_it_created() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    hub.create_server_statement("srv", "select count(*) from /MKT/*", now)
        .unwrap();
    open(&mut hub, 1, "alice", now);
    hub.handle(
        Command::StatementClose {
            sid: 1,
            req_id: 1,
            name: "srv".into(),
        },
        now,
    );
    assert_eq!(take(&mut hub, 1, now)[0]["code"], "NOT_FOUND");
    create(&mut hub, 1, 2, "srv", "select count(*) from /MKT/*", now);
    create(&mut hub, 1, 3, "srv", "select count(*) from /MKT/*", now);
    assert_eq!(hub.session_statements(1), ["srv", "srv"]);
    hub.handle(Command::CloseSession { sid: 1 }, now);
    trade(&mut hub, "/MKT/A", 1.0, 1.0, now);
    assert_eq!(
        num(&hub, "/STAT/srv/MKT/A", "count"),
        Some(1.0),
        "the server's reference stays"
    );
}

#[test]
fn a_tier_sessions_view_of_a_statement_shows_its_tiers_results() {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    hub.create_server_statement("v", "select last(price) as px from /MKT/*", now)
        .unwrap();
    trade(&mut hub, "/MKT/A", 1.0, 1.0, now);
    trade(&mut hub, "/MKT/A@T2", 2.0, 1.0, now);
    let members = hub.container_members(&["/STAT/v".into()]);
    assert_eq!(
        members[0].members,
        ["/STAT/v/MKT/A"],
        "the tier variant is not a member"
    );
    hub.handle(
        Command::OpenSession {
            sid: 1,
            worker: 0,
            user: "t2user".into(),
            tier: "T2".into(),
        },
        now,
    );
    hub.handle(
        Command::ViewCreate {
            sid: 1,
            req_id: 1,
            container: "/STAT/v".into(),
            filter: String::new(),
            sort: String::new(),
            offset: 0,
            size: 10,
        },
        now,
    );
    let m = take(&mut hub, 1, now);
    assert_eq!(m[0]["count"], 1, "{m:?}");
    assert_eq!(
        m[0]["rows"][0]["subject"], "/STAT/v/MKT/A@T2",
        "the T2 result in A's place"
    );
    assert_eq!(m[0]["rows"][0]["fields"]["px"], 2.0);
}
