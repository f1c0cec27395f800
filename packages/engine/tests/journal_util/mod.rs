//! Shared helpers for the journal tests (included with `#[path]`, not a test target of its own).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tidewire_engine::journal::{Journal, JournalOptions};

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!("tw-journal-{tag}-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Options with a fixed epoch and no preallocation (so file lengths are exact).
pub fn options(dir: &Path) -> JournalOptions {
    let mut o = JournalOptions::new(dir);
    o.epoch = Some(77);
    o.preallocate_bytes = 0;
    o
}

/// Options with a fixed epoch and zero-filled spare segments from `chunk` bytes (doubling).
pub fn prealloc_options(dir: &Path, chunk: u64) -> JournalOptions {
    let mut o = options(dir);
    o.preallocate_bytes = chunk;
    o
}

/// Body for seq-like index `i`: deterministic, length varies with `i`.
pub fn body(i: u64) -> Vec<u8> {
    let len = 20 + (i % 37) as usize;
    (0..len).map(|k| (i as usize * 31 + k) as u8).collect()
}

/// Opens, appends `n` bodies one group each (append_wait), closes.
pub fn write_n(dir: &Path, n: u64) {
    let (j, _) = Journal::open(options(dir)).unwrap();
    for i in 1..=n {
        assert_eq!(j.append_wait(body(i)).unwrap(), i);
    }
    j.close().unwrap();
}

/// All entries of a journal in `dir` as (seq, body), plus the recovery report.
pub fn reopen_all(dir: &Path) -> (Vec<(u64, Vec<u8>)>, tidewire_engine::journal::RecoveryReport) {
    let (j, report) = Journal::open(options(dir)).unwrap();
    let all = j
        .replay_from(1)
        .unwrap()
        .map(|e| e.map(|e| (e.seq, e.body)))
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    j.close().unwrap();
    (all, report)
}

/// The single segment file of `dir` (panics if there is not exactly one segment or any spare).
pub fn only_segment(dir: &Path) -> PathBuf {
    let mut v = segments(dir);
    assert_eq!((v.len(), spares(dir)), (1, vec![]), "{v:?}");
    v.pop().unwrap()
}

/// The live segment of `dir`: the segment file (named `journal-*`, or a spare in use: a `spare-*`
/// with a valid header) holding the highest first seq, chosen by its header, not by its name.
pub fn live_segment(dir: &Path) -> PathBuf {
    // A spare in use may be renamed to its segment name while this looks: then look again.
    for _ in 0..100 {
        let mut best: Option<(u64, PathBuf)> = None;
        for p in segments(dir).into_iter().chain(spares(dir)) {
            let Ok(bytes) = std::fs::read(&p) else { continue };
            if bytes.len() < 32
                || bytes[0..4] != *b"TWJ\0"
                || crc32fast::hash(&bytes[0..28]).to_le_bytes() != bytes[28..32]
            {
                continue; // an unused spare (zeros)
            }
            let first = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
            if best.as_ref().is_none_or(|(b, _)| first > *b) {
                best = Some((first, p));
            }
        }
        if let Some((_, p)) = best.filter(|(_, p)| p.exists()) {
            return p;
        }
    }
    panic!("no segment with a valid header in {}", dir.display())
}

/// `path`'s file length up to its last non-zero byte (the end of its records when what follows
/// them is preallocated zeros).
pub fn data_end(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i as u64 + 1)
}

/// The `journal-*.twj` segment files of `dir`, in seq order (the names are zero-padded first seqs;
/// spares and other files left out).
pub fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with("journal-") && name.ends_with(".twj")
        })
        .collect();
    v.sort();
    v
}

/// The `spare-*.twj` files of `dir`, sorted by name.
pub fn spares(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("spare-"))
        .collect();
    v.sort();
    v
}
