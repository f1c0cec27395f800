//! Typed field values held by the store.
//!
//! Memory: a [`Value`] (and an `Option<Value>`) is 16 bytes. Strings of at most
//! [`INLINE_STR_BYTES`] bytes live inside it ([`SmallStr`]); longer ones take one heap
//! allocation. The enum tags of `SmallStr`, `Value` and `Option` share the inline length byte.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// A field's type. Timestamps are epoch milliseconds and travel as JSON numbers, named in `types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// IEEE-754 double.
    Number,
    /// UTF-8 string, at most `MAX_STRING_VALUE_BYTES`.
    String,
    /// true / false.
    Bool,
    /// Integer epoch milliseconds.
    Timestamp,
}

impl FieldType {
    /// The wire spelling used in `types` maps.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Number => "number",
            FieldType::String => "string",
            FieldType::Bool => "bool",
            FieldType::Timestamp => "timestamp",
        }
    }

    /// Parses a `types` value; `None` for anything else.
    pub fn parse(s: &str) -> Option<FieldType> {
        match s {
            "number" => Some(FieldType::Number),
            "string" => Some(FieldType::String),
            "bool" => Some(FieldType::Bool),
            "timestamp" => Some(FieldType::Timestamp),
            _ => None,
        }
    }
}

/// A field value in the store or on the wire. `null` (a deleted field) is `Option::None` around it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Finite double.
    Number(f64),
    /// String value (inline up to [`INLINE_STR_BYTES`] bytes).
    Str(SmallStr),
    /// Boolean value.
    Bool(bool),
    /// Integer epoch milliseconds (JSON number, typed `timestamp`).
    Timestamp(i64),
}

impl Value {
    /// The value's type.
    pub fn field_type(&self) -> FieldType {
        match self {
            Value::Number(_) => FieldType::Number,
            Value::Str(_) => FieldType::String,
            Value::Bool(_) => FieldType::Bool,
            Value::Timestamp(_) => FieldType::Timestamp,
        }
    }
}

/// Longest string (in UTF-8 bytes) a [`SmallStr`] holds without a heap allocation: 15.
pub const INLINE_STR_BYTES: usize = 15;

/// Length of an inline string, `0..=15`. An enum (not a `u8`) so that values 16..=255 are a
/// niche: the tags of [`SmallStr`], [`Value`] and `Option<Value>` live there, keeping all three
/// at 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[rustfmt::skip]
enum InlineLen { L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15 }

/// Every [`InlineLen`] by its value.
#[rustfmt::skip]
const INLINE_LENS: [InlineLen; INLINE_STR_BYTES + 1] = {
    use InlineLen::*;
    [L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15]
};

/// An inline string: `buf[..len]` is valid UTF-8 (copied whole from a `&str`), the rest zero.
/// `repr(C)` puts `len` last, at byte 15, clear of the heap variant's pointer (bytes 0..8).
#[derive(Clone, Copy)]
#[repr(C)]
struct Inline {
    buf: [u8; INLINE_STR_BYTES],
    len: InlineLen,
}

#[derive(Clone)]
enum Repr {
    Inline(Inline),
    /// Longer strings: a thin pointer (8 bytes) so the variant stays clear of the length byte.
    /// Costs one extra small allocation per long string; short ones (most field values:
    /// statuses, sides, instruments, ids) cost none. A `String` rather than a `Box<str>` (8
    /// bytes more) so [`SmallStr::assign`] can write a new value into the buffer it has.
    #[allow(clippy::box_collection, reason = "a thin pointer keeps SmallStr at 16 bytes")]
    Heap(Box<String>),
}

/// A UTF-8 string of 16 bytes: inline when at most [`INLINE_STR_BYTES`] bytes long, else on the
/// heap. Derefs to `str`; compares, orders and hashes as its text. Changed only whole, by
/// [`SmallStr::assign`].
#[derive(Clone)]
pub struct SmallStr(Repr);

// The layout the store's memory budget relies on (checked at compile time).
const _: () = assert!(std::mem::size_of::<SmallStr>() == 16);
const _: () = assert!(std::mem::size_of::<Value>() == 16);
const _: () = assert!(std::mem::size_of::<Option<Value>>() == 16);

impl SmallStr {
    /// The string's text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline(i) => {
                let bytes = &i.buf[..i.len as usize];
                // SAFETY: `buf[..len]` was copied from a whole `&str` (see `From<&str>`) and the
                // fields are private and never written after construction, so it is valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Heap(b) => b,
        }
    }

    /// True when the text lives on the heap (longer than [`INLINE_STR_BYTES`]).
    pub fn is_heap(&self) -> bool {
        matches!(self.0, Repr::Heap(_))
    }

    /// Heap bytes held beyond the 16 bytes of the value itself (0 when inline).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Inline(_) => 0,
            Repr::Heap(b) => std::mem::size_of::<String>() + b.capacity(),
        }
    }

    /// Sets the text to `s`. A long string replacing a long string reuses the heap buffer (no
    /// allocation when `s` fits its capacity, else one exact reallocation); otherwise as
    /// `SmallStr::from(s)`. The store applies changed string fields through this.
    pub fn assign(&mut self, s: &str) {
        match &mut self.0 {
            Repr::Heap(b) if s.len() > INLINE_STR_BYTES => {
                b.clear();
                b.reserve_exact(s.len());
                b.push_str(s);
            }
            _ => *self = SmallStr::from(s),
        }
    }
}

