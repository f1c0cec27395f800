//! The engine thread: its pass loop over the control and ingest lanes, and how a command is
//! dispatched to the hub or the order desk.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_channel::TryRecvError;

pub(crate) use super::lane::Lanes;
use super::{
    ready, IngestMsg, Msg, Shared, INGEST_FRAMES_PER_PASS, INGEST_TIME_PER_PASS, MAX_COMMANDS_PER_PASS,
    REPLY_FLUSH_EVERY,
};
use crate::hub::{Command, Hub};
use crate::order_desk::OrderDesk;

/// Applies one command: order commands go to the desk; publishes are shown to the desk first
/// (which instruments ticked) and then applied.
fn dispatch(hub: &mut Hub, desk: &mut Option<OrderDesk>, msg: Msg, shared: &Shared) {
    let now = Instant::now();
    match msg {
        Msg::Cmd(cmd) => {
            if let (Some(d), Command::Publish { batch, .. } | Command::SourcePublish { batch, .. }) =
                (desk.as_mut(), &cmd)
            {
                d.note_publishes(batch);
            }
            hub.handle(cmd, now);
        }
        Msg::Order(oc) => {
            if let Some(d) = desk.as_mut() {
                d.handle(hub, oc, now);
            }
        }
        Msg::Completions => {
            if let Some(d) = desk.as_mut() {
                d.apply_completions(hub, shared.completions.take(), now);
            }
        }
        Msg::ViewStats(reply) => {
            let _ = reply.send(hub.view_stats()); // the asker may have given up waiting
        }
        Msg::SessionViews(sids, reply) => {
            let _ = reply.send(hub.session_views(&sids)); // the asker may have given up waiting
        }
        Msg::ContainerMembers(containers, reply) => {
            let _ = reply.send(hub.container_members(&containers)); // the asker may have given up waiting
        }
        Msg::ServerStatement(name, text, reply) => {
            let _ = reply.send(hub.create_server_statement(&name, &text, now)); // the asker may have given up waiting
        }
        Msg::IngestBarrier(reply) => {
            let _ = reply.send(()); // the asker may have given up waiting
        }
        Msg::Records(m) => hub.records_inbound(m, now),
        Msg::Shutdown => {}
    }
}

/// What one lane's turn in a pass ended with.
#[derive(PartialEq, Eq)]
enum Turn {
    /// Keep running.
    Go,
    /// Shutdown was asked and its drain deadline passed: everything left was dropped.
    Overdue,
    /// The control lane is disconnected (the engine is being dropped), or the workers lock is
    /// poisoned (a worker thread panicked holding it: nothing can be delivered).
    Gone,
}

/// Sends every due outbox (replies queued by control commands, and anything else due now) to
/// the workers' ready queues and wakes them. False when the workers lock is poisoned (a worker
/// thread panicked holding it): nothing can be delivered any more.
fn flush_due(hub: &mut Hub, sink: &mut ready::QueueSink, shared: &Shared) -> bool {
    match shared.workers.read() {
        Ok(w) => sink.refresh(&w),
        Err(_) => return false,
    }
    hub.run_due(Instant::now(), sink);
    sink.wake();
    true
}

/// The control lane's turn: every queued control command, up to `MAX_COMMANDS_PER_PASS`. The
/// replies they queued are flushed every `REPLY_FLUSH_EVERY` and as the turn ends (when it
/// handled anything), before the ingest turn.
fn control_turn(
    hub: &mut Hub,
    desk: &mut Option<OrderDesk>,
    lanes: &Lanes,
    shared: &Shared,
    stopping: &mut bool,
    sink: &mut ready::QueueSink,
) -> Turn {
    let mut handled = false;
    let mut since_flush = Instant::now();
    for _ in 0..MAX_COMMANDS_PER_PASS {
        if shared.stopping.overdue() {
            return Turn::Overdue;
        }
        match lanes.ctrl.try_recv() {
            // Ingest queued before the shutdown is still handled (within the drain deadline).
            Ok(Msg::Shutdown) => *stopping = true,
            Ok(msg) => {
                dispatch(hub, desk, msg, shared);
                handled = true;
                if since_flush.elapsed() >= REPLY_FLUSH_EVERY {
                    if !flush_due(hub, sink, shared) {
                        return Turn::Gone;
                    }
                    handled = false;
                    since_flush = Instant::now();
                }
            }
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Disconnected) => return Turn::Gone,
        }
    }
    if handled && !flush_due(hub, sink, shared) {
        return Turn::Gone;
    }
    Turn::Go
}

/// The ingest lane's turn: frames in queue order within the pass budget; cut short (after at
/// least one frame) when a control command is waiting.
fn ingest_turn(hub: &mut Hub, desk: &mut Option<OrderDesk>, lanes: &Lanes, shared: &Shared) -> Turn {
    let started = Instant::now();
    for _ in 0..INGEST_FRAMES_PER_PASS {
        if shared.stopping.overdue() {
            return Turn::Overdue;
        }
        let Ok(IngestMsg { cmd, bytes }) = lanes.ingest.try_recv() else {
            break;
        };
        dispatch(hub, desk, cmd, shared);
        // counted until applied: a reader right after `ingest` sees the frame being applied too
        shared.ingest_bytes.fetch_sub(bytes as u64, Ordering::Relaxed);
        if !lanes.ctrl.is_empty() || started.elapsed() >= INGEST_TIME_PER_PASS {
            break;
        }
    }
    Turn::Go
}

