//! Recovery on open: verify every segment, cut a torn tail, refuse real corruption.
//!
//! **Torn tail vs corruption.** Every record carries `group`, the seq of the first record of the commit
//! group (one write + one fdatasync) it was written in, and the writer starts a group only after the
//! previous group's fdatasync returned (and fsyncs a segment before rotating away from it). So a crash
//! can only damage the *final* group of the *last* segment. When the scan meets a bad record (short,
//! length out of range, CRC mismatch) expected to hold seq `s`, it searches every later byte offset of
//! the segment for a valid record:
//! - a valid record with `group > s` exists → the bad record belongs to an earlier group, which had
//!   been synced (and possibly acknowledged) → [`JournalError::Corrupt`], nothing is truncated;
//! - otherwise (nothing valid, or only records of the same group) → torn tail: the file is truncated
//!   at the last good record and fsynced, and the report says how many bytes were dropped.
//!
//! Bytes after the last record that are all zero are preallocated free space (see `writer.rs`); the
//! damage checks apply to the span up to the last non-zero byte, and `bytes_dropped` counts that span.
//! A bad record in any segment but the last is always corruption. A last segment shorter than (or
//! exactly) one header whose header does not verify is a torn segment creation and is removed.

use super::error::JournalError;
use super::format::{self, HeaderFault, SegmentHeader, HEADER_LEN};
use super::spare;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// What recovery found and did; `log_line()` gives the line for the caller to log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// The journal did not exist (no segments) and was created.
    pub created: bool,
    /// Segments kept.
    pub segments: usize,
    /// Valid records found.
    pub records: u64,
    /// First seq held (0 = empty).
    pub first_seq: u64,
    /// Last seq held (0 = empty); the next append gets `last_seq + 1`.
    pub last_seq: u64,
    /// Bytes cut off as a torn tail (0 = clean).
    pub bytes_dropped: u64,
    /// Segment and byte offset where the tail was cut, if it was.
    pub truncated_at: Option<(PathBuf, u64)>,
}

impl RecoveryReport {
    /// `Some("journal: dropped 37 bytes of torn tail after seq 1042")` when a tail was cut, else `None`.
    pub fn log_line(&self) -> Option<String> {
        (self.bytes_dropped > 0).then(|| {
            format!(
                "journal: dropped {} bytes of torn tail after seq {}",
                self.bytes_dropped, self.last_seq
            )
        })
    }
}

/// A verified segment.
#[derive(Debug, Clone)]
pub(crate) struct SegmentInfo {
    pub first_seq: u64,
    pub path: PathBuf,
    /// End of the last record (write position).
    pub len: u64,
    /// File length after any truncation (> `len` when zero-filled space is preallocated).
    pub file_len: u64,
}

/// Result of scanning a directory.
pub(crate) struct Recovered {
    pub epoch: Option<u64>,
    pub segments: Vec<SegmentInfo>,
    pub report: RecoveryReport,
    /// Highest spare number seen in the directory (0 = none): new spares are numbered past it.
    pub last_spare: u64,
}

/// Settles the spare files of `dir` (see the module doc); returns the highest spare number seen.
fn settle_spares(dir: &Path, max_payload: usize, report: &mut RecoveryReport) -> Result<u64, JournalError> {
    let io = |what: &str, path: &Path, e: std::io::Error| JournalError::io(format!("{what} {}", path.display()), &e);
    let mut last = 0;
    let mut changed = false;
    let entries = std::fs::read_dir(dir).map_err(|e| io("list", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io("list", dir, e))?;
        let Some(n) = entry.file_name().to_str().and_then(spare::parse_spare_name) else {
            continue;
        };
        last = last.max(n);
        let path = entry.path();
        let header = spare::read_header(&path).map_err(|e| io("read", &path, e))?;
        let decoded = match header {
            Some(h) if h.iter().any(|b| *b != 0) => SegmentHeader::decode(&h),
            // Unused (or a fill cut short): free space only.
            _ => {
                std::fs::remove_file(&path).map_err(|e| io("remove", &path, e))?;
                changed = true;
                continue;
            }
        };
        match decoded {
            Ok(h) => {
                let to = dir.join(format::segment_name(h.first_seq));
                if to.exists() {
                    return Err(JournalError::Corrupt {
                        path,
                        offset: 0,
                        after_seq: h.first_seq.saturating_sub(1),
                        reason: format!("spare and {} both start at seq {}", to.display(), h.first_seq),
                    });
                }
                std::fs::rename(&path, &to).map_err(|e| io("rename", &path, e))?;
                changed = true;
            }
            Err(HeaderFault::Version(version)) => return Err(JournalError::UnsupportedVersion { path, version }),
            Err(_) => {
                let bytes = std::fs::read(&path).map_err(|e| io("read", &path, e))?;
                if format::parse_record(&bytes[HEADER_LEN..], max_payload).is_some() {
                    return Err(JournalError::Corrupt {
                        path,
                        offset: 0,
                        after_seq: 0,
                        reason: "spare segment header damaged in front of a valid record".into(),
                    });
                }
                std::fs::remove_file(&path).map_err(|e| io("remove", &path, e))?;
                changed = true;
                report.bytes_dropped += bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1) as u64;
                report.truncated_at = Some((path, 0));
            }
        }
    }
    if changed {
        sync_dir(dir)?;
    }
    Ok(last)
}

