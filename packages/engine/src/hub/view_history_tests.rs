//! The window histories alone (bounds, gaps, byte-identical replay), then `view.resume` replaying
//! them in the hub: from every seq inside a history, over random seeds, the client's window ends
//! equal to a fresh view's; outside it, a reset.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::super::{Command, ContainerOp, Hub, ViewResume, ViewResumeConfig};
use super::*;
use crate::config::EngineConfig;
use crate::value::Value;
use crate::wire::encode::FieldRef;

fn cfg(messages: usize, bytes: usize, age_ms: u64) -> ViewHistoryConfig {
    ViewHistoryConfig {
        messages,
        bytes,
        max_age: Duration::from_millis(age_ms),
        ..ViewHistoryConfig::default()
    }
}

fn histories(c: ViewHistoryConfig) -> ViewHistories {
    let mut h = ViewHistories::default();
    h.configure(c, true);
    h
}

/// Encodes `view.rows` `seq` of view `view_id` with one updated field; returns the message and
/// where its body starts.
fn rows_msg(req_id: u32, view_id: u32, seq: u64, bid: f64) -> (Vec<u8>, usize) {
    let v = Value::Number(bid);
    let mut out = Vec::new();
    let mut w = ViewRows::begin(&mut out, req_id, view_id, Some(seq));
    let body = w.written();
    w.left(4);
    let f: [FieldRef<'_>; 1] = [("bid", Some(&v), None)];
    w.updated(7, seq, 1.5, f.into_iter(), false);
    w.finish();
    (out, body)
}

/// Keeps `view.rows` `seq` of window 1 (view 3) at `at`; returns the message as sent.
fn keep_rows(h: &mut ViewHistories, seq: u64, at: Instant) -> Vec<u8> {
    let (msg, body) = rows_msg(9, 3, seq, seq as f64);
    h.sent_rows(1, seq, 9, &msg[body..], at);
    msg
}

fn replayed(h: &ViewHistories, seq: u64, view_id: u32) -> (usize, String) {
    let mut out = Vec::new();
    let n = h.replay(1, seq, view_id, &mut out);
    (n, String::from_utf8(out).unwrap())
}

#[test]
fn replays_what_was_sent_byte_for_byte_under_the_new_view_id() {
    let now = Instant::now();
    let mut h = histories(ViewHistoryConfig::default());
    h.start(1, 1);
    let mut sent = Vec::new();
    view_size(&mut sent, 3, Some(2), 40);
    h.sent_size(1, 2, 40, now);
    sent.push(b',');
    sent.extend(keep_rows(&mut h, 3, now));
    sent.push(b',');
    sent.extend(keep_rows(&mut h, 4, now));
    let sent = String::from_utf8(sent).unwrap();
    assert_eq!(replayed(&h, 1, 3), (3, format!(",{sent}")));
    let want = |seq| String::from_utf8(rows_msg(9, 8, seq, seq as f64).0).unwrap();
    assert_eq!(replayed(&h, 2, 8), (2, format!(",{},{}", want(3), want(4))));
    assert_eq!(replayed(&h, 4, 3).0, 0, "nothing after the last");
    assert_eq!((h.oldest(1, 4), h.oldest(1, 5), h.oldest(2, 4)), (1, 5, 4));
}

#[test]
fn bounded_by_count_bytes_and_age() {
    let t0 = Instant::now();
    let one = ENTRY_BYTES + rows_msg(9, 3, 2, 2.0).0.len() - rows_msg(9, 3, 2, 2.0).1;
    // by count: 3 kept
    let mut h = histories(cfg(3, 1 << 20, 60_000));
    h.start(1, 1);
    for seq in 2..=7 {
        keep_rows(&mut h, seq, t0);
    }
    assert_eq!(h.oldest(1, 7), 4);
    assert_eq!(replayed(&h, 3, 3).0, 0, "seq 4 is gone: no replay from 3");
    assert_eq!(replayed(&h, 4, 3).0, 3);
    assert_eq!(h.bytes(), 3 * one);
    // by bytes: two messages fit
    let mut h = histories(cfg(64, 2 * one + one / 2, 60_000));
    h.start(1, 1);
    for seq in 2..=6 {
        keep_rows(&mut h, seq, t0);
    }
    assert_eq!((h.oldest(1, 6), h.bytes()), (4, 2 * one));
    // one message past the bytes bound: nothing before it can be replayed, nor it
    let mut h = histories(cfg(64, one - 1, 60_000));
    h.start(1, 1);
    keep_rows(&mut h, 2, t0);
    assert_eq!((h.oldest(1, 2), h.bytes()), (2, 0));
    // by age, checked as the window sends and when its session drops
    let mut h = histories(cfg(64, 1 << 20, 1000));
    h.start(1, 1);
    keep_rows(&mut h, 2, t0);
    keep_rows(&mut h, 3, t0 + Duration::from_millis(600));
    keep_rows(&mut h, 4, t0 + Duration::from_millis(1200));
    assert_eq!(h.oldest(1, 4), 2);
    h.age(1, t0 + Duration::from_millis(1700));
    assert_eq!(h.oldest(1, 4), 3);
    h.age(1, t0 + Duration::from_secs(60));
    assert_eq!((h.oldest(1, 4), h.bytes()), (4, 0));
}

#[test]
fn a_gap_restarts_the_history_and_closing_frees_it() {
    let now = Instant::now();
    let mut h = histories(ViewHistoryConfig::default());
    h.start(1, 1);
    keep_rows(&mut h, 2, now);
    keep_rows(&mut h, 5, now); // 3 and 4 were not kept
    assert_eq!(h.oldest(1, 5), 4);
    assert_eq!(replayed(&h, 4, 3).0, 1);
    h.start(2, 1);
    h.sent_size(2, 2, 10, now);
    let both = h.bytes();
    h.remove(1);
    assert_eq!(h.bytes(), ENTRY_BYTES);
    assert!(both > h.bytes());
    h.remove(2);
    assert_eq!(h.bytes(), 0);
    // resume off: nothing kept, what was is freed
    keep_rows(&mut h, 2, now);
    h.configure(ViewHistoryConfig::default(), false);
    assert_eq!(h.bytes(), 0);
    keep_rows(&mut h, 3, now);
    assert_eq!((h.bytes(), h.oldest(1, 3)), (0, 3));
}

/// Checks what `h` holds against itself: the total is the sum of the windows' bytes, each
/// window's bytes and bodies match its entries, and the entries are numbered from `base` + 1 on.
fn assert_consistent(h: &ViewHistories, ctx: &str) {
    let mut sum = 0;
    for w in &h.by_window {
        let tails: usize = w.entries.iter().map(|e| e.len as usize).sum();
        assert_eq!(w.tails.len(), tails, "{ctx}");
        assert_eq!(w.bytes, tails + w.entries.len() * ENTRY_BYTES, "{ctx}");
        for (i, e) in w.entries.iter().enumerate() {
            assert_eq!(e.seq, w.base + 1 + i as u64, "{ctx}");
        }
        assert_eq!(w.oldest_at, w.entries.front().map(|e| e.at), "{ctx}");
        sum += w.bytes;
    }
    assert_eq!(h.bytes(), sum, "{ctx}");
}

#[test]
fn the_total_bounds_all_windows_over_random_sends_closes_and_drops() {
    const WINDOWS: u32 = 40;
    let (mut evicted, mut replays, mut squeezed) = (0, 0, 0);
    for seed in 1..=24u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let t0 = Instant::now();
        let mut ms = 0;
        let mut total = [2_000, 8_000, 30_000][seed as usize % 3];
        let mut h = histories(ViewHistoryConfig {
            total_bytes: total,
            ..cfg(16, 4_000, 5_000)
        });
        // per open window: each message sent, by seq (2..): a view.size's count or a
        // view.rows's reqId and body
        let mut sent: HashMap<u32, Vec<(Kind, Vec<u8>)>> = HashMap::new();
        for step in 0..3_000 {
            ms += rng.below(20);
            let now = t0 + Duration::from_millis(ms);
            let w = rng.below(u64::from(WINDOWS)) as u32;
            match rng.below(40) {
                0 | 1 => {
                    h.remove(w);
                    sent.remove(&w);
                }
                2 => h.age(w, now),
                3 if step % 7 == 0 => {
                    // new bounds at run time: a lower total applies at once
                    total = [0, 1_000, 5_000, 20_000][rng.below(4) as usize];
                    h.configure(
                        ViewHistoryConfig {
                            total_bytes: total,
                            ..cfg(16, 4_000, 5_000)
                        },
                        true,
                    );
                }
                _ => {
                    let Some(msgs) = sent.get_mut(&w) else {
                        h.start(w, 1);
                        sent.insert(w, Vec::new());
                        continue;
                    };
                    let seq = msgs.len() as u64 + 2;
                    if rng.below(4) == 0 {
                        let count = rng.below(500);
                        h.sent_size(w, seq, count, now);
                        msgs.push((Kind::Size(count), Vec::new()));
                    } else {
                        let len = [10, 100, 600, 1_500][rng.below(4) as usize] + rng.below(50) as usize;
                        let tail: Vec<u8> = (0..len).map(|i| b'a' + ((seq as usize + i) % 26) as u8).collect();
                        let req_id = rng.below(9) as u32;
                        h.sent_rows(w, seq, req_id, &tail, now);
                        msgs.push((Kind::Rows(req_id), tail));
                    }
                }
            }
            let ctx = format!("seed {seed}, step {step}, total {total}");
            if total > 0 {
                assert!(h.bytes() <= total, "{ctx}: {} bytes", h.bytes());
            }
            assert_consistent(&h, &ctx);
            // every seq a window replays from gets exactly what was sent after it
            let Some(msgs) = sent.get(&w) else { continue };
            let last = msgs.len() as u64 + 1;
            let oldest = h.oldest(w, last);
            assert!(oldest <= last, "{ctx}");
            squeezed += u64::from(oldest == last && last > 1);
            for from in [oldest, (oldest + last) / 2, last.saturating_sub(1).max(oldest)] {
                let mut out = Vec::new();
                let n = h.replay(w, from, 5, &mut out);
                assert_eq!(n as u64, last - from, "{ctx}, from {from}");
                let mut want = Vec::new();
                for (i, (kind, tail)) in msgs.iter().enumerate().skip((from - 1) as usize) {
                    let seq = i as u64 + 2;
                    want.push(b',');
                    match *kind {
                        Kind::Size(count) => view_size(&mut want, 5, Some(seq), count),
                        Kind::Rows(req_id) => {
                            ViewRows::begin(&mut want, req_id, 5, Some(seq));
                            want.extend(tail);
                        }
                    }
                }
                assert_eq!(out, want, "{ctx}, from {from}");
                replays += u64::from(n > 0);
            }
        }
        evicted += h.evicted();
    }
    assert!(
        evicted > 1_000 && replays > 1_000 && squeezed > 100,
        "{evicted} {replays} {squeezed}"
    );
}

