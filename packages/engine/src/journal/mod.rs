//! The durable journal: append-only segment files, gap-free u64 seqs from 1, an epoch per journal
//! creation, group commit (one fdatasync per group, acknowledgement only after it), recovery that cuts
//! a torn tail and refuses real corruption and lost segments (checked against the manifest, the
//! journal's record of its own segment chain), one owner per directory (a lock file), and replay
//! from a seq.
//!
//! The journal stores opaque bodies; `order::event` encodes order transitions into them.
//!
//! ```no_run
//! use tidewire_engine::journal::{Journal, JournalOptions};
//! let (journal, report) = Journal::open(JournalOptions::new("/var/lib/tidewire/journal")).unwrap();
//! if let Some(line) = report.log_line() { eprintln!("{line}"); }
//! for entry in journal.replay_from(1).unwrap() { let _entry = entry.unwrap(); /* rebuild state */ }
//! journal.append(b"order".to_vec(), |acked| { /* Ok(seq): on disk; reply to the client now */ }).unwrap();
//! ```

mod cut;
mod error;
mod format;
mod lock;
mod manifest;
mod recover;
mod replay;
mod spare;
mod timing;
mod writer;

pub use cut::{ChainCut, DroppedFile};
pub use error::JournalError;
pub use format::{FORMAT_VERSION, HEADER_LEN};
pub use lock::LOCK_FILE;
pub use manifest::MANIFEST_FILE;
pub use recover::RecoveryReport;
pub use replay::{Entry, Replay};
pub use timing::{CommitHook, CommitTiming};

use crate::bell::Bell;
use crossbeam_channel::{Sender, TrySendError};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Source of time for the journal (fsync timing, default epoch). Injectable for tests.
pub trait Clock: Send + Sync {
    /// Wall-clock nanoseconds since the Unix epoch.
    fn now_nanos(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_nanos(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    }
}

/// Called on the writer thread right after each fdatasync returns, with the last seq it made durable,
/// before any append it covers is acknowledged. For tests and metrics; must be quick.
pub type SyncHook = Arc<dyn Fn(u64) + Send + Sync>;

/// Called on the writer thread once every append of a commit group was completed (successfully or
/// not), before the writer takes the next group: a caller whose completions gather work can
/// deliver it once per group (one wake-up per group instead of one per append).
pub type GroupHook = Arc<dyn Fn() + Send + Sync>;

/// Consulted on the writer thread before each write of records, with the last seq the write
/// carries: `Some(error)` makes that write fail with it, as a failing disk would (a full file
/// system: `ErrorKind::StorageFull`). For tests of what a journal failure does upstream.
pub type WriteFault = Arc<dyn Fn(u64) -> Option<std::io::Error> + Send + Sync>;

/// How to open a journal. Build with [`JournalOptions::new`] and adjust fields.
#[derive(Clone)]
pub struct JournalOptions {
    /// Directory of the segment files; created if missing.
    pub dir: PathBuf,
    /// Rotate to a new segment when the next record would pass this size (bytes). Default 64 MiB;
    /// at least 4 KiB. A record larger than this still goes alone into its own segment.
    pub segment_bytes: u64,
    /// Appends queued before `append` blocks / `try_append` answers `QueueFull`. Default 65,536.
    pub queue_capacity: usize,
    /// Most appends in one commit group (one write + one fdatasync). Default 8,192.
    pub max_group_records: usize,
    /// Commit window: a group that starts within this long of the previous group's end gathers
    /// appends until that much time has passed since it (or `max_group_records`), so under a steady
    /// stream of appends each fdatasync covers more of them (fewer syncs: less CPU and fewer
    /// device flushes, for up to this much added latency); an append arriving after a quiet spell
    /// longer than the window is written at once. Default zero (every group starts as soon as one
    /// append is queued).
    pub commit_window: Duration,
    /// Largest body accepted, bytes. Default 1 MiB.
    pub max_record_bytes: u32,
    /// Epoch for a journal created by this open; `None` (default) = the clock's nanoseconds. Ignored
    /// when the journal exists (its epoch is read from the segments).
    pub epoch: Option<u64>,
    /// Size of the first spare segment, bytes (rounded up to 4 KiB, at least 64 KiB); each next
    /// spare doubles, up to `segment_bytes`. Spares are zero-filled ahead of time on other files by a
    /// helper thread so commits overwrite allocated blocks (fdatasync without a size change: no
    /// file-system journal commit); see `spare.rs`. Default 8 MiB; 0 = off (segments grow with
    /// every commit).
    pub preallocate_bytes: u64,
    /// Clock; default [`SystemClock`].
    pub clock: Arc<dyn Clock>,
    /// Optional hook after each fdatasync (see [`SyncHook`]). Default none.
    pub sync_hook: Option<SyncHook>,
    /// Optional per-commit-group timing consumer (see [`CommitTiming`]). Default none.
    pub commit_hook: Option<CommitHook>,
    /// Optional hook after each group's completions (see [`GroupHook`]). Default none.
    pub group_hook: Option<GroupHook>,
    /// Optional injected write failure (see [`WriteFault`]). Default none.
    pub write_fault: Option<WriteFault>,
    /// Call fdatasync per commit group. Default true; false only for tests and demos that do not
    /// care about power loss (a process crash still loses nothing written: the page cache keeps it).
    pub fsync: bool,
    /// When the segment chain is broken (a missing or short segment, a seq gap, a foreign epoch, a
    /// bad record in synced data), cut the journal back to its last consistent seq and report what
    /// was dropped ([`RecoveryReport::cut`]) instead of refusing to open. An operator's explicit
    /// recovery step, never a default: dropped records may have been acknowledged. Default false.
    pub truncate_to_consistent: bool,
}

impl JournalOptions {
    /// Defaults for a journal in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> JournalOptions {
        JournalOptions {
            dir: dir.into(),
            segment_bytes: 64 << 20,
            queue_capacity: 65_536,
            max_group_records: 8_192,
            commit_window: Duration::ZERO,
            max_record_bytes: 1 << 20,
            epoch: None,
            preallocate_bytes: 8 << 20,
            clock: Arc::new(SystemClock),
            sync_hook: None,
            commit_hook: None,
            group_hook: None,
            write_fault: None,
            fsync: true,
            truncate_to_consistent: false,
        }
    }

