//! Replay: iterate durable entries from a seq, reading the segment files.

use super::error::JournalError;
use super::format::{self, SegmentHeader, HEADER_LEN};
use std::path::{Path, PathBuf};

/// Listings tried when the segment holding the next seq is not in the last one.
const RELISTS: usize = 3;

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its seq (gap-free from the journal's first seq).
    pub seq: u64,
    /// The bytes given to `append`.
    pub body: Vec<u8>,
}

/// Iterator over entries `from..=until` (until = the durable seq when the replay was made). Reads one
/// segment at a time. Yields an error (then stops) if a file changed under it or cannot be read.
pub struct Replay {
    dir: PathBuf,
    segments: std::vec::IntoIter<(u64, PathBuf)>,
    current: Option<(PathBuf, Vec<u8>, usize)>,
    next: u64,
    until: u64,
    max_payload: usize,
    done: bool,
}

impl Replay {
    pub(crate) fn new(dir: &Path, from: u64, until: u64, max_payload: usize) -> Result<Replay, JournalError> {
        let listed = format::list_segments(dir).map_err(|e| JournalError::io(format!("list {}", dir.display()), &e))?;
        // Skip segments that end before `from`: a segment ends where the next one starts.
        let from = from.max(1);
        let start = listed.iter().rposition(|(first, _)| *first <= from).unwrap_or(0);
        let segments: Vec<_> = listed.into_iter().skip(start).collect();
        Ok(Replay {
            dir: dir.to_path_buf(),
            segments: segments.into_iter(),
            current: None,
            next: from,
            until,
            max_payload,
            done: false,
        })
    }

    /// The segment to read after the current one: it starts at `self.next` (or, for the first
    /// segment, before it). The listing made at `new` can miss a segment whose spare was renamed to
    /// its segment name during the listing (a directory read does not promise to return an entry
    /// renamed while it runs), so when the listed one does not start at `self.next` the directory
    /// is listed again. None only when no segment holds `self.next`.
    fn next_segment(&mut self) -> Result<Option<(u64, PathBuf)>, JournalError> {
        let listed = self.segments.next();
        if matches!(&listed, Some((first, _)) if *first <= self.next) {
            return Ok(listed);
        }
        for _ in 0..RELISTS {
            let again = format::list_segments(&self.dir)
                .map_err(|e| JournalError::io(format!("list {}", self.dir.display()), &e))?;
            let rest: Vec<_> = again.into_iter().filter(|(first, _)| *first >= self.next).collect();
            if rest.first().is_some_and(|(first, _)| *first == self.next) {
                self.segments = rest.into_iter();
                return Ok(self.segments.next());
            }
        }
        Ok(listed)
    }

    fn fail(&mut self, err: JournalError) -> Option<Result<Entry, JournalError>> {
        self.done = true;
        Some(Err(err))
    }
}

impl Iterator for Replay {
    type Item = Result<Entry, JournalError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done || self.next > self.until {
                return None;
            }
            if self.current.is_none() {
                let (first, mut path) = match self.next_segment() {
                    Ok(Some(s)) => s,
                    Ok(None) => {
                        // Entries up to `until` were durable when the replay was made: one missing
                        // is an error, never a silent end.
                        let reason = format!("no segment holds seq {} (replay up to {})", self.next, self.until);
                        return self.fail(JournalError::Corrupt {
                            path: self.dir.clone(),
                            offset: 0,
                            after_seq: self.next - 1,
                            reason,
                        });
                    }
                    Err(e) => return self.fail(e),
                };
                let mut read = std::fs::read(&path);
                if matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
                    // A spare in use renamed to its segment name since the listing.
                    if let Some(dir) = path.parent() {
                        path = dir.join(format::segment_name(first));
                        read = std::fs::read(&path);
                    }
                }
                let bytes = match read {
                    Ok(b) => b,
                    Err(e) => return self.fail(JournalError::io(format!("read {}", path.display()), &e)),
                };
                if SegmentHeader::decode(&bytes).is_err() {
                    let reason = "segment header unreadable during replay".into();
                    return self.fail(JournalError::Corrupt {
                        path,
                        offset: 0,
                        after_seq: self.next - 1,
                        reason,
                    });
                }
                self.current = Some((path, bytes, HEADER_LEN));
            }
            let (path, bytes, pos) = self.current.as_mut().expect("set above");
            if *pos >= bytes.len() {
                self.current = None;
                continue;
            }
            let Some(r) = format::parse_record(&bytes[*pos..], self.max_payload) else {
                if bytes[*pos..].iter().all(|b| *b == 0) {
                    // Preallocated free space: end of this segment's records.
                    self.current = None;
                    continue;
                }
                let (path, offset) = (path.clone(), *pos as u64);
                let reason = "bad record during replay".into();
                return self.fail(JournalError::Corrupt {
                    path,
                    offset,
                    after_seq: self.next - 1,
                    reason,
                });
            };
            *pos += r.len;
            if r.seq < self.next {
                continue;
            }
            if r.seq != self.next {
                let (path, expected, found) = (path.clone(), self.next, r.seq);
                return self.fail(JournalError::SequenceGap { path, expected, found });
            }
            self.next += 1;
            return Some(Ok(Entry {
                seq: r.seq,
                body: r.body.to_vec(),
            }));
        }
    }
}
