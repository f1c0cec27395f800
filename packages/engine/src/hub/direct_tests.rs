//! Direct delivery bookkeeping: which entries the hub appends, in which order, and that a
//! direct subscriber's outbox never gets its record's messages.

use std::time::{Duration, Instant};

use super::super::test_support::publish_number;
use super::super::{Command, FrameSink, Hub};
use super::{ENTRY_PUBLISH, ENTRY_SUBSCRIBE, ENTRY_UNSUBSCRIBE};
use crate::config::{BatchingConfig, EngineConfig};
use crate::session::FrameMeta;

/// What reached the sink, in order.
#[derive(Debug, Clone, PartialEq)]
enum Out {
    /// (worker, sid, frame text or close reason, close code)
    Frame(u32, u32, String, u16),
    /// (worker, kind, key, arg, frame text, samples)
    Entry(u32, u16, u32, u32, String, usize),
}

#[derive(Default)]
struct Rec(Vec<Out>);

impl FrameSink for Rec {
    fn frame(&mut self, worker: u32, sid: u32, parts: &[&[u8]], close_code: u16) {
        self.0.push(Out::Frame(
            worker,
            sid,
            String::from_utf8(parts.concat()).unwrap(),
            close_code,
        ));
    }

    fn entry(&mut self, worker: u32, key: u32, parts: &[&[u8]], kind: u16, meta: &FrameMeta<'_>) {
        self.0.push(Out::Entry(
            worker,
            kind,
            key,
            meta.messages,
            String::from_utf8(parts.concat()).unwrap(),
            meta.records.len(),
        ));
    }
}

/// A hub whose worker 1 applies topic entries and worker 2 does not; sessions 1 and 2 on
/// worker 1, session 3 on worker 2; `/A` published as an image.
fn hub(now: Instant) -> Hub {
    let mut hub = Hub::new(EngineConfig::default());
    hub.handle(Command::TopicWorker { worker: 1 }, now);
    for (sid, worker) in [(1, 1), (2, 1), (3, 2)] {
        hub.handle(
            Command::OpenSession {
                sid,
                worker,
                user: format!("u{sid}"),
                tier: String::new(),
            },
            now,
        );
    }
    publish_number(&mut hub, "/A", "bid", 1.0, true, now);
    hub
}

fn subscribe(hub: &mut Hub, sid: u32, subject: &str, now: Instant) {
    hub.handle(
        Command::Subscribe {
            sid,
            req_id: 1,
            subjects: vec![subject.into()],
        },
        now,
    );
}

fn pass(hub: &mut Hub, now: Instant) -> Vec<Out> {
    let mut rec = Rec::default();
    hub.run_due(now, &mut rec);
    rec.0
}

fn rid(hub: &Hub, subject: &str) -> u32 {
    hub.store().lookup(subject).expect("subject interned")
}