/// What the engine thread owns, behind `Shared::core`: the hub, the order desk and the pass
/// state. Whoever holds the lock runs passes over it: the engine thread, or a thread that just
/// queued an ingest frame while the engine thread was parked (`ingest_inline`).
pub(crate) struct Core {
    hub: Hub,
    desk: Option<OrderDesk>,
    sink: ready::QueueSink,
    /// `Msg::Shutdown` was taken from the control lane.
    stopping: bool,
    /// The last pass skipped its ingest turn for control commands queued during its flush.
    yielded: bool,
    /// The engine thread is parked, or about to park, until `parked_until` (`None`: until rung).
    /// Set by the engine thread before it releases the lock to sleep, cleared once it holds it
    /// again.
    parked: bool,
    parked_until: Option<Instant>,
}

impl Core {
    pub(super) fn new(hub: Hub, desk: Option<OrderDesk>) -> Self {
        Core {
            hub,
            desk,
            sink: ready::QueueSink::default(),
            stopping: false,
            yielded: false,
            parked: false,
            parked_until: None,
        }
    }

    /// The engine thread is parked (or about to park) and holds no lock: an ingest now is
    /// applied by its caller.
    #[cfg(test)]
    pub(super) fn parked(&self) -> bool {
        self.parked
    }

    /// The stats a new engine starts with.
    pub(super) fn stats(&self) -> crate::stats::EngineStats {
        self.hub.stats()
    }

