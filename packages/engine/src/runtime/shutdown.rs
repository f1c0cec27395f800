//! Bounded shutdown: `Engine::shutdown` gives the engine thread `EngineConfig::shutdown_drain` to
//! handle what was queued before it (a server behind its source can hold millions of commands);
//! past that the rest is dropped unhandled and counted, so a SIGTERM never waits minutes. Order
//! requests dropped this way were never journaled (nothing was acknowledged for them); journal
//! completions dropped are entries already on disk (and acknowledged: the writer thread sent their
//! `order.ack` before posting the completion) whose trade record and blotter change are not
//! published now (recovery rebuilds them at the next start). The journal writer still completes
//! the appends queued to it (bounded by its queue) when the desk drops, acks included.

use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::engine_thread::Lanes;
use super::orders::Completions;
use super::Msg;
use crate::order_desk::OrderCmd;

/// What `Engine::shutdown_report` found when the engine thread stopped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// How long the engine thread kept handling queued commands after shutdown was asked.
    pub drained_for: Duration,
    /// Source and session commands (publishes, subscriptions, views, ...) dropped unhandled.
    pub dropped_commands: u64,
    /// Order requests (submit, cancel, amend) dropped unhandled: not journaled, not answered.
    pub dropped_order_requests: u64,
    /// Journal completions dropped: durable (and acknowledged) entries whose trade record and
    /// blotter change were not published.
    pub dropped_completions: u64,
}

impl ShutdownReport {
    /// A log line when anything was dropped (`None`: everything queued was handled).
    pub fn log_line(&self) -> Option<String> {
        if self.dropped_commands + self.dropped_order_requests + self.dropped_completions == 0 {
            return None;
        }
        Some(format!(
            "engine shutdown: drain deadline passed after {} ms; dropped {} queued commands, {} order \
             requests (not journaled, not answered) and {} journal completions (on disk and acknowledged, trade records not updated)",
            self.drained_for.as_millis(),
            self.dropped_commands,
            self.dropped_order_requests,
            self.dropped_completions
        ))
    }
}

/// Shutdown state shared between `Engine::shutdown` and the engine thread.
#[derive(Debug, Default)]
pub(super) struct Stopping {
    /// Set by `shutdown`: (when asked, deadline for handling queued commands).
    asked: Mutex<Option<(Instant, Instant)>>,
    flag: std::sync::atomic::AtomicBool,
    report: Mutex<ShutdownReport>,
}

impl Stopping {
    /// Records the shutdown request with its drain deadline.
    pub(super) fn ask(&self, drain: Duration) {
        let now = Instant::now();
        if let Ok(mut a) = self.asked.lock() {
            a.get_or_insert((now, now + drain));
        }
        self.flag.store(true, Ordering::Release);
    }

    /// True once shutdown was asked.
    pub(super) fn asked(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// True once shutdown was asked and its drain deadline has passed.
    pub(super) fn overdue(&self) -> bool {
        if !self.flag.load(Ordering::Acquire) {
            return false;
        }
        let asked = self.asked.lock().ok().and_then(|a| *a);
        asked.is_some_and(|(_, deadline)| Instant::now() >= deadline)
    }

    /// Drops (and counts) everything still queued in both lanes; stores the report.
    pub(super) fn drop_rest(&self, lanes: &Lanes, completions: &Completions) {
        let mut r = ShutdownReport::default();
        // Bounded: only what is queued now (senders stop once `shut` is set).
        for _ in 0..lanes.ingest.len() {
            match lanes.ingest.try_recv() {
                Ok(super::IngestMsg {
                    cmd: Msg::IngestBarrier(_),
                    ..
                }) => {} // its asker sees the reply channel close
                // Another node's change: healed by a snapshot if this node comes back.
                Ok(super::IngestMsg {
                    cmd: Msg::Records(_), ..
                }) => {}
                Ok(_) => r.dropped_commands += 1,
                Err(_) => break,
            }
        }
        let rx = &lanes.ctrl;
        for _ in 0..rx.len() {
            match rx.try_recv() {
                Ok(Msg::Cmd(_)) => r.dropped_commands += 1,
                Ok(Msg::Order(OrderCmd::Journaled(_))) => r.dropped_completions += 1,
                Ok(Msg::Order(_)) => r.dropped_order_requests += 1,
                Ok(Msg::Completions) => r.dropped_completions += completions.take().len() as u64,
                Ok(Msg::ViewStats(_))
                | Ok(Msg::SessionViews(..))
                | Ok(Msg::ContainerMembers(..))
                | Ok(Msg::ServerStatement(..))
                | Ok(Msg::IngestBarrier(_))
                | Ok(Msg::Records(_))
                | Ok(Msg::Shutdown) => {}
                Err(_) => break,
            }
        }
        self.finish(r);
    }

    /// Stores the final report (drained time filled in).
    pub(super) fn finish(&self, mut r: ShutdownReport) {
        if let Some((asked, _)) = self.asked.lock().ok().and_then(|a| *a) {
            r.drained_for = asked.elapsed();
        }
        if let Ok(mut slot) = self.report.lock() {
            *slot = r;
        }
    }

    /// The report stored by the engine thread.
    pub(super) fn report(&self) -> ShutdownReport {
        self.report.lock().map(|r| *r).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::Command;
    use std::sync::Arc;

    #[test]
    fn queued_messages_past_the_deadline_are_counted_not_handled() {
        let bell = Arc::default();
        let (tx, rx) = crate::runtime::lane::lane(&bell);
        let (ingest_tx, ingest_rx) = crate::runtime::lane::lane(&bell);
        let s = Stopping::default();
        assert!(!s.overdue(), "not asked");
        s.ask(Duration::from_secs(3600));
        assert!(!s.overdue(), "deadline ahead");
        let s = Stopping::default();
        for _ in 0..2 {
            tx.send(Msg::Cmd(Command::SetBatching(Default::default()))).unwrap();
        }
        ingest_tx
            .send(super::super::IngestMsg {
                cmd: Msg::Cmd(Command::Publish {
                    batch: Vec::new(),
                    received_ms: 0.0,
                }),
                bytes: 2,
            })
            .unwrap();
        tx.send(Msg::Order(OrderCmd::Cancel {
            sid: 1,
            req_id: 1,
            client_order_id: "c".into(),
            at: Instant::now(),
        }))
        .unwrap();
        tx.send(Msg::Shutdown).unwrap();
        s.ask(Duration::ZERO);
        assert!(s.overdue());
        let lanes = Lanes {
            ctrl: rx,
            ingest: ingest_rx,
            bell,
        };
        s.drop_rest(&lanes, &Completions::default());
        assert!(lanes.ctrl.is_empty() && lanes.ingest.is_empty());
        let r = s.report();
        assert_eq!(
            (r.dropped_commands, r.dropped_order_requests, r.dropped_completions),
            (3, 1, 0)
        );
        let line = r.log_line().unwrap();
        assert!(line.contains("dropped 3 queued commands, 1 order requests"), "{line}");
        assert_eq!(ShutdownReport::default().log_line(), None);
    }
}
