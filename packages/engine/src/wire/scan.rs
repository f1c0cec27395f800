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
use super::grants::PublishGrants;
use super::rules::{
    check_field_name, check_subject, MAX_FIELDS_PER_RECORD, MAX_FIELD_NAME_BYTES, MAX_PUBLISHES_PER_FRAME,
    MAX_STRING_VALUE_BYTES, MAX_SUBJECT_BYTES,
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
/// With `grants`, a subject they do not permit declines the frame too (the tree decoder words
/// the refusal).
pub(super) fn decode_plain(text: &str, grants: Option<&PublishGrants>) -> Option<Vec<Publish>> {
    SCRATCH.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return None; // Re-entered (cannot happen: nothing here calls back). Be safe anyway.
        };
        let mut scan = Scan {
            text,
            b: text.as_bytes(),
            i: 0,
            grants,
        };
        let out = scan.frame(&mut s);
        s.clear();
        out
    })
}

/// [`BYTE_CLASS`] bit: may follow the first byte of a field name (`[A-Za-z0-9_]`).
const NAME: u8 = 1;
/// [`BYTE_CLASS`] bit: may appear in a subject segment (`[A-Za-z0-9_.@:-]`).
const SEGMENT: u8 = 2;

/// Class bits of every byte value (the patterns of wire/rules.rs as a table).
const BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] = NAME | SEGMENT;
        } else if matches!(c, b'.' | b'@' | b':' | b'-') {
            t[b] = SEGMENT;
        }
        b += 1;
    }
    t
};

