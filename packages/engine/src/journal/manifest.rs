//! The manifest: the journal's own record of its segment chain, so a missing or shortened segment
//! is refused at open instead of silently losing what it held.
//!
//! `MANIFEST` in the journal directory, text, one item per line:
//!
//! ```text
//! tidewire journal manifest 1
//! epoch 1767225600000000000
//! sealed 1 4000
//! sealed 4001 8000
//! live 8001
//! crc 1a2b3c4d
//! ```
//!
//! `sealed F L`: a segment `journal-<F>.twj` holding exactly seqs F..=L; `live F`: the segment
//! appends go to, from seq F. Segments are contiguous, so each sealed segment ends where the next
//! starts; the first line's seq is the journal's base (its first seq). `crc` is the CRC32 (hex) of
//! every byte before that line.
//!
//! **When it is written.** At open (after recovery, describing what recovery kept) and on every
//! rotation, never on the commit path of ordinary groups: atomically (write `MANIFEST.tmp`, fsync,
//! rename, fsync the directory), and only once the segments it lists are durable. So the manifest
//! may *lag* the directory (a crash between a rotation and its manifest leaves a newer segment the
//! manifest does not list: recovery accepts segments past the manifest's live one when they
//! continue its seqs) but never runs ahead of it. A manifest that lists a segment that is not
//! there, or a sealed segment whose seqs differ, means data was lost after it was durable.

use super::error::JournalError;
use super::recover::sync_dir;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the manifest inside the journal directory.
pub const MANIFEST_FILE: &str = "MANIFEST";
/// Temporary name a new manifest is written under before its rename.
const TEMP_FILE: &str = "MANIFEST.tmp";
const FIRST_LINE: &str = "tidewire journal manifest 1";

/// The chain: the journal's epoch and the first seq of every segment, oldest first; the last one
/// is the live segment, each other one ends where the next starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub epoch: u64,
    /// First seq of each segment, rising; never empty.
    pub firsts: Vec<u64>,
}

impl Manifest {
    /// First seq of the live segment.
    pub fn live(&self) -> u64 {
        self.firsts.last().copied().unwrap_or(0)
    }

    fn encode(&self) -> String {
        let mut s = format!("{FIRST_LINE}\nepoch {}\n", self.epoch);
        for w in self.firsts.windows(2) {
            s.push_str(&format!("sealed {} {}\n", w[0], w[1] - 1));
        }
        s.push_str(&format!("live {}\n", self.live()));
        let crc = crc32fast::hash(s.as_bytes());
        s.push_str(&format!("crc {crc:08x}\n"));
        s
    }

    fn decode(text: &str) -> Result<Manifest, String> {
        let body_end = text.rfind("crc ").ok_or("no crc line")?;
        let (body, crc_line) = text.split_at(body_end);
        let crc = u32::from_str_radix(crc_line.trim_start_matches("crc ").trim(), 16).map_err(|_| "bad crc line")?;
        if crc32fast::hash(body.as_bytes()) != crc {
            return Err("crc mismatch".into());
        }
        let mut lines = body.lines();
        if lines.next() != Some(FIRST_LINE) {
            return Err(format!("first line is not {FIRST_LINE:?}"));
        }
        let num = |s: Option<&str>| s.and_then(|v| v.parse::<u64>().ok()).ok_or("bad number");
        let mut epoch = None;
        let mut firsts = Vec::new();
        // The seq the next segment must start at (after a sealed line); None before the first.
        let mut next: Option<u64> = None;
        let mut live = false;
        for line in lines {
            let mut words = line.split(' ');
            let (kind, first) = match words.next() {
                Some("epoch") if epoch.is_none() => {
                    epoch = Some(num(words.next())?);
                    continue;
                }
                Some(kind @ ("sealed" | "live")) if !live => (kind, num(words.next())?),
                _ => return Err(format!("unexpected line {line:?}")),
            };
            if next.is_some_and(|n| n != first) || first == 0 {
                return Err(format!("{line:?} does not continue the segment before it"));
            }
            firsts.push(first);
            if kind == "live" {
                live = true;
            } else {
                let last = num(words.next())?;
                if last < first {
                    return Err(format!("{line:?}: a sealed segment holds at least one record"));
                }
                next = Some(last + 1);
            }
            if words.next().is_some() {
                return Err(format!("unexpected line {line:?}"));
            }
        }
        let epoch = epoch.ok_or("no epoch line")?;
        if !live {
            return Err("no live line".into());
        }
        Ok(Manifest { epoch, firsts })
    }
}

