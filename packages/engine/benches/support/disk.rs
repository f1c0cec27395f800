//! `journal --disk`: what one durable 4 KiB append costs on this disk, per way of making it durable.
//!
//! Every mode appends 4 KiB blocks at increasing offsets into space preallocated the way the journal
//! does it (zeros written and fdatasynced, so no append changes the file size or allocates blocks) and
//! times each append from the write call to the return of the call that makes it durable:
//!
//! - `fdatasync`: `pwrite` then `fdatasync` (the journal's writer today);
//! - `o_dsync`: `pwrite` on a file opened `O_DSYNC` (the write returns once the data is durable);
//! - `direct`: `O_DIRECT | O_DSYNC`, 4 KiB-aligned buffer and offsets (FUA write where the device has
//!   FUA, else write + cache flush; bypasses the page cache);
//! - `sfr`: `pwrite`, `sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER)` then `fdatasync`;
//! - `+ zero-fill, page cache` / `+ zero-fill, O_DIRECT`: `pwrite` + `fdatasync` while a second
//!   thread zero-fills 8 MiB chunks past the appends and fdatasyncs them (one chunk, then 50 ms
//!   pause), as the journal's preallocation does, through the page cache or with `O_DIRECT`. The
//!   appender's fdatasync waits for every dirty page of the file, so buffered zeros still dirty
//!   when it runs are written by it.
//!
//! Modes run interleaved in rounds of `ROUND` appends (mode A round, mode B round, ...) so a noisy
//! neighbour hits every mode alike. Linux only (raw syscalls through glibc).

use hdrhistogram::Histogram;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Instant;

/// Linux open(2) flags (x86_64 / aarch64 values; the std crate does not export them).
const O_DSYNC: i32 = 0o10000;
#[cfg(target_arch = "x86_64")]
const O_DIRECT: i32 = 0o40000;
#[cfg(not(target_arch = "x86_64"))]
const O_DIRECT: i32 = 0o200000;
const SYNC_FILE_RANGE_WAIT_BEFORE: u32 = 1;
const SYNC_FILE_RANGE_WRITE: u32 = 2;
const SYNC_FILE_RANGE_WAIT_AFTER: u32 = 4;

extern "C" {
    fn sync_file_range(fd: i32, offset: i64, nbytes: i64, flags: u32) -> i32;
}

/// Block size of every append (bytes).
pub const BLOCK: usize = 4096;
/// Appends per mode per round.
const ROUND: usize = 500;

/// The ways of making an append durable that `run` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `pwrite` + `fdatasync`.
    Fdatasync,
    /// `pwrite` on an `O_DSYNC` file.
    ODsync,
    /// `pwrite` on an `O_DIRECT | O_DSYNC` file, aligned.
    Direct,
    /// `pwrite` + `sync_file_range` (wait, write, wait) + `fdatasync`.
    Sfr,
    /// `pwrite` + `fdatasync` beside a zero-filling thread writing through the page cache.
    ZeroFillBuffered,
    /// `pwrite` + `fdatasync` beside a zero-filling thread writing with `O_DIRECT`.
    ZeroFillDirect,
}

impl Mode {
    /// All modes in table order.
    pub const ALL: [Mode; 6] = [
        Mode::Fdatasync,
        Mode::ODsync,
        Mode::Direct,
        Mode::Sfr,
        Mode::ZeroFillBuffered,
        Mode::ZeroFillDirect,
    ];

    /// Row label.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Fdatasync => "pwrite + fdatasync",
            Mode::ODsync => "pwrite, O_DSYNC",
            Mode::Direct => "pwrite, O_DIRECT|O_DSYNC (4 KiB aligned)",
            Mode::Sfr => "pwrite + sync_file_range + fdatasync",
            Mode::ZeroFillBuffered => "pwrite + fdatasync + zero-fill, page cache",
            Mode::ZeroFillDirect => "pwrite + fdatasync + zero-fill, O_DIRECT",
        }
    }

    fn flags(self) -> i32 {
        match self {
            Mode::Fdatasync | Mode::Sfr | Mode::ZeroFillBuffered | Mode::ZeroFillDirect => 0,
            Mode::ODsync => O_DSYNC,
            Mode::Direct => O_DIRECT | O_DSYNC,
        }
    }
}

/// A 4 KiB-aligned heap buffer of `BLOCK` bytes (O_DIRECT needs aligned memory).
struct Aligned(*mut u8);

impl Aligned {
    fn new(fill: u8) -> Aligned {
        let layout = Layout::from_size_align(BLOCK, BLOCK).expect("layout");
        // SAFETY: non-zero size; the pointer is checked and freed in Drop with the same layout.
        let p = unsafe { alloc_zeroed(layout) };
        assert!(!p.is_null(), "allocation failed");
        // SAFETY: p points at BLOCK writable bytes.
        unsafe { std::ptr::write_bytes(p, fill, BLOCK) };
        Aligned(p)
    }
    fn bytes(&self) -> &[u8] {
        // SAFETY: BLOCK initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.0, BLOCK) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.0, Layout::from_size_align(BLOCK, BLOCK).expect("layout")) };
    }
}

/// One mode's file: preallocated (zeros written + fdatasync), opened with the mode's flags.
struct Target {
    mode: Mode,
    file: File,
    path: std::path::PathBuf,
    at: u64,
    /// Where the zero-filling thread (zero-fill modes) writes its next chunk: past the appends.
    zero_at: u64,
    hist: Histogram<u64>,
}

