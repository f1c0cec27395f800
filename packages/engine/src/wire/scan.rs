//! One-pass decoder of plain, valid source frames: the JSON text is scanned straight into
//! [`Publish`] values, with no intermediate tree, no per-message maps and no path strings.
//!
//! It is the fast path of [`decode_source_frame`](super::decode_source_frame) and answers only
//! when it can prove the frame valid: anything it does not handle itself (a string or key
//! holding an escape, any broken rule, any syntax error, a number beyond the double range, an
//! unknown or repeated key) returns `None`, and the caller decodes the frame with the tree
//! decoder, which produces the result or the exact error (code, index, field, message). So
//! the scanner never decides an error, and whenever it answers, its answer is the tree
//! decoder's (checked by the differential tests below and in tests/fuzz_*.rs).
//!
//! Allocations, for a frame of n publishes whose names and string values are at most 15 bytes
//! (inline in `FieldName` / `SmallStr`): one `String` per subject, one exact-size field vector
//! per publish and one exact-size vector per frame. The working vectors are per-thread scratch
//! and keep their capacity between frames (up to [`SCRATCH_KEEP`] entries).

use std::cell::RefCell;

use super::decode::{retype, PubField, Publish};
use super::field_name::FieldName;
use super::rules::{
    check_field_name, check_subject, MAX_FIELDS_PER_RECORD, MAX_PUBLISHES_PER_FRAME, MAX_STRING_VALUE_BYTES,
};
use crate::value::{FieldType, Value};

/// Entries a scratch vector keeps between frames; a larger frame's extra capacity is freed.
const SCRATCH_KEEP: usize = 1024;

/// A frame's working vectors, reused by every frame decoded on the thread.
#[derive(Default)]
struct Scratch {
    /// Publishes decoded so far.
    publishes: Vec<Publish>,
    /// The current publish's fields.
    fields: Vec<PubField>,
    /// The current publish's `types` entries: name as byte range of the text, type.
    types: Vec<(usize, usize, FieldType)>,
}

