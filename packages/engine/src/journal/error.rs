//! `JournalError`: every way opening, appending to or replaying the journal can fail.

use std::path::PathBuf;
use thiserror::Error;

/// A journal failure. Cloneable so one writer failure can be delivered to every pending append.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum JournalError {
    /// An I/O call failed (`context` names the operation and the file).
    #[error("journal: {context}: {message}")]
    Io {
        /// Operation and path, e.g. `fdatasync /data/journal-…twj`.
        context: String,
        /// The OS error kind.
        kind: std::io::ErrorKind,
        /// The OS error text.
        message: String,
    },
    /// Damage that is not a torn tail: a bad record in a sealed segment, or in the last segment
    /// followed by valid records of a later commit group (data that had been synced).
    #[error("journal: corrupt record in {} at byte {offset} (after seq {after_seq}): {reason}", path.display())]
    Corrupt {
        /// The segment file.
        path: PathBuf,
        /// Byte offset of the first bad record.
        offset: u64,
        /// Last good seq before it (0 = none).
        after_seq: u64,
        /// What is wrong.
        reason: String,
    },
    /// A valid record whose seq does not follow the previous one.
    #[error("journal: sequence gap in {}: expected seq {expected}, found {found}", path.display())]
    SequenceGap {
        /// The segment file.
        path: PathBuf,
        /// The seq that should have come next.
        expected: u64,
        /// The seq found.
        found: u64,
    },
    /// Segments from two different journals in one directory.
    #[error("journal: {} has epoch {found}, the journal's epoch is {expected}", path.display())]
    EpochMismatch {
        /// The segment file.
        path: PathBuf,
        /// Epoch of the first segment.
        expected: u64,
        /// Epoch of this one.
        found: u64,
    },
    /// A segment written by a format version this build cannot read.
    #[error("journal: {} has format version {version}, this build reads version {}", path.display(), super::format::FORMAT_VERSION)]
    UnsupportedVersion {
        /// The segment file.
        path: PathBuf,
        /// Version found in its header.
        version: u16,
    },
    /// Another open journal (another process, or another `Journal::open` in this one) holds the
    /// directory's lock file: one owner per journal directory.
    #[error("journal: directory {} is in use by {holder}; one server per journal directory", dir.display())]
    Locked {
        /// The journal directory.
        dir: PathBuf,
        /// Who holds it, from what the holder wrote into the lock file, e.g.
        /// `pid 1234 (host db1, started 2026-05-01T09:30:00.250Z)`.
        holder: String,
        /// The holder's pid, when it wrote one.
        pid: Option<u32>,
    },
    /// A segment the chain needs is not in the directory: the manifest lists it, or the segments
    /// around it leave its seqs uncovered.
    #[error("journal: segment {} is missing: {detail}", path.display())]
    MissingSegment {
        /// The file that should be there (`journal-<first seq>.twj`).
        path: PathBuf,
        /// First seq it should hold.
        first_seq: u64,
        /// Last seq it should hold (`None`: the live segment, open-ended).
        last_seq: Option<u64>,
        /// What the manifest says and what was found instead.
        detail: String,
    },
    /// A sealed segment whose records do not end where the next segment starts (per the manifest):
    /// records were cut off (a short file) or it holds seqs the chain does not expect.
    #[error("journal: sealed segment {} ends at seq {found_last}, the manifest says it holds seqs {first_seq}..={expected_last} ({})", path.display(), mismatch_note(*expected_last, *found_last))]
    SegmentMismatch {
        /// The segment file.
        path: PathBuf,
        /// Its first seq.
        first_seq: u64,
        /// Last seq the manifest says it holds.
        expected_last: u64,
        /// Last seq found in it.
        found_last: u64,
    },
    /// The manifest file cannot be read as one (damaged, or written by another format).
    #[error("journal: manifest {} is unreadable: {reason}", path.display())]
    BadManifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An append body longer than `JournalOptions::max_record_bytes`.
    #[error("journal: record of {len} bytes exceeds max_record_bytes {limit}")]
    RecordTooLarge {
        /// Body length in bytes.
        len: usize,
        /// The configured limit.
        limit: u32,
    },
    /// `try_append` found the bounded queue full (backpressure).
    #[error("journal: append queue full ({capacity} pending)")]
    QueueFull {
        /// The configured queue capacity.
        capacity: usize,
    },
    /// The journal was closed.
    #[error("journal: closed")]
    Closed,
    /// The writer hit an I/O error earlier; nothing after it is durable and no append is accepted.
    #[error("journal: writer failed: {message}")]
    Failed {
        /// The original error.
        message: String,
    },
    /// A `JournalOptions` value breaks its rule.
    #[error("journal: option {name}: {message}")]
    InvalidOption {
        /// Option name.
        name: &'static str,
        /// The rule broken.
        message: String,
    },
}

impl JournalError {
    /// Wraps an `io::Error` with the operation and path it came from.
    pub fn io(context: impl Into<String>, err: &std::io::Error) -> JournalError {
        JournalError::Io {
            context: context.into(),
            kind: err.kind(),
            message: err.to_string(),
        }
    }
}

/// `"1000 records short"` / `"3 records past its end"`.
fn mismatch_note(expected_last: u64, found_last: u64) -> String {
    if found_last < expected_last {
        format!("{} records short", expected_last - found_last)
    } else {
        format!("{} records past its end", found_last - expected_last)
    }
}