impl Target {
    fn open(dir: &Path, mode: Mode, bytes: u64) -> Target {
        let path = dir.join(format!("disk-{mode:?}.bin"));
        let _ = std::fs::remove_file(&path);
        {
            let f = File::create(&path).expect("create");
            let zeros = vec![0u8; 1 << 20];
            let mut at = 0;
            while at < bytes {
                f.write_all_at(&zeros, at).expect("preallocate");
                at += zeros.len() as u64;
            }
            f.sync_all().expect("sync preallocation");
        }
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(mode.flags())
            .open(&path)
            .expect("open with mode flags");
        Target {
            mode,
            file,
            path,
            at: 0,
            zero_at: bytes.next_multiple_of(BLOCK as u64),
            hist: Histogram::new_with_bounds(1_000, 60_000_000_000, 3).expect("hist"),
        }
    }

    /// One durable append; records its latency (ns).
    fn append(&mut self, buf: &Aligned) {
        let fd = self.file.as_raw_fd();
        let t0 = Instant::now();
        self.file.write_all_at(buf.bytes(), self.at).expect("pwrite");
        match self.mode {
            Mode::Fdatasync | Mode::ZeroFillBuffered | Mode::ZeroFillDirect => {
                self.file.sync_data().expect("fdatasync")
            }
            Mode::Sfr => {
                let flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
                // SAFETY: plain syscall on an open fd; no memory passed.
                let rc = unsafe { sync_file_range(fd, self.at as i64, BLOCK as i64, flags) };
                assert_eq!(rc, 0, "sync_file_range: {}", std::io::Error::last_os_error());
                self.file.sync_data().expect("fdatasync");
            }
            Mode::ODsync | Mode::Direct => {}
        }
        let ns = t0.elapsed().as_nanos() as u64;
        self.hist.record(ns.max(1_000)).expect("record");
        self.at += BLOCK as u64;
    }
}

/// Zero-fill chunk (bytes): the journal's default `preallocate_bytes`.
const ZERO_CHUNK: u64 = 8 << 20;

/// The zero-filling thread of a zero-fill mode's round.
struct ZeroFiller {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl ZeroFiller {
    /// Starts filling after `t`'s appends (`None` for the other modes).
    fn start(t: &Target) -> Option<ZeroFiller> {
        let direct = match t.mode {
            Mode::ZeroFillBuffered => false,
            Mode::ZeroFillDirect => true,
            _ => return None,
        };
        let file = t.file.try_clone().expect("clone");
        let zfile = if direct {
            OpenOptions::new()
                .write(true)
                .custom_flags(O_DIRECT)
                .open(&t.path)
                .expect("open O_DIRECT")
        } else {
            t.file.try_clone().expect("clone")
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut at = t.zero_at;
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            // 1 MiB per write, 4 KiB-aligned (O_DIRECT): the aligned window of a larger buffer.
            let buf = vec![0u8; (1 << 20) + BLOCK];
            let off = buf.as_ptr().align_offset(BLOCK);
            let zeros = &buf[off..off + (1 << 20)];
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let end = at + ZERO_CHUNK;
                while at < end {
                    zfile.write_all_at(zeros, at).expect("zero fill");
                    at += zeros.len() as u64;
                }
                file.sync_data().expect("fdatasync zero fill");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            at
        });
        Some(ZeroFiller { stop, thread })
    }

    /// Stops after the current chunk; returns where the next one goes.
    fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().expect("zero filler")
    }
}

/// Runs `syncs` durable appends per mode (interleaved rounds) in `dir` and prints one table row per
/// mode: p50, p90, p99, p99.9, max, mean (µs) and the count of appends over 5 ms.
pub fn run(dir: &Path, syncs: usize) {
    std::fs::create_dir_all(dir).expect("disk bench dir");
    let bytes = (syncs * BLOCK) as u64 + (1 << 20);
    let mut targets: Vec<Target> = Mode::ALL.iter().map(|&m| Target::open(dir, m, bytes)).collect();
    let buf = Aligned::new(b'x');
    // Warm-up: one round per mode, not recorded.
    for t in &mut targets {
        for _ in 0..32 {
            t.append(&buf);
        }
        t.hist.reset();
    }
    let mut done = 0;
    while done < syncs {
        let n = ROUND.min(syncs - done);
        for t in &mut targets {
            let filler = ZeroFiller::start(t);
            for _ in 0..n {
                t.append(&buf);
            }
            if let Some(f) = filler {
                t.zero_at = f.stop();
            }
        }
        done += n;
    }
    println!("| durable 4 KiB append | appends | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | mean µs | > 5 ms |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let us = |ns: u64| ns as f64 / 1_000.0;
    for t in &targets {
        let h = &t.hist;
        let over: u64 = h
            .iter_recorded()
            .filter(|v| v.value_iterated_to() > 5_000_000)
            .map(|v| v.count_at_value())
            .sum();
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {} |",
            t.mode.name(),
            h.len(),
            us(h.value_at_quantile(0.50)),
            us(h.value_at_quantile(0.90)),
            us(h.value_at_quantile(0.99)),
            us(h.value_at_quantile(0.999)),
            us(h.max()),
            h.mean() / 1_000.0,
            over,
        );
    }
    for t in targets {
        let path = dir.join(format!("disk-{:?}.bin", t.mode));
        drop(t);
        let _ = std::fs::remove_file(path);
    }
}
