//! On-disk format of journal segments.
//!
//! A segment file `journal-<first seq, 20 digits>.twj` is a 32-byte header followed by records, then
//! possibly zeros (free space of a segment started in a zero-filled spare, see `spare.rs`; a spare in
//! use whose rename is pending is `spare-<n, 20 digits>.twj` with the same content).
//!
//! Header (little endian): magic `TWJ\0` (4) | format version u16 (= [`FORMAT_VERSION`]) |
//! reserved u16 (0) | epoch u64 | first seq u64 | reserved u32 (0) | CRC32 of the 28 bytes before it (u32).
//!
//! Record: payload length u32 | CRC32 (IEEE, `crc32fast`) of the payload u32 | payload, where
//! payload = seq u64 | group u64 | body. `group` is the seq of the first record of the commit group
//! (one write + one fdatasync) the record was written in; recovery uses it to tell a torn final group
//! from corruption of data that was already synced (see `recover.rs`).

use std::path::{Path, PathBuf};

/// Segment file magic.
pub const MAGIC: [u8; 4] = *b"TWJ\0";
/// Current format version written in every segment header.
pub const FORMAT_VERSION: u16 = 1;
/// Size of a segment header in bytes.
pub const HEADER_LEN: usize = 32;
/// Size of the record frame (length + CRC) in bytes.
pub const FRAME_LEN: usize = 8;
/// Fixed part of a record payload (seq + group) in bytes.
pub const PAYLOAD_FIXED: usize = 16;

/// A decoded segment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// Journal epoch (new per journal creation).
    pub epoch: u64,
    /// Seq of the first record this segment holds (or will hold).
    pub first_seq: u64,
}

/// Why a header could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFault {
    /// Fewer than [`HEADER_LEN`] bytes.
    Short,
    /// Magic or CRC mismatch.
    Corrupt,
    /// Magic and CRC fine but a version this build cannot read.
    Version(u16),
}

impl SegmentHeader {
    /// Encodes the header into its 32 bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4..6].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[8..16].copy_from_slice(&self.epoch.to_le_bytes());
        b[16..24].copy_from_slice(&self.first_seq.to_le_bytes());
        let crc = crc32fast::hash(&b[0..28]);
        b[28..32].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a header from the start of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<SegmentHeader, HeaderFault> {
        if bytes.len() < HEADER_LEN {
            return Err(HeaderFault::Short);
        }
        let crc = u32::from_le_bytes(bytes[28..32].try_into().expect("4 bytes"));
        if bytes[0..4] != MAGIC || crc32fast::hash(&bytes[0..28]) != crc {
            return Err(HeaderFault::Corrupt);
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != FORMAT_VERSION {
            return Err(HeaderFault::Version(version));
        }
        Ok(SegmentHeader {
            epoch: le_u64(&bytes[8..16]),
            first_seq: le_u64(&bytes[16..24]),
        })
    }
}

/// Appends one framed record (length, CRC, seq, group, body) to `out`.
pub fn encode_record(out: &mut Vec<u8>, seq: u64, group: u64, body: &[u8]) {
    let len = (PAYLOAD_FIXED + body.len()) as u32;
    let start = out.len();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&group.to_le_bytes());
    out.extend_from_slice(body);
    let crc = crc32fast::hash(&out[start + FRAME_LEN..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// A record parsed in place from a segment buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// Sequence number.
    pub seq: u64,
    /// Seq of the first record of its commit group.
    pub group: u64,
    /// The caller's bytes.
    pub body: &'a [u8],
    /// Total bytes the record occupies (frame + payload).
    pub len: usize,
}

/// Parses the record starting at `bytes[0]`; `None` when the bytes there are not a whole record with
/// a matching CRC and a payload length within `max_payload` (too short, torn, or corrupt).
pub fn parse_record(bytes: &[u8], max_payload: usize) -> Option<RawRecord<'_>> {
    if bytes.len() < FRAME_LEN {
        return None;
    }
    let len = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")) as usize;
    if !(PAYLOAD_FIXED..=max_payload).contains(&len) || bytes.len() - FRAME_LEN < len {
        return None;
    }
    let crc = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    let payload = &bytes[FRAME_LEN..FRAME_LEN + len];
    if crc32fast::hash(payload) != crc {
        return None;
    }
    Some(RawRecord {
        seq: le_u64(&payload[0..8]),
        group: le_u64(&payload[8..16]),
        body: &payload[PAYLOAD_FIXED..],
        len: FRAME_LEN + len,
    })
}

/// File name of the segment whose first record is `first_seq`.
pub fn segment_name(first_seq: u64) -> String {
    format!("journal-{first_seq:020}.twj")
}

/// Segment files in `dir`, sorted by first seq: `journal-<first seq>.twj` (seq parsed from the name)
/// and spares (`spare-<n>.twj`) holding a valid header (seq read from it: a segment whose rename to
/// its name has not happened yet, see `spare.rs`). Other files, and spares not in use, are ignored.
pub fn list_segments(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if super::spare::parse_spare_name(name).is_some() {
            // Renamed (or removed) since the listing: the named entry, if any, is listed instead.
            let header = match super::spare::read_header(&entry.path()) {
                Ok(h) => h,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if let Some(Ok(h)) = header.map(|h| SegmentHeader::decode(&h)) {
                out.push((h.first_seq, entry.path()));
            }
            continue;
        }
        let Some(num) = name.strip_prefix("journal-").and_then(|n| n.strip_suffix(".twj")) else {
            continue;
        };
        if num.len() == 20 {
            if let Ok(first) = num.parse::<u64>() {
                out.push((first, entry.path()));
            }
        }
    }
    out.sort_unstable_by_key(|(first, _)| *first);
    out.dedup_by_key(|(first, _)| *first);
    Ok(out)
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_detects_damage() {
        let h = SegmentHeader {
            epoch: 7,
            first_seq: 42,
        };
        let mut b = h.encode();
        assert_eq!(SegmentHeader::decode(&b), Ok(h));
        assert_eq!(SegmentHeader::decode(&b[..31]), Err(HeaderFault::Short));
        b[9] ^= 1;
        assert_eq!(SegmentHeader::decode(&b), Err(HeaderFault::Corrupt));
    }

    #[test]
    fn record_round_trips_and_rejects_flipped_bits() {
        let mut buf = Vec::new();
        encode_record(&mut buf, 5, 3, b"hello");
        let r = parse_record(&buf, 1024).expect("valid");
        assert_eq!((r.seq, r.group, r.body, r.len), (5, 3, &b"hello"[..], buf.len()));
        for i in 0..buf.len() {
            let mut bad = buf.clone();
            bad[i] ^= 0x10;
            assert!(parse_record(&bad, 1024).is_none(), "flip at {i} undetected");
        }
        assert!(parse_record(&buf[..buf.len() - 1], 1024).is_none());
        assert!(parse_record(&buf, 8).is_none(), "payload over the limit");
    }
}