/// `s` (at most [`INLINE_STR_BYTES`] bytes) zero-padded to the inline buffer, copied as two
/// overlapping fixed-size words rather than a variable-length `memcpy` call (this runs for
/// every short string value and field name decoded).
#[inline]
fn inline_bytes(s: &[u8]) -> [u8; INLINE_STR_BYTES] {
    let mut buf = [0u8; INLINE_STR_BYTES];
    let n = s.len();
    debug_assert!(n <= INLINE_STR_BYTES);
    if n >= 8 {
        buf[..8].copy_from_slice(&s[..8]);
        buf[n - 8..n].copy_from_slice(&s[n - 8..]);
    } else if n >= 4 {
        buf[..4].copy_from_slice(&s[..4]);
        buf[n - 4..n].copy_from_slice(&s[n - 4..]);
    } else {
        for (d, &c) in buf.iter_mut().zip(s) {
            *d = c;
        }
    }
    buf
}

impl From<&str> for SmallStr {
    fn from(s: &str) -> Self {
        if s.len() <= INLINE_STR_BYTES {
            SmallStr(Repr::Inline(Inline {
                buf: inline_bytes(s.as_bytes()),
                len: INLINE_LENS[s.len()],
            }))
        } else {
            SmallStr(Repr::Heap(Box::new(s.to_owned())))
        }
    }
}

impl From<String> for SmallStr {
    fn from(s: String) -> Self {
        if s.len() <= INLINE_STR_BYTES {
            s.as_str().into()
        } else {
            let mut s = s;
            s.shrink_to_fit();
            SmallStr(Repr::Heap(Box::new(s)))
        }
    }
}

impl From<Box<str>> for SmallStr {
    fn from(s: Box<str>) -> Self {
        if s.len() <= INLINE_STR_BYTES {
            (*s).into()
        } else {
            SmallStr(Repr::Heap(Box::new(s.into_string())))
        }
    }
}

impl Deref for SmallStr {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SmallStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SmallStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for SmallStr {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SmallStr {}

impl PartialEq<str> for SmallStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SmallStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for SmallStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SmallStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SmallStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for SmallStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SmallStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_and_option_are_16_bytes() {
        assert_eq!(std::mem::size_of::<SmallStr>(), 16);
        assert_eq!(std::mem::size_of::<Value>(), 16);
        assert_eq!(std::mem::size_of::<Option<Value>>(), 16);
    }

    #[test]
    fn short_strings_inline_long_ones_on_the_heap() {
        for len in 0..=40 {
            let text: String = "abcdefghij".chars().cycle().take(len).collect();
            for s in [
                SmallStr::from(text.as_str()),
                SmallStr::from(text.clone()),
                SmallStr::from(text.clone().into_boxed_str()),
            ] {
                assert_eq!(s.as_str(), text);
                assert_eq!(s.len(), len);
                assert_eq!(s.is_heap(), len > INLINE_STR_BYTES, "len {len}");
                assert_eq!(s.heap_bytes() > 0, len > INLINE_STR_BYTES);
                assert_eq!(s.clone(), s);
                assert_eq!(format!("{s}"), text);
                assert_eq!(format!("{s:?}"), format!("{text:?}"));
            }
        }
    }

    #[test]
    fn assign_replaces_the_text_across_inline_and_heap() {
        let long = "a headline longer than fifteen bytes";
        let longer = "another headline, longer than the first one by far";
        let mut s = SmallStr::from(long);
        let cap = s.heap_bytes();
        s.assign("a shorter one, still on the heap");
        assert_eq!(&*s, "a shorter one, still on the heap");
        assert_eq!(s.heap_bytes(), cap, "the buffer is reused, not shrunk");
        s.assign(longer);
        assert_eq!(&*s, longer);
        assert_eq!(s.heap_bytes(), std::mem::size_of::<String>() + longer.len());
        s.assign("short");
        assert!(!s.is_heap());
        assert_eq!(&*s, "short");
        s.assign(long);
        assert!(s.is_heap());
        assert_eq!(s, SmallStr::from(long));
        s.assign("");
        assert_eq!(&*s, "");
        assert!(!s.is_heap());
    }

    #[test]
    fn multibyte_text_at_the_inline_boundary() {
        // 5 x 3-byte chars = 15 bytes (inline); one more is 18 (heap).
        let inline = SmallStr::from("€€€€€");
        assert!(!inline.is_heap());
        assert_eq!(&*inline, "€€€€€");
        let heap = SmallStr::from("€€€€€€");
        assert!(heap.is_heap());
        assert_eq!(&*heap, "€€€€€€");
        assert!(inline < heap);
    }

    #[test]
    fn values_compare_and_hash_by_text() {
        use std::collections::HashSet;
        let a = Value::Str("partiallyFilled".into());
        let b = Value::Str(String::from("partiallyFilled").into());
        assert_eq!(a, b);
        assert_ne!(a, Value::Str("filled".into()));
        assert_ne!(a, Value::Number(1.0));
        assert_eq!(Some(Value::Bool(true)), Some(Value::Bool(true)));
        assert_ne!(Some(Value::Timestamp(0)), None);
        let set: HashSet<SmallStr> = ["x".into(), "x".into(), "a much longer string".into()]
            .into_iter()
            .collect();
        assert_eq!(set.len(), 2);
        assert!(set.contains("a much longer string"));
        assert_eq!(Value::Str("".into()).field_type(), FieldType::String);
    }
}
