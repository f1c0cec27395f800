//! The group-commit writer thread.
//!
//! Loop: wait for one append (parked on the journal's bell, rung by the appender: no spinning
//! receive), take whatever else is queued (up to `max_group_records`), encode them
//! into one buffer, `write_all`, one `fdatasync`, publish the new durable seq, call the sync hook,
//! then complete every append of the group with its seq, then call the group hook. An append is
//! acknowledged only after the fdatasync covering it returned. A group starts as soon as the previous one's completions ran,
//! unless `commit_window` is set: then a group that starts within the window of the previous
//! group's end keeps gathering appends until the window has passed (under a steady stream each
//! fdatasync covers more appends; after a quiet spell an append is written at once).
//!
//! **Segments** (`spare.rs`). When the next record would pass the tail segment's zero-filled space
//! (or `segment_bytes`), what is buffered is written and fdatasynced, and the writer switches to the
//! ready spare: the new segment's header goes at the start of the group's buffer, so header and
//! records take one `pwrite` and one `fdatasync` into blocks that are already allocated and written
//! (no size change, no file-system journal commit). Once that is durable the helper renames the spare
//! to `journal-<first seq>.twj` and writes the manifest that lists the new segment (`manifest.rs`).
//! Without a ready spare the tail grows instead (each commit then also
//! commits the file system's journal), and past `segment_bytes` a new segment is created and synced
//! (header, file and directory fsync) on the commit path, followed by its manifest. Either way the
//! manifest is written only on rotation and only once the segments it lists are durable.

use super::error::JournalError;
use super::format::{self, SegmentHeader, HEADER_LEN};
use super::manifest::{Manifest, ManifestStore};
use super::recover::sync_dir;
use super::spare::{Spare, SpareMaker};
use super::timing::{CommitHook, CommitTiming, ZeroActivity};
use super::{Clock, GroupHook, Shared, SyncHook, WriteFault};
use crate::bell::Bell;
use crossbeam_channel::{Receiver, TryRecvError};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Completion called once per append, on the writer thread.
pub(crate) type Done = Box<dyn FnOnce(Result<u64, JournalError>) + Send>;

/// One queued append.
pub(crate) struct Request {
    pub body: Vec<u8>,
    pub done: Done,
    /// When it was queued (journal clock, ns): the start of its wait for a group.
    pub queued_at: u64,
}

/// The open tail segment.
pub(crate) struct Tail {
    pub file: File,
    pub path: PathBuf,
    /// Write position: end of the last record (the file may be longer: zero-filled space).
    pub len: u64,
    /// File length (end of the zero-filled space when larger than `len`).
    pub allocated: u64,
}

pub(crate) struct Writer {
    pub dir: PathBuf,
    pub epoch: u64,
    pub segment_bytes: u64,
    pub max_group_records: usize,
    /// See `JournalOptions::commit_window` (zero: off).
    pub commit_window: Duration,
    pub next_seq: u64,
    pub tail: Tail,
    pub shared: Arc<Shared>,
    pub clock: Arc<dyn Clock>,
    pub hook: Option<SyncHook>,
    /// false: skip fdatasync (see `JournalOptions::fsync`).
    pub fsync: bool,
    /// Spare segment helper (`None`: `preallocate_bytes` is 0).
    pub spares: Option<SpareMaker>,
    /// A spare taken in this group, to rename once its first write is durable: (spare path, name).
    pub pending_rename: Option<(PathBuf, PathBuf)>,
    /// The segment chain (every segment's first seq; the last is the tail).
    pub chain: Manifest,
    /// Where manifests are written (shared with the spare helper).
    pub manifests: Arc<ManifestStore>,
    /// Per-group timing consumer (benches, diagnostics).
    pub commit_hook: Option<CommitHook>,
    /// Called after each group's completions.
    pub group_hook: Option<GroupHook>,
    /// Injected write failure (tests).
    pub write_fault: Option<WriteFault>,
    /// Background zero-writing activity, sampled around syncs.
    pub zeros: Arc<ZeroActivity>,
    /// Timing of the group being committed.
    pub timing: CommitTiming,
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
    /// Waits for the first append of a group: parks on `bell` while the queue is empty (the
    /// appender rings it); `None` once every sender is gone and the queue is drained.
    fn first(rx: &Receiver<Request>, bell: &Bell) -> Option<Request> {
        loop {
            match rx.try_recv() {
                Ok(r) => return Some(r),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => bell.sleep(None, || !rx.is_empty()),
            }
        }
    }

