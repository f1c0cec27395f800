//! How a thread that waits on a queue sleeps without spinning: a sender queues its message, then
//! rings the waiter's `Bell`, which unparks the waiter only if it is asleep; with its queue empty
//! the waiter parks until rung or its deadline. A crossbeam blocking receive spins and yields
//! before it blocks, which costs the waiter's core when its queue empties between almost every
//! message (the engine thread's lanes, the journal writer's appends at 20,000 orders/s).

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::Instant;

/// Wakes the one thread that waits on a queue when the queue gets a message.
#[derive(Debug, Default)]
pub(crate) struct Bell {
    /// The waiting thread (set the first time it sleeps).
    thread: OnceLock<Thread>,
    /// The thread is about to park or parked (it checks its queue again after setting this).
    asleep: AtomicBool,
    /// The queue lost its senders (disconnected: the thread must not sleep on it).
    closed: AtomicBool,
    /// `nudge` was called: a `doze` ends.
    nudged: AtomicBool,
}

impl Bell {
    /// Called after a message was queued: wakes the thread if it sleeps. The fence pairs with the
    /// one in `sleep`: either the sleeper sees the message, or this sees it asleep and unparks it
    /// (an unpark before the park makes the park return at once).
    pub(crate) fn ring(&self) {
        fence(Ordering::SeqCst);
        if self.asleep.load(Ordering::Relaxed) {
            self.unpark();
        }
    }

    /// Wakes the thread whether it sleeps or dozes: a `doze` returns early (the next one at once
    /// if it was not dozing); a `sleep` may return spuriously (its caller loops on its queue).
    pub(crate) fn nudge(&self) {
        self.nudged.store(true, Ordering::Release);
        self.unpark();
    }

    /// Unparks the thread whether it sleeps or not: a `sleep` that starts after this returns at
    /// once (it may return spuriously: the caller's loop checks its queue and timers again).
    pub(crate) fn wake(&self) {
        self.unpark();
    }

    fn unpark(&self) {
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    /// The queue's senders are gone: the thread is woken (from a `sleep` or a `doze`) and never
    /// sleeps on the bell again.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        // unconditionally: a doze does not count as asleep (an unpark before a park only makes
        // that park return at once)
        self.unpark();
    }

    /// On the waiting thread: parks until rung or `deadline`, unless `has_work` says a message
    /// arrived or the bell is closed (it may also return spuriously: the caller's loop checks its
    /// queue again).
    pub(crate) fn sleep(&self, deadline: Option<Instant>, has_work: impl Fn() -> bool) {
        let _ = self.thread.set(std::thread::current()); // the waiting thread only
        self.asleep.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if !has_work() && !self.closed.load(Ordering::Relaxed) {
            match deadline {
                Some(at) => std::thread::park_timeout(at.saturating_duration_since(Instant::now())),
                None => std::thread::park(),
            }
        }
        self.asleep.store(false, Ordering::Relaxed);
    }

    /// On the waiting thread: parks until `deadline` without asking to be rung (messages queued
    /// meanwhile wake no one); `nudge` and `close` end it early.
    pub(crate) fn doze(&self, deadline: Instant) {
        let _ = self.thread.set(std::thread::current());
        loop {
            let now = Instant::now();
            if now >= deadline || self.closed.load(Ordering::Relaxed) || self.nudged.swap(false, Ordering::Acquire) {
                return;
            }
            std::thread::park_timeout(deadline - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_ring_wakes_a_sleeper_and_close_ends_every_sleep() {
        let bell = Arc::new(Bell::default());
        let queued = Arc::new(AtomicUsize::new(0));
        let (b, q) = (bell.clone(), queued.clone());
        let sleeper = std::thread::spawn(move || {
            while q.load(Ordering::SeqCst) == 0 {
                b.sleep(None, || q.load(Ordering::SeqCst) > 0);
            }
            // closed: never parks again, whatever the queue holds
            b.close();
            b.sleep(None, || false);
            true
        });
        // queued, then rung: the sleeper wakes whether it parked already or not
        queued.store(1, Ordering::SeqCst);
        bell.ring();
        assert!(sleeper.join().unwrap());
    }

    #[test]
    fn a_doze_ignores_rings_and_ends_at_its_deadline_or_a_nudge() {
        let bell = Arc::new(Bell::default());
        // a ring does not end a doze; the deadline does (bounded: 50 ms)
        let at = Instant::now() + Duration::from_millis(50);
        bell.ring();
        bell.doze(at);
        assert!(Instant::now() >= at, "a doze lasts until its deadline");
        // a nudge ends a doze far from its deadline (before or during it)
        let b = bell.clone();
        let dozer = std::thread::spawn(move || b.doze(Instant::now() + Duration::from_secs(600)));
        bell.nudge();
        dozer.join().unwrap();
    }

    #[test]
    fn close_ends_a_doze_under_way() {
        let bell = Arc::new(Bell::default());
        let (tx, rx) = crossbeam_channel::unbounded();
        let b = bell.clone();
        let dozer = std::thread::spawn(move || {
            b.doze(Instant::now() + Duration::from_secs(600));
            tx.send(()).unwrap();
        });
        // parked in the doze (or about to be): the close must end it either way
        std::thread::sleep(Duration::from_millis(20));
        bell.close();
        assert!(
            rx.recv_timeout(Duration::from_secs(10)).is_ok(),
            "the doze ended at the close"
        );
        dozer.join().unwrap();
    }
}
