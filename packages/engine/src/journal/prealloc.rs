//! Zero-filled space ahead of the journal's write position, written by a helper thread.
//!
//! With `preallocate_bytes > 0`, when less than half a chunk is left past the write position, the
//! helper writes the next chunk of zeros (real blocks, not sparse, not unwritten extents) and
//! fdatasyncs it. The writer then overwrites allocated, written blocks, so its own fdatasync changes
//! no metadata: no file-size change and no file-system journal commit (which would also wait for
//! every other process's metadata). Recovery treats an all-zero remainder of a segment as free space.
//!
//! **Direct I/O.** The zeros are written with `O_DIRECT` where the file system takes it (ext4, xfs;
//! falls back to the page cache elsewhere, e.g. tmpfs). Through the page cache, a chunk is megabytes
//! of dirty pages, and the writer's fdatasync waits for *every* dirty page of the file: a commit that
//! ran while a chunk was still dirty wrote the chunk too (10-40 ms on the dev VM's virtio disk, once
//! per chunk, and every order behind that commit waited). Direct writes never dirty the page cache, so
//! a commit flushes only its own records. Only the unaligned head of a chunk (< 4 KiB, up to the next
//! 4 KiB boundary) goes through the page cache.

use super::error::JournalError;
use super::writer::Tail;
use crossbeam_channel::Receiver;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Alignment of direct I/O offsets, lengths and memory (bytes): the page size, a multiple of every
/// common logical block size.
const DIRECT_ALIGN: u64 = 4096;
/// Bytes of zeros written per call.
const ZERO_BUF: usize = 1 << 20;

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

/// A chunk of zeros written by the helper thread: (file generation, new end).
type PreallocDone = (u64, Result<u64, JournalError>);
/// A request to the helper: (file generation, the tail file, its path, where free space starts).
type PreallocRequest = (u64, File, PathBuf, u64);

/// The preallocation helper thread and the chunk in flight, if any.
pub(crate) struct Prealloc {
    chunk: u64,
    tx: Option<crossbeam_channel::Sender<PreallocRequest>>,
    rx: Receiver<PreallocDone>,
    thread: Option<std::thread::JoinHandle<()>>,
    in_flight: bool,
    generation: u64,
}

/// Writes zeros over `[from, to)` of `file` (`zeros` at least 1 byte).
fn write_zeros(file: &File, from: u64, to: u64, zeros: &[u8]) -> io::Result<()> {
    let mut at = from;
    while at < to {
        let n = (to - at).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

/// Zero-fills `[from, from rounded up to DIRECT_ALIGN + chunk)` of the file at `path` (`file` is it,
/// opened for buffered writes) and fdatasyncs it; returns the new end. `chunk` and `zeros.len()` are
/// multiples of `DIRECT_ALIGN` and `zeros` is aligned to it. The aligned part goes through a second
/// descriptor opened `O_DIRECT` when possible (see the module doc), else through `file`.
fn zero_fill(file: &File, path: &Path, from: u64, chunk: u64, zeros: &[u8]) -> io::Result<u64> {
    let aligned = from.next_multiple_of(DIRECT_ALIGN);
    let end = aligned + chunk;
    write_zeros(file, from, aligned, zeros)?;
    let direct = O_DIRECT.and_then(|flag| {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new().write(true).custom_flags(flag).open(path).ok()
    });
    let wrote_direct = match &direct {
        // EINVAL here means the file system refuses direct I/O after all: use the page cache.
        Some(d) => match write_zeros(d, aligned, end, zeros) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => false,
            Err(e) => return Err(e),
        },
        None => false,
    };
    if !wrote_direct {
        write_zeros(file, aligned, end, zeros)?;
    }
    file.sync_data()?;
    Ok(end)
}

impl Prealloc {
    /// Starts the helper thread (`chunk` bytes per request, rounded up to 4 KiB); `None` when `chunk`
    /// is 0.
    pub fn start(chunk: u64) -> Result<Option<Prealloc>, JournalError> {
        if chunk == 0 {
            return Ok(None);
        }
        let chunk = chunk.next_multiple_of(DIRECT_ALIGN);
        let (tx, req_rx) = crossbeam_channel::unbounded::<PreallocRequest>();
        let (done_tx, rx) = crossbeam_channel::unbounded::<PreallocDone>();
        let thread = std::thread::Builder::new()
            .name("tidewire-journal-prealloc".into())
            .spawn(move || {
                // Direct I/O needs aligned memory: take the aligned window of a slightly larger buffer.
                let buf = vec![0u8; ZERO_BUF + DIRECT_ALIGN as usize];
                let off = buf.as_ptr().align_offset(DIRECT_ALIGN as usize);
                let zeros = &buf[off..off + ZERO_BUF];
                while let Ok((generation, file, path, from)) = req_rx.recv() {
                    let res = zero_fill(&file, &path, from, chunk, zeros);
                    let res = res.map_err(|e| JournalError::io("preallocate segment", &e));
                    let _ = done_tx.send((generation, res));
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
    pub fn collect(&mut self, tail: &mut Tail, wait: bool) {
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
    pub fn maybe_request(&mut self, tail: &Tail) {
        if self.in_flight || tail.allocated.saturating_sub(tail.len) >= self.chunk / 2 {
            return;
        }
        let Ok(file) = tail.file.try_clone() else { return };
        if let Some(tx) = &self.tx {
            let from = tail.allocated.max(tail.len);
            if tx.send((self.generation, file, tail.path.clone(), from)).is_ok() {
                self.in_flight = true;
            }
        }
    }

    /// A new tail file: results for the old one are ignored from now on.
    pub fn new_file(&mut self) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn zero_fill_covers_an_unaligned_start_and_ends_aligned() {
        let dir = std::env::temp_dir().join(format!("tidewire-prealloc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("seg");
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        file.write_all_at(&[7u8; 100], 0).unwrap();
        let buf = vec![0u8; 3 * DIRECT_ALIGN as usize];
        let off = buf.as_ptr().align_offset(DIRECT_ALIGN as usize);
        let zeros = &buf[off..off + 2 * DIRECT_ALIGN as usize];
        let end = zero_fill(&file, &path, 100, 3 * DIRECT_ALIGN, zeros).unwrap();
        assert_eq!(end, 4 * DIRECT_ALIGN);
        let mut got = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut got).unwrap();
        assert_eq!(got.len() as u64, end);
        assert!(got[..100].iter().all(|&b| b == 7), "bytes before the start untouched");
        assert!(got[100..].iter().all(|&b| b == 0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
