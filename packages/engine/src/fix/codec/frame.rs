//! Cuts a TCP byte stream into FIX messages.
//!
//! A message starts at `8=FIX`, its second field is BodyLength (9), and exactly BodyLength
//! bytes after that field's SOH comes `10=` and the CheckSum. Anything else is garbled and
//! skipped: bytes before `8=FIX`, a BodyLength that does not land on `10=` (recovery resumes
//! where the CheckSum should have been, so a too-long BodyLength swallows what it covers), or
//! a CheckSum that does not match (the whole frame is dropped).

use super::{parse_u64, SOH};
use std::io::{self, Read};
use std::ops::Range;

/// Why bytes of the stream were dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GarbledReason {
    /// Bytes before the next `8=FIX`.
    NoBeginString,
    /// `8=` is not followed by a BodyLength field (`9=<digits>`).
    BadBodyLength,
    /// BodyLength is larger than the configured maximum message size.
    TooLong,
    /// BodyLength does not end where `10=` starts.
    BodyLengthMismatch,
    /// The CheckSum field is malformed or does not match the bytes.
    BadCheckSum,
}

impl std::fmt::Display for GarbledReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GarbledReason::NoBeginString => "bytes before BeginString",
            GarbledReason::BadBodyLength => "BodyLength (9) missing or not a number",
            GarbledReason::TooLong => "BodyLength above the maximum message size",
            GarbledReason::BodyLengthMismatch => "BodyLength does not end at CheckSum (10)",
            GarbledReason::BadCheckSum => "CheckSum (10) incorrect",
        })
    }
}

/// One result of [`Framer::next_frame`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete message with a correct BodyLength and CheckSum: its byte range in
    /// [`Framer::bytes`].
    Message(Range<usize>),
    /// Dropped bytes (already consumed).
    Garbled(GarbledReason),
}

const BEGIN: &[u8] = b"8=FIX";

/// A receive buffer that yields framed messages. Reuses its buffer (bytes are read straight
/// into it); it grows only up to the largest message plus one read.
#[derive(Debug)]
pub struct Framer {
    /// Allocated and zeroed once; `start..end` holds unframed bytes.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    max_body: usize,
}

impl Framer {
    /// A framer that treats a BodyLength above `max_body` bytes as garbled.
    pub fn new(max_body: usize) -> Framer {
        Framer {
            buf: vec![0; 16 * 1024],
            start: 0,
            end: 0,
            max_body,
        }
    }

    /// Makes room for at least `n` more bytes after `end`.
    fn reserve(&mut self, n: usize) {
        if self.start > 0 && (self.start == self.end || self.buf.len() - self.end < n) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < n {
            let len = (self.end + n).next_power_of_two();
            self.buf.resize(len, 0);
        }
    }

    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.reserve(data.len());
        self.buf[self.end..self.end + data.len()].copy_from_slice(data);
        self.end += data.len();
    }

    /// Reads once from `r` straight into the buffer; returns the bytes read (0 at end of stream).
    pub fn read_from(&mut self, r: &mut impl Read) -> io::Result<usize> {
        self.reserve(4096);
        let n = r.read(&mut self.buf[self.end..])?;
        self.end += n;
        Ok(n)
    }

    /// The buffered bytes; [`Frame::Message`] ranges index into this.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.end]
    }

    /// Bytes received but not yet framed.
    pub fn pending(&self) -> usize {
        self.end - self.start
    }

    /// The next complete message or dropped region; `None` when more bytes are needed.
    pub fn next_frame(&mut self) -> Option<Frame> {
        let data = &self.buf[self.start..self.end];
        let Some(at) = find(data, BEGIN) else {
            // keep a tail that may be the start of a BeginString split across reads
            let keep = (1..BEGIN.len())
                .rev()
                .find(|&k| data.len() >= k && BEGIN.starts_with(&data[data.len() - k..]));
            let drop = data.len() - keep.unwrap_or(0);
            if drop == 0 {
                return None;
            }
            self.start += drop;
            return Some(Frame::Garbled(GarbledReason::NoBeginString));
        };
        if at > 0 {
            self.start += at;
            return Some(Frame::Garbled(GarbledReason::NoBeginString));
        }
        match self.frame_at_start() {
            Ok(Some(end)) => {
                let range = self.start..end;
                self.start = end;
                Some(Frame::Message(range))
            }
            Ok(None) => None,
            Err((reason, resume)) => {
                self.start = resume;
                Some(Frame::Garbled(reason))
            }
        }
    }

    /// Ok(Some(end)) for a complete frame, Ok(None) if incomplete, Err((reason, resume)) if garbled.
    fn frame_at_start(&self) -> Result<Option<usize>, (GarbledReason, usize)> {
        let s = self.start;
        let data = &self.buf[s..self.end];
        let skip = (GarbledReason::BadBodyLength, s + 1);
        // BeginString value: up to 16 bytes
        let Some(soh1) = data.iter().take(24).position(|&b| b == SOH) else {
            return if data.len() >= 24 { Err(skip) } else { Ok(None) };
        };
        let rest = &data[soh1 + 1..];
        if rest.len() < 2 {
            return Ok(None);
        }
        if &rest[..2] != b"9=" {
            return Err(skip);
        }
        let Some(len_end) = rest[2..].iter().take(10).position(|&b| b == SOH) else {
            return if rest.len() >= 12 { Err(skip) } else { Ok(None) };
        };
        let Some(body_len) = parse_u64(&rest[2..2 + len_end]) else {
            return Err(skip);
        };
        let body_len = body_len as usize;
        if body_len > self.max_body {
            return Err((GarbledReason::TooLong, s + 1));
        }
        let body_start = soh1 + 1 + 2 + len_end + 1;
        let cs_at = body_start + body_len;
        if data.len() < cs_at + 3 {
            return Ok(None);
        }
        if &data[cs_at..cs_at + 3] != b"10=" {
            return Err((GarbledReason::BodyLengthMismatch, s + cs_at));
        }
        let Some(cs_len) = data[cs_at + 3..].iter().take(4).position(|&b| b == SOH) else {
            return if data.len() >= cs_at + 7 {
                Err((GarbledReason::BadCheckSum, s + cs_at))
            } else {
                Ok(None)
            };
        };
        let end = cs_at + 3 + cs_len + 1;
        let declared = parse_u64(&data[cs_at + 3..cs_at + 3 + cs_len]);
        let actual = checksum(&data[..cs_at]);
        if cs_len != 3 || declared != Some(u64::from(actual)) {
            return Err((GarbledReason::BadCheckSum, s + end));
        }
        Ok(Some(s + end))
    }
}