#[test]
fn past_the_total_a_window_gives_up_its_own_oldest_then_keeps_nothing_until_room_is_freed() {
    let now = Instant::now();
    let one = ENTRY_BYTES + rows_msg(9, 3, 2, 2.0).0.len() - rows_msg(9, 3, 2, 2.0).1;
    let mut h = histories(ViewHistoryConfig {
        total_bytes: 3 * one,
        ..ViewHistoryConfig::default()
    });
    h.start(1, 1);
    for seq in 2..=4 {
        keep_rows(&mut h, seq, now);
    }
    assert_eq!((h.bytes(), h.evicted(), h.oldest(1, 4)), (3 * one, 0, 1));
    // window 2 holds nothing to give up: its message is not kept, only its last seq continues
    h.start(2, 1);
    let (msg, body) = rows_msg(9, 4, 2, 2.0);
    h.sent_rows(2, 2, 9, &msg[body..], now);
    assert_eq!((h.bytes(), h.evicted(), h.oldest(2, 2)), (3 * one, 1, 2));
    // window 1 makes room from its own oldest
    keep_rows(&mut h, 5, now);
    assert_eq!((h.bytes(), h.evicted(), h.oldest(1, 5)), (3 * one, 2, 2));
    assert_eq!(replayed(&h, 1, 3).0, 0, "seq 2 is gone: no replay from 1");
    assert_eq!(replayed(&h, 2, 3).0, 3);
    // closing window 1 returns its bytes to the total: window 2 keeps again, from after seq 2
    h.remove(1);
    assert_eq!(h.bytes(), 0);
    let (msg, body) = rows_msg(9, 4, 3, 3.0);
    h.sent_rows(2, 3, 9, &msg[body..], now);
    assert_eq!((h.bytes(), h.evicted(), h.oldest(2, 3)), (one, 2, 2));
    // a lower total at run time applies at once; 0: no total bound
    h.start(1, 1);
    keep_rows(&mut h, 2, now);
    h.configure(
        ViewHistoryConfig {
            total_bytes: one,
            ..ViewHistoryConfig::default()
        },
        true,
    );
    assert_eq!((h.bytes(), h.evicted()), (one, 3));
    h.configure(
        ViewHistoryConfig {
            total_bytes: 0,
            ..ViewHistoryConfig::default()
        },
        true,
    );
    for seq in 3..=40 {
        keep_rows(&mut h, seq, now);
    }
    assert_eq!(h.evicted(), 3);
    assert!(h.bytes() >= 39 * one, "{}", h.bytes());
}

