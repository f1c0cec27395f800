//! The explicit recovery of a broken chain: cut the journal back to its last consistent seq.
//!
//! Only with `JournalOptions::truncate_to_consistent` (the server's
//! `--journal-truncate-to-consistent`), never on its own: recovery refuses a broken chain (a missing
//! or short segment, a seq gap, a foreign epoch, a bad record in synced data) and an operator
//! decides. The cut keeps every segment before the break and the records of the broken segment
//! before it; the rest is moved (never deleted) into `dropped-<Unix ms>/` inside the journal
//! directory, with a segment cut in the middle copied there whole first. The report
//! ([`ChainCut`]) names every file, its seqs and record count; the next append gets the kept last
//! seq + 1, so seqs (and order ids) after the cut are handed out again.

use super::error::JournalError;
use super::format::{self, HEADER_LEN};
use super::recover::{sync_dir, Break, SegmentInfo};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// How to cut (the time names the directory the dropped files go to).
pub(crate) struct CutOptions {
    /// Now, Unix milliseconds (the journal's clock).
    pub now_ms: u64,
}

/// One segment file, or the end of one, that the cut dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedFile {
    /// The segment file in the journal directory.
    pub path: PathBuf,
    /// Where it was saved: moved there whole, or (cut in the middle) copied whole before the cut.
    pub saved_as: PathBuf,
    /// First byte dropped: 0 for a whole file, else the offset the file was cut at.
    pub from_byte: u64,
    /// Valid records in the dropped bytes.
    pub records: u64,
    /// Lowest and highest seq among them (`None`: no valid record).
    pub seqs: Option<(u64, u64)>,
}

/// What a cut back to the last consistent seq kept and dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainCut {
    /// Why: the refusal the cut replaced (the error message naming the file and seqs).
    pub reason: String,
    /// Last seq kept (0: nothing); the next append gets this + 1.
    pub kept_last_seq: u64,
    /// Files and parts of files dropped, in seq order (empty when only a missing segment broke the
    /// chain at its end: nothing present had to go).
    pub dropped: Vec<DroppedFile>,
    /// Valid records in everything dropped (records of missing segments are not counted: they are gone).
    pub dropped_records: u64,
    /// Directory the dropped files were saved in (`None` when nothing was).
    pub saved_to: Option<PathBuf>,
}

impl ChainCut {
    /// The line to log, e.g. `journal: cut back to seq 4000 (truncate to consistent): journal:
    /// segment … is missing: …; dropped 4000 records: journal-…8001.twj seqs 8001..=12000 (4000
    /// records); saved in /data/journal/dropped-1767225600000`.
    pub fn log_line(&self) -> String {
        let files: Vec<String> = self
            .dropped
            .iter()
            .map(|d| {
                let name = d
                    .path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                let seqs = d
                    .seqs
                    .map_or_else(|| "no valid record".into(), |(a, b)| format!("seqs {a}..={b}"));
                let from = if d.from_byte == 0 {
                    String::new()
                } else {
                    format!(", from byte {}", d.from_byte)
                };
                format!("{name} {seqs} ({} records{from})", d.records)
            })
            .collect();
        let what = if files.is_empty() {
            "no file dropped".to_string()
        } else {
            format!("dropped {} records: {}", self.dropped_records, files.join(", "))
        };
        let saved = self
            .saved_to
            .as_ref()
            .map_or_else(String::new, |p| format!("; saved in {}", p.display()));
        format!(
            "journal: cut back to seq {} (truncate to consistent): {}; {what}{saved}",
            self.kept_last_seq, self.reason
        )
    }
}

/// Applies `broken`'s cut to `dir` (its segments `listed`, as scanned); `kept_last_seq` is the last
/// seq of what stays. Returns the partially kept segment (now ending at its break) and the report.
pub(crate) fn cut(
    dir: &Path,
    listed: &[(u64, PathBuf)],
    broken: Break,
    kept_last_seq: u64,
    opts: &CutOptions,
    max_payload: usize,
) -> Result<(Option<SegmentInfo>, ChainCut), JournalError> {
    let io = |what: &str, p: &Path, e: std::io::Error| JournalError::io(format!("{what} {}", p.display()), &e);
    let save = dir.join(format!("dropped-{}", opts.now_ms));
    let mut saved = false;
    let mut ensure_save = || -> Result<(), JournalError> {
        if !saved {
            std::fs::create_dir(&save).map_err(|e| io("create", &save, e))?;
            sync_dir(dir)?;
            saved = true;
        }
        Ok(())
    };
    let name_in_save = |p: &Path| save.join(p.file_name().unwrap_or_default());
    let mut dropped = Vec::new();
    let mut partial = broken.partial;
    if let Some(seg) = partial.as_mut() {
        let bytes = std::fs::read(&seg.path).map_err(|e| io("read", &seg.path, e))?;
        let data_end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
        if data_end as u64 > seg.len {
            ensure_save()?;
            let copy = name_in_save(&seg.path);
            std::fs::write(&copy, &bytes).map_err(|e| io("write", &copy, e))?;
            sync_file(&copy)?;
            let file = OpenOptions::new()
                .write(true)
                .open(&seg.path)
                .map_err(|e| io("open", &seg.path, e))?;
            file.set_len(seg.len).map_err(|e| io("truncate", &seg.path, e))?;
            file.sync_all().map_err(|e| io("fsync", &seg.path, e))?;
            seg.file_len = seg.len;
            let (records, seqs) = valid_records(&bytes, seg.len as usize, max_payload);
            dropped.push(DroppedFile {
                path: seg.path.clone(),
                saved_as: copy,
                from_byte: seg.len,
                records,
                seqs,
            });
        }
    }
    for (_, path) in listed.iter().skip(broken.drop_from) {
        let bytes = std::fs::read(path).map_err(|e| io("read", path, e))?;
        ensure_save()?;
        let to = name_in_save(path);
        std::fs::rename(path, &to).map_err(|e| io("move", path, e))?;
        let (records, seqs) = valid_records(&bytes, HEADER_LEN, max_payload);
        dropped.push(DroppedFile {
            path: path.clone(),
            saved_as: to,
            from_byte: 0,
            records,
            seqs,
        });
    }
    if saved {
        sync_dir(&save)?;
        sync_dir(dir)?;
    }
    let report = ChainCut {
        reason: broken.error.to_string(),
        kept_last_seq,
        dropped_records: dropped.iter().map(|d| d.records).sum(),
        dropped,
        saved_to: saved.then_some(save),
    };
    Ok((partial, report))
}

/// Count and seq range of the valid records in `bytes[from..]`, found at any offset (past damage,
/// the scan moves on byte by byte until the next record that verifies).
fn valid_records(bytes: &[u8], from: usize, max_payload: usize) -> (u64, Option<(u64, u64)>) {
    let (mut n, mut range) = (0u64, None::<(u64, u64)>);
    let mut at = from;
    while at < bytes.len() {
        match format::parse_record(&bytes[at..], max_payload) {
            Some(r) => {
                n += 1;
                range = Some(range.map_or((r.seq, r.seq), |(a, b)| (a.min(r.seq), b.max(r.seq))));
                at += r.len;
            }
            None => at += 1,
        }
    }
    (n, range)
}

fn sync_file(path: &Path) -> Result<(), JournalError> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| JournalError::io(format!("fsync {}", path.display()), &e))
}