/// The FIX CheckSum: the sum of the bytes modulo 256.
pub fn checksum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds `8=..|9=<len>|<body>10=<sum>|` from "|"-separated text.
    fn msg(begin: &str, body: &str) -> Vec<u8> {
        let body = body.replace('|', "\u{1}");
        let mut m = format!("8={begin}\u{1}9={}\u{1}{body}", body.len()).into_bytes();
        let cs = checksum(&m);
        m.extend_from_slice(format!("10={cs:03}\u{1}").as_bytes());
        m
    }

    fn frames(f: &mut Framer) -> Vec<Frame> {
        std::iter::from_fn(|| f.next_frame()).collect()
    }

    #[test]
    fn frames_messages_split_across_reads() {
        let a = msg("FIX.4.2", "35=0|34=2|");
        let b = msg("FIX.4.2", "35=1|34=3|112=X|");
        let stream: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
        for cut in 0..stream.len() {
            let mut f = Framer::new(4096);
            f.push(&stream[..cut]);
            let mut got = frames(&mut f);
            f.push(&stream[cut..]);
            got.extend(frames(&mut f));
            let msgs: Vec<Vec<u8>> = got
                .iter()
                .map(|fr| match fr {
                    Frame::Message(r) => f.bytes()[r.clone()].to_vec(),
                    Frame::Garbled(g) => panic!("garbled {g} at cut {cut}"),
                })
                .collect();
            // ranges from the first batch may have been compacted away; compare counts and the last
            assert_eq!(msgs.len(), 2, "cut {cut}");
            assert_eq!(msgs[1], b);
        }
    }

    #[test]
    fn junk_before_begin_string_is_dropped() {
        let mut f = Framer::new(4096);
        f.push(b"35=0\x01");
        let good = msg("FIX.4.2", "35=0|34=2|");
        f.push(&good);
        assert_eq!(f.next_frame(), Some(Frame::Garbled(GarbledReason::NoBeginString)));
        assert!(matches!(f.next_frame(), Some(Frame::Message(_))));
        assert_eq!(f.next_frame(), None);
    }

    #[test]
    fn short_body_length_drops_only_the_bad_message() {
        let mut bad = b"8=FIX.4.2\x019=5\x0135=0\x0134=2\x0149=TW\x0110=000\x01".to_vec();
        let good = msg("FIX.4.2", "35=0|34=3|");
        bad.extend_from_slice(&good);
        let mut f = Framer::new(4096);
        f.push(&bad);
        assert_eq!(f.next_frame(), Some(Frame::Garbled(GarbledReason::BodyLengthMismatch)));
        // the rest of the bad message has no BeginString
        assert_eq!(f.next_frame(), Some(Frame::Garbled(GarbledReason::NoBeginString)));
        match f.next_frame() {
            Some(Frame::Message(r)) => assert_eq!(&f.bytes()[r], &good[..]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn long_body_length_swallows_the_next_message() {
        // body "35=0|34=2|" is 10 bytes and "10=nnn|" 7 more: 18 reaches into the next message
        let mut bad = b"8=FIX.4.2\x019=18\x0135=0\x0134=2\x01".to_vec();
        let cs = checksum(&bad);
        bad.extend_from_slice(format!("10={cs:03}\u{1}").as_bytes());
        let second = msg("FIX.4.2", "35=0|34=3|");
        let third = msg("FIX.4.2", "35=0|34=4|");
        let mut f = Framer::new(4096);
        f.push(&bad);
        f.push(&second);
        f.push(&third);
        let got = frames(&mut f);
        let messages: Vec<&Frame> = got.iter().filter(|g| matches!(g, Frame::Message(_))).collect();
        assert_eq!(messages.len(), 1, "{got:?}");
        if let Frame::Message(r) = messages[0] {
            assert_eq!(&f.bytes()[r.clone()], &third[..]);
        }
    }

    #[test]
    fn bad_checksum_drops_the_frame() {
        let mut m = msg("FIX.4.2", "35=0|34=2|");
        let n = m.len();
        m[n - 2] = if m[n - 2] == b'9' { b'0' } else { m[n - 2] + 1 };
        let mut f = Framer::new(4096);
        f.push(&m);
        assert_eq!(f.next_frame(), Some(Frame::Garbled(GarbledReason::BadCheckSum)));
        assert_eq!(f.next_frame(), None);
        assert_eq!(f.pending(), 0);
    }

    #[test]
    fn oversized_body_length_is_garbled_without_waiting() {
        let mut f = Framer::new(100);
        f.push(b"8=FIX.4.2\x019=5000\x0135=0\x01");
        assert_eq!(f.next_frame(), Some(Frame::Garbled(GarbledReason::TooLong)));
    }
}