impl Scratch {
    fn clear(&mut self) {
        self.publishes.clear();
        self.fields.clear();
        self.types.clear();
        if self.publishes.capacity() > SCRATCH_KEEP {
            self.publishes.shrink_to(SCRATCH_KEEP);
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Decodes `text` when it is a valid source frame the scanner handles; `None` otherwise (the
/// frame may still be valid: the tree decoder decides). Never panics, bounded by the text length.
pub(super) fn decode_plain(text: &str) -> Option<Vec<Publish>> {
    SCRATCH.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return None; // Re-entered (cannot happen: nothing here calls back). Be safe anyway.
        };
        let mut scan = Scan {
            text,
            b: text.as_bytes(),
            i: 0,
        };
        let out = scan.frame(&mut s);
        s.clear();
        out
    })
}

/// Which of a message's keys were seen (a repeated key is left to the tree decoder).
mod key {
    pub const TYPE: u8 = 1;
    pub const SUBJECT: u8 = 2;
    pub const TS: u8 = 4;
    pub const IMAGE: u8 = 8;
    pub const FIELDS: u8 = 16;
    pub const TYPES: u8 = 32;
}

/// A cursor over the frame text. Invariant: `b == text.as_bytes()` and `i <= b.len()`.
struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    /// Skips JSON whitespace (space, tab, LF, CR), as serde_json does.
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// Consumes `c` after whitespace.
    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek()? == c {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// A string without escapes or control bytes (after whitespace); its text between the quotes.
    #[inline]
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                _ => self.i += 1,
            }
        }
        // Both ends sit next to an ASCII quote, so they are char boundaries of a valid `str`.
        let s = self.text.get(start..self.i)?;
        self.i += 1;
        Some(s)
    }

    /// A JSON number (after whitespace), read as `JSON.parse` does (correctly rounded); `None`
    /// for a malformed literal or one beyond the double range.
    fn number(&mut self) -> Option<f64> {
        self.ws();
        let b = self.b;
        let start = self.i;
        let mut i = start;
        let neg = b.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        let int_start = i;
        let mut int: u64 = 0;
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while let Some(&d @ b'0'..=b'9') = b.get(i) {
                    int = int.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                    i += 1;
                }
            }
            _ => return None,
        }
        let int_digits = i - int_start;
        let mut plain = true;
        if b.get(i) == Some(&b'.') {
            plain = false;
            i += 1;
            let d0 = i;
            while let Some(b'0'..=b'9') = b.get(i) {
                i += 1;
            }
            if i == d0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            plain = false;
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let d0 = i;
            while let Some(b'0'..=b'9') = b.get(i) {
                i += 1;
            }
            if i == d0 {
                return None;
            }
        }
        self.i = i;
        // Up to 15 digits an integer is exact in a double; "-0" reads as -0.0 (as serde_json).
        let n = if plain && int_digits <= 15 {
            let n = int as f64;
            if neg {
                -n
            } else {
                n
            }
        } else {
            self.text.get(start..i)?.parse::<f64>().ok()?
        };
        n.is_finite().then_some(n)
    }

    /// `true` / `false` (after whitespace).
    fn boolean(&mut self) -> Option<bool> {
        self.ws();
        let rest = &self.b[self.i..];
        if rest.starts_with(b"true") {
            self.i += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.i += 5;
            Some(false)
        } else {
            None
        }
    }

    /// The whole frame: one message object or a non-empty array of at most
    /// `MAX_PUBLISHES_PER_FRAME`, then only whitespace.
    fn frame(&mut self, s: &mut Scratch) -> Option<Vec<Publish>> {
        match self.peek()? {
            b'[' => {
                self.i += 1;
                loop {
                    if s.publishes.len() == MAX_PUBLISHES_PER_FRAME {
                        return None;
                    }
                    let p = self.message(s)?;
                    s.publishes.push(p);
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            b'{' => {
                let p = self.message(s)?;
                s.publishes.push(p);
            }
            _ => return None,
        }
        self.ws();
        if self.i != self.b.len() {
            return None;
        }
        let mut out = Vec::with_capacity(s.publishes.len());
        out.append(&mut s.publishes);
        Some(out)
    }

    /// One `record.publish` object, every rule of `decode_publish` checked.
    fn message(&mut self, s: &mut Scratch) -> Option<Publish> {
        self.eat(b'{')?;
        s.fields.clear();
        s.types.clear();
        let (mut seen, mut subject, mut ts, mut image) = (0u8, "", None, false);
        if self.peek()? != b'}' {
            loop {
                let k = self.string()?;
                self.eat(b':')?;
                let bit = match k {
                    "type" => {
                        if self.string()? != "record.publish" {
                            return None;
                        }
                        key::TYPE
                    }
                    "subject" => {
                        subject = self.string()?;
                        check_subject(subject).ok()?;
                        key::SUBJECT
                    }
                    "ts" => {
                        ts = Some(self.number()?);
                        key::TS
                    }
                    "image" => {
                        image = self.boolean()?;
                        key::IMAGE
                    }
                    "fields" => {
                        self.fields(s)?;
                        key::FIELDS
                    }
                    "types" => {
                        self.types(s)?;
                        key::TYPES
                    }
                    _ => return None,
                };
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
                match self.peek()? {
                    b',' => self.i += 1,
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.i += 1;
        let required = key::TYPE | key::SUBJECT | key::FIELDS;
        if seen & required != required {
            return None;
        }
        for &(start, end, ft) in &s.types {
            let name = &self.text[start..end];
            let field = s.fields.iter_mut().find(|f| f.name == name)?;
            if field.typed {
                return None;
            }
            field.typed = true;
            field.value = retype(field.value.take(), ft).ok()?;
        }
        let mut fields = Vec::with_capacity(s.fields.len());
        fields.append(&mut s.fields);
        Some(Publish {
            subject: subject.to_owned(),
            ts,
            image,
            fields,
        })
    }

    /// The `fields` object into `s.fields`: valid, distinct names; scalar values.
    fn fields(&mut self, s: &mut Scratch) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            if s.fields.len() == MAX_FIELDS_PER_RECORD {
                return None;
            }
            let name = self.string()?;
            check_field_name(name).ok()?;
            if s.fields.iter().any(|f| f.name == name) {
                return None;
            }
            self.eat(b':')?;
            let value = match self.peek()? {
                b'"' => {
                    let v = self.string()?;
                    if v.len() > MAX_STRING_VALUE_BYTES {
                        return None;
                    }
                    Some(Value::Str(v.into()))
                }
                b't' | b'f' => Some(Value::Bool(self.boolean()?)),
                b'n' => {
                    if !self.b[self.i..].starts_with(b"null") {
                        return None;
                    }
                    self.i += 4;
                    None
                }
                _ => Some(Value::Number(self.number()?)),
            };
            s.fields.push(PubField {
                name: FieldName::from(name),
                value,
                typed: false,
            });
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The `types` object into `s.types` (checked against the fields once the message ends).
    fn types(&mut self, s: &mut Scratch) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let name = self.string()?;
            let start = self.i - 1 - name.len();
            self.eat(b':')?;
            let ft = FieldType::parse(self.string()?)?;
            // Bounded: a name appearing twice fails once the message ends, so at most one entry
            // per field (128) can succeed; cut longer lists here.
            if s.types.len() == MAX_FIELDS_PER_RECORD {
                return None;
            }
            s.types.push((start, start + name.len(), ft));
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode::decode_source_frame_tree;
    use super::*;

    /// Asserts that the scanner answers `text` (a plain valid frame) exactly as the tree decoder
    /// does, bit for bit (`{:?}` tells -0.0 from 0.0).
    fn same(text: &str) {
        let fast = decode_plain(text).unwrap_or_else(|| panic!("scanner declined {text:.120}"));
        let tree = decode_source_frame_tree(text).unwrap_or_else(|e| panic!("{text:.120}: {e}"));
        assert_eq!(format!("{fast:?}"), format!("{tree:?}"), "{text:.120}");
    }

    fn msg(fields: &str) -> String {
        format!(r#"{{"type":"record.publish","subject":"/A","fields":{{{fields}}}}}"#)
    }

    #[test]
    fn numbers_read_as_the_tree_decoder_reads_them() {
        let literals = [
            "0",
            "-0",
            "-0.0",
            "1",
            "-1",
            "7.25",
            "1e2",
            "1E+2",
            "1.5e-3",
            "2.5E-3",
            "0.1",
            "1.08412",
            "123456789012345",
            "-123456789012345",
            "1234567890123456",
            "9007199254740993",
            "12345678901234567890",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1e308",
            "1.7976931348623157e308",
            "4.9e-324",
            "1e-400",
            "-1e-400",
            "0e5",
            "100000000000000000000000",
            "3.141592653589793238462643383279",
            "0.30000000000000004",
        ];
        for lit in literals {
            same(&msg(&format!(r#""x":{lit}"#)));
            same(&format!(
                r#"{{"type":"record.publish","subject":"/A","ts":{lit},"fields":{{}}}}"#
            ));
        }
    }

    #[test]
    fn plain_frames_take_the_scanner() {
        same(&msg(""));
        same(&msg(
            r#""a":1,"b":"str","c":true,"d":false,"e":null,"f":"","g":"a longer string of text""#,
        ));
        same(&format!(
            " \t\n[ {} ,\r\n{} ] \n",
            msg(r#""a" : 1 "#),
            msg(r#""b":"x""#)
        ));
        same(
            r#"{"fields":{"m":1924992000000,"s":"x","b":true,"n":7},"types":{"m":"timestamp","s":"string","b":"bool","n":"number"},"ts":1.5,"image":true,"subject":"/P/Q","type":"record.publish"}"#,
        );
        // `types` before `fields`, a null typed value, non-ASCII text, a 40-byte name.
        let long = "n".repeat(40);
        same(&format!(
            r#"{{"type":"record.publish","types":{{"t":"timestamp"}},"subject":"/A","fields":{{"t":null,"{long}":"prixÉté €"}}}}"#
        ));
        let max = format!("[{}]", vec![msg(r#""x":1"#); MAX_PUBLISHES_PER_FRAME].join(","));
        assert_eq!(decode_plain(&max).map(|v| v.len()), Some(MAX_PUBLISHES_PER_FRAME));
        let fields: Vec<String> = (0..MAX_FIELDS_PER_RECORD).map(|i| format!("\"f{i}\":{i}")).collect();
        same(&msg(&fields.join(",")));
    }

    /// Frames the scanner must leave to the tree decoder: every broken rule, syntax errors,
    /// escapes, huge numbers, and limits one past the edge.
    #[test]
    fn declines_everything_else() {
        let over_frame = format!("[{}]", vec![msg(r#""x":1"#); MAX_PUBLISHES_PER_FRAME + 1].join(","));
        let many: Vec<String> = (0..=MAX_FIELDS_PER_RECORD).map(|i| format!("\"f{i}\":{i}")).collect();
        let over_fields = msg(&many.join(","));
        let long_str = msg(&format!(r#""s":"{}""#, "é".repeat(2049)));
        let cases = [
            "",
            " ",
            "[]",
            "[ ]",
            "{}",
            "42",
            "null",
            "\"x\"",
            "[1]",
            "[{}]",
            &msg(r#""a":1"#)[..20],
            &format!("{} x", msg("")),
            &format!("[{}]]", msg("")),
            &format!("[{},]", msg("")),
            &format!("[{} {}]", msg(""), msg("")),
            &msg(r#""a":1,"a":2"#),
            &msg(r#""a":1,"#),
            &msg(r#""a\u0062":1"#),
            &msg(r#""a":"x\"y""#),
            &msg(r#""a":"tab	in""#),
            &msg(r#""a":1e999"#),
            &msg(r#""a":-1e400"#),
            &msg(r#""a":01"#),
            &msg(r#""a":1."#),
            &msg(r#""a":.5"#),
            &msg(r#""a":1e"#),
            &msg(r#""a":-"#),
            &msg(r#""a":+1"#),
            &msg(r#""a":NaN"#),
            &msg(r#""a":tru"#),
            &msg(r#""a":nul"#),
            &msg(r#""a":[1]"#),
            &msg(r#""a":{}"#),
            &msg(r#""1a":1"#),
            &msg(r#""a-b":1"#),
            &over_fields,
            &over_frame,
            &long_str,
            r#"{"type":"record.publish","subject":"/A"}"#,
            r#"{"type":"record.publish","fields":{}}"#,
            r#"{"subject":"/A","fields":{}}"#,
            r#"{"type":"record.publish","type":"record.publish","subject":"/A","fields":{}}"#,
            r#"{"type":"session.login","subject":"/A","fields":{}}"#,
            r#"{"type":"record\u002epublish","subject":"/A","fields":{}}"#,
            r#"{"type":5,"subject":"/A","fields":{}}"#,
            r#"{"type":"record.publish","subject":"A","fields":{}}"#,
            r#"{"type":"record.publish","subject":"/A/","fields":{}}"#,
            r#"{"type":"record.publish","subject":7,"fields":{}}"#,
            r#"{"type":"record.publish","subject":"/A","ts":"1","fields":{}}"#,
            r#"{"type":"record.publish","subject":"/A","ts":null,"fields":{}}"#,
            r#"{"type":"record.publish","subject":"/A","image":1,"fields":{}}"#,
            r#"{"type":"record.publish","subject":"/A","fields":[]}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{},"extra":1}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":{"b":"number"}}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":{"a":"date"}}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":{"a":"number","a":"number"}}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":1.5},"types":{"a":"timestamp"}}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":"x"},"types":{"a":"number"}}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":[]}"#,
            r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":{"a":5}}"#,
        ];
        for text in cases {
            assert!(decode_plain(text).is_none(), "scanner accepted {text:.120}");
        }
        // The edge itself is accepted.
        let ok_str = msg(&format!(r#""s":"{}""#, "é".repeat(2048)));
        same(&ok_str);
    }

    #[test]
    fn scratch_is_reused_and_trimmed() {
        let big = format!("[{}]", vec![msg(r#""x":1"#); 5000].join(","));
        assert_eq!(decode_plain(&big).map(|v| v.len()), Some(5000));
        SCRATCH.with(|s| {
            let s = s.borrow();
            assert!(s.publishes.is_empty() && s.fields.is_empty() && s.types.is_empty());
            assert!(s.publishes.capacity() <= SCRATCH_KEEP);
        });
        // A frame declined midway leaves nothing behind for the next one.
        assert!(decode_plain(&format!("[{},{}", msg(r#""x":1"#), msg(r#""y":2"#))).is_none());
        same(&msg(r#""z":3"#));
    }
}
