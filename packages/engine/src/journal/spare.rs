//! Spare segments: zero-filled files prepared ahead of time by a helper thread, so the writer's live
//! segment never changes size or allocates blocks while orders wait on its fdatasync.
//!
//! **Why.** On ext4 (and xfs) an fdatasync must also commit the file system's journal when the file's
//! size or block map changed since the last commit; that commit carries every other process's pending
//! metadata too. Writing zeros into the live segment ahead of the writes (the previous design) changed
//! the live inode's size and block map once per chunk, and any commit whose fdatasync ran during a
//! chunk took about 10x a plain sync (measured: `benches/journal.rs` commit breakdown). A spare is a
//! *different* inode: its zeros are written (real blocks, not unwritten extents), `fsync`ed, and its
//! directory entry fsynced before the writer may take it; the writer then only overwrites allocated,
//! written blocks of it.
//!
//! **Protocol.** The helper makes one spare `spare-<n>.twj` (all zeros, `len` bytes) and hands it over
//! a one-slot channel. The writer takes it when its tail segment is full (or when the tail grows:
//! the first segment of a new journal, or a segment that outgrew its spare), writes the segment
//! header and the group's records into it with one `pwrite`, fdatasyncs, acknowledges, and then asks
//! the helper to rename it to `journal-<first seq>.twj` (+ directory fsync) and to write the manifest
//! that lists it (`manifest.rs`). Recovery and replay read
//! a spare whose header is valid as the segment it is (the rename may not have happened before a
//! crash); a spare whose header is all zeros is unused and removed at open.
//!
//! **Sizes and pacing.** The first spare is `JournalOptions::preallocate_bytes`; each next one doubles,
//! up to `segment_bytes`. Zeros are written with `O_DIRECT` where the file system takes it (no dirty
//! page cache to flush), in 256 KiB writes paced to [`PACED_BYTES_PER_SEC`] so they never flood the
//! device queue in front of the writer's commits, except while the writer is waiting for a spare
//! (its tail is growing): then at full speed.

use super::error::JournalError;
use super::format::HEADER_LEN;
use super::manifest::{Manifest, ManifestStore};
use super::recover::sync_dir;
use super::timing::ZeroActivity;
use crossbeam_channel::{Receiver, Sender};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Alignment of direct I/O offsets, lengths and memory (bytes): the page size, a multiple of every
/// common logical block size.
pub(crate) const DIRECT_ALIGN: u64 = 4096;
/// Bytes of zeros written per call.
const ZERO_BUF: usize = 256 << 10;
/// Zero-writing rate while the writer does not wait for a spare, bytes per second (a 64 MiB spare
/// in 2 s; the journal fills one in about 6 s at 20,000 orders/s).
pub const PACED_BYTES_PER_SEC: u64 = 32 << 20;
/// Smallest spare, bytes.
const MIN_SPARE: u64 = 64 << 10;
/// Longest pause after a failed spare (an I/O error only costs speed: the writer grows its file).
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Linux `O_DIRECT` (not exported by std); `None` where this build does not know its value.
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "x86")))]
const O_DIRECT: Option<i32> = Some(0o40000);
#[cfg(all(target_os = "linux", any(target_arch = "aarch64", target_arch = "arm")))]
const O_DIRECT: Option<i32> = Some(0o200000);
#[cfg(not(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "arm"
    )
)))]
const O_DIRECT: Option<i32> = None;

/// File name of spare number `n`.
pub(crate) fn spare_name(n: u64) -> String {
    format!("spare-{n:020}.twj")
}

/// The number of a spare's file name (`spare-<20 digits>.twj`), if it is one.
pub(crate) fn parse_spare_name(name: &str) -> Option<u64> {
    let num = name.strip_prefix("spare-")?.strip_suffix(".twj")?;
    (num.len() == 20).then(|| num.parse().ok()).flatten()
}

/// A ready spare: zero-filled, synced, its directory entry durable.
pub(crate) struct Spare {
    pub file: File,
    pub path: PathBuf,
    /// File length, bytes.
    pub len: u64,
}

/// Requests from the writer to the helper.
enum Cmd {
    /// Rename a taken spare (now holding durable records) to its segment name, fsync the directory,
    /// then write `manifest` (the chain with the new segment).
    Rename {
        from: PathBuf,
        to: PathBuf,
        manifest: Manifest,
    },
}

/// What the helper thread needs.
struct Maker {
    dir: PathBuf,
    size: u64,
    max: u64,
    next_n: u64,
    stop: Arc<AtomicBool>,
    urgent: Arc<AtomicBool>,
    activity: Arc<ZeroActivity>,
    manifests: Arc<ManifestStore>,
}