    fn validate(&self) -> Result<(), JournalError> {
        let bad = |name, message: &str| {
            Err(JournalError::InvalidOption {
                name,
                message: message.into(),
            })
        };
        if self.segment_bytes < 4096 {
            return bad("segment_bytes", "must be at least 4096");
        }
        if self.queue_capacity == 0 {
            return bad("queue_capacity", "must be at least 1");
        }
        if self.max_group_records == 0 {
            return bad("max_group_records", "must be at least 1");
        }
        if self.max_record_bytes == 0 || self.max_record_bytes > (u32::MAX - 64) {
            return bad("max_record_bytes", "must be between 1 and 4 GiB - 64");
        }
        Ok(())
    }
}

/// Counters shared with the writer thread.
pub(crate) struct Shared {
    durable_seq: AtomicU64,
    groups: AtomicU64,
    syncs: AtomicU64,
    bytes: AtomicU64,
    sync_nanos_total: AtomicU64,
    sync_nanos_max: AtomicU64,
    segments_created: AtomicU64,
    spares_used: AtomicU64,
    failed: Mutex<Option<String>>,
}

impl Shared {
    fn failure(&self) -> Option<String> {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    fn fail(&self, message: String) {
        let mut f = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(message);
    }
}

/// Counters since open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalStats {
    /// Last durable seq (0 = none).
    pub durable_seq: u64,
    /// Commit groups written.
    pub groups: u64,
    /// fdatasync calls (groups + rotations).
    pub syncs: u64,
    /// Bytes written by commits (records, and the headers of segments started in spares).
    pub bytes: u64,
    /// Total / longest time inside fdatasync, ns (by the journal's clock).
    pub sync_nanos_total: u64,
    /// Longest fdatasync, ns.
    pub sync_nanos_max: u64,
    /// Segments started by rotation (spares taken included).
    pub segments_created: u64,
    /// Segments started in a zero-filled spare (the rest were created and grown on the commit path).
    pub spares_used: u64,
}