// ---------------------------------------------------------------------------------------------
// view.resume with a replay, in the hub

/// Deterministic xorshift, so a failing seed can be rerun.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const RECORDS: u32 = 20;
const SIZE: u32 = 5;
const HISTORY: usize = 16;

fn publish(hub: &mut Hub, i: u64, field: &str, v: f64, now: Instant) {
    super::super::test_support::publish_number(hub, &format!("/P/{i}"), field, v, false, now);
}

fn take(hub: &mut Hub, sid: u32, now: Instant) -> Vec<Json> {
    super::super::test_support::take_queued(hub, sid, now)
}

fn open(hub: &mut Hub, sid: u32, now: Instant) {
    let cmd = Command::OpenSession {
        sid,
        worker: 0,
        user: "u".into(),
        tier: String::new(),
    };
    hub.handle(cmd, now);
}

fn create(hub: &mut Hub, sid: u32, req_id: u32, offset: u32, now: Instant) {
    let cmd = Command::ViewCreate {
        sid,
        req_id,
        container: "/C".into(),
        filter: "bid < 100".into(),
        sort: "bid".into(),
        offset,
        size: SIZE,
    };
    hub.handle(cmd, now);
}

/// A row as a client holds it: id, seq, fields.
type Row = (u64, u64, serde_json::Map<String, Json>);