/// Scans every segment in `dir` (which must exist), truncating a torn tail in place.
pub(crate) fn recover(dir: &Path, max_payload: usize) -> Result<Recovered, JournalError> {
    let mut report = RecoveryReport::default();
    let last_spare = settle_spares(dir, max_payload, &mut report)?;
    let listed = format::list_segments(dir).map_err(|e| JournalError::io(format!("list {}", dir.display()), &e))?;
    let mut epoch: Option<u64> = None;
    let mut segments = Vec::with_capacity(listed.len());
    let count = listed.len();
    for (i, (name_seq, path)) in listed.into_iter().enumerate() {
        let is_last = i + 1 == count;
        let bytes = std::fs::read(&path).map_err(|e| JournalError::io(format!("read {}", path.display()), &e))?;
        let header = match SegmentHeader::decode(&bytes) {
            Ok(h) => h,
            Err(HeaderFault::Version(version)) => return Err(JournalError::UnsupportedVersion { path, version }),
            Err(_) if is_last && bytes.len() <= HEADER_LEN => {
                std::fs::remove_file(&path).map_err(|e| JournalError::io(format!("remove {}", path.display()), &e))?;
                sync_dir(dir)?;
                report.bytes_dropped += bytes.len() as u64;
                report.truncated_at = Some((path, 0));
                continue;
            }
            Err(fault) => {
                return Err(JournalError::Corrupt {
                    path,
                    offset: 0,
                    after_seq: report.last_seq,
                    reason: format!("segment header unreadable ({fault:?})"),
                })
            }
        };
        match epoch {
            None => epoch = Some(header.epoch),
            Some(e) if e != header.epoch => {
                return Err(JournalError::EpochMismatch {
                    path,
                    expected: e,
                    found: header.epoch,
                })
            }
            Some(_) => {}
        }
        let expected_first = if report.last_seq == 0 {
            header.first_seq
        } else {
            report.last_seq + 1
        };
        if header.first_seq != name_seq || header.first_seq != expected_first || header.first_seq == 0 {
            return Err(JournalError::SequenceGap {
                path,
                expected: expected_first,
                found: header.first_seq,
            });
        }
        if report.first_seq == 0 {
            report.first_seq = header.first_seq;
        }
        let mut pos = HEADER_LEN;
        let mut next = header.first_seq;
        while pos < bytes.len() {
            match format::parse_record(&bytes[pos..], max_payload) {
                Some(r) if r.seq == next => {
                    pos += r.len;
                    next += 1;
                    report.records += 1;
                }
                Some(r) => {
                    return Err(JournalError::SequenceGap {
                        path,
                        expected: next,
                        found: r.seq,
                    })
                }
                None => break,
            }
        }
        report.last_seq = next - 1;
        // Zero-filled preallocated space after the last record is free space, not damage.
        let data_end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1).max(pos);
        let mut file_len = bytes.len() as u64;
        if pos < data_end {
            let corrupt = |reason: String| JournalError::Corrupt {
                path: path.clone(),
                offset: pos as u64,
                after_seq: next - 1,
                reason,
            };
            if !is_last {
                return Err(corrupt("bad record in a sealed segment".into()));
            }
            if let Some((at, group)) = later_group_record(&bytes, pos + 1, data_end, next, max_payload) {
                return Err(corrupt(format!(
                    "valid record of a later commit group (group {group}) at byte {at}: damage to synced data"
                )));
            }
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| JournalError::io(format!("open {}", path.display()), &e))?;
            file.set_len(pos as u64)
                .map_err(|e| JournalError::io(format!("truncate {}", path.display()), &e))?;
            file.sync_all()
                .map_err(|e| JournalError::io(format!("fsync {}", path.display()), &e))?;
            report.bytes_dropped += (data_end - pos) as u64;
            report.truncated_at = Some((path.clone(), pos as u64));
            file_len = pos as u64;
        }
        segments.push(SegmentInfo {
            first_seq: header.first_seq,
            path,
            len: pos as u64,
            file_len,
        });
    }
    report.segments = segments.len();
    if report.records == 0 {
        report.first_seq = 0;
        report.last_seq = segments.first().map_or(0, |s| s.first_seq.saturating_sub(1));
    }
    Ok(Recovered {
        epoch,
        segments,
        report,
        last_spare,
    })
}

/// First offset in `from..until` holding a valid record of a commit group later than `seq` (records
/// cannot start at or past `until`, the end of the non-zero bytes: an all-zero frame is invalid).
fn later_group_record(bytes: &[u8], from: usize, until: usize, seq: u64, max_payload: usize) -> Option<(usize, u64)> {
    (from..until).find_map(|at| {
        format::parse_record(&bytes[at..], max_payload)
            .filter(|r| r.group > seq && r.seq >= r.group)
            .map(|r| (at, r.group))
    })
}

/// fsyncs a directory so created/removed entries are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| JournalError::io(format!("fsync dir {}", dir.display()), &e))
}