    /// The earliest timer of the hub and the desk.
    fn next_deadline(&self) -> Option<Instant> {
        match (
            self.hub.next_deadline(),
            self.desk.as_ref().and_then(OrderDesk::next_deadline),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The end of every pass: due timers, due outboxes to the ready queues, the workers woken,
    /// the stats handed out. False when the workers lock is poisoned (nothing can be delivered).
    fn end_pass(&mut self, shared: &Shared) -> bool {
        match shared.workers.read() {
            Ok(w) => self.sink.refresh(&w),
            Err(_) => return false,
        }
        if let Some(d) = self.desk.as_mut() {
            d.run_due(&mut self.hub, Instant::now());
        }
        self.hub.records_end_pass();
        self.hub.run_due(Instant::now(), &mut self.sink);
        self.sink.wake();
        shared.stats.publish(&self.hub.stats());
        true
    }
}

/// One pass of the engine thread over both lanes; false when the thread is to end.
fn pass(core: &mut Core, lanes: &Lanes, shared: &Shared) -> bool {
    let Core {
        hub,
        desk,
        sink,
        stopping,
        yielded,
        ..
    } = core;
    let mut turn = control_turn(hub, desk, lanes, shared, stopping, sink);
    // Control commands that arrived while the turn's replies were flushed go before the next
    // ingest frame, in a new pass; once only, so the ingest lane still gets a frame at least
    // every other pass under a steady stream of control commands.
    let skip_ingest = !*yielded && !lanes.ctrl.is_empty();
    *yielded = skip_ingest;
    if turn == Turn::Go && !skip_ingest {
        turn = ingest_turn(hub, desk, lanes, shared);
    }
    match turn {
        Turn::Overdue => {
            shared.stopping.drop_rest(lanes, &shared.completions);
            shared.ingest_bytes.store(0, Ordering::Relaxed);
            shared.stats.publish(&hub.stats());
            return false;
        }
        Turn::Gone => {
            shared.stats.publish(&hub.stats());
            return false;
        }
        Turn::Go => {}
    }
    if *stopping && lanes.ctrl.is_empty() && lanes.ingest.is_empty() {
        shared.stats.publish(&hub.stats());
        return false;
    }
    core.end_pass(shared)
}

/// The engine thread: passes while either lane has work, parked on the lanes' bell (until rung
/// or the next timer) when both are empty. The core is dropped on this thread as it ends.
pub(super) fn run(shared: &Shared) {
    let lanes = &shared.lanes;
    loop {
        let Ok(mut guard) = shared.core.lock() else {
            return; // a thread panicked in a pass: nothing can be delivered
        };
        let Some(core) = guard.as_mut() else { return };
        if !core.stopping && lanes.ctrl.is_empty() && lanes.ingest.is_empty() {
            let deadline = core.next_deadline();
            core.parked = true;
            core.parked_until = deadline;
            drop(guard);
            lanes.wait(deadline);
            guard = match shared.core.lock() {
                Ok(g) => g,
                Err(_) => return,
            };
        }
        let Some(core) = guard.as_mut() else { return };
        core.parked = false;
        if !pass(core, lanes, shared) {
            // the hub and the desk (its journal) end here, as the thread does
            guard.take();
            return;
        }
    }
}

/// Called by a thread right after it queued an ingest frame without ringing the engine thread:
/// while the engine thread is parked and no control command waits, applies the ingest lane
/// here (the same turn and end of pass as the engine thread's, under the core's lock), so a
/// source frame costs no engine-thread wake-up. Otherwise (the engine thread is awake or holds
/// the core, a control command waits, shutdown was asked) rings it, as a plain send does. Also
/// rings it when frames are left (the pass budget ran out), a control command arrived meanwhile,
/// or the pass set a timer earlier than the one the engine thread sleeps until. `drainer` (0:
/// none) is the caller's worker, which drains as this returns: that pass does not wake it.
pub(super) fn ingest_inline(shared: &Shared, drainer: u32) {
    let lanes = &shared.lanes;
    if !try_ingest_inline(shared, drainer) || !lanes.ctrl.is_empty() || !lanes.ingest.is_empty() {
        lanes.bell.ring();
    }
}

/// `ingest_inline`'s pass; false when it did not run one (the engine thread is to be rung).
fn try_ingest_inline(shared: &Shared, drainer: u32) -> bool {
    let lanes = &shared.lanes;
    if !lanes.ctrl.is_empty() || shared.stopping.asked() {
        return false;
    }
    let Ok(mut guard) = shared.core.try_lock() else {
        return false;
    };
    let Some(core) = guard.as_mut() else { return false };
    if !core.parked || core.stopping {
        return false;
    }
    let Core { hub, desk, .. } = core;
    if ingest_turn(hub, desk, lanes, shared) != Turn::Go {
        return false;
    }
    // the caller drains its own worker's queue as it returns: no wake-up through the event loop
    core.sink.quiet = drainer;
    let delivered = core.end_pass(shared);
    core.sink.quiet = 0;
    if !delivered {
        return false;
    }
    let early = match (core.next_deadline(), core.parked_until) {
        (Some(d), Some(until)) => d < until,
        (Some(_), None) => true,
        (None, _) => false,
    };
    drop(guard);
    if early {
        lanes.bell.wake();
    }
    true
}

#[cfg(test)]
mod reply_tests {
    use std::sync::{Arc, Condvar, Mutex, OnceLock};
    use std::time::Duration;

    use super::*;
    use crate::config::EngineConfig;
    use crate::runtime::{Engine, Waker};

    /// Parks the engine thread in its first wake until released; records the ingest lane's depth
    /// (frames not yet taken) at every wake.
    #[derive(Default)]
    struct Probe {
        engine: OnceLock<Engine>,
        /// (parked, released, depths seen at each wake)
        state: Mutex<(bool, bool, Vec<usize>)>,
        cv: Condvar,
    }

    struct ProbeWaker(Arc<Probe>);

    impl Waker for ProbeWaker {
        fn wake(&self) {
            let p = &self.0;
            let depth = p.engine.get().map_or(0, |e| e.ingest_queue().0);
            let mut g = p.state.lock().unwrap();
            g.2.push(depth);
            if g.1 {
                return;
            }
            g.0 = true;
            p.cv.notify_all();
            // bounded: a test that never releases fails on its own timeouts, not a hang here
            let _ = p.cv.wait_timeout_while(g, Duration::from_secs(10), |s| !s.1);
        }
    }

    #[test]
    fn a_reply_is_flushed_before_the_ingest_backlog_is_applied() {
        const N: usize = 2000;
        let engine = Engine::start(EngineConfig::default()).unwrap();
        let probe = Arc::new(Probe::default());
        assert!(probe.engine.set(engine.clone()).is_ok());
        let w = engine
            .register_worker(Box::new(ProbeWaker(Arc::clone(&probe))))
            .unwrap();
        let sid = engine.open_session(w, "u", "t").unwrap();
        engine.subscribe(sid, 1, vec!["/PARK".into()]).unwrap();
        {
            let g = probe.state.lock().unwrap();
            let (g, _) = probe
                .cv
                .wait_timeout_while(g, Duration::from_secs(5), |s| !s.0)
                .unwrap();
            assert!(g.0, "the engine thread parks in wake after the first ack");
        }
        // The first ack is taken, so the reply below wakes the worker again.
        assert!(engine.drain(w).unwrap().is_some());
        for i in 0..N {
            let f = format!(r#"[{{"type":"record.publish","subject":"/M/{i}","image":true,"fields":{{"n":{i}}}}}]"#);
            engine.ingest(f.as_bytes()).unwrap();
        }
        engine.subscribe(sid, 2, vec!["/M/0".into()]).unwrap();
        probe.state.lock().unwrap().1 = true;
        probe.cv.notify_all();
        let deadline = Instant::now() + Duration::from_secs(10);
        while probe.state.lock().unwrap().2.len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let depths = probe.state.lock().unwrap().2.clone();
        assert_eq!(depths.len(), 2, "woken for the first ack and for the reply: {depths:?}");
        assert_eq!(depths[1], N, "the reply went out before any of the backlog was taken");
        let frame = engine.drain(w).unwrap().expect("the reply is ready");
        let text = String::from_utf8(frame.data).unwrap();
        assert!(
            text.contains(r#""reqId":2"#) && text.contains(r#""pending":true"#),
            "{text}"
        );
        engine.shutdown().unwrap();
    }
}