    /// Runs until every sender is gone and the queue is drained.
    pub fn run(mut self, rx: Receiver<Request>, bell: &Bell) {
        let mut batch: Vec<Request> = Vec::with_capacity(self.max_group_records);
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
        // When the last group's completions ran (the commit window counts from there).
        let mut last_end = Instant::now();
        while let Some(first) = Self::first(&rx, bell) {
            batch.push(first);
            if !self.commit_window.is_zero() && rx.len() + 1 < self.max_group_records {
                // Appends queued during the window wake no one (it is not rung): it sleeps until
                // the window has passed, or a full group is queued (the appender nudges it). A
                // deadline already passed (a quiet spell) returns at once.
                bell.doze(last_end + self.commit_window);
            }
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
                self.group_done();
                continue;
            }
            let (start_path, start_len) = (self.tail.path.clone(), self.tail.len);
            let taken = self.clock.now_nanos();
            self.timing = CommitTiming {
                first_seq: self.next_seq,
                records: batch.len() as u32,
                queued_nanos: batch
                    .iter()
                    .map(|r| taken.saturating_sub(r.queued_at))
                    .max()
                    .unwrap_or(0),
                ..CommitTiming::default()
            };
            match self.commit(&batch, &mut buf) {
                Ok(()) => {
                    if let (Some((from, to)), Some(m)) = (self.pending_rename.take(), &self.spares) {
                        m.rename(from, to, self.chain.clone());
                    }
                    let first_seq = self.next_seq;
                    self.next_seq += batch.len() as u64;
                    let t0 = self.clock.now_nanos();
                    for (i, r) in batch.drain(..).enumerate() {
                        (r.done)(Ok(first_seq + i as u64));
                    }
                    self.group_done();
                    last_end = Instant::now();
                    self.timing.complete_nanos = self.clock.now_nanos().saturating_sub(t0);
                    if let Some(hook) = &self.commit_hook {
                        hook(&self.timing);
                    }
                }
                Err(err) => {
                    // Best effort: cut the partial group so the file ends at the last durable record
                    // (zero the cut part of a spare-backed segment rather than shrink it). A group
                    // that rotated synced its records before the rotation: `tail.len` is past them.
                    if self.tail.path == start_path {
                        let end = self.tail.len.max(start_len);
                        let cut = if self.tail.allocated > end {
                            let n = (self.tail.allocated - end).min(buf.len() as u64) as usize;
                            self.tail.file.write_all_at(&vec![0u8; n], end).is_ok()
                        } else {
                            self.tail.file.set_len(end).is_ok()
                        };
                        if cut {
                            self.tail.len = end;
                        }
                    }
                    self.pending_rename = None;
                    self.shared.fail(err.to_string());
                    // the records a rotation synced before the failure are durable: completed as such
                    let durable = self.shared.durable_seq.load(Ordering::Acquire);
                    for (i, r) in batch.drain(..).enumerate() {
                        let seq = self.next_seq + i as u64;
                        (r.done)(if seq <= durable { Ok(seq) } else { Err(err.clone()) });
                    }
                    self.group_done();
                }
            }
        }
    }

    fn group_done(&self) {
        if let Some(hook) = &self.group_hook {
            hook();
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
            let over_cap = used + rec_len > self.segment_bytes;
            let past_space = used + rec_len > self.tail.allocated;
            if used > HEADER_LEN as u64 && (over_cap || past_space) {
                let spare = self.spares.as_mut().and_then(SpareMaker::take);
                if let Some(spare) = spare {
                    self.write_sync(buf, seq - 1)?;
                    self.switch_to_spare(spare, seq, buf)?;
                } else if over_cap {
                    self.write_sync(buf, seq - 1)?;
                    let t0 = self.clock.now_nanos();
                    self.tail = create_segment(&self.dir, self.epoch, seq)?;
                    self.chain.firsts.push(seq);
                    // The previous segment and this one's header are durable. A failed write only
                    // leaves the manifest behind the chain, which recovery accepts (segments past its
                    // live one are checked by continuity).
                    let _ = self.manifests.write(&self.chain);
                    self.timing.rotate_nanos += self.clock.now_nanos().saturating_sub(t0);
                    self.timing.rotations += 1;
                    self.shared.segments_created.fetch_add(1, Ordering::Relaxed);
                }
                if let (true, Some(m)) = (
                    self.tail.len + buf.len() as u64 + rec_len > self.tail.allocated,
                    &self.spares,
                ) {
                    // The tail grows until a spare is ready: make it at full speed.
                    m.hurry();
                }
            }
            format::encode_record(buf, seq, group, &r.body);
        }
        self.write_sync(buf, group + batch.len() as u64 - 1)?;
        self.shared.groups.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Makes `spare` the tail for a segment starting at `first_seq`: its header goes first in `buf`
    /// (empty: the previous segment was just synced), so header and records are written together.
    fn switch_to_spare(&mut self, spare: Spare, first_seq: u64, buf: &mut Vec<u8>) -> Result<(), JournalError> {
        let t0 = self.clock.now_nanos();
        debug_assert!(buf.is_empty());
        buf.extend_from_slice(
            &SegmentHeader {
                epoch: self.epoch,
                first_seq,
            }
            .encode(),
        );
        let name = self.dir.join(format::segment_name(first_seq));
        self.tail = Tail {
            file: spare.file,
            path: spare.path.clone(),
            len: 0,
            allocated: spare.len,
        };
        self.pending_rename = Some((spare.path, name));
        self.chain.firsts.push(first_seq);
        self.timing.rotate_nanos += self.clock.now_nanos().saturating_sub(t0);
        self.timing.rotations += 1;
        self.shared.segments_created.fetch_add(1, Ordering::Relaxed);
        self.shared.spares_used.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Appends `buf` to the tail segment and fdatasyncs it; `last_seq` is then durable.
    fn write_sync(&mut self, buf: &mut Vec<u8>, last_seq: u64) -> Result<(), JournalError> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = self.tail.len + buf.len() as u64;
        let path = &self.tail.path;
        let at = self.tail.len;
        self.timing.grew |= end > self.tail.allocated;
        let w0 = self.clock.now_nanos();
        let written = match self.write_fault.as_ref().and_then(|f| f(last_seq)) {
            Some(e) => Err(e),
            None => self.tail.file.write_all_at(buf, at),
        };
        written.map_err(|e| JournalError::io(format!("write {}", path.display()), &e))?;
        let t0 = self.clock.now_nanos();
        let zeros = self.zeros.sample();
        if self.fsync {
            self.tail
                .file
                .sync_data()
                .map_err(|e| JournalError::io(format!("fdatasync {}", path.display()), &e))?;
        }
        let t1 = self.clock.now_nanos();
        let took = t1.saturating_sub(t0);
        self.timing.write_nanos += t0.saturating_sub(w0);
        self.timing.sync_nanos += took;
        self.timing.zero_fill_overlap |= self.zeros.overlapped_since(zeros);
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
