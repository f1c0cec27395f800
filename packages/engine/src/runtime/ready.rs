//! Per-worker ready queues: flushed frames wait here until the worker `drain`s them. Two threads
//! fill them: the engine thread (every session's outbox) and the journal writer thread (an
//! `order.ack` as soon as the fdatasync covering its request returned, `push_ack`). Whichever
//! push finds the queue empty wakes the worker.

use std::sync::{Arc, Mutex, RwLock};

use crate::error::{EngineError, Result};
use crate::hub::FrameSink;
use crate::session::FrameMeta;

/// Wakes a worker thread (napi: a non-blocking, unref'd threadsafe function).
pub trait Waker: Send + Sync {
    /// Called from the engine thread or the journal writer thread when the worker's ready queue
    /// went empty -> non-empty.
    fn wake(&self);
}

/// The registered workers' queues, by worker id - 1 (`None`: unregistered).
pub(super) type Workers = RwLock<Vec<Option<Arc<WorkerQueue>>>>;

/// The queue of worker `worker` (ids from 1) in `workers`; `None` when it is not registered.
#[inline]
pub(super) fn queue_of(workers: &[Option<Arc<WorkerQueue>>], worker: u32) -> Option<&Arc<WorkerQueue>> {
    workers.get((worker as usize).wrapping_sub(1))?.as_ref()
}

/// Appends an `order.ack` frame of session `sid` to worker `worker`'s ready queue; the queue when it
/// went empty -> non-empty (the caller wakes it). Acks of an unregistered worker are dropped (its
/// sessions are closed), as are all acks once the workers lock is poisoned.
pub(super) fn push_ack(workers: &Workers, worker: u32, sid: u32, frame: &[u8]) -> Option<Arc<WorkerQueue>> {
    let queue = queue_of(&workers.read().ok()?, worker)?.clone();
    let one = FrameMeta {
        messages: 1,
        ..FrameMeta::default()
    };
    queue.push(sid, &[frame], 0, &one).then_some(queue)
}

/// Everything ready for one worker: frames back to back in `data`, and per entry four u32s in
/// `index`: session id, offset, length, close code (0 = text frame; else a close instruction
/// whose data slice is the UTF-8 reason); per entry its message count in `messages`; and the
/// latency samples of the frames in `samples` (`FrameMeta::write_samples`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Drained {
    /// Frame bytes.
    pub data: Vec<u8>,
    /// `[sid, offset, len, closeCode]` per entry.
    pub index: Vec<u32>,
    /// Messages per entry (0 for a close instruction).
    pub messages: Vec<u32>,
    /// `(entry * 2 + kind, ts)` pairs, in entry order (`session::SAMPLE_RECORD` / `SAMPLE_VIEW_ROW`).
    pub samples: Vec<f64>,
}

/// One worker's ready queue and waker.
pub struct WorkerQueue {
    ready: Mutex<Drained>,
    waker: Box<dyn Waker>,
}

impl WorkerQueue {
    /// An empty queue.
    pub fn new(waker: Box<dyn Waker>) -> Self {
        WorkerQueue {
            ready: Mutex::new(Drained::default()),
            waker,
        }
    }

    /// Takes what is ready; `None` when empty.
    pub fn take(&self) -> Result<Option<Drained>> {
        let mut r = self.ready.lock().map_err(|_| EngineError::Internal {
            message: "ready queue lock poisoned (a thread panicked)".into(),
        })?;
        if r.index.is_empty() {
            return Ok(None);
        }
        Ok(Some(std::mem::take(&mut *r)))
    }

    /// Wakes the worker.
    pub(super) fn wake(&self) {
        self.waker.wake();
    }

    /// Appends one entry; true if the queue was empty before.
    fn push(&self, sid: u32, parts: &[&[u8]], close_code: u16, meta: &FrameMeta<'_>) -> bool {
        let Ok(mut r) = self.ready.lock() else { return false };
        let was_empty = r.index.is_empty();
        let offset = r.data.len();
        for p in parts {
            r.data.extend_from_slice(p);
        }
        let len = r.data.len() - offset;
        let entry = r.messages.len() as u32;
        // Offsets fit u32: a worker drains long before 4 GiB pile up.
        r.index
            .extend_from_slice(&[sid, offset as u32, len as u32, close_code.into()]);
        r.messages.push(meta.messages);
        meta.write_samples(entry, &mut r.samples);
        was_empty
    }
}

/// The engine thread's sink: writes frames into worker queues, remembers whom to wake.
#[derive(Default)]
pub(super) struct QueueSink {
    workers: Vec<Option<Arc<WorkerQueue>>>,
    to_wake: Vec<u32>,
}

impl QueueSink {
    pub(super) fn refresh(&mut self, workers: &[Option<Arc<WorkerQueue>>]) {
        self.workers.clear();
        self.workers.extend(workers.iter().cloned());
    }

    pub(super) fn wake(&mut self) {
        for w in self.to_wake.drain(..) {
            if let Some(q) = queue_of(&self.workers, w) {
                q.waker.wake();
            }
        }
    }
}

impl QueueSink {
    fn push(&mut self, worker: u32, sid: u32, parts: &[&[u8]], close_code: u16, meta: &FrameMeta<'_>) {
        // Frames of an unregistered worker's sessions are dropped (the sessions are closing).
        if let Some(q) = queue_of(&self.workers, worker) {
            if q.push(sid, parts, close_code, meta) && !self.to_wake.contains(&worker) {
                self.to_wake.push(worker);
            }
        }
    }
}

impl FrameSink for QueueSink {
    fn frame(&mut self, worker: u32, sid: u32, parts: &[&[u8]], close_code: u16) {
        self.push(worker, sid, parts, close_code, &FrameMeta::default());
    }

    fn frame_with(&mut self, worker: u32, sid: u32, parts: &[&[u8]], meta: &FrameMeta<'_>) {
        self.push(worker, sid, parts, 0, meta);
    }
}
