//! Zero-copy field index over one framed message.

use super::{parse_u64, tag, DATA_PAIRS, SOH};

/// One field of a parsed message: its tag and the byte range of its value in the frame.
/// Tags are signed so that a negative tag number (`-1=x`) can be rejected by number
/// ("Invalid tag number") rather than treated as garbage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpan {
    /// The tag number as written.
    pub tag: i32,
    start: u32,
    end: u32,
}

/// Why a frame could not be split into fields; such a message is garbled (ignored without
/// advancing the inbound sequence number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// The frame does not end with a field delimiter.
    MissingDelimiter,
    /// A tag is not a decimal number (e.g. `4garbled9=TW`); `offset` is its byte offset.
    BadTag {
        /// Byte offset of the field in the frame.
        offset: usize,
    },
    /// A field has no `=`.
    MissingEquals {
        /// Byte offset of the field in the frame.
        offset: usize,
    },
    /// A DATA field is shorter than its length field says, or not followed by SOH.
    BadDataLength {
        /// The data field's tag.
        tag: u32,
    },
    /// The first three fields are not BeginString (8), BodyLength (9), MsgType (35).
    HeaderOrder,
    /// The last field is not CheckSum (10).
    MissingCheckSum,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::MissingDelimiter => write!(f, "message does not end with SOH"),
            ParseError::BadTag { offset } => write!(f, "tag at byte {offset} is not a number"),
            ParseError::MissingEquals { offset } => write!(f, "field at byte {offset} has no '='"),
            ParseError::BadDataLength { tag } => write!(f, "data field {tag} does not match its length field"),
            ParseError::HeaderOrder => write!(f, "the first three fields must be 8, 9 and 35"),
            ParseError::MissingCheckSum => write!(f, "the last field must be CheckSum (10)"),
        }
    }
}

/// Splits frames into fields. Keeps its field index between messages, so parsing allocates
/// only while the index grows to the largest message seen.
#[derive(Debug, Default)]
pub struct Parser {
    fields: Vec<FieldSpan>,
}

impl Parser {
    /// A parser with room for 64 fields.
    pub fn new() -> Parser {
        Parser {
            fields: Vec::with_capacity(64),
        }
    }

    /// Indexes the fields of one complete frame (from `8=` through the CheckSum's SOH).
    pub fn parse<'a>(&'a mut self, frame: &'a [u8]) -> Result<Message<'a>, ParseError> {
        self.fields.clear();
        if frame.last() != Some(&SOH) {
            return Err(ParseError::MissingDelimiter);
        }
        let mut pos = 0usize;
        let mut data_len: Option<(u32, usize)> = None;
        while pos < frame.len() {
            let eq = frame[pos..]
                .iter()
                .position(|&b| b == b'=' || b == SOH)
                .map(|i| pos + i)
                .filter(|&i| frame[i] == b'=')
                .ok_or(ParseError::MissingEquals { offset: pos })?;
            let tag = parse_tag(&frame[pos..eq]).ok_or(ParseError::BadTag { offset: pos })?;
            let start = eq + 1;
            let end = match data_len.take() {
                Some((data_tag, len)) if tag == data_tag as i32 => {
                    let end = start + len;
                    if frame.get(end) != Some(&SOH) {
                        return Err(ParseError::BadDataLength { tag: data_tag });
                    }
                    end
                }
                _ => {
                    start
                        + frame[start..]
                            .iter()
                            .position(|&b| b == SOH)
                            .unwrap_or(frame.len() - start)
                }
            };
            if let Some(&(_, data_tag)) = DATA_PAIRS.iter().find(|&&(len_tag, _)| len_tag as i32 == tag) {
                if let Some(len) = parse_u64(&frame[start..end]) {
                    data_len = Some((data_tag, len as usize));
                }
            }
            self.fields.push(FieldSpan {
                tag,
                start: start as u32,
                end: end as u32,
            });
            pos = end + 1;
        }
        if self.fields.len() < 4
            || self.fields[0].tag != tag::BEGIN_STRING as i32
            || self.fields[1].tag != tag::BODY_LENGTH as i32
            || self.fields[2].tag != tag::MSG_TYPE as i32
        {
            return Err(ParseError::HeaderOrder);
        }
        if self.fields.last().map(|f| f.tag) != Some(tag::CHECK_SUM as i32) {
            return Err(ParseError::MissingCheckSum);
        }
        Ok(Message {
            buf: frame,
            fields: &self.fields,
        })
    }
}

fn parse_tag(b: &[u8]) -> Option<i32> {
    let (neg, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let n = parse_u64(digits)? as i32;
    Some(if neg { -n } else { n })
}

/// A parsed message: the frame and its field index. Values are slices of the frame.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    buf: &'a [u8],
    fields: &'a [FieldSpan],
}

