//! The engine thread's lanes and how it sleeps: a send queues the message, then rings the
//! thread's `Bell` (bell.rs) if the thread is asleep; with both lanes empty the thread parks until
//! rung or its next timer. No spinning: a crossbeam `Select` spins and yields before it blocks,
//! which cost about a tenth of the engine thread's time at 20,000 orders/s, when the lanes empty
//! between almost every message.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub(crate) use crate::bell::Bell;

use crossbeam_channel::{Receiver, SendError, Sender};

/// The sending end of a lane: a crossbeam sender that rings the engine thread's bell.
pub(crate) struct LaneSender<T> {
    tx: Sender<T>,
    bell: Arc<Bell>,
    /// Senders of this lane alive.
    senders: Arc<AtomicUsize>,
}

impl<T> Clone for LaneSender<T> {
    fn clone(&self) -> Self {
        self.senders.fetch_add(1, Ordering::Relaxed);
        LaneSender {
            tx: self.tx.clone(),
            bell: Arc::clone(&self.bell),
            senders: Arc::clone(&self.senders),
        }
    }
}

impl<T> Drop for LaneSender<T> {
    fn drop(&mut self) {
        // The last sender gone disconnects the lane: the thread must see that too.
        if self.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.bell.close();
        }
    }
}

impl<T> LaneSender<T> {
    /// Queues `msg` and wakes the engine thread if it sleeps; `Err` when the thread is gone.
    pub(crate) fn send(&self, msg: T) -> Result<(), SendError<T>> {
        self.tx.send(msg)?;
        self.bell.ring();
        Ok(())
    }

    /// Queues `msg` without waking the engine thread: the caller wakes it or handles the lane
    /// itself (`engine_thread::ingest_inline`). `Err` when the thread is gone.
    pub(crate) fn send_quiet(&self, msg: T) -> Result<(), SendError<T>> {
        self.tx.send(msg)
    }

    /// Messages queued.
    pub(crate) fn len(&self) -> usize {
        self.tx.len()
    }
}

/// An unbounded lane ringing `bell`.
pub(crate) fn lane<T>(bell: &Arc<Bell>) -> (LaneSender<T>, Receiver<T>) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let bell = Arc::clone(bell);
    let senders = Arc::new(AtomicUsize::new(1));
    (LaneSender { tx, bell, senders }, rx)
}

/// The engine thread's two receivers.
pub(crate) struct Lanes {
    pub(super) ctrl: Receiver<crate::runtime::Msg>,
    pub(super) ingest: Receiver<crate::runtime::IngestMsg>,
    pub(super) bell: Arc<Bell>,
}

impl Lanes {
    /// Sleeps until either lane has a message, a sender went away (the last one gone disconnects
    /// the lane: the next `try_recv` says so), or `deadline`; it may return early (the caller's
    /// pass loop checks the lanes and timers again).
    pub(super) fn wait(&self, deadline: Option<Instant>) {
        self.bell
            .sleep(deadline, || !self.ctrl.is_empty() || !self.ingest.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Msg;
    use crossbeam_channel::TryRecvError;

    /// A control lane's sender, the ingest lane's (kept: that lane stays connected and empty),
    /// and the lanes.
    fn lanes() -> (LaneSender<Msg>, LaneSender<crate::runtime::IngestMsg>, Lanes) {
        let bell = Arc::new(Bell::default());
        let (tx, ctrl) = lane(&bell);
        let (itx, ingest) = lane(&bell);
        (tx, itx, Lanes { ctrl, ingest, bell })
    }

    #[test]
    fn a_deadline_ends_the_wait() {
        let (_tx, _itx, lanes) = lanes();
        let at = Instant::now() + std::time::Duration::from_millis(20);
        while Instant::now() < at {
            lanes.wait(Some(at)); // may return early, never sleeps past the deadline for good
        }
    }

    #[test]
    fn a_send_wakes_a_parked_waiter() {
        let (tx, _itx, lanes) = lanes();
        let waiter = std::thread::spawn(move || {
            while lanes.ctrl.is_empty() {
                lanes.wait(None);
            }
            lanes.ctrl.try_recv().is_ok()
        });
        // Sent while the waiter parks, is about to, or has not started: it wakes either way.
        tx.send(Msg::Shutdown).unwrap();
        assert!(waiter.join().unwrap(), "woken with the message queued");
    }

    #[test]
    fn dropping_the_last_sender_wakes_the_waiter() {
        let (tx, _itx, lanes) = lanes();
        let second = tx.clone();
        let waiter = std::thread::spawn(move || loop {
            lanes.wait(None);
            if matches!(lanes.ctrl.try_recv(), Err(TryRecvError::Disconnected)) {
                return true;
            }
        });
        drop(tx);
        drop(second);
        assert!(waiter.join().unwrap());
    }
}
