//! The group-commit writer thread.
//!
//! Loop: block for one append, take whatever else is queued (up to `max_group_records`), encode them
//! into one buffer, `write_all`, one `fdatasync`, publish the new durable seq, call the sync hook,
//! then complete every append of the group with its seq. An append is acknowledged only after the
//! fdatasync covering it returned. Rotation: when the next record would push the segment past
//! `segment_bytes`, what is buffered is written and fdatasynced, and a new segment is created (its
//! header written and synced, the directory fsynced) before the group continues in it.
//!
//! **Preallocation.** With `preallocate_bytes > 0` a helper thread keeps zero-filled (written, not
//! sparse) space ahead of the write position: when less than half a chunk is left it writes the next
//! chunk of zeros past the end and fdatasyncs it. The writer then overwrites already-allocated blocks,
//! so its fdatasync flushes data only, with no file-size change and no file-system journal commit
//! (which would also wait for every other process's metadata). Writes go at explicit offsets
//! (`pwrite`); if the writer catches up with an unfinished chunk it waits for it. Recovery treats an
//! all-zero remainder of a segment as free space.

use super::error::JournalError;
use super::format::{self, SegmentHeader, HEADER_LEN};
use super::recover::sync_dir;
use super::{Clock, Shared, SyncHook};
use crossbeam_channel::Receiver;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Completion called once per append, on the writer thread.
pub(crate) type Done = Box<dyn FnOnce(Result<u64, JournalError>) + Send>;

/// One queued append.
pub(crate) struct Request {
    pub body: Vec<u8>,
    pub done: Done,
}

/// The open tail segment.
pub(crate) struct Tail {
    pub file: File,
    pub path: PathBuf,
    /// Write position: end of the last record (the file may be longer: preallocated zeros).
    pub len: u64,
    /// File length (end of the zero-filled preallocated space when larger than `len`).
    pub allocated: u64,
}

/// A chunk of zeros being written by the preallocation thread: (file generation, new end).
type PreallocDone = (u64, Result<u64, JournalError>);

/// The preallocation helper thread and the chunk in flight, if any.
pub(crate) struct Prealloc {
    chunk: u64,
    tx: Option<crossbeam_channel::Sender<(u64, File, u64)>>,
    rx: Receiver<PreallocDone>,
    thread: Option<std::thread::JoinHandle<()>>,
    in_flight: bool,
    generation: u64,
}

impl Prealloc {
    /// Starts the helper thread (`chunk` bytes per request); `None` when `chunk` is 0.
    pub fn start(chunk: u64) -> Result<Option<Prealloc>, JournalError> {
        if chunk == 0 {
            return Ok(None);
        }
        let (tx, req_rx) = crossbeam_channel::unbounded::<(u64, File, u64)>();
        let (done_tx, rx) = crossbeam_channel::unbounded::<PreallocDone>();
        let thread = std::thread::Builder::new()
            .name("tidewire-journal-prealloc".into())
            .spawn(move || {
                let zeros = vec![0u8; 1 << 20];
                while let Ok((generation, file, from)) = req_rx.recv() {
                    let mut at = from;
                    let mut res = Ok(());
                    while at < from + chunk && res.is_ok() {
                        let n = (from + chunk - at).min(zeros.len() as u64) as usize;
                        res = file.write_all_at(&zeros[..n], at);
                        at += n as u64;
                    }
                    let res = res.and_then(|_| file.sync_data()).map(|_| at);
                    let _ = done_tx.send((generation, res.map_err(|e| JournalError::io("preallocate segment", &e))));
                }
            })
            .map_err(|e| JournalError::io("spawn journal preallocation thread", &e))?;
        Ok(Some(Prealloc {
            chunk,
            tx: Some(tx),
            rx,
            thread: Some(thread),
            in_flight: false,
            generation: 0,
        }))
    }

    /// Applies finished chunks to `tail`; with `wait`, blocks for the one in flight.
    fn collect(&mut self, tail: &mut Tail, wait: bool) {
        while self.in_flight {
            let got = if wait {
                self.rx.recv().ok()
            } else {
                self.rx.try_recv().ok()
            };
            let Some((generation, res)) = got else { break };
            if generation == self.generation {
                self.in_flight = false;
                // A failed chunk only costs speed: the writer then grows the file itself.
                if let Ok(end) = res {
                    tail.allocated = tail.allocated.max(end);
                }
            }
        }
    }

    /// Asks for the next chunk when less than half a chunk is left ahead of the write position.
    fn maybe_request(&mut self, tail: &Tail) {
        if self.in_flight || tail.allocated.saturating_sub(tail.len) >= self.chunk / 2 {
            return;
        }
        let Ok(file) = tail.file.try_clone() else { return };
        if let Some(tx) = &self.tx {
            if tx.send((self.generation, file, tail.allocated.max(tail.len))).is_ok() {
                self.in_flight = true;
            }
        }
    }

    /// A new tail file: results for the old one are ignored from now on.
    fn new_file(&mut self) {
        self.generation += 1;
        self.in_flight = false;
    }
}

impl Drop for Prealloc {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) struct Writer {
    pub dir: PathBuf,
    pub epoch: u64,
    pub segment_bytes: u64,
    pub max_group_records: usize,
    pub next_seq: u64,
    pub tail: Tail,
    pub shared: Arc<Shared>,
    pub clock: Arc<dyn Clock>,
    pub hook: Option<SyncHook>,
    /// false: skip fdatasync (see `JournalOptions::fsync`).
    pub fsync: bool,
    pub prealloc: Option<Prealloc>,
}

