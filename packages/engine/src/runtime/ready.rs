//! Per-worker ready queues: flushed frames wait here until the worker `drain`s them. Two threads
//! fill them: the engine thread (every session's outbox) and the journal writer thread (an
//! `order.ack` as soon as the fdatasync covering its request returned, `push_ack`). A push wakes
//! the worker only when it waits for a wake-up: its last drain found the queue empty (or used
//! `take`). A drain that took frames leaves the wake-up unarmed and the worker drains again
//! until it finds the queue empty, so frames pushed while it sends cost no wake-up.

use std::sync::{Arc, Mutex, RwLock};

use crate::error::{EngineError, Result};
use crate::hub::FrameSink;
use crate::session::FrameMeta;

/// Wakes a worker thread (napi: a non-blocking, unref'd threadsafe function).
pub trait Waker: Send + Sync {
    /// Called from the engine thread or the journal writer thread when a frame is pushed to the
    /// ready queue of a worker waiting for a wake-up (see the module doc).
    fn wake(&self);
}

/// The registered workers' queues, by worker id - 1 (`None`: unregistered).
pub(super) type Workers = RwLock<Vec<Option<Arc<WorkerQueue>>>>;

/// The queue of worker `worker` (ids from 1) in `workers`; `None` when it is not registered.
#[inline]
pub(super) fn queue_of(workers: &[Option<Arc<WorkerQueue>>], worker: u32) -> Option<&Arc<WorkerQueue>> {
    workers.get((worker as usize).wrapping_sub(1))?.as_ref()
}

/// Appends an `order.ack` frame of session `sid` to worker `worker`'s ready queue; the queue when
/// its worker is to be woken (the caller wakes it). Acks of an unregistered worker are dropped (its
/// sessions are closed), as are all acks once the workers lock is poisoned.
pub(super) fn push_ack(workers: &Workers, worker: u32, sid: u32, frame: &[u8]) -> Option<Arc<WorkerQueue>> {
    let queue = queue_of(&workers.read().ok()?, worker)?.clone();
    let one = FrameMeta {
        messages: 1,
        ..FrameMeta::default()
    };
    queue.push(sid, &[frame], 0, &one).then_some(queue)
}

/// Everything ready for one worker (`WorkerQueue::take`): frames back to back in `data`, and per entry four u32s in
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

/// u32s per row of a `take_into` index: row 0 is the header, then one row per entry.
pub const DRAIN_ROW: usize = 5;

/// What `WorkerQueue::take_into` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakeInto {
    /// Nothing was ready: the next frame pushed wakes the worker.
    Empty,
    /// This many entries were moved into the buffers; the worker is to call again (it is not
    /// woken for frames pushed meanwhile) until `Empty`.
    Taken(usize),
    /// The buffers cannot hold what is ready; nothing was taken. The header row holds the sizes
    /// needed.
    TooSmall,
}

/// What is ready in one queue. Frames back to back in `data`; per entry one `DRAIN_ROW` row in
/// `rows`: session id, offset, length, close code, message count; the latency samples in
/// `samples` (`FrameMeta::write_samples`). Kept between drains so its capacity is reused.
#[derive(Debug, Default)]
struct Ready {
    data: Vec<u8>,
    rows: Vec<u32>,
    samples: Vec<f64>,
    /// The worker waits for a wake-up: the next push wakes it. Cleared by that push and by a
    /// `take_into` that took frames (the worker calls again until the queue is empty).
    armed: bool,
}

impl Ready {
    fn entries(&self) -> usize {
        self.rows.len() / DRAIN_ROW
    }

    fn clear(&mut self) {
        self.data.clear();
        self.rows.clear();
        self.samples.clear();
    }
}

/// One worker's ready queue and waker.
pub struct WorkerQueue {
    ready: Mutex<Ready>,
    waker: Box<dyn Waker>,
}

fn poisoned() -> EngineError {
    EngineError::Internal {
        message: "ready queue lock poisoned (a thread panicked)".into(),
    }
}

impl WorkerQueue {
    /// An empty queue; the first frame pushed wakes the worker.
    pub fn new(waker: Box<dyn Waker>) -> Self {
        WorkerQueue {
            ready: Mutex::new(Ready {
                armed: true,
                ..Ready::default()
            }),
            waker,
        }
    }

