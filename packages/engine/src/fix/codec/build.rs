//! Writes one message at a time into a reused buffer.

use super::frame::checksum;
use super::{push_i64, push_u64, time, SOH};

/// Room kept in front of the body for `8=<BeginString>|9=<BodyLength>|`, which is written last.
const PREFIX_ROOM: usize = 40;

/// Builds a message into a buffer it keeps between messages: call [`Builder::begin`], add
/// fields in wire order, then [`Builder::finish`], which fills in BeginString, BodyLength and
/// CheckSum and returns the message bytes. Nothing is allocated once the buffer has grown to
/// the largest message built.
#[derive(Debug)]
pub struct Builder {
    buf: Vec<u8>,
    start: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// An empty builder with a 1 KiB buffer.
    pub fn new() -> Builder {
        Builder {
            buf: Vec::with_capacity(1024),
            start: 0,
        }
    }

    /// Starts a message of type `msg_type` (written as the first body field, 35).
    pub fn begin(&mut self, msg_type: &[u8]) -> &mut Builder {
        self.buf.clear();
        self.buf.resize(PREFIX_ROOM, 0);
        self.start = PREFIX_ROOM;
        self.field(35, msg_type)
    }

    /// Appends `tag=value|`.
    pub fn field(&mut self, tag: u32, value: &[u8]) -> &mut Builder {
        push_u64(&mut self.buf, u64::from(tag));
        self.buf.push(b'=');
        self.buf.extend_from_slice(value);
        self.buf.push(SOH);
        self
    }

    /// Appends a field with a decimal unsigned value.
    pub fn field_u64(&mut self, tag: u32, value: u64) -> &mut Builder {
        push_u64(&mut self.buf, u64::from(tag));
        self.buf.push(b'=');
        push_u64(&mut self.buf, value);
        self.buf.push(SOH);
        self
    }

    /// Appends a field with a decimal signed value.
    pub fn field_i64(&mut self, tag: u32, value: i64) -> &mut Builder {
        push_u64(&mut self.buf, u64::from(tag));
        self.buf.push(b'=');
        push_i64(&mut self.buf, value);
        self.buf.push(SOH);
        self
    }

    /// Appends a UTCTimestamp field with milliseconds (`YYYYMMDD-HH:MM:SS.sss`).
    pub fn field_timestamp(&mut self, tag: u32, utc_ms: i64) -> &mut Builder {
        push_u64(&mut self.buf, u64::from(tag));
        self.buf.push(b'=');
        time::push_utc_timestamp(&mut self.buf, utc_ms);
        self.buf.push(SOH);
        self
    }

    /// Appends already encoded fields (`tag=value|...`, ending with SOH).
    pub fn raw(&mut self, fields: &[u8]) -> &mut Builder {
        self.buf.extend_from_slice(fields);
        self
    }

    /// Completes the message: writes `8=<begin_string>|9=<BodyLength>|` in front of the body and
    /// `10=<CheckSum>|` after it, and returns the whole message.
    pub fn finish(&mut self, begin_string: &[u8]) -> &[u8] {
        let body_len = self.buf.len() - PREFIX_ROOM;
        let mut prefix = [0u8; PREFIX_ROOM];
        let mut n = 0;
        let mut put = |bytes: &[u8]| {
            let take = bytes.len().min(PREFIX_ROOM - n);
            prefix[n..n + take].copy_from_slice(&bytes[..take]);
            n += take;
        };
        put(b"8=");
        put(&begin_string[..begin_string.len().min(16)]);
        put(b"\x019=");
        let mut digits = Vec::new();
        push_u64(&mut digits, body_len as u64);
        put(&digits);
        put(&[SOH]);
        self.start = PREFIX_ROOM - n;
        self.buf[self.start..PREFIX_ROOM].copy_from_slice(&prefix[..n]);
        let cs = checksum(&self.buf[self.start..]);
        self.buf.extend_from_slice(b"10=");
        self.buf
            .extend_from_slice(&[b'0' + cs / 100, b'0' + cs / 10 % 10, b'0' + cs % 10, SOH]);
        &self.buf[self.start..]
    }

    /// The message completed by the last [`Builder::finish`].
    pub fn message(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Frame, Framer, Parser};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn writes_header_length_and_checksum() {
        let mut b = Builder::new();
        b.begin(b"0").field(49, b"ISLD").field(56, b"TW").field_u64(34, 2);
        let m = b.finish(b"FIX.4.2").to_vec();
        assert_eq!(
            m,
            b"8=FIX.4.2\x019=24\x0135=0\x0149=ISLD\x0156=TW\x0134=2\x0110=212\x01".to_vec()
        );
        let mut f = Framer::new(4096);
        f.push(&m);
        assert!(matches!(f.next_frame(), Some(Frame::Message(_))));
    }

    proptest! {
        #[test]
        fn built_messages_frame_and_parse_back(
            fields in proptest::collection::vec((1u32..2000, "[ -~&&[^=]]{1,40}"), 0..30),
            seq in 1u64..1_000_000_000,
            ms in 0i64..4_102_444_800_000,
        ) {
            let mut b = Builder::new();
            b.begin(b"D").field_u64(34, seq).field_timestamp(52, ms);
            // avoid the DATA tags, whose values are length-delimited
            let fields: Vec<(u32, String)> = fields
                .into_iter()
                .filter(|(t, _)| !super::super::DATA_PAIRS.iter().any(|&(l, d)| l == *t || d == *t) && *t != 10)
                .collect();
            for (t, v) in &fields {
                b.field(*t, v.as_bytes());
            }
            let bytes = b.finish(b"FIX.4.4").to_vec();
            let mut f = Framer::new(1 << 20);
            f.push(&bytes);
            let Some(Frame::Message(r)) = f.next_frame() else { panic!("not framed") };
            let mut p = Parser::new();
            let m = p.parse(&f.bytes()[r]).expect("parses");
            prop_assert_eq!(m.begin_string(), b"FIX.4.4");
            prop_assert_eq!(m.msg_type(), b"D");
            prop_assert_eq!(m.seq_num(), Some(seq));
            prop_assert_eq!(m.get(52).and_then(time::parse_utc_timestamp), Some(ms));
            let got: Vec<(i32, Vec<u8>)> = m.fields().skip(5).map(|(t, v)| (t, v.to_vec())).collect();
            let want: Vec<(i32, Vec<u8>)> = fields.iter().map(|(t, v)| (*t as i32, v.as_bytes().to_vec())).collect();
            prop_assert_eq!(&got[..got.len() - 1], &want[..]);
        }
    }
}