impl<'a> Message<'a> {
    /// The whole frame, `8=` through the CheckSum's SOH.
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// The fields in wire order.
    pub fn spans(&self) -> &'a [FieldSpan] {
        self.fields
    }

    /// The value of one field of this message.
    pub fn value(&self, span: FieldSpan) -> &'a [u8] {
        &self.buf[span.start as usize..span.end as usize]
    }

    /// (tag, value) pairs in wire order.
    pub fn fields(&self) -> impl Iterator<Item = (i32, &'a [u8])> + 'a {
        let buf = self.buf;
        self.fields
            .iter()
            .map(move |f| (f.tag, &buf[f.start as usize..f.end as usize]))
    }

    /// The value of the first occurrence of `tag`.
    pub fn get(&self, tag: u32) -> Option<&'a [u8]> {
        self.fields.iter().find(|f| f.tag == tag as i32).map(|&f| self.value(f))
    }

    /// The first occurrence of `tag` as UTF-8 text (`None` if absent or not UTF-8).
    pub fn get_str(&self, tag: u32) -> Option<&'a str> {
        self.get(tag).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The first occurrence of `tag` as an unsigned integer.
    pub fn get_u64(&self, tag: u32) -> Option<u64> {
        self.get(tag).and_then(parse_u64)
    }

    /// True if `tag` is present with value `Y`.
    pub fn flag(&self, tag: u32) -> bool {
        self.get(tag) == Some(b"Y")
    }

    /// BeginString (8), always the first field.
    pub fn begin_string(&self) -> &'a [u8] {
        self.value(self.fields[0])
    }

    /// MsgType (35), always the third field.
    pub fn msg_type(&self) -> &'a [u8] {
        self.value(self.fields[2])
    }

    /// MsgSeqNum (34), if present and numeric.
    pub fn seq_num(&self) -> Option<u64> {
        self.get_u64(tag::MSG_SEQ_NUM)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soh(s: &str) -> Vec<u8> {
        s.replace('|', "\u{1}").into_bytes()
    }

    #[test]
    fn indexes_fields_without_copying() {
        let frame = soh("8=FIX.4.2|9=5|35=0|34=7|112=|10=123|");
        let mut p = Parser::new();
        let m = p.parse(&frame).expect("parses");
        assert_eq!(m.begin_string(), b"FIX.4.2");
        assert_eq!(m.msg_type(), b"0");
        assert_eq!(m.seq_num(), Some(7));
        assert_eq!(m.get(112), Some(&b""[..]));
        assert_eq!(m.get(58), None);
        let tags: Vec<i32> = m.fields().map(|(t, _)| t).collect();
        assert_eq!(tags, vec![8, 9, 35, 34, 112, 10]);
    }

    #[test]
    fn data_fields_may_hold_soh() {
        let frame = soh("8=FIX.4.2|9=5|35=0|95=3|96=a|b|10=000|");
        let mut p = Parser::new();
        let m = p.parse(&frame).expect("parses");
        assert_eq!(m.get(96), Some(&b"a\x01b"[..]));
        let short = soh("8=FIX.4.2|9=5|35=0|95=9|96=a|10=000|");
        assert_eq!(p.parse(&short).err(), Some(ParseError::BadDataLength { tag: 96 }));
    }

    #[test]
    fn negative_tags_parse_as_numbers() {
        let frame = soh("8=FIX.4.2|9=5|35=0|-1=HI|10=000|");
        let mut p = Parser::new();
        let m = p.parse(&frame).expect("parses");
        assert_eq!(m.fields().nth(3), Some((-1, &b"HI"[..])));
    }

    #[test]
    fn garbled_frames_are_errors() {
        let mut p = Parser::new();
        let cases: [(&str, ParseError); 5] = [
            (
                "8=FIX.4.2|9=5|35=0|4garbled9=TW|10=000|",
                ParseError::BadTag { offset: 19 },
            ),
            (
                "8=FIX.4.2|9=5|35=0|49TW|10=000|",
                ParseError::MissingEquals { offset: 19 },
            ),
            ("8=FIX.4.2|9=5|34=3|35=0|10=000|", ParseError::HeaderOrder),
            ("8=FIX.4.2|9=5|35=0|34=3|", ParseError::MissingCheckSum),
            ("8=FIX.4.2|9=5|35=0|10=000", ParseError::MissingDelimiter),
        ];
        for (text, want) in cases {
            assert_eq!(p.parse(&soh(text)).err(), Some(want), "{text}");
        }
    }
}