    /// Takes what is ready; `None` when empty. The next frame pushed wakes the worker.
    pub fn take(&self) -> Result<Option<Drained>> {
        let mut r = self.ready.lock().map_err(|_| poisoned())?;
        r.armed = true;
        if r.rows.is_empty() {
            return Ok(None);
        }
        let mut d = Drained {
            data: std::mem::take(&mut r.data),
            samples: std::mem::take(&mut r.samples),
            ..Drained::default()
        };
        for row in r.rows.chunks_exact(DRAIN_ROW) {
            d.index.extend_from_slice(&row[..4]);
            d.messages.push(row[4]);
        }
        r.rows.clear();
        Ok(Some(d))
    }

    /// Moves what is ready into the caller's buffers, without allocating: frame bytes into
    /// `data` (from 0), the entries into `index` as `DRAIN_ROW` rows after a header row
    /// (entries, sample pairs, data bytes, 0, 0) and the latency samples into `samples`
    /// (`(entry * 2 + kind, ts)` pairs). When a buffer is too small nothing is taken and the
    /// header gives the sizes needed (`TooSmall`). `Empty` arms the wake-up; `Taken` does not
    /// unless `arm`: the caller calls again until `Empty`, so frames pushed meanwhile cost no
    /// wake-up. With `arm` the caller does not call again (the queue is empty once taken) and
    /// the next frame pushed wakes it: the worker draining right after its own ingest
    /// (engine_thread.rs `ingest_inline`), whose frames nobody else readies meanwhile but the
    /// engine thread and the journal writer, saves the second call that would find it empty.
    /// BAD_REQUEST when `index` cannot hold the header row.
    pub fn take_into(&self, data: &mut [u8], index: &mut [u32], samples: &mut [f64], arm: bool) -> Result<TakeInto> {
        let Some(header) = index.get_mut(..DRAIN_ROW) else {
            return Err(EngineError::bad_request(
                format!(
                    "the drain index holds {} u32s, fewer than its {DRAIN_ROW}-u32 header",
                    index.len()
                ),
                Some("index"),
                None,
            ));
        };
        let mut r = self.ready.lock().map_err(|_| poisoned())?;
        if r.rows.is_empty() {
            r.armed = true;
            header.copy_from_slice(&[0; DRAIN_ROW]);
            return Ok(TakeInto::Empty);
        }
        let entries = r.entries();
        // Sizes fit u32: a worker drains long before 4 GiB pile up.
        header.copy_from_slice(&[entries as u32, (r.samples.len() / 2) as u32, r.data.len() as u32, 0, 0]);
        if data.len() < r.data.len() || index.len() < DRAIN_ROW + r.rows.len() || samples.len() < r.samples.len() {
            return Ok(TakeInto::TooSmall);
        }
        data[..r.data.len()].copy_from_slice(&r.data);
        index[DRAIN_ROW..DRAIN_ROW + r.rows.len()].copy_from_slice(&r.rows);
        samples[..r.samples.len()].copy_from_slice(&r.samples);
        r.clear();
        r.armed = arm;
        Ok(TakeInto::Taken(entries))
    }

    /// Wakes the worker.
    pub(super) fn wake(&self) {
        self.waker.wake();
    }

    /// Appends one entry; true if the worker is to be woken (it waits for a wake-up: the first
    /// frame since a `take`, or since a `take_into` that found the queue empty).
    fn push(&self, sid: u32, parts: &[&[u8]], close_code: u16, meta: &FrameMeta<'_>) -> bool {
        let Ok(mut r) = self.ready.lock() else { return false };
        let offset = r.data.len();
        for p in parts {
            r.data.extend_from_slice(p);
        }
        let len = r.data.len() - offset;
        let entry = r.entries() as u32;
        // Offsets fit u32: a worker drains long before 4 GiB pile up.
        r.rows
            .extend_from_slice(&[sid, offset as u32, len as u32, close_code.into(), meta.messages]);
        meta.write_samples(entry, &mut r.samples);
        std::mem::replace(&mut r.armed, false)
    }
}

/// The engine thread's sink: writes frames into worker queues, remembers whom to wake.
#[derive(Default)]
pub(super) struct QueueSink {
    workers: Vec<Option<Arc<WorkerQueue>>>,
    to_wake: Vec<u32>,
    /// A worker not to wake (0: none): it drains right after this pass, on the thread running it
    /// (engine_thread.rs `ingest_inline`).
    pub(super) quiet: u32,
}