/// Reads `dir`'s manifest: `None` when there is none (a journal written before manifests, or a
/// new one). Removes a leftover `MANIFEST.tmp` (a write cut short: the previous manifest stands).
pub(crate) fn read(dir: &Path) -> Result<Option<Manifest>, JournalError> {
    let temp = dir.join(TEMP_FILE);
    match std::fs::remove_file(&temp) {
        Ok(()) => sync_dir(dir)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(JournalError::io(format!("remove {}", temp.display()), &e)),
    }
    let path = dir.join(MANIFEST_FILE);
    let text = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(JournalError::io(format!("read {}", path.display()), &e)),
    };
    let text = String::from_utf8(text).map_err(|_| JournalError::BadManifest {
        path: path.clone(),
        reason: "not UTF-8 text".into(),
    })?;
    Manifest::decode(&text)
        .map(Some)
        .map_err(|reason| JournalError::BadManifest { path, reason })
}

/// Writes manifests of one journal directory, newest chain wins: the writer thread and the spare
/// helper both publish them (see `writer.rs`), and one that arrives after a newer one is skipped.
pub(crate) struct ManifestStore {
    dir: PathBuf,
    /// First seq of the live segment of the last manifest written (0 = none yet).
    written: Mutex<u64>,
}

impl ManifestStore {
    pub fn new(dir: &Path) -> ManifestStore {
        ManifestStore {
            dir: dir.to_path_buf(),
            written: Mutex::new(0),
        }
    }

    /// Writes `m` atomically unless a manifest with a later live segment was written already.
    pub fn write(&self, m: &Manifest) -> Result<(), JournalError> {
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        if m.live() < *written {
            return Ok(());
        }
        let temp = self.dir.join(TEMP_FILE);
        let path = self.dir.join(MANIFEST_FILE);
        let io = |what: &str, p: &Path, e: std::io::Error| JournalError::io(format!("{what} {}", p.display()), &e);
        let mut f = File::create(&temp).map_err(|e| io("create", &temp, e))?;
        f.write_all(m.encode().as_bytes()).map_err(|e| io("write", &temp, e))?;
        f.sync_all().map_err(|e| io("fsync", &temp, e))?;
        drop(f);
        std::fs::rename(&temp, &path).map_err(|e| io("rename", &temp, e))?;
        sync_dir(&self.dir)?;
        *written = m.live();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_damage() {
        let m = Manifest {
            epoch: 77,
            firsts: vec![1, 4001, 8001],
        };
        let text = m.encode();
        assert_eq!(
            text.lines().collect::<Vec<_>>()[..5],
            [
                "tidewire journal manifest 1",
                "epoch 77",
                "sealed 1 4000",
                "sealed 4001 8000",
                "live 8001"
            ]
        );
        assert_eq!(Manifest::decode(&text), Ok(m));
        let only_live = Manifest {
            epoch: 5,
            firsts: vec![1],
        };
        assert_eq!(Manifest::decode(&only_live.encode()), Ok(only_live));
        assert_eq!(
            Manifest::decode(&text.replace("4000", "4001")),
            Err("crc mismatch".into())
        );
        let resealed = |body: &str| {
            let crc = crc32fast::hash(body.as_bytes());
            Manifest::decode(&format!("{body}crc {crc:08x}\n"))
        };
        assert!(resealed("tidewire journal manifest 1\nepoch 1\nsealed 1 10\nlive 12\n")
            .unwrap_err()
            .contains("does not continue"));
        assert!(resealed("tidewire journal manifest 1\nepoch 1\nsealed 1 10\n")
            .unwrap_err()
            .contains("no live"));
        assert!(resealed("tidewire journal manifest 1\nlive 1\n")
            .unwrap_err()
            .contains("no epoch"));
        assert!(resealed("tidewire journal manifest 2\nepoch 1\nlive 1\n").is_err());
        assert!(resealed("tidewire journal manifest 1\nepoch 1\nlive 1\nlive 2\n").is_err());
    }
}