/// What a client holding (epoch, last seq seen) should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// Same journal and the seq is held: replay entries from `from` (may be past the end: nothing yet).
    Replay {
        /// First seq to send.
        from: u64,
    },
    /// Different epoch, or a seq this journal no longer holds / never held: take a fresh snapshot.
    Resnapshot,
}

/// An open journal. Appends from any thread; one writer thread does the I/O. Dropping it (or
/// [`Journal::close`]) completes every queued append and joins the writer.
pub struct Journal {
    tx: Option<Sender<writer::Request>>,
    /// Rung after each append: the writer parks on it (no spinning receive) when the queue is empty.
    bell: Arc<Bell>,
    max_group_records: usize,
    thread: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
    dir: PathBuf,
    epoch: u64,
    first_seq: u64,
    /// The seq the next queued append gets (the writer numbers appends in queue order); held
    /// while an append is queued so the numbering and the queue agree.
    next_seq: Mutex<u64>,
    max_record_bytes: u32,
    queue_capacity: usize,
    clock: Arc<dyn Clock>,
    /// Held while open: one owner per directory. Released after the writer is joined (field order).
    _lock: lock::DirLock,
}

impl Journal {
    /// Opens (or creates) the journal in `options.dir`: takes the directory's lock, checks the segment
    /// chain against the manifest and recovers every segment (cutting a torn tail, see
    /// [`RecoveryReport`]), records the chain in the manifest, then starts the writer. Errors when
    /// another open journal holds the directory ([`JournalError::Locked`]), on a missing or short
    /// segment, real corruption, a seq gap or mixed epochs (unless `truncate_to_consistent`), an
    /// unreadable format version or manifest, an invalid option or an I/O failure.
    pub fn open(options: JournalOptions) -> Result<(Journal, RecoveryReport), JournalError> {
        options.validate()?;
        let dir = options.dir.clone();
        std::fs::create_dir_all(&dir).map_err(|e| JournalError::io(format!("create dir {}", dir.display()), &e))?;
        // One reading: the lock file's start time, the cut's directory name, a new journal's epoch.
        let now = options.clock.now_nanos();
        let now_ms = now / 1_000_000;
        let lock = lock::DirLock::acquire(&dir, now_ms)?;
        let max_payload = options.max_record_bytes as usize + format::PAYLOAD_FIXED;
        let manifest = manifest::read(&dir)?;
        let cut = options.truncate_to_consistent.then_some(cut::CutOptions { now_ms });
        let recovered = recover::recover(&dir, max_payload, manifest.as_ref(), cut.as_ref())?;
        let mut report = recovered.report;
        let next_seq = report.last_seq + 1;
        let mut chain: Vec<u64> = recovered.segments.iter().map(|s| s.first_seq).collect();
        let (epoch, tail) = match (recovered.epoch, recovered.segments.last()) {
            (Some(epoch), Some(last)) => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&last.path)
                    .map_err(|e| JournalError::io(format!("open {}", last.path.display()), &e))?;
                (
                    epoch,
                    writer::Tail {
                        file,
                        path: last.path.clone(),
                        len: last.len,
                        allocated: last.file_len,
                    },
                )
            }
            (epoch, _) => {
                // No segment left: a new journal (or only a torn segment creation was found).
                report.created = epoch.is_none() && report.cut.is_none();
                let epoch = epoch.or(options.epoch).unwrap_or(now);
                let tail = writer::create_segment(&dir, epoch, next_seq)?;
                chain = vec![next_seq];
                report.segments += 1;
                (epoch, tail)
            }
        };
        let manifests = Arc::new(manifest::ManifestStore::new(&dir));
        let current = manifest::Manifest { epoch, firsts: chain };
        if manifest.as_ref() != Some(&current) {
            // A journal from before manifests, a rotation whose manifest a crash cut off, or a cut.
            manifests.write(&current)?;
        }
        let shared = Arc::new(Shared {
            durable_seq: AtomicU64::new(report.last_seq),
            groups: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            sync_nanos_total: AtomicU64::new(0),
            sync_nanos_max: AtomicU64::new(0),
            segments_created: AtomicU64::new(0),
            spares_used: AtomicU64::new(0),
            failed: Mutex::new(None),
        });
        let (tx, rx) = crossbeam_channel::bounded(options.queue_capacity);
        let bell = Arc::new(Bell::default());
        let writer_bell = bell.clone();
        let zeros = Arc::new(timing::ZeroActivity::default());
        let w = writer::Writer {
            dir: dir.clone(),
            epoch,
            segment_bytes: options.segment_bytes,
            max_group_records: options.max_group_records,
            commit_window: options.commit_window,
            next_seq,
            tail,
            shared: shared.clone(),
            clock: options.clock.clone(),
            hook: options.sync_hook.clone(),
            fsync: options.fsync,
            spares: spare::SpareMaker::start(
                &dir,
                options.preallocate_bytes,
                options.segment_bytes,
                recovered.last_spare,
                zeros.clone(),
                manifests.clone(),
            )?,
            chain: current,
            manifests,
            pending_rename: None,
            commit_hook: options.commit_hook.clone(),
            group_hook: options.group_hook.clone(),
            write_fault: options.write_fault.clone(),
            zeros,
            timing: CommitTiming::default(),
        };
        let thread = std::thread::Builder::new()
            .name("tidewire-journal".into())
            .spawn(move || w.run(rx, &writer_bell))
            .map_err(|e| JournalError::io("spawn journal writer thread", &e))?;
        let first_seq = if report.first_seq == 0 {
            next_seq
        } else {
            report.first_seq
        };
        let journal = Journal {
            tx: Some(tx),
            bell,
            max_group_records: options.max_group_records,
            thread: Some(thread),
            shared,
            dir,
            epoch,
            first_seq,
            next_seq: Mutex::new(next_seq),
            max_record_bytes: options.max_record_bytes,
            queue_capacity: options.queue_capacity,
            clock: options.clock.clone(),
            _lock: lock,
        };
        Ok((journal, report))
    }

    fn request(&self, body: Vec<u8>, done: writer::Done) -> Result<writer::Request, JournalError> {
        if body.len() > self.max_record_bytes as usize {
            return Err(JournalError::RecordTooLarge {
                len: body.len(),
                limit: self.max_record_bytes,
            });
        }
        if let Some(message) = self.shared.failure() {
            return Err(JournalError::Failed { message });
        }
        Ok(writer::Request {
            body,
            done,
            queued_at: self.clock.now_nanos(),
        })
    }

    /// Queues `body` and returns the seq it gets; `done` is called on the writer thread with
    /// `Ok(seq)` once the record is on disk (after fdatasync), or with the error that stopped the
    /// writer (then the seq is never durable). Blocks while the queue is full (backpressure). On
    /// `Err` here `done` is never called.
    pub fn append(
        &self,
        body: Vec<u8>,
        done: impl FnOnce(Result<u64, JournalError>) + Send + 'static,
    ) -> Result<u64, JournalError> {
        let req = self.request(body, Box::new(done))?;
        self.enqueue(req, |tx, req| tx.send(req).map_err(|_| JournalError::Closed))
    }

    /// Queues `req` with `send` and returns its seq: the seq is taken only once `send` queued it,
    /// under the lock that keeps the numbering and the queue in the same order.
    fn enqueue(
        &self,
        req: writer::Request,
        send: impl FnOnce(&Sender<writer::Request>, writer::Request) -> Result<(), JournalError>,
    ) -> Result<u64, JournalError> {
        let tx = self.tx.as_ref().ok_or(JournalError::Closed)?;
        let mut next = self.next_seq.lock().unwrap_or_else(|p| p.into_inner());
        send(tx, req)?;
        let seq = *next;
        *next += 1;
        drop(next);
        self.queued(tx);
        Ok(seq)
    }

    /// After an append was queued: rings the writer if it waits for one, and ends its commit
    /// window early once a full group is there (the queue and the append the writer holds).
    fn queued(&self, tx: &Sender<writer::Request>) {
        self.bell.ring();
        if tx.len() + 1 >= self.max_group_records {
            self.bell.nudge();
        }
    }

    /// Like [`Journal::append`] but never blocks: `Err(QueueFull)` when the queue is full.
    pub fn try_append(
        &self,
        body: Vec<u8>,
        done: impl FnOnce(Result<u64, JournalError>) + Send + 'static,
    ) -> Result<u64, JournalError> {
        let req = self.request(body, Box::new(done))?;
        self.enqueue(req, |tx, req| {
            tx.try_send(req).map_err(|e| match e {
                TrySendError::Full(_) => JournalError::QueueFull {
                    capacity: self.queue_capacity,
                },
                TrySendError::Disconnected(_) => JournalError::Closed,
            })
        })
    }

    /// Appends and blocks until durable; returns the seq.
    pub fn append_wait(&self, body: Vec<u8>) -> Result<u64, JournalError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.append(body, move |r| {
            let _ = tx.send(r);
        })?;
        rx.recv().unwrap_or(Err(JournalError::Closed))
    }

    /// The journal's epoch (fixed at creation).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Last durable seq (0 = none).
    pub fn durable_seq(&self) -> u64 {
        self.shared.durable_seq.load(Ordering::Acquire)
    }

    /// Once the writer has failed (every append from then on fails): the last durable seq, which
    /// no later seq ever joins. `None` while the writer works.
    pub fn failed_at(&self) -> Option<u64> {
        // the writer publishes its last durable seq before it records the failure
        self.shared.failure().map(|_| self.durable_seq())
    }

    /// First seq the journal holds (or, when empty, the seq the first append will get).
    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// Iterates durable entries with seq >= `from_seq`, up to the durable seq at the time of the call.
    pub fn replay_from(&self, from_seq: u64) -> Result<Replay, JournalError> {
        Replay::new(
            &self.dir,
            from_seq,
            self.durable_seq(),
            self.max_record_bytes as usize + format::PAYLOAD_FIXED,
        )
    }

    /// Replay or resnapshot for a client that last saw (`epoch`, `last_seq`).
    pub fn resume(&self, epoch: u64, last_seq: u64) -> Resume {
        let durable = self.durable_seq();
        if epoch != self.epoch || last_seq > durable || last_seq + 1 < self.first_seq {
            Resume::Resnapshot
        } else {
            Resume::Replay { from: last_seq + 1 }
        }
    }

    /// Counters since open.
    pub fn stats(&self) -> JournalStats {
        let s = &self.shared;
        JournalStats {
            durable_seq: s.durable_seq.load(Ordering::Acquire),
            groups: s.groups.load(Ordering::Relaxed),
            syncs: s.syncs.load(Ordering::Relaxed),
            bytes: s.bytes.load(Ordering::Relaxed),
            sync_nanos_total: s.sync_nanos_total.load(Ordering::Relaxed),
            sync_nanos_max: s.sync_nanos_max.load(Ordering::Relaxed),
            segments_created: s.segments_created.load(Ordering::Relaxed),
            spares_used: s.spares_used.load(Ordering::Relaxed),
        }
    }

    /// Completes every queued append, stops the writer and reports its failure, if any.
    pub fn close(mut self) -> Result<(), JournalError> {
        self.shutdown();
        match self.shared.failure() {
            Some(message) => Err(JournalError::Failed { message }),
            None => Ok(()),
        }
    }

    fn shutdown(&mut self) {
        // the writer drains what is queued, then sees the queue disconnected
        self.tx.take();
        self.bell.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.shutdown();
    }
}