impl QueueSink {
    pub(super) fn refresh(&mut self, workers: &[Option<Arc<WorkerQueue>>]) {
        self.workers.clear();
        self.workers.extend(workers.iter().cloned());
    }

    pub(super) fn wake(&mut self) {
        for w in self.to_wake.drain(..) {
            if w == self.quiet {
                continue;
            }
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

    fn entry(&mut self, worker: u32, key: u32, parts: &[&[u8]], kind: u16, meta: &FrameMeta<'_>) {
        self.push(worker, key, parts, kind, meta);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use super::*;

    struct Count(Arc<AtomicU32>);

    impl Waker for Count {
        fn wake(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A queue and its wake-up count.
    fn queue() -> (WorkerQueue, Arc<AtomicU32>) {
        let wakes = Arc::new(AtomicU32::new(0));
        (WorkerQueue::new(Box::new(Count(wakes.clone()))), wakes)
    }

    /// Pushes `frame` for `sid` and wakes the worker when the push says so (as `QueueSink` does).
    fn push(q: &WorkerQueue, sid: u32, frame: &str, messages: u32, records: &[f64]) {
        let meta = FrameMeta {
            messages,
            records,
            rows: &[],
        };
        if q.push(sid, &[frame.as_bytes()], 0, &meta) {
            q.wake();
        }
    }

    struct Bufs {
        data: Vec<u8>,
        index: Vec<u32>,
        samples: Vec<f64>,
    }

    impl Bufs {
        fn new(data: usize, index: usize, samples: usize) -> Self {
            Bufs {
                data: vec![0; data],
                index: vec![0; index],
                samples: vec![0.0; samples],
            }
        }

        fn take(&mut self, q: &WorkerQueue) -> TakeInto {
            q.take_into(&mut self.data, &mut self.index, &mut self.samples, false)
                .unwrap()
        }

        fn take_armed(&mut self, q: &WorkerQueue) -> TakeInto {
            q.take_into(&mut self.data, &mut self.index, &mut self.samples, true)
                .unwrap()
        }

        /// `(sid, frame, close code, messages)` of the `entries` rows taken.
        fn entries(&self, entries: usize) -> Vec<(u32, String, u32, u32)> {
            self.index[DRAIN_ROW..DRAIN_ROW * (entries + 1)]
                .chunks_exact(DRAIN_ROW)
                .map(|r| {
                    let (off, len) = (r[1] as usize, r[2] as usize);
                    (
                        r[0],
                        String::from_utf8(self.data[off..off + len].to_vec()).unwrap(),
                        r[3],
                        r[4],
                    )
                })
                .collect()
        }
    }

    #[test]
    fn take_into_moves_rows_header_and_samples_into_the_buffers() {
        let (q, _) = queue();
        push(&q, 7, "[a]", 1, &[100.5]);
        push(&q, 9, "[bb,cc]", 2, &[]);
        push(&q, 7, "[d]", 1, &[101.0, 102.0]);
        let mut b = Bufs::new(64, 64, 16);
        assert_eq!(b.take(&q), TakeInto::Taken(3));
        assert_eq!(b.index[..DRAIN_ROW], [3, 3, 13, 0, 0]);
        assert_eq!(
            b.entries(3),
            [
                (7, "[a]".to_string(), 0, 1),
                (9, "[bb,cc]".to_string(), 0, 2),
                (7, "[d]".to_string(), 0, 1)
            ]
        );
        // (entry * 2 + kind, ts): entry 0 one record sample, entry 2 two
        assert_eq!(b.samples[..6], [0.0, 100.5, 4.0, 101.0, 4.0, 102.0]);
        assert_eq!(b.take(&q), TakeInto::Empty);
        assert_eq!(b.index[..DRAIN_ROW], [0; DRAIN_ROW]);
    }

    #[test]
    fn a_buffer_too_small_takes_nothing_and_names_the_sizes_needed() {
        let (q, _) = queue();
        push(&q, 1, "[0123456789]", 1, &[5.0]);
        push(&q, 2, "[x]", 1, &[]);
        for (data, index, samples) in [(14, 64, 4), (64, 14, 4), (64, 64, 1)] {
            let mut b = Bufs::new(data, index, samples);
            assert_eq!(b.take(&q), TakeInto::TooSmall, "{data} {index} {samples}");
            assert_eq!(b.index[..3], [2, 1, 15]);
        }
        // exactly the sizes named fit
        let mut b = Bufs::new(15, DRAIN_ROW * 3, 2);
        assert_eq!(b.take(&q), TakeInto::Taken(2));
        assert_eq!(b.entries(2)[1], (2, "[x]".to_string(), 0, 1));
    }

    #[test]
    fn an_index_without_room_for_the_header_is_refused() {
        let (q, _) = queue();
        push(&q, 1, "[a]", 1, &[]);
        let mut b = Bufs::new(64, DRAIN_ROW - 1, 4);
        let err = q
            .take_into(&mut b.data, &mut b.index, &mut b.samples, false)
            .unwrap_err();
        assert_eq!(err.code(), crate::error::ErrorCode::BadRequest);
        // nothing was taken
        assert_eq!(Bufs::new(64, 64, 4).take(&q), TakeInto::Taken(1));
    }

    #[test]
    fn frames_pushed_after_a_drain_that_took_frames_do_not_wake_until_one_finds_it_empty() {
        let (q, wakes) = queue();
        let mut b = Bufs::new(64, 64, 4);
        push(&q, 1, "[a]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "the first frame wakes the worker");
        push(&q, 1, "[b]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "not again before it drained");
        assert_eq!(b.take(&q), TakeInto::Taken(2));
        // the worker is sending and will drain again: no wake-up
        push(&q, 2, "[c]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        assert_eq!(b.take(&q), TakeInto::Taken(1));
        assert_eq!(b.entries(1), [(2, "[c]".to_string(), 0, 1)]);
        assert_eq!(b.take(&q), TakeInto::Empty);
        // it found the queue empty, so it waits: the next frame wakes it
        push(&q, 3, "[d]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn an_armed_take_wakes_the_worker_for_the_next_frame() {
        let (q, wakes) = queue();
        let mut b = Bufs::new(64, 64, 4);
        push(&q, 1, "[a]", 1, &[]);
        push(&q, 1, "[b]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        assert_eq!(b.take_armed(&q), TakeInto::Taken(2));
        assert_eq!(b.entries(2)[1], (1, "[b]".to_string(), 0, 1));
        // the worker does not call again: the next frame wakes it
        push(&q, 2, "[c]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
        push(&q, 2, "[d]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 2, "once until it drains");
        assert_eq!(b.take(&q), TakeInto::Taken(2));
        // a take that found something ready and was not armed leaves the wake-up off
        push(&q, 3, "[e]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
        // an armed take of an empty queue is Empty, armed as always
        assert_eq!(b.take_armed(&q), TakeInto::Taken(1));
        assert_eq!(b.take_armed(&q), TakeInto::Empty);
        push(&q, 4, "[f]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn take_arms_the_wake_up_and_keeps_the_four_u32_index() {
        let (q, wakes) = queue();
        push(&q, 4, "[a]", 1, &[1.5]);
        let mut b = Bufs::new(64, 64, 4);
        assert_eq!(b.take(&q), TakeInto::Taken(1));
        push(&q, 5, "[bc]", 2, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        let d = q.take().unwrap().expect("one frame ready");
        assert_eq!(d.index, [5, 0, 4, 0]);
        assert_eq!(d.messages, [2]);
        assert_eq!(d.data, b"[bc]");
        assert!(q.take().unwrap().is_none());
        // after `take` every first frame wakes, as it always did
        push(&q, 6, "[e]", 1, &[]);
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
        assert_eq!(q.take().unwrap().expect("ready").index, [6, 0, 3, 0]);
    }

    #[test]
    fn buffers_are_reused_across_drains() {
        let (q, _) = queue();
        let mut b = Bufs::new(4096, 4096, 64);
        for round in 0..3u32 {
            for sid in 0..20 {
                push(&q, sid, &format!("[{round}-{sid}]"), 1, &[]);
            }
            assert_eq!(b.take(&q), TakeInto::Taken(20));
            let e = b.entries(20);
            assert_eq!(e[19], (19, format!("[{round}-19]"), 0, 1));
            assert_eq!(e[0].1, format!("[{round}-0]"), "offsets restart at 0 every drain");
        }
    }
}
