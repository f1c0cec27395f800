//! The group-commit writer thread.
//!
//! Loop: block for one append, take whatever else is queued (up to `max_group_records`), encode them
//! into one buffer, `write_all`, one `fdatasync`, publish the new durable seq, call the sync hook,
//! then complete every append of the group with its seq. An append is acknowledged only after the
//! fdatasync covering it returned. Rotation: when the next record would push the segment past
//! `segment_bytes`, what is buffered is written and fdatasynced, and a new segment is created (its
//! header written and synced, the directory fsynced) before the group continues in it.
//!
//! **Preallocation** (`prealloc.rs`): a helper thread keeps zero-filled space ahead of the write
//! position, so commits overwrite allocated blocks and their fdatasync changes no metadata. Writes go
//! at explicit offsets (`pwrite`); if the writer catches up with an unfinished chunk it waits for it.

use super::error::JournalError;
use super::format::{self, SegmentHeader, HEADER_LEN};
pub(crate) use super::prealloc::Prealloc;
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
