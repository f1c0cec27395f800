//! Group commit of the session stores: a session's output that depends on store changes (the
//! messages it stores as sent, its sequence numbers) waits in its slot while one thread runs
//! the fdatasyncs and then writes what waited. A round syncs each store file once for every
//! change written before the round started, whichever thread wrote it (connection threads,
//! the gateway's reports), and no session's lock is held during the sync: a connection keeps
//! reading and answering while its earlier output is made durable.

use super::slot::SessionSlot;
use crate::fix::session::PendingSync;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

#[derive(Default)]
struct Queue {
    /// Slots with output waiting for a sync (each once).
    slots: Vec<Arc<SessionSlot>>,
    stop: bool,
}

/// The acceptor's store syncer (one thread).
#[derive(Default)]
pub(super) struct Committer {
    queue: Mutex<Queue>,
    wake: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The order journal's durable seq as the application last told it (output gated on a
    /// journal seq waits until this reaches it).
    journal: AtomicU64,
}

impl Committer {
    /// Starts the syncer's thread.
    pub fn start() -> std::io::Result<Arc<Committer>> {
        let c = Arc::new(Committer::default());
        let run = Arc::clone(&c);
        let t = std::thread::Builder::new()
            .name("fix-commit".into())
            .spawn(move || run.run())?;
        *c.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(t);
        Ok(c)
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The application learnt that the order journal is durable up to `seq`.
    pub fn note_journal_durable(&self, seq: u64) {
        self.journal.fetch_max(seq, Ordering::AcqRel);
    }

    /// The order journal's durable seq as last noted.
    pub fn journal_durable(&self) -> u64 {
        self.journal.load(Ordering::Acquire)
    }

    /// `slot` has output waiting for a sync.
    pub fn submit(&self, slot: &Arc<SessionSlot>) {
        let mut q = self.lock();
        if !q.slots.iter().any(|s| Arc::ptr_eq(s, slot)) {
            q.slots.push(Arc::clone(slot));
        }
        drop(q);
        self.wake.notify_one();
    }

    /// Finishes the rounds for everything submitted so far, then ends the thread.
    pub fn stop(&self) {
        self.lock().stop = true;
        self.wake.notify_one();
        let t = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = t {
            let _ = t.join();
        }
    }

    /// Runs one round for what is submitted, on the calling thread (tests drive a committer
    /// without its thread to order the store's sync against other events).
    #[cfg(test)]
    pub fn commit_now(&self) {
        let slots = std::mem::take(&mut self.lock().slots);
        round(&slots);
    }

    fn run(&self) {
        loop {
            let slots = {
                let mut q = self.lock();
                while q.slots.is_empty() && !q.stop {
                    q = self.wake.wait(q).unwrap_or_else(|p| p.into_inner());
                }
                if q.slots.is_empty() {
                    return;
                }
                std::mem::take(&mut q.slots)
            };
            round(&slots);
        }
    }
}

/// One group commit: marks what each slot holds now, syncs each file once, writes what was
/// marked.
fn round(slots: &[Arc<SessionSlot>]) {
    let marked: Vec<(&Arc<SessionSlot>, u64, Option<PendingSync>)> = slots
        .iter()
        .filter_map(|s| s.held_mark().map(|(end, sync)| (s, end, sync)))
        .collect();
    let mut files: Vec<(PendingSync, std::io::Result<()>)> = Vec::new();
    for (_, _, sync) in &marked {
        if let Some(p) = sync {
            if !files.iter().any(|(f, _)| f.same_file(p)) {
                files.push((p.clone(), Ok(())));
            }
        }
    }
    for (p, r) in &mut files {
        *r = p.run();
    }
    for (slot, end, sync) in &marked {
        let failed = sync
            .as_ref()
            .and_then(|p| files.iter().find(|(f, _)| f.same_file(p)))
            .and_then(|(_, r)| r.as_ref().err());
        slot.release_held(*end, failed);
    }
}