/// A client's copy of one view window: rows (id, seq, fields) in order, the offset each of its
/// requests asked for (diffs tagged with a reqId are relative to its window), its last seq.
#[derive(Debug, Default, Clone)]
struct Client {
    rows: Vec<Row>,
    offsets: HashMap<u64, u64>,
    seq: u64,
}

impl Client {
    fn apply(&mut self, m: &Json) {
        let n = |v: &Json| v.as_u64().unwrap();
        let image = |r: &Json| (n(&r["id"]), n(&r["seq"]), r["fields"].as_object().unwrap().clone());
        let list = |k: &str| m[k].as_array().cloned().unwrap_or_default();
        match m["type"].as_str().unwrap() {
            "view.created" => self.rows = list("rows").iter().map(image).collect(),
            "view.rows" => {
                let offset = self.offsets[&n(&m["reqId"])];
                let mut gone: Vec<u64> = list("left").iter().map(n).collect();
                gone.extend(list("moved").iter().map(|r| n(&r["id"])));
                let old = std::mem::take(&mut self.rows);
                let mut placed: Vec<(u64, Row)> = list("moved")
                    .iter()
                    .map(|r| (n(&r["index"]), old.iter().find(|x| x.0 == n(&r["id"])).unwrap().clone()))
                    .collect();
                placed.extend(list("entered").iter().map(|r| (n(&r["index"]), image(r))));
                placed.sort_by_key(|p| p.0);
                self.rows = old.into_iter().filter(|r| !gone.contains(&r.0)).collect();
                for (index, row) in placed {
                    let at = ((index - offset) as usize).min(self.rows.len());
                    self.rows.insert(at, row);
                }
                for u in list("updated") {
                    let row = self.rows.iter_mut().find(|r| r.0 == n(&u["id"])).unwrap();
                    row.1 = n(&u["seq"]);
                    for (k, v) in u["fields"].as_object().unwrap() {
                        if v.is_null() {
                            row.2.remove(k);
                        } else {
                            row.2.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            _ => {}
        }
        if let Some(seq) = m["seq"].as_u64() {
            self.seq = seq;
        }
    }
}

/// What a seeded run left: the hub holding session 1's view, every view message session 1 was
/// sent (in order), each request's offset, and the window asked for last.
struct Run {
    hub: Hub,
    sent: Vec<Json>,
    offsets: HashMap<u64, u64>,
    offset: u32,
    now: Instant,
}

/// Records /P/0../P/19 in /C; session 1 views `bid < 100` by bid, 5 rows, while random updates
/// (and scrolls) flow; then its connection drops and more updates come.
fn run(seed: u64, messages: usize) -> Run {
    let now = Instant::now();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut hub = Hub::new(EngineConfig::default());
    hub.set_epoch(77);
    let resume = ViewResumeConfig {
        history: cfg(messages, 1 << 20, 60_000),
        ..ViewResumeConfig::default()
    };
    hub.handle(Command::SetViewResume(resume), now);
    for i in 0..RECORDS {
        super::super::test_support::publish_number(&mut hub, &format!("/P/{i}"), "bid", f64::from(i * 5), true, now);
    }
    let members = (0..RECORDS).map(|i| format!("/P/{i}")).collect();
    let add = Command::ContainerPublish {
        subject: "/C".into(),
        ops: vec![ContainerOp::Add(members)],
    };
    hub.handle(add, now);
    open(&mut hub, 1, now);
    create(&mut hub, 1, 1, 0, now);
    let (mut offsets, mut offset, mut req) = (HashMap::from([(1, 0)]), 0, 1);
    let mut sent = take(&mut hub, 1, now);
    for _ in 0..40 {
        let i = rng.below(u64::from(RECORDS));
        match rng.below(8) {
            0 => {
                req += 1;
                offset = rng.below(8) as u32;
                offsets.insert(u64::from(req), u64::from(offset));
                let change = Command::ViewChange {
                    sid: 1,
                    req_id: req,
                    view_id: 1,
                    offset,
                    size: SIZE,
                };
                hub.handle(change, now);
            }
            1 | 2 => publish(&mut hub, i, "qty", rng.below(1000) as f64, now),
            _ => publish(&mut hub, i, "bid", rng.below(120) as f64, now),
        }
        sent.extend(take(&mut hub, 1, now));
    }
    hub.handle(Command::DetachSession { sid: 1 }, now);
    for _ in 0..8 {
        let i = rng.below(u64::from(RECORDS));
        publish(&mut hub, i, "bid", rng.below(120) as f64, now);
    }
    Run {
        hub,
        sent,
        offsets,
        offset,
        now,
    }
}

fn resume(run: &mut Run, sid: u32, req_id: u32, seq: u64) -> Vec<Json> {
    open(&mut run.hub, sid, run.now);
    let resume = ViewResume {
        epoch: 77,
        session_id: 1,
        view_id: 1,
        seq,
        container: "/C".into(),
        filter: "bid < 100".into(),
        sort: "bid".into(),
        offset: run.offset,
        size: SIZE,
    };
    run.hub.handle(Command::ViewResume { sid, req_id, resume }, run.now);
    take(&mut run.hub, sid, run.now)
}

fn fresh(run: &mut Run, sid: u32) -> Client {
    create(&mut run.hub, sid, 500, run.offset, run.now);
    let mut c = Client::default();
    for m in take(&mut run.hub, sid, run.now) {
        c.apply(&m);
    }
    c
}

#[test]
fn a_resume_from_any_seq_inside_the_history_ends_equal_to_a_fresh_view() {
    let mut replays = 0;
    for seed in 1..=12 {
        let last = run(seed, HISTORY).sent.last().and_then(|m| m["seq"].as_u64()).unwrap();
        let oldest = last.saturating_sub(HISTORY as u64).max(1);
        for held in oldest..=last {
            let mut r = run(seed, HISTORY);
            // the client got the messages up to `held`; the rest were lost in flight
            let mut client = Client {
                offsets: r.offsets.clone(),
                ..Client::default()
            };
            for m in r.sent.iter().filter(|m| m["seq"].as_u64().is_some_and(|s| s <= held)) {
                client.apply(m);
            }
            assert_eq!(client.seq, held);
            client.offsets.insert(9, u64::from(r.offset));
            let msgs = resume(&mut r, 2, 9, held);
            let ctx = format!("seed {seed}, held {held} of {last}: {msgs:?}");
            assert_eq!(
                (&msgs[0]["type"], &msgs[0]["seq"]),
                (&"view.resumed".into(), &last.into()),
                "{ctx}"
            );
            let seqs: Vec<u64> = msgs[1..].iter().map(|m| m["seq"].as_u64().unwrap()).collect();
            let want: Vec<u64> = (held + 1..=held + seqs.len() as u64).collect();
            assert_eq!(seqs, want, "{ctx}");
            // the replayed messages are the ones sent, addressed to the new viewId
            let view_id = msgs[0]["viewId"].clone();
            for (m, orig) in msgs[1..]
                .iter()
                .zip(r.sent.iter().filter(|m| m["seq"].as_u64() > Some(held)))
            {
                let mut orig = orig.clone();
                orig["viewId"] = view_id.clone();
                assert_eq!(m, &orig, "{ctx}");
            }
            for m in &msgs {
                client.apply(m);
            }
            assert_eq!(client.rows, fresh(&mut r, 2).rows, "{ctx}");
            replays += r.hub.stats().view_replays;
            assert_eq!(r.hub.stats().view_replays, u64::from(held < last), "{ctx}");
        }
    }
    assert!(replays > 100, "replays {replays}");
}

#[test]
fn outside_the_history_a_resume_resets() {
    let mut r = run(3, HISTORY);
    let last = r.sent.last().and_then(|m| m["seq"].as_u64()).unwrap();
    let oldest = last - HISTORY as u64;
    assert!(oldest > 1);
    assert!(r.hub.stats().view_history_bytes > 0);
    let msgs = resume(&mut r, 2, 9, oldest - 1);
    assert_eq!(
        (&msgs[0]["type"], &msgs[0]["reset"], &msgs[0]["seq"]),
        (&"view.created".into(), &true.into(), &1.into())
    );
    // the held view was closed: its history freed; the reset view's starts empty
    let s = r.hub.stats();
    assert_eq!(
        (s.views_detached, s.view_resets, s.view_replays, s.view_history_bytes),
        (0, 1, 0, 0)
    );
    // ahead of the last sent: a reset too
    let mut r = run(3, HISTORY);
    assert_eq!(resume(&mut r, 2, 9, last + 1)[0]["reset"], true);
    // no history kept (resumeHistoryMessages 0): only the last seq continues
    let mut r = run(3, 0);
    assert_eq!(r.hub.stats().view_history_bytes, 0);
    assert_eq!(resume(&mut r, 2, 9, last - 1)[0]["reset"], true);
    let mut r = run(3, 0);
    assert_eq!(resume(&mut r, 2, 9, last)[0]["type"], "view.resumed");
}

/// What `squeeze` left: the hub holding session 2's dropped view, the view messages session 2
/// was sent, and the seq of the one the total kept out of its history.
struct Squeezed {
    hub: Hub,
    sent: Vec<Json>,
    not_kept: u64,
    now: Instant,
}

fn publish_note(hub: &mut Hub, i: u64, len: usize, now: Instant) {
    let p = crate::wire::Publish {
        subject: format!("/P/{i}"),
        ts: Some(1.0),
        image: false,
        fields: vec![crate::wire::PubField {
            name: "note".into(),
            value: Some(Value::Str("n".repeat(len).into())),
            typed: false,
        }],
    };
    let batch = vec![p];
    hub.handle(
        Command::Publish {
            batch,
            received_ms: 1.0,
        },
        now,
    );
}

/// Records /P/0../P/19 in /C, views total 1,500 bytes of history. Session 1's window (rows 0-4)
/// fills the total with small messages while session 2's window (rows 10-14) holds one; then a
/// 1,000-byte note for session 2's window does not fit even after its own message goes, a small
/// update follows, and session 2's connection drops (unless `drop_2` is false).
fn squeeze(drop_2: bool) -> Squeezed {
    let now = Instant::now();
    let mut hub = Hub::new(EngineConfig::default());
    hub.set_epoch(77);
    let resume = ViewResumeConfig {
        history: ViewHistoryConfig {
            total_bytes: 1_500,
            ..ViewHistoryConfig::default()
        },
        ..ViewResumeConfig::default()
    };
    hub.handle(Command::SetViewResume(resume), now);
    for i in 0..RECORDS {
        super::super::test_support::publish_number(&mut hub, &format!("/P/{i}"), "bid", f64::from(i * 5), true, now);
    }
    let members = (0..RECORDS).map(|i| format!("/P/{i}")).collect();
    let add = Command::ContainerPublish {
        subject: "/C".into(),
        ops: vec![ContainerOp::Add(members)],
    };
    hub.handle(add, now);
    open(&mut hub, 1, now);
    create(&mut hub, 1, 1, 0, now);
    open(&mut hub, 2, now);
    create(&mut hub, 2, 1, 10, now);
    take(&mut hub, 1, now);
    let mut sent = take(&mut hub, 2, now);
    publish(&mut hub, 10, "qty", 1.0, now);
    sent.extend(take(&mut hub, 2, now));
    for k in 0..30 {
        publish(&mut hub, k % 5, "qty", f64::from(k as u32), now);
        take(&mut hub, 1, now);
    }
    let full = hub.stats().view_history_bytes;
    assert!(full > 1_300 && full <= 1_500, "{full}");
    let evicted = hub.stats().view_history_evicted;
    publish_note(&mut hub, 11, 1_000, now);
    let note = take(&mut hub, 2, now);
    assert_eq!(
        hub.stats().view_history_evicted,
        evicted + 2,
        "its own message, then the note"
    );
    let not_kept = note.last().and_then(|m| m["seq"].as_u64()).unwrap();
    sent.extend(note);
    publish(&mut hub, 12, "qty", 2.0, now);
    sent.extend(take(&mut hub, 2, now));
    assert!(hub.stats().view_history_bytes <= 1_500);
    if drop_2 {
        hub.handle(Command::DetachSession { sid: 2 }, now);
    }
    Squeezed {
        hub,
        sent,
        not_kept,
        now,
    }
}

#[test]
fn a_view_squeezed_by_the_total_resumes_with_a_reset_never_a_replay_with_a_hole() {
    let last = squeeze(true).sent.last().and_then(|m| m["seq"].as_u64()).unwrap();
    let not_kept = squeeze(true).not_kept;
    assert!(not_kept > 2 && not_kept < last, "{not_kept} {last}");
    for held in 1..=last {
        let mut s = squeeze(true);
        open(&mut s.hub, 3, s.now);
        let resume = ViewResume {
            epoch: 77,
            session_id: 2,
            view_id: 1,
            seq: held,
            container: "/C".into(),
            filter: "bid < 100".into(),
            sort: "bid".into(),
            offset: 10,
            size: SIZE,
        };
        s.hub.handle(
            Command::ViewResume {
                sid: 3,
                req_id: 9,
                resume,
            },
            s.now,
        );
        let msgs = take(&mut s.hub, 3, s.now);
        let ctx = format!("held {held} of {last}, the total kept out {not_kept}: {msgs:?}");
        if held < not_kept {
            assert_eq!(
                (&msgs[0]["type"], &msgs[0]["reset"]),
                (&"view.created".into(), &true.into()),
                "{ctx}"
            );
            continue;
        }
        // from the message not kept on, the history continues: what follows is what was sent
        assert_eq!(msgs[0]["type"], "view.resumed", "{ctx}");
        let view_id = msgs[0]["viewId"].clone();
        let after: Vec<Json> = s
            .sent
            .iter()
            .filter(|m| m["seq"].as_u64() > Some(held))
            .map(|m| {
                let mut m = m.clone();
                m["viewId"] = view_id.clone();
                m
            })
            .collect();
        assert_eq!(&msgs[1..], &after[..], "{ctx}");
    }
}

#[test]
fn closing_a_view_returns_its_history_to_the_total() {
    let mut s = squeeze(false);
    let (before, evicted) = (s.hub.stats().view_history_bytes, s.hub.stats().view_history_evicted);
    s.hub.handle(
        Command::ViewClose {
            sid: 1,
            req_id: 5,
            view_id: 1,
        },
        s.now,
    );
    let freed = s.hub.stats().view_history_bytes;
    assert!(freed < 400 && freed < before, "{before} -> {freed}");
    // session 2's window now has room for a note as large as the one kept out before
    publish_note(&mut s.hub, 13, 1_000, s.now);
    take(&mut s.hub, 2, s.now);
    let s2 = s.hub.stats();
    assert!(
        s2.view_history_bytes > freed + 1_000,
        "{freed} -> {}",
        s2.view_history_bytes
    );
    assert_eq!(s2.view_history_evicted, evicted);
}
