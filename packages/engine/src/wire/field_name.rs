//! [`FieldName`]: the name of a publish's field, built without a heap allocation for the names
//! the engine writes itself (`&'static str`) and for decoded names of at most
//! [`INLINE_STR_BYTES`] bytes (most names: `bid`, `ask`, `status`...). Longer decoded names
//! (up to `MAX_FIELD_NAME_BYTES`) take one allocation.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use crate::value::{SmallStr, INLINE_STR_BYTES};

#[derive(Clone)]
enum Repr {
    /// A name the engine spells itself (order records, tests).
    Static(&'static str),
    /// A decoded name of at most [`INLINE_STR_BYTES`] bytes, held inline (never `SmallStr`'s heap form).
    Inline(SmallStr),
    /// A longer decoded name: one allocation.
    Boxed(Box<str>),
}

/// A field name (UTF-8, as validated by the decoder or spelled by the engine). Derefs to `str`;
/// compares and hashes as its text, whichever way it is held. 24 bytes.
#[derive(Clone)]
pub struct FieldName(Repr);

impl FieldName {
    /// A name from a string literal: no allocation, no copy.
    pub const fn from_static(name: &'static str) -> FieldName {
        FieldName(Repr::Static(name))
    }

    /// The name's text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Inline(s) => s.as_str(),
            Repr::Boxed(s) => s,
        }
    }

    /// True when the name holds a heap allocation (a built name longer than [`INLINE_STR_BYTES`]).
    pub fn is_heap(&self) -> bool {
        matches!(self.0, Repr::Boxed(_))
    }
}

impl From<&str> for FieldName {
    /// Copies `name`: inline when at most [`INLINE_STR_BYTES`] bytes, else one allocation.
    #[inline]
    fn from(name: &str) -> Self {
        if name.len() <= INLINE_STR_BYTES {
            FieldName(Repr::Inline(SmallStr::from(name)))
        } else {
            FieldName(Repr::Boxed(name.into()))
        }
    }
}

impl From<String> for FieldName {
    /// Takes `name`: inline when short (the `String` is freed), else its buffer is kept.
    fn from(name: String) -> Self {
        if name.len() <= INLINE_STR_BYTES {
            FieldName::from(name.as_str())
        } else {
            FieldName(Repr::Boxed(name.into_boxed_str()))
        }
    }
}

impl Deref for FieldName {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for FieldName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for FieldName {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for FieldName {
    #[inline]
    fn eq(&self, other: &FieldName) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for FieldName {}

impl PartialEq<str> for FieldName {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for FieldName {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<FieldName> for str {
    fn eq(&self, other: &FieldName) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<FieldName> for &str {
    fn eq(&self, other: &FieldName) -> bool {
        *self == other.as_str()
    }
}

impl Hash for FieldName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads_and_compares_as_its_text() {
        let long = "a".repeat(64);
        let names = [
            FieldName::from_static("bid"),
            FieldName::from("bid"),
            FieldName::from(String::from("bid")),
        ];
        for n in &names {
            assert_eq!(n.as_str(), "bid");
            assert_eq!(*n, "bid");
            assert_eq!(n, &names[0]);
            assert!(!n.is_heap());
            assert_eq!(format!("{n}|{n:?}"), "bid|\"bid\"");
        }
        let edge = "x".repeat(INLINE_STR_BYTES);
        assert!(!FieldName::from(edge.as_str()).is_heap());
        let over = "x".repeat(INLINE_STR_BYTES + 1);
        assert!(FieldName::from(over.as_str()).is_heap());
        assert_eq!(FieldName::from(over.as_str()), over.as_str());
        let boxed = FieldName::from(long.clone());
        assert!(boxed.is_heap());
        assert_eq!(boxed.as_str(), long);
        assert_ne!(boxed, FieldName::from_static("bid"));
        // Multi-byte text stays whole.
        assert_eq!(FieldName::from("prixÉté").as_str(), "prixÉté");
        let hash = |n: &FieldName| {
            use std::collections::hash_map::DefaultHasher;
            let mut h = DefaultHasher::new();
            n.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&names[0]), hash(&names[1]));
        assert_eq!(std::mem::size_of::<FieldName>(), 24);
    }
}
