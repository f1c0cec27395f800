use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::*;
use crate::config::{BatchingConfig, EngineConfig};
use crate::error::ErrorCode;
use crate::hub::ContainerOp;

#[derive(Default)]
struct Signal {
    wakes: AtomicU32,
    lock: Mutex<()>,
    cv: Condvar,
}

struct TestWaker(Arc<Signal>);

impl Waker for TestWaker {
    fn wake(&self) {
        self.0.wakes.fetch_add(1, Ordering::SeqCst);
        let _g = self.0.lock.lock().unwrap();
        self.0.cv.notify_all();
    }
}

/// Drains `worker` until `want` entries arrived or 5 s passed.
fn drain_until(e: &Engine, worker: u32, want: usize) -> Vec<(u32, String, u32)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        if let Some(d) = e.drain(worker).unwrap() {
            for entry in d.index.chunks(4) {
                let (sid, off, len, close) = (entry[0], entry[1] as usize, entry[2] as usize, entry[3]);
                got.push((sid, String::from_utf8(d.data[off..off + len].to_vec()).unwrap(), close));
            }
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    got
}

const PUB: &str = r#"[{"type":"record.publish","subject":"/FX/EURUSD","ts":1,"image":true,"fields":{"bid":1.5}}]"#;

#[test]
fn workers_on_two_threads_get_their_own_sessions_frames() {
    let engine = Engine::start(EngineConfig::default()).unwrap();
    let id = engine.id();
    let signals: Vec<Arc<Signal>> = (0..2).map(|_| Arc::new(Signal::default())).collect();
    let threads: Vec<_> = signals
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, sig)| {
            std::thread::spawn(move || {
                let e = Engine::attach(id).unwrap();
                let w = e.register_worker(Box::new(TestWaker(Arc::clone(&sig)))).unwrap();
                let sid = e.open_session(w, &format!("user{i}"), "T1").unwrap();
                e.subscribe(sid, 1, vec!["/FX/EURUSD".into()]).unwrap();
                let frames = drain_until(&e, w, 2);
                (w, sid, frames)
            })
        })
        .collect();
    // Publish once both acks are out (the image then reaches both through fan-out).
    let deadline = Instant::now() + Duration::from_secs(5);
    while engine.stats().subscriptions < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(engine.ingest(PUB.as_bytes()).unwrap(), 1);
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_ne!(results[0].0, results[1].0, "distinct worker ids");
    for (i, (_, sid, frames)) in results.iter().enumerate() {
        assert_eq!(frames.len(), 2, "worker {i}: {frames:?}");
        assert!(frames.iter().all(|f| f.0 == *sid && f.2 == 0));
        assert!(frames[0].1.contains("record.subscribed"));
        assert!(frames[1].1.contains(r#""fields":{"bid":1.5}"#));
        assert!(signals[i].wakes.load(Ordering::SeqCst) >= 1);
    }
    let s = engine.stats();
    assert_eq!((s.publishes_in, s.sessions, s.records, s.frames_out), (1, 2, 1, 4));
    engine.shutdown().unwrap();
}

#[test]
fn errors_are_typed_and_nothing_is_accepted_from_a_bad_frame() {
    let engine = Engine::start(EngineConfig::default()).unwrap();
    let sig = Arc::new(Signal::default());
    let w = engine.register_worker(Box::new(TestWaker(sig))).unwrap();
    assert_eq!(
        engine.open_session(99, "u", "t").unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(engine.drain(99).unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(Engine::attach(u32::MAX).unwrap_err().code(), ErrorCode::NotFound);
    let bad = format!(
        r#"[{},{{"type":"record.publish","subject":"x","fields":{{}}}}]"#,
        &PUB[1..PUB.len() - 1]
    );
    let e = engine.ingest(bad.as_bytes()).unwrap_err();
    assert_eq!(
        (e.code(), e.index(), e.field()),
        (ErrorCode::BadRequest, Some(1), Some("subject"))
    );
    assert_eq!(engine.ingest(&[0xff, 0xfe]).unwrap_err().code(), ErrorCode::BadFrame);
    assert_eq!(engine.stats().publishes_in, 0);
    assert!(engine.drain(w).unwrap().is_none());
    engine.shutdown().unwrap();
    engine.shutdown().unwrap();
    assert_eq!(
        engine.ingest(PUB.as_bytes()).unwrap_err().code(),
        ErrorCode::Unavailable
    );
    assert_eq!(
        engine.subscribe(1, 1, vec![]).unwrap_err().code(),
        ErrorCode::Unavailable
    );
    assert!(engine.close_session(1).is_ok(), "closing on a shut engine is a no-op");
    assert_eq!(Engine::attach(engine.id()).unwrap_err().code(), ErrorCode::NotFound);
}

/// Waits (at most 5 s) until the engine thread is parked with nothing to do.
fn wait_parked(e: &Engine) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if e.shared.lanes.ctrl.is_empty()
            && e.shared.lanes.ingest.is_empty()
            && e.shared.core.lock().unwrap().as_ref().is_some_and(|c| c.parked())
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

#[test]
fn a_source_frame_is_applied_by_the_ingesting_thread_while_the_engine_thread_is_parked() {
    let engine = Engine::start(EngineConfig::default()).unwrap();
    let sig = Arc::new(Signal::default());
    let w = engine.register_worker(Box::new(TestWaker(Arc::clone(&sig)))).unwrap();
    let sid = engine.open_session(w, "u", "T1").unwrap();
    engine.subscribe(sid, 1, vec!["/FX/EURUSD".into()]).unwrap();
    assert_eq!(drain_until(&engine, w, 1).len(), 1, "the ack");
    for i in 0..20 {
        assert!(
            wait_parked(&engine),
            "the engine thread parks when both lanes are empty"
        );
        let wakes = sig.wakes.load(Ordering::SeqCst);
        let f = format!(r#"[{{"type":"record.publish","subject":"/FX/EURUSD","ts":1,"fields":{{"bid":{i}}}}}]"#);
        engine.ingest(f.as_bytes()).unwrap();
        // applied, flushed and the worker woken before `ingest` returned: no hop to the engine thread
        assert_eq!(
            sig.wakes.load(Ordering::SeqCst),
            wakes + 1,
            "update {i}: the worker was woken"
        );
        let d = engine.drain(w).unwrap().expect("the update is ready as ingest returns");
        let text = String::from_utf8(d.data).unwrap();
        assert!(text.contains(&format!(r#""bid":{i}"#)), "{text}");
    }
    // a frame over INLINE_INGEST_MAX_BYTES goes to the engine thread (rung), and arrives the same
    assert!(wait_parked(&engine));
    let pad = "x".repeat(INLINE_INGEST_MAX_BYTES);
    let big =
        format!(r#"[{{"type":"record.publish","subject":"/FX/EURUSD","ts":1,"fields":{{"bid":99,"pad":"{pad}"}}}}]"#);
    engine.ingest(big.as_bytes()).unwrap();
    let got = drain_until(&engine, w, 1);
    assert_eq!(got.len(), 1);
    assert!(got[0].1.contains(r#""bid":99"#));
    // every update exactly once, in order
    assert_eq!(engine.stats().deliveries, 22, "the subscription's and 21 updates");
    engine.shutdown().unwrap();
}

#[test]
fn the_draining_worker_is_not_woken_by_its_own_inline_pass_and_the_others_are() {
    let engine = Engine::start(EngineConfig::default()).unwrap();
    let sigs: Vec<Arc<Signal>> = (0..2).map(|_| Arc::new(Signal::default())).collect();
    let ws: Vec<u32> = sigs
        .iter()
        .map(|s| engine.register_worker(Box::new(TestWaker(Arc::clone(s)))).unwrap())
        .collect();
    for (i, &w) in ws.iter().enumerate() {
        let sid = engine.open_session(w, &format!("u{i}"), "T1").unwrap();
        engine.subscribe(sid, 1, vec!["/FX/EURUSD".into()]).unwrap();
        assert_eq!(drain_until(&engine, w, 1).len(), 1, "the ack");
    }
    for i in 0..20 {
        assert!(wait_parked(&engine));
        let wakes: Vec<u32> = sigs.iter().map(|s| s.wakes.load(Ordering::SeqCst)).collect();
        let f = format!(r#"[{{"type":"record.publish","subject":"/FX/EURUSD","ts":1,"fields":{{"bid":{i}}}}}]"#);
        engine.ingest_draining(f.as_bytes(), None, 0, ws[0]).unwrap();
        assert_eq!(
            sigs[0].wakes.load(Ordering::SeqCst),
            wakes[0],
            "update {i}: the drainer is not woken"
        );
        assert_eq!(
            sigs[1].wakes.load(Ordering::SeqCst),
            wakes[1] + 1,
            "update {i}: the other worker is"
        );
        for &w in &ws {
            let d = engine.drain(w).unwrap().expect("the update is ready as ingest returns");
            let text = String::from_utf8(d.data).unwrap();
            assert!(text.contains(&format!(r#""bid":{i}"#)), "{text}");
        }
    }
    engine.shutdown().unwrap();
}

#[test]
fn batched_flush_arrives_after_the_interval_and_unregister_closes_sessions() {
    let cfg = EngineConfig {
        batching: BatchingConfig {
            burst_min: Duration::from_millis(30),
            burst_max: Duration::from_millis(60),
            ..BatchingConfig::default()
        },
        ..EngineConfig::default()
    };
    let engine = Engine::start(cfg).unwrap();
    let w = engine
        .register_worker(Box::new(TestWaker(Arc::new(Signal::default()))))
        .unwrap();
    engine.ingest(PUB.as_bytes()).unwrap();
    // the ingest lane is not ordered with the control lane: wait until the record exists, so the
    // subscribe finds it (else it would be pending and get its image apart from the ack)
    let deadline = Instant::now() + Duration::from_secs(5);
    while engine.stats().records < 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let sid = engine.open_session(w, "u", "t").unwrap();
    // windows tile from the session's last flush (the ack's, at or after this instant), so the
    // update cannot leave before t + burst-min however late this thread sees the ack
    let t = Instant::now();
    engine.subscribe(sid, 1, vec!["/FX/EURUSD".into()]).unwrap();
    let frames = drain_until(&engine, w, 1);
    assert_eq!(frames.len(), 1, "ack and image in one frame (a reply is not held)");
    engine.ingest(PUB.as_bytes()).unwrap();
    let frames = drain_until(&engine, w, 1);
    assert_eq!(frames.len(), 1, "the update");
    assert!(
        t.elapsed() >= Duration::from_millis(25),
        "a live update is held for about burst-min"
    );
    engine.unregister_worker(w).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while engine.stats().sessions > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(engine.stats().sessions, 0);
    assert_eq!(engine.drain(w).unwrap_err().code(), ErrorCode::NotFound);
    engine.shutdown().unwrap();
}

/// A waker that parks the engine thread inside its first `wake` until `release`: everything sent
/// meanwhile is queued, so a test controls what the next pass finds in each lane.
#[derive(Default)]
struct Gate {
    /// (engine thread parked, released)
    state: Mutex<(bool, bool)>,
    cv: Condvar,
}

impl Gate {
    /// Waits (at most 5 s) until the engine thread is parked in `wake`.
    fn wait_parked(&self) -> bool {
        let g = self.state.lock().unwrap();
        let (g, _) = self.cv.wait_timeout_while(g, Duration::from_secs(5), |s| !s.0).unwrap();
        g.0
    }

    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.cv.notify_all();
    }
}

struct GateWaker(Arc<Gate>);

impl Waker for GateWaker {
    fn wake(&self) {
        let mut g = self.0.state.lock().unwrap();
        if g.1 {
            return;
        }
        g.0 = true;
        self.0.cv.notify_all();
        // bounded: a test that never releases fails on its own timeouts, not a hang here
        let _ = self.0.cv.wait_timeout_while(g, Duration::from_secs(10), |s| !s.1);
    }
}

/// An engine whose thread is parked in a worker's waker (after answering a first subscribe).
fn parked_engine() -> (Engine, u32, u32, Arc<Gate>) {
    let engine = Engine::start(EngineConfig::default()).unwrap();
    let gate = Arc::new(Gate::default());
    let w = engine.register_worker(Box::new(GateWaker(Arc::clone(&gate)))).unwrap();
    let sid = engine.open_session(w, "u", "t").unwrap();
    engine.subscribe(sid, 1, vec!["/PARK".into()]).unwrap();
    assert!(
        gate.wait_parked(),
        "the engine thread parks in wake after the first ack"
    );
    (engine, w, sid, gate)
}

/// Drains `worker` until `want` messages (not frames) arrived or 5 s passed.
fn drain_messages(e: &Engine, worker: u32, want: usize) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        for f in drain_until(e, worker, 1) {
            got.extend(serde_json::from_str::<Vec<serde_json::Value>>(&f.1).unwrap());
        }
    }
    got
}

#[test]
fn a_view_and_a_subscribe_queued_behind_ingest_are_answered_first() {
    const N: usize = 2000;
    let (engine, w, sid, gate) = parked_engine();
    for i in 0..N {
        engine
            .container_publish("/C".into(), vec![ContainerOp::Add(vec![format!("/M/{i}")])])
            .unwrap();
        let f = format!(r#"[{{"type":"record.publish","subject":"/M/{i}","image":true,"fields":{{"n":{i}}}}}]"#);
        engine.ingest(f.as_bytes()).unwrap();
    }
    assert_eq!(engine.ingest_queue().0, 2 * N, "all queued behind the parked thread");
    assert!(engine.ingest_queue().1 > 0);
    engine
        .view_create(sid, 2, "/C".into(), String::new(), String::new(), 0, 10)
        .unwrap();
    engine.subscribe(sid, 3, vec![format!("/M/{}", N - 1)]).unwrap();
    gate.release();
    let got = drain_messages(&engine, w, 3);
    let types: Vec<&str> = got.iter().map(|m| m["type"].as_str().unwrap()).collect();
    assert_eq!(
        &types[..3],
        ["record.subscribed", "view.created", "record.subscribed"],
        "{got:?}"
    );
    assert_eq!(
        got[1]["count"], 0,
        "the view was created before any ingest frame was applied"
    );
    assert_eq!(got[2]["records"][0]["pending"], true, "the subscribe too");
    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.ingest_queue() != (0, 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        engine.ingest_queue(),
        (0, 0),
        "the lane drained and its bytes were taken off"
    );
    engine.shutdown().unwrap();
}

#[test]
fn ingest_frames_are_applied_in_queue_order() {
    const N: usize = 3000;
    let (engine, w, sid, gate) = parked_engine();
    for i in 0..N {
        // frame i adds /M/i and sets /LAST.n = i: a reordering shows in either
        engine
            .container_publish("/C".into(), vec![ContainerOp::Add(vec![format!("/M/{i}")])])
            .unwrap();
        let f = format!(
            r#"[{{"type":"record.publish","subject":"/M/{i}","image":true,"fields":{{"n":{i}}}}},{{"type":"record.publish","subject":"/LAST","fields":{{"n":{i}}}}}]"#
        );
        engine.ingest(f.as_bytes()).unwrap();
    }
    gate.release();
    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.ingest_queue().0 > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    drain_until(&engine, w, 1);
    engine
        .view_create(sid, 2, "/C".into(), String::new(), String::new(), 0, N as u32)
        .unwrap();
    engine.subscribe(sid, 3, vec!["/LAST".into()]).unwrap();
    let got = drain_messages(&engine, w, 2);
    let created = got.iter().find(|m| m["type"] == "view.created").unwrap();
    assert_eq!(created["count"], N);
    let rows = created["rows"].as_array().unwrap();
    let subjects: Vec<String> = rows.iter().map(|r| r["subject"].as_str().unwrap().to_owned()).collect();
    let want: Vec<String> = (0..N).map(|i| format!("/M/{i}")).collect();
    assert_eq!(subjects, want, "container ops applied in queue order");
    let image = got.iter().find(|m| m["type"] == "record.image").unwrap();
    assert_eq!(
        image["fields"]["n"],
        N - 1,
        "the last publish queued is the last applied"
    );
    assert_eq!(engine.stats().publishes_in, 2 * N as u64);
    engine.shutdown().unwrap();
}

#[test]
fn shutdown_still_applies_ingest_queued_before_it() {
    let (engine, _w, _sid, gate) = parked_engine();
    for i in 0..100 {
        let f = format!(r#"[{{"type":"record.publish","subject":"/S/{i}","image":true,"fields":{{"n":{i}}}}}]"#);
        engine.ingest(f.as_bytes()).unwrap();
    }
    let e2 = engine.clone();
    let stopper = std::thread::spawn(move || e2.shutdown_report().unwrap());
    // the Shutdown message reaches the control lane while the thread is still parked
    let deadline = Instant::now() + Duration::from_secs(5);
    while engine.queue_depth() < 101 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    gate.release();
    let report = stopper.join().unwrap();
    assert_eq!(report, ShutdownReport::default(), "nothing dropped: {report:?}");
    assert_eq!(
        engine.stats().records,
        100,
        "the queued publishes were applied before stopping"
    );
}

#[test]
fn ingest_barrier_returns_after_every_earlier_frame_was_applied() {
    let engine = Engine::start(EngineConfig::default()).unwrap();
    // more frames than one pass takes, so the barrier waits across passes
    for i in 0..3000 {
        let f = format!(r#"[{{"type":"record.publish","subject":"/B/{i}","ts":1,"image":true,"fields":{{"n":{i}}}}}]"#);
        engine.ingest(f.as_bytes()).unwrap();
    }
    engine.ingest_barrier(Duration::from_secs(30)).unwrap();
    assert_eq!(
        engine.ingest_queue(),
        (0, 0),
        "every frame before the barrier was applied"
    );
    engine.shutdown().unwrap();
    assert_eq!(
        engine.ingest_barrier(Duration::from_secs(1)).unwrap_err().code(),
        ErrorCode::Unavailable
    );
}