/// 10^0 ..= 10^22: every one an exact double.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// True when one of the 8 bytes in `x` is `"`, `\\` or a control byte (below 0x20): the string
/// scan must look at them one by one. Exact for "any byte" (no false negatives or positives).
#[inline]
fn needs_look(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    // Bytes below 0x20: subtracting 0x20 borrows into the high bit only for them (or for bytes
    // with the high bit set, masked out by `!x`).
    let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
    control || has_zero(x ^ (ONES * u64::from(b'"'))) || has_zero(x ^ (ONES * u64::from(b'\\')))
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
    /// The source's publish grants, when they need checking.
    grants: Option<&'a PublishGrants>,
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
        // Eight bytes at a time while none of them ends the string or needs a closer look.
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().ok()?);
            if needs_look(x) {
                break;
            }
            self.i += 8;
        }
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

    /// A field name string (after whitespace) matching `FIELD_NAME_PATTERN` within
    /// `MAX_FIELD_NAME_BYTES`, checked while it is scanned; `None` for anything else (escapes
    /// included), which `check_field_name` would refuse or the tree decoder must read.
    #[inline]
    fn name(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        match self.b.get(self.i)? {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.i += 1,
            _ => return None,
        }
        while BYTE_CLASS[usize::from(*self.b.get(self.i)?)] & NAME != 0 {
            self.i += 1;
        }
        if self.b[self.i] != b'"' || self.i - start > MAX_FIELD_NAME_BYTES {
            return None;
        }
        // ASCII on both ends: char boundaries.
        let s = self.text.get(start..self.i)?;
        self.i += 1;
        debug_assert!(check_field_name(s).is_ok());
        Some(s)
    }

    /// A subject string (after whitespace) obeying `check_subject` (`/seg(/seg)*`, segments of
    /// `[A-Za-z0-9_.@:-]`, at most `MAX_SUBJECT_BYTES`), checked while it is scanned.
    #[inline]
    fn subject(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let mut prev_slash = false;
        if self.b.get(self.i) != Some(&b'/') {
            return None;
        }
        loop {
            let c = *self.b.get(self.i)?;
            if c == b'/' {
                if prev_slash {
                    return None;
                }
                prev_slash = true;
            } else if BYTE_CLASS[usize::from(c)] & SEGMENT != 0 {
                prev_slash = false;
            } else {
                break;
            }
            self.i += 1;
        }
        if self.b[self.i] != b'"' || prev_slash || self.i - start > MAX_SUBJECT_BYTES {
            return None;
        }
        let s = self.text.get(start..self.i)?;
        self.i += 1;
        debug_assert!(check_subject(s).is_ok());
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
        // The digits of the integer and fraction parts as one integer (`digits` of them), and
        // the power of ten it is scaled by.
        let (mut mantissa, mut digits, mut exp10) = (0u64, 0usize, 0i64);
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while let Some(&d @ b'0'..=b'9') = b.get(i) {
                    mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                    digits += 1;
                    i += 1;
                }
            }
            _ => return None,
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let d0 = i;
            while let Some(&d @ b'0'..=b'9') = b.get(i) {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                digits += usize::from(mantissa != 0);
                i += 1;
            }
            if i == d0 {
                return None;
            }
            exp10 = -((i - d0) as i64);
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            let exp_neg = b.get(i) == Some(&b'-');
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let (d0, mut e) = (i, 0i64);
            while let Some(&d @ b'0'..=b'9') = b.get(i) {
                e = e.saturating_mul(10).saturating_add(i64::from(d - b'0'));
                i += 1;
            }
            if i == d0 {
                return None;
            }
            exp10 = exp10.saturating_add(if exp_neg { -e } else { e });
        }
        self.i = i;
        // Clinger's fast path: a mantissa below 2^53 and a power of ten up to 22 are both exact
        // doubles, so one multiply or divide is the correctly rounded result (what JSON.parse
        // and serde_json's float_roundtrip give). "-0" reads as -0.0, as serde_json reads it.
        // Anything else goes through the standard library's correctly rounded parser.
        let n = if digits <= 19 && mantissa < (1 << 53) && (-22..=22).contains(&exp10) {
            let m = mantissa as f64;
            let n = if exp10 < 0 {
                m / POW10[exp10.unsigned_abs() as usize]
            } else {
                m * POW10[exp10 as usize]
            };
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
                    if !self.next_or_end(b']')? {
                        break;
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
                        subject = self.subject()?;
                        if self.grants.is_some_and(|g| !g.permits(subject)) {
                            return None;
                        }
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
        let mut names_seen = 0u64;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            if s.fields.len() == MAX_FIELDS_PER_RECORD {
                return None;
            }
            let name = self.name()?;
            // A repeated name is left to the tree decoder. A 64-bit filter on (length, last
            // byte) skips the comparisons for nearly every name.
            let bit = 1u64 << ((name.len() * 7 + usize::from(name.as_bytes()[name.len() - 1])) & 63);
            if names_seen & bit != 0 && s.fields.iter().any(|f| f.name == name) {
                return None;
            }
            names_seen |= bit;
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
            if !self.next_or_end(b'}')? {
                return Some(());
            }
        }
    }

    /// After a member of an object or an element of an array: `,` (Some(true): another follows) or
    /// `close` (Some(false): the object or array ended), consumed; anything else: None (the tree
    /// decoder takes the frame).
    fn next_or_end(&mut self, close: u8) -> Option<bool> {
        let more = match self.peek()? {
            b',' => true,
            b if b == close => false,
            _ => return None,
        };
        self.i += 1;
        Some(more)
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
            if !self.next_or_end(b'}')? {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode::decode_source_frame_tree;
    use super::*;

    /// The scanner without grants (shadows the glob-imported one).
    fn decode_plain(text: &str) -> Option<Vec<Publish>> {
        super::decode_plain(text, None)
    }

    #[test]
    fn grants_decline_a_subject_they_do_not_permit() {
        let grants = PublishGrants::compile("feed", "source", &["/FX/**"]).expect("valid rules");
        let frame = |subject: &str| format!(r#"{{"type":"record.publish","subject":"{subject}","fields":{{"x":1}}}}"#);
        let both = format!("[{},{}]", frame("/FX/A"), frame("/FX/B"));
        assert_eq!(super::decode_plain(&both, Some(&grants)).map(|v| v.len()), Some(2));
        assert!(super::decode_plain(&format!("[{},{}]", frame("/FX/A"), frame("/PRODUCT/B")), Some(&grants)).is_none());
        assert!(super::decode_plain(&frame("/PRODUCT/B"), None).is_some());
    }

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
        let literals = "0 -0 -0.0 1 -1 7.25 1e2 1E+2 1.5e-3 2.5E-3 0.1 1.08412 0.00019 -0.0012 \
            123456789012345 -123456789012345 1234567890123456 9007199254740993 12345678901234567890 \
            18446744073709551615 18446744073709551616 -9223372036854775809 1e308 1.7976931348623157e308 \
            4.9e-324 1e-400 -1e-400 0e5 -0e5 -0.0e-3 100000000000000000000000 1e22 1e23 \
            3.141592653589793238462643383279 0.30000000000000004 9007199254740992e-22 9007199254740993e-3 \
            0.0000000000000000000000001 123.456e-20 1e-99999999999999999999 1.00000000000000000000000000001";
        for lit in literals.split_whitespace() {
            same(&msg(&format!(r#""x":{lit}"#)));
            same(&format!(
                r#"{{"type":"record.publish","subject":"/A","ts":{lit},"fields":{{}}}}"#
            ));
        }
    }

    /// The 8-byte string scan: a plain string of any length is read whole, and an escape or a
    /// control byte at any position (either side of a chunk edge) is seen.
    #[test]
    fn strings_are_scanned_to_the_right_end() {
        for len in 0..40 {
            let text: String = "abcdefgh€ij".chars().cycle().take(len).collect();
            same(&msg(&format!(r#""s":"{text}","t":"{text}""#)));
            for at in 0..=text.len() {
                if !text.is_char_boundary(at) {
                    continue;
                }
                for bad in ["\\n", "\\\"", "\u{1}", "\t", "\u{1f}"] {
                    let broken = format!("{}{bad}{}", &text[..at], &text[at..]);
                    assert!(
                        decode_plain(&msg(&format!(r#""s":"{broken}""#))).is_none(),
                        "{broken:?}"
                    );
                }
                // Bytes next to the special ones pass: space (0x20), '#' (0x23), ']' (0x5d), DEL.
                let fine = format!("{} #]\u{7f}{}", &text[..at], &text[at..]);
                same(&msg(&format!(r#""s":"{fine}""#)));
            }
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
        let subject = |len: usize| {
            format!(
                r#"{{"type":"record.publish","subject":"/{}","fields":{{}}}}"#,
                "a".repeat(len - 1)
            )
        };
        for text in [
            subject(MAX_SUBJECT_BYTES + 1),
            msg(&format!(r#""{}":1"#, "n".repeat(MAX_FIELD_NAME_BYTES + 1))),
            msg(r#""ab":1,"cb":2,"ab":3"#),
            msg(r#""_x":1,"_x":2"#),
        ] {
            assert!(decode_plain(&text).is_none(), "scanner accepted {text:.120}");
        }
        for subject in ["/a//b", "/", "/a b", "/é", "/a/", "//", r"/a\u002fb", r"/a\tb"] {
            let text = format!(r#"{{"type":"record.publish","subject":"{subject}","fields":{{}}}}"#);
            assert!(decode_plain(&text).is_none(), "scanner accepted {text:.120}");
        }
        same(&subject(MAX_SUBJECT_BYTES));
        same(r#"{"type":"record.publish","subject":"/a:b@c.d-e_f/G9/x","fields":{}}"#);
        same(&msg(&format!(
            r#""{}":1,"_x1":2,"ab":3,"cb":4,"Ab":5"#,
            "n".repeat(MAX_FIELD_NAME_BYTES)
        )));
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
