//! Recovery on open: verify the segment chain and every segment, cut a torn tail, refuse real
//! corruption and lost segments.
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
//! A bad record in any segment but the last (or in one the manifest lists as sealed) is always
//! corruption. A last segment shorter than (or exactly) one header whose header does not verify, and
//! that the manifest does not list, is a torn segment creation and is removed.
//!
//! **The chain** (`manifest.rs`). Segments must be contiguous: each starts at the seq after the
//! previous one's last record, the first at the journal's base (the manifest's first seq; seq 1 when
//! there is no manifest yet). With a manifest, each segment it lists must be there, and each one it
//! lists as sealed must end exactly where the next starts; segments past its live one (a rotation
//! whose manifest a crash cut off) must continue the chain. A missing segment, a short or overlong
//! sealed segment, a seq gap, a foreign epoch or a bad record in synced data stops the open with an
//! error naming the file and the seqs, and nothing is changed; with
//! `JournalOptions::truncate_to_consistent` the journal is cut back to the last consistent seq
//! instead (see `cut.rs`). Torn-tail cuts are only done once the whole chain checked out.

use super::cut::{self, ChainCut, CutOptions};
use super::error::JournalError;
use super::format::{self, HeaderFault, SegmentHeader, HEADER_LEN};
use super::manifest::Manifest;
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
    /// The journal was cut back to its last consistent seq (`JournalOptions::truncate_to_consistent`
    /// and a broken chain): what was dropped. `None` normally.
    pub cut: Option<ChainCut>,
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

    /// The cut's line (see [`ChainCut::log_line`]) when the journal was cut back to its last
    /// consistent seq, else `None`.
    pub fn cut_line(&self) -> Option<String> {
        self.cut.as_ref().map(ChainCut::log_line)
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

/// A break in the chain: the error to refuse with, and what a cut back to the last consistent seq
/// keeps (see `cut.rs`).
pub(crate) struct Break {
    pub error: JournalError,
    /// Index (in the listing) of the first segment dropped whole.
    pub drop_from: usize,
    /// The segment kept up to the break (its records before `len`), if the break is inside one.
    pub partial: Option<SegmentInfo>,
}

/// What the scan found, before anything is changed on disk.
struct Scan {
    epoch: Option<u64>,
    segments: Vec<SegmentInfo>,
    records: u64,
    /// Last seq of the kept chain (the base - 1 when it holds no record).
    last_seq: u64,
    torn: Option<Torn>,
    broken: Option<Break>,
}

/// A crash artefact of the last segment, removed once the chain checked out.
enum Torn {
    /// A segment whose creation was cut short (no whole header): removed.
    Creation { path: PathBuf, len: u64 },
    /// Bytes after the last good record of the last segment: cut at `pos` (`data_end`: end of the
    /// non-zero bytes).
    Tail { pos: u64, data_end: u64 },
}

/// Scans every segment in `dir` (which must exist) against `manifest` (the chain it records, if
/// any). A broken chain is an error, unless `cut` is given: then the journal is cut back to the
/// last consistent seq and the report says what was dropped. A torn tail is cut in place.
pub(crate) fn recover(
    dir: &Path,
    max_payload: usize,
    manifest: Option<&Manifest>,
    cut: Option<&CutOptions>,
) -> Result<Recovered, JournalError> {
    let mut report = RecoveryReport::default();
    let last_spare = settle_spares(dir, max_payload, &mut report)?;
    let listed = format::list_segments(dir).map_err(|e| JournalError::io(format!("list {}", dir.display()), &e))?;
    let mut scan = scan(dir, &listed, manifest, max_payload)?;
    if let Some(broken) = scan.broken.take() {
        let Some(cut) = cut else { return Err(broken.error) };
        let (partial, done) = cut::cut(dir, &listed, broken, scan.last_seq, cut, max_payload)?;
        scan.segments.extend(partial);
        if scan.segments.is_empty() {
            // Nothing kept: a new journal (new epoch) starts at the base.
            scan.epoch = None;
        }
        report.cut = Some(done);
    } else {
        match scan.torn.take() {
            Some(Torn::Creation { path, len }) => {
                std::fs::remove_file(&path).map_err(|e| JournalError::io(format!("remove {}", path.display()), &e))?;
                sync_dir(dir)?;
                report.bytes_dropped += len;
                report.truncated_at = Some((path, 0));
            }
            Some(Torn::Tail { pos, data_end }) => {
                let last = scan.segments.last_mut().expect("a torn tail belongs to a kept segment");
                let file = OpenOptions::new()
                    .write(true)
                    .open(&last.path)
                    .map_err(|e| JournalError::io(format!("open {}", last.path.display()), &e))?;
                file.set_len(pos)
                    .map_err(|e| JournalError::io(format!("truncate {}", last.path.display()), &e))?;
                file.sync_all()
                    .map_err(|e| JournalError::io(format!("fsync {}", last.path.display()), &e))?;
                report.bytes_dropped += data_end - pos;
                report.truncated_at = Some((last.path.clone(), pos));
                last.file_len = pos;
            }
            None => {}
        }
    }
    report.segments = scan.segments.len();
    report.records = scan.records;
    report.last_seq = scan.last_seq;
    report.first_seq = if scan.records == 0 {
        0
    } else {
        scan.segments.first().map_or(0, |s| s.first_seq)
    };
    Ok(Recovered {
        epoch: scan.epoch,
        segments: scan.segments,
        report,
        last_spare,
    })
}

/// Checks the chain and every segment of `listed` (sorted by first seq); changes nothing. Errors
/// only for what no cut can fix (I/O, a format version this build cannot read).
fn scan(
    dir: &Path,
    listed: &[(u64, PathBuf)],
    manifest: Option<&Manifest>,
    max_payload: usize,
) -> Result<Scan, JournalError> {
    let firsts = manifest.map_or(&[][..], |m| &m.firsts[..]);
    let mut scan = Scan {
        epoch: manifest.map(|m| m.epoch),
        segments: Vec::with_capacity(listed.len()),
        records: 0,
        last_seq: firsts.first().copied().unwrap_or(1) - 1,
        torn: None,
        broken: None,
    };
    for (i, (name_seq, path)) in listed.iter().enumerate() {
        let path = path.clone();
        let name_seq = *name_seq;
        let expect = scan.last_seq + 1;
        let is_last = i + 1 == listed.len();
        // The manifest lists it: it was durable once (the manifest never runs ahead of the disk).
        let listed_in_manifest = i < firsts.len();
        // Rotated away from: fsynced whole before the next segment was started.
        let sealed = !is_last || i + 1 < firsts.len();
        let drop_here = |error| Break {
            error,
            drop_from: i,
            partial: None,
        };
        if name_seq != expect {
            let error = if name_seq > expect && (listed_in_manifest || i == 0) {
                missing(dir, firsts, i, expect, Some(&path), manifest.is_some())
            } else {
                JournalError::SequenceGap {
                    path,
                    expected: expect,
                    found: name_seq,
                }
            };
            scan.broken = Some(drop_here(error));
            break;
        }
        let bytes = std::fs::read(&path).map_err(|e| JournalError::io(format!("read {}", path.display()), &e))?;
        let header = match SegmentHeader::decode(&bytes) {
            Ok(h) => h,
            Err(HeaderFault::Version(version)) => return Err(JournalError::UnsupportedVersion { path, version }),
            Err(_) if is_last && !listed_in_manifest && bytes.len() <= HEADER_LEN => {
                scan.torn = Some(Torn::Creation {
                    path,
                    len: bytes.len() as u64,
                });
                break;
            }
            Err(fault) => {
                scan.broken = Some(drop_here(JournalError::Corrupt {
                    path,
                    offset: 0,
                    after_seq: scan.last_seq,
                    reason: format!("segment header unreadable ({fault:?})"),
                }));
                break;
            }
        };
        match scan.epoch {
            Some(e) if e != header.epoch => {
                scan.broken = Some(drop_here(JournalError::EpochMismatch {
                    path,
                    expected: e,
                    found: header.epoch,
                }));
                break;
            }
            _ => scan.epoch = Some(header.epoch),
        }
        if header.first_seq != name_seq {
            scan.broken = Some(drop_here(JournalError::SequenceGap {
                path,
                expected: name_seq,
                found: header.first_seq,
            }));
            break;
        }
        let mut pos = HEADER_LEN;
        let mut next = header.first_seq;
        let mut fault = None;
        while pos < bytes.len() {
            match format::parse_record(&bytes[pos..], max_payload) {
                Some(r) if r.seq == next => {
                    pos += r.len;
                    next += 1;
                }
                Some(r) => {
                    fault = Some(JournalError::SequenceGap {
                        path: path.clone(),
                        expected: next,
                        found: r.seq,
                    });
                    break;
                }
                None => break,
            }
        }
        // Zero-filled preallocated space after the last record is free space, not damage.
        let data_end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1).max(pos);
        if fault.is_none() && pos < data_end {
            let corrupt = |reason: String| JournalError::Corrupt {
                path: path.clone(),
                offset: pos as u64,
                after_seq: next - 1,
                reason,
            };
            if sealed {
                fault = Some(corrupt("bad record in a sealed segment".into()));
            } else if let Some((at, group)) = later_group_record(&bytes, pos + 1, data_end, next, max_payload) {
                fault = Some(corrupt(format!(
                    "valid record of a later commit group (group {group}) at byte {at}: damage to synced data"
                )));
            } else {
                scan.torn = Some(Torn::Tail {
                    pos: pos as u64,
                    data_end: data_end as u64,
                });
            }
        }
        if let (None, Some(&next_first)) = (&fault, firsts.get(i + 1)) {
            if next != next_first {
                fault = Some(JournalError::SegmentMismatch {
                    path: path.clone(),
                    first_seq: header.first_seq,
                    expected_last: next_first - 1,
                    found_last: next - 1,
                });
            }
        }
        let info = SegmentInfo {
            first_seq: header.first_seq,
            path,
            len: pos as u64,
            file_len: bytes.len() as u64,
        };
        scan.records += next - header.first_seq;
        scan.last_seq = next - 1;
        if let Some(error) = fault {
            // Its records before the break stay counted: a cut keeps them.
            scan.broken = Some(Break {
                error,
                drop_from: i + 1,
                partial: Some(info),
            });
            break;
        }
        scan.segments.push(info);
    }
    if scan.broken.is_none() && listed.len() < firsts.len() {
        let expect = scan.last_seq + 1;
        scan.broken = Some(Break {
            error: missing(dir, firsts, listed.len(), expect, None, true),
            drop_from: listed.len(),
            partial: None,
        });
    }
    Ok(scan)
}

/// The error for a segment the chain needs at listing position `i` (first seq `expect`) that is not
/// there; `found` is the next segment present, if any.
fn missing(
    dir: &Path,
    firsts: &[u64],
    i: usize,
    expect: u64,
    found: Option<&Path>,
    has_manifest: bool,
) -> JournalError {
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
    };
    let next = match found {
        Some(p) => format!("the next segment present is {}", name(p)),
        None if expect == 1 => "no segment is present".to_string(),
        None => format!("the segments present end at seq {}", expect - 1),
    };
    let last_seq = firsts.get(i + 1).map(|n| n - 1);
    let detail = match (has_manifest && i < firsts.len(), last_seq) {
        (true, Some(last)) => format!("the manifest lists it as sealed with seqs {expect}..={last}; {next}"),
        (true, None) => format!("the manifest lists it as the live segment, from seq {expect}; {next}"),
        (false, _) => format!("the journal starts at seq {expect} (no manifest yet); {next}"),
    };
    JournalError::MissingSegment {
        path: dir.join(format::segment_name(expect)),
        first_seq: expect,
        last_seq,
        detail,
    }
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