/// Writes zeros over `[0, len)` of the new file `path` through `direct` (an `O_DIRECT` descriptor)
/// when the file system takes it, else through `file`; paced unless `urgent`; stops early (error
/// `Interrupted`) when `stop` is set.
fn fill(file: &File, direct: Option<&File>, len: u64, zeros: &[u8], m: &Maker) -> io::Result<()> {
    let started = Instant::now();
    let mut direct = direct;
    let mut at = 0u64;
    while at < len {
        if m.stop.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "journal closing"));
        }
        let n = (len - at).min(zeros.len() as u64) as usize;
        match direct.map(|d| d.write_all_at(&zeros[..n], at)) {
            Some(Ok(())) => {}
            // EINVAL: the file system refuses direct I/O after all: use the page cache.
            Some(Err(e)) if e.kind() == io::ErrorKind::InvalidInput => {
                direct = None;
                continue;
            }
            Some(Err(e)) => return Err(e),
            None => file.write_all_at(&zeros[..n], at)?,
        }
        at += n as u64;
        if !m.urgent.load(Ordering::Relaxed) {
            let due = Duration::from_secs_f64(at as f64 / PACED_BYTES_PER_SEC as f64);
            let elapsed = started.elapsed();
            if due > elapsed {
                // Bounded: at most one 256 KiB write's worth of pacing, re-checked every 50 ms.
                std::thread::sleep((due - elapsed).min(Duration::from_millis(50)));
            }
        }
    }
    Ok(())
}