fn publishes(out: &[Out]) -> Vec<(u32, u32, u32)> {
    out.iter()
        .filter_map(|o| match o {
            Out::Entry(w, ENTRY_PUBLISH, key, n, _, _) => Some((*w, *key, *n)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_subscriber_turns_direct_right_after_the_frame_with_its_image() {
    let now = Instant::now();
    let mut hub = hub(now);
    subscribe(&mut hub, 1, "/A", now);
    let a = rid(&hub, "/A");
    let out = pass(&mut hub, now);
    assert_eq!(out.len(), 2, "{out:?}");
    let Out::Frame(1, 1, frame, 0) = &out[0] else {
        panic!("the ack and image frame first: {out:?}");
    };
    assert!(
        frame.contains("record.subscribed") && frame.contains("record.image"),
        "{frame}"
    );
    assert_eq!(out[1], Out::Entry(1, ENTRY_SUBSCRIBE, 1, a, String::new(), 0));
    // the next update skips the outbox: one publish entry for the worker
    publish_number(&mut hub, "/A", "bid", 2.0, false, now);
    assert_eq!(hub.queued(1), Some(&b""[..]));
    let out = pass(&mut hub, now);
    assert_eq!(publishes(&out), [(1, a, 1)]);
    let Out::Entry(_, _, _, _, frame, samples) = &out[0] else {
        unreachable!()
    };
    assert!(
        frame.starts_with("[{\"type\":\"record.update\"") && frame.ends_with("}]"),
        "{frame}"
    );
    assert_eq!(*samples, 1, "sampled as one delivery (every one by default)");
}

#[test]
fn one_publish_per_worker_counts_its_direct_subscribers_and_others_keep_their_outbox() {
    let now = Instant::now();
    let mut hub = hub(now);
    for sid in 1..=3 {
        subscribe(&mut hub, sid, "/A", now);
    }
    let a = rid(&hub, "/A");
    let out = pass(&mut hub, now);
    // session 3's worker applies no topic entries: it never gets one
    assert!(!out.iter().any(|o| matches!(o, Out::Entry(2, ..))), "{out:?}");
    let before = hub.stats().deliveries;
    publish_number(&mut hub, "/A", "bid", 2.0, false, now);
    assert_eq!(hub.stats().deliveries - before, 3, "every delivery counted");
    assert!(hub.queued(1).unwrap().is_empty() && hub.queued(2).unwrap().is_empty());
    assert!(String::from_utf8_lossy(hub.queued(3).unwrap()).contains("record.update"));
    let out = pass(&mut hub, now);
    assert_eq!(publishes(&out), [(1, a, 2)]);
    assert!(
        matches!(&out[1], Out::Frame(2, 3, f, 0) if f.contains("record.update")),
        "{out:?}"
    );
}

#[test]
fn a_blocked_session_leaves_the_topics_first_and_returns_after_its_flush() {
    let now = Instant::now();
    let mut hub = hub(now);
    subscribe(&mut hub, 1, "/A", now);
    subscribe(&mut hub, 2, "/A", now);
    let a = rid(&hub, "/A");
    pass(&mut hub, now);
    hub.handle(Command::SetBlocked { sid: 1, blocked: true }, now);
    publish_number(&mut hub, "/A", "bid", 2.0, false, now);
    let out = pass(&mut hub, now);
    assert_eq!(
        out[0],
        Out::Entry(1, ENTRY_UNSUBSCRIBE, 1, 0, String::new(), 0),
        "{out:?}"
    );
    assert_eq!(publishes(&out), [(1, a, 1)], "session 2 only");
    let held = String::from_utf8_lossy(hub.queued(1).unwrap()).into_owned();
    assert!(
        held.contains("record.update") && held.contains("\"seq\":2"),
        "queued while blocked: {held}"
    );
    publish_number(&mut hub, "/A", "bid", 3.0, false, now);
    pass(&mut hub, now);
    hub.handle(Command::SetBlocked { sid: 1, blocked: false }, now);
    let out = pass(&mut hub, now);
    let frame = out
        .iter()
        .position(|o| matches!(o, Out::Frame(1, 1, f, 0) if f.contains("\"seq\":2") && f.contains("\"seq\":3")))
        .expect("the held updates leave as one frame");
    assert_eq!(out[frame + 1], Out::Entry(1, ENTRY_SUBSCRIBE, 1, a, String::new(), 0));
    publish_number(&mut hub, "/A", "bid", 4.0, false, now);
    assert_eq!(publishes(&pass(&mut hub, now)), [(1, a, 2)]);
}

#[test]
fn a_blocked_session_with_nothing_held_returns_at_once() {
    let now = Instant::now();
    let mut hub = hub(now);
    subscribe(&mut hub, 1, "/A", now);
    let a = rid(&hub, "/A");
    pass(&mut hub, now);
    hub.handle(Command::SetBlocked { sid: 1, blocked: true }, now);
    hub.handle(Command::SetBlocked { sid: 1, blocked: false }, now);
    let out = pass(&mut hub, now);
    assert_eq!(
        out,
        [
            Out::Entry(1, ENTRY_UNSUBSCRIBE, 1, 0, String::new(), 0),
            Out::Entry(1, ENTRY_SUBSCRIBE, 1, a, String::new(), 0)
        ]
    );
}

#[test]
fn unsubscribe_leaves_the_topic_before_the_ack() {
    let now = Instant::now();
    let mut hub = hub(now);
    subscribe(&mut hub, 1, "/A", now);
    let a = rid(&hub, "/A");
    pass(&mut hub, now);
    hub.handle(
        Command::Unsubscribe {
            sid: 1,
            req_id: 2,
            subjects: vec!["/A".into()],
        },
        now,
    );
    publish_number(&mut hub, "/A", "bid", 2.0, false, now);
    let out = pass(&mut hub, now);
    assert_eq!(out[0], Out::Entry(1, ENTRY_UNSUBSCRIBE, 1, a, String::new(), 0));
    assert!(matches!(&out[1], Out::Frame(1, 1, f, 0) if f.contains("record.unsubscribed")));
    assert_eq!(out.len(), 2, "no publish: no direct subscriber left: {out:?}");
}

#[test]
fn throttling_or_a_burst_window_keeps_every_session_on_its_outbox() {
    let now = Instant::now();
    for batching in [
        BatchingConfig {
            throttle: Duration::from_millis(50),
            ..BatchingConfig::default()
        },
        BatchingConfig {
            burst_max: Duration::from_millis(200),
            ..BatchingConfig::default()
        },
    ] {
        let mut hub = hub(now);
        subscribe(&mut hub, 1, "/A", now);
        pass(&mut hub, now);
        hub.handle(Command::SetBatching(batching), now);
        let out = pass(&mut hub, now);
        assert_eq!(
            out,
            [Out::Entry(1, ENTRY_UNSUBSCRIBE, 1, 0, String::new(), 0)],
            "{batching:?}"
        );
        let mut at = now;
        for v in 2..5 {
            at += Duration::from_secs(1);
            publish_number(&mut hub, "/A", "bid", f64::from(v), false, at);
            let out = pass(&mut hub, at + Duration::from_secs(1));
            assert!(publishes(&out).is_empty(), "{batching:?}: {out:?}");
            assert!(out
                .iter()
                .any(|o| matches!(o, Out::Frame(1, 1, f, 0) if f.contains("record.update"))));
        }
        // batching off again: direct after the next flush
        hub.handle(Command::SetBatching(BatchingConfig::default()), at);
        let out = pass(&mut hub, at);
        assert_eq!(
            out,
            [Out::Entry(1, ENTRY_SUBSCRIBE, 1, rid(&hub, "/A"), String::new(), 0)]
        );
    }
}

#[test]
fn a_fresh_image_for_a_direct_subscriber_goes_through_its_outbox_after_leaving_the_topic() {
    let now = Instant::now();
    let mut hub = hub(now);
    subscribe(&mut hub, 1, "/A", now);
    let a = rid(&hub, "/A");
    pass(&mut hub, now);
    // subscribing again sends a fresh image to this session only
    subscribe(&mut hub, 1, "/A", now);
    publish_number(&mut hub, "/A", "bid", 2.0, false, now);
    let out = pass(&mut hub, now);
    assert_eq!(
        out[0],
        Out::Entry(1, ENTRY_UNSUBSCRIBE, 1, a, String::new(), 0),
        "{out:?}"
    );
    assert!(publishes(&out).is_empty());
    assert!(matches!(&out[1], Out::Frame(1, 1, f, 0) if f.contains("record.image") && f.contains("record.update")));
    assert_eq!(out[2], Out::Entry(1, ENTRY_SUBSCRIBE, 1, a, String::new(), 0));
}

#[test]
fn closing_a_direct_session_leaves_every_topic_and_stops_its_publishes() {
    let now = Instant::now();
    let mut hub = hub(now);
    subscribe(&mut hub, 1, "/A", now);
    pass(&mut hub, now);
    hub.handle(Command::CloseSession { sid: 1 }, now);
    publish_number(&mut hub, "/A", "bid", 2.0, false, now);
    let out = pass(&mut hub, now);
    assert_eq!(out, [Out::Entry(1, ENTRY_UNSUBSCRIBE, 1, 0, String::new(), 0)]);
}

#[test]
fn publish_samples_follow_the_workers_period_per_delivery() {
    let now = Instant::now();
    let mut hub = hub(now);
    hub.handle(Command::SetLatencySampling { worker: 1, every: 3 }, now);
    subscribe(&mut hub, 1, "/A", now);
    subscribe(&mut hub, 2, "/A", now);
    pass(&mut hub, now);
    let mut samples = 0;
    for v in 0..6 {
        publish_number(&mut hub, "/A", "bid", f64::from(v), false, now);
        for o in pass(&mut hub, now) {
            if let Out::Entry(_, ENTRY_PUBLISH, _, 2, _, n) = o {
                samples += n;
            }
        }
    }
    assert_eq!(samples, 4, "12 deliveries, one in 3 sampled");
}