/// Creates segment `first_seq` in `dir` with its header, synced, and fsyncs the directory.
pub(crate) fn create_segment(dir: &Path, epoch: u64, first_seq: u64) -> Result<Tail, JournalError> {
    let path = dir.join(format::segment_name(first_seq));
    let file = OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(&path)
        .map_err(|e| JournalError::io(format!("create {}", path.display()), &e))?;
    let header = SegmentHeader { epoch, first_seq }.encode();
    file.write_all_at(&header, 0)
        .map_err(|e| JournalError::io(format!("write {}", path.display()), &e))?;
    file.sync_all()
        .map_err(|e| JournalError::io(format!("fsync {}", path.display()), &e))?;
    sync_dir(dir)?;
    Ok(Tail {
        file,
        path,
        len: HEADER_LEN as u64,
        allocated: HEADER_LEN as u64,
    })
}

impl Writer {
    /// Runs until every sender is gone and the queue is drained.
    pub fn run(mut self, rx: Receiver<Request>) {
        let mut batch: Vec<Request> = Vec::with_capacity(self.max_group_records);
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
        if let Some(p) = &mut self.prealloc {
            p.maybe_request(&self.tail);
        }
        while let Ok(first) = rx.recv() {
            batch.push(first);
            while batch.len() < self.max_group_records {
                match rx.try_recv() {
                    Ok(r) => batch.push(r),
                    Err(_) => break,
                }
            }
            if let Some(message) = self.shared.failure() {
                for r in batch.drain(..) {
                    (r.done)(Err(JournalError::Failed {
                        message: message.clone(),
                    }));
                }
                continue;
            }
            let (start_path, start_len) = (self.tail.path.clone(), self.tail.len);
            match self.commit(&batch, &mut buf) {
                Ok(()) => {
                    let first_seq = self.next_seq;
                    self.next_seq += batch.len() as u64;
                    for (i, r) in batch.drain(..).enumerate() {
                        (r.done)(Ok(first_seq + i as u64));
                    }
                    if let Some(p) = &mut self.prealloc {
                        p.collect(&mut self.tail, false);
                        p.maybe_request(&self.tail);
                    }
                }
                Err(err) => {
                    // Best effort: cut the partial group so the file ends at the last durable record.
                    if self.tail.path == start_path && self.tail.file.set_len(start_len).is_ok() {
                        self.tail.len = start_len;
                        self.tail.allocated = start_len;
                    }
                    self.shared.fail(err.to_string());
                    for r in batch.drain(..) {
                        (r.done)(Err(err.clone()));
                    }
                }
            }
        }
    }

    /// Writes and syncs one group; on success the durable seq covers all of it.
    fn commit(&mut self, batch: &[Request], buf: &mut Vec<u8>) -> Result<(), JournalError> {
        buf.clear();
        let group = self.next_seq;
        for (i, r) in batch.iter().enumerate() {
            let seq = group + i as u64;
            let rec_len = (format::FRAME_LEN + format::PAYLOAD_FIXED + r.body.len()) as u64;
            let used = self.tail.len + buf.len() as u64;
            if used + rec_len > self.segment_bytes && used > HEADER_LEN as u64 {
                self.write_sync(buf, seq - 1)?;
                self.tail = create_segment(&self.dir, self.epoch, seq)?;
                if let Some(p) = &mut self.prealloc {
                    p.new_file();
                    p.maybe_request(&self.tail);
                }
                self.shared.segments_created.fetch_add(1, Ordering::Relaxed);
            }
            format::encode_record(buf, seq, group, &r.body);
        }
        self.write_sync(buf, group + batch.len() as u64 - 1)?;
        self.shared.groups.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Appends `buf` to the tail segment and fdatasyncs it; `last_seq` is then durable.
    fn write_sync(&mut self, buf: &mut Vec<u8>, last_seq: u64) -> Result<(), JournalError> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = self.tail.len + buf.len() as u64;
        let beyond = end > self.tail.allocated;
        if let Some(p) = &mut self.prealloc {
            p.collect(&mut self.tail, beyond);
        }
        let path = &self.tail.path;
        let at = self.tail.len;
        self.tail
            .file
            .write_all_at(buf, at)
            .map_err(|e| JournalError::io(format!("write {}", path.display()), &e))?;
        let t0 = self.clock.now_nanos();
        if self.fsync {
            self.tail
                .file
                .sync_data()
                .map_err(|e| JournalError::io(format!("fdatasync {}", path.display()), &e))?;
        }
        let took = self.clock.now_nanos().saturating_sub(t0);
        self.shared.syncs.fetch_add(1, Ordering::Relaxed);
        self.shared.sync_nanos_total.fetch_add(took, Ordering::Relaxed);
        self.shared.sync_nanos_max.fetch_max(took, Ordering::Relaxed);
        self.shared.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.tail.len = end;
        self.tail.allocated = self.tail.allocated.max(end);
        buf.clear();
        self.shared.durable_seq.store(last_seq, Ordering::Release);
        if let Some(hook) = &self.hook {
            hook(last_seq);
        }
        Ok(())
    }
}