impl Maker {
    /// Creates, zero-fills and syncs the next spare; removes the partial file on failure.
    fn make(&mut self, zeros: &[u8]) -> io::Result<Spare> {
        let path = self.dir.join(spare_name(self.next_n));
        self.next_n += 1;
        let file = OpenOptions::new().create_new(true).read(true).write(true).open(&path)?;
        let direct = O_DIRECT.and_then(|flag| {
            use std::os::unix::fs::OpenOptionsExt;
            OpenOptions::new().write(true).custom_flags(flag).open(&path).ok()
        });
        self.activity.start();
        let res = fill(&file, direct.as_ref(), self.size, zeros, self)
            .and_then(|()| file.sync_all())
            .and_then(|()| sync_dir(&self.dir).map_err(|e| io::Error::other(e.to_string())));
        self.activity.finish();
        if let Err(e) = res {
            drop(file);
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        let spare = Spare {
            file,
            path,
            len: self.size,
        };
        self.size = (self.size * 2).min(self.max);
        Ok(spare)
    }

    /// The helper's loop: make a spare, hand it over, serve renames until the writer took it (its
    /// rename arrives), repeat. Ends when the journal closes.
    fn run(mut self, ready: Sender<Spare>, cmds: Receiver<Cmd>) {
        let buf = vec![0u8; ZERO_BUF + DIRECT_ALIGN as usize];
        let off = buf.as_ptr().align_offset(DIRECT_ALIGN as usize);
        let zeros = &buf[off..off + ZERO_BUF];
        let mut backoff = Duration::from_millis(100);
        while !self.stop.load(Ordering::Relaxed) {
            let spare = match self.make(zeros) {
                Ok(s) => s,
                Err(_) => {
                    // Wait (serving renames) and retry; a closing journal ends the wait.
                    match cmds.recv_timeout(backoff) {
                        Ok(cmd) => {
                            self.serve(cmd, None);
                        }
                        Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
                    };
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            backoff = Duration::from_millis(100);
            let path = spare.path.clone();
            if ready.send(spare).is_err() {
                return;
            }
            loop {
                match cmds.recv() {
                    Ok(cmd) => {
                        if self.serve(cmd, Some(&path)) {
                            break;
                        }
                    }
                    Err(_) => return,
                }
            }
        }
    }

    /// Runs `cmd`; true when it was the rename of `taken` (the writer took that spare).
    fn serve(&self, cmd: Cmd, taken: Option<&Path>) -> bool {
        match cmd {
            Cmd::Rename { from, to, manifest } => {
                // A failed rename is harmless: recovery and replay read a spare with a valid header
                // as the segment it is.
                if std::fs::rename(&from, &to).is_ok() {
                    let _ = sync_dir(&self.dir);
                }
                // The manifest names segments by first seq, so it holds with or without the rename;
                // a failed write leaves it behind the chain, which recovery accepts.
                let _ = self.manifests.write(&manifest);
                taken == Some(from.as_path())
            }
        }
    }
}

/// The spare-making helper thread, seen from the writer.
pub(crate) struct SpareMaker {
    ready: Receiver<Spare>,
    cmds: Option<Sender<Cmd>>,
    stop: Arc<AtomicBool>,
    urgent: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SpareMaker {
    /// Starts the helper for journal directory `dir`: first spare `first` bytes (at least 64 KiB),
    /// doubling up to `max` (`segment_bytes`); sizes rounded up to 4 KiB. `None` when `first` is 0.
    /// Spare numbers start past `first_n` (the highest number in the directory).
    pub fn start(
        dir: &Path,
        first: u64,
        max: u64,
        first_n: u64,
        activity: Arc<ZeroActivity>,
        manifests: Arc<ManifestStore>,
    ) -> Result<Option<SpareMaker>, JournalError> {
        if first == 0 {
            return Ok(None);
        }
        let max = max.next_multiple_of(DIRECT_ALIGN);
        let size = first.max(MIN_SPARE).min(max).next_multiple_of(DIRECT_ALIGN);
        let stop = Arc::new(AtomicBool::new(false));
        let urgent = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready) = crossbeam_channel::bounded(1);
        let (cmds, cmd_rx) = crossbeam_channel::unbounded();
        let maker = Maker {
            dir: dir.to_path_buf(),
            size,
            max,
            next_n: first_n + 1,
            stop: stop.clone(),
            urgent: urgent.clone(),
            activity,
            manifests,
        };
        let thread = std::thread::Builder::new()
            .name("tidewire-journal-spare".into())
            .spawn(move || maker.run(ready_tx, cmd_rx))
            .map_err(|e| JournalError::io("spawn journal spare thread", &e))?;
        Ok(Some(SpareMaker {
            ready,
            cmds: Some(cmds),
            stop,
            urgent,
            thread: Some(thread),
        }))
    }

    /// The ready spare, if there is one (never blocks). Taking it ends the writer's urgency.
    pub fn take(&mut self) -> Option<Spare> {
        let s = self.ready.try_recv().ok()?;
        self.urgent.store(false, Ordering::Relaxed);
        Some(s)
    }

    /// The writer's tail is growing for want of a spare: fill the next one at full speed.
    pub fn hurry(&self) {
        self.urgent.store(true, Ordering::Relaxed);
    }

    /// After the first durable write into a taken spare: rename it to its segment name (`to`), then
    /// write `manifest` (the chain that ends in it).
    pub fn rename(&self, from: PathBuf, to: PathBuf, manifest: Manifest) {
        if let Some(c) = &self.cmds {
            let _ = c.send(Cmd::Rename { from, to, manifest });
        }
    }
}

impl Drop for SpareMaker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.cmds.take();
        // Pending renames were sent before the stop: the helper serves them before it sees the
        // channel close (a spare in the middle of its fill is abandoned and removed).
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The header bytes of a spare file: `None` when it is shorter than a header.
pub(crate) fn read_header(path: &Path) -> io::Result<Option<[u8; HEADER_LEN]>> {
    let f = File::open(path)?;
    let mut h = [0u8; HEADER_LEN];
    match f.read_exact_at(&mut h, 0) {
        Ok(()) => Ok(Some(h)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_names_round_trip_and_others_are_not_spares() {
        assert_eq!(parse_spare_name(&spare_name(42)), Some(42));
        assert_eq!(parse_spare_name("spare-42.twj"), None);
        assert_eq!(parse_spare_name("journal-00000000000000000001.twj"), None);
    }

    #[test]
    fn a_spare_is_all_zeros_and_sizes_double_up_to_the_segment_size() {
        let dir = std::env::temp_dir().join(format!("tidewire-spare-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let manifests = Arc::new(ManifestStore::new(&dir));
        let m = SpareMaker::start(&dir, 64 << 10, 160 << 10, 0, Arc::default(), manifests)
            .unwrap()
            .unwrap();
        let mut sizes = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while sizes.len() < 3 && Instant::now() < deadline {
            match m.ready.recv_timeout(Duration::from_secs(5)).ok() {
                Some(s) => {
                    let bytes = std::fs::read(&s.path).unwrap();
                    assert_eq!(bytes.len() as u64, s.len);
                    assert!(bytes.iter().all(|b| *b == 0));
                    sizes.push(s.len);
                    let to = s.path.with_extension("taken");
                    let chain = Manifest {
                        epoch: 1,
                        firsts: vec![1],
                    };
                    m.rename(s.path.clone(), to, chain);
                }
                None => break,
            }
        }
        assert_eq!(sizes, vec![64 << 10, 128 << 10, 160 << 10]);
        drop(m);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
