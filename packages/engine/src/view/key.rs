//! `KeyBuf`: the sort key values a view caches per row (one per sort key). A view sorted by at
//! most one key, the common case, keeps its value inline in the index entry: no allocation per
//! row for the tuple itself (a string value longer than 15 bytes still owns its own heap copy).

use std::ops::Deref;

use crate::value::Value;

/// A row's cached sort key tuple: one `Option<Value>` per sort key (`None` = the row lacks the
/// field), read as a slice. Empty for natural order; inline for one key; one boxed slice for two
/// or more keys.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum KeyBuf {
    /// No sort keys (natural order).
    #[default]
    Empty,
    /// Exactly one sort key.
    One(Option<Value>),
    /// Two or more sort keys.
    Many(Box<[Option<Value>]>),
}

impl Deref for KeyBuf {
    type Target = [Option<Value>];

    #[inline]
    fn deref(&self) -> &[Option<Value>] {
        match self {
            KeyBuf::Empty => &[],
            KeyBuf::One(v) => std::slice::from_ref(v),
            KeyBuf::Many(b) => b,
        }
    }
}

impl FromIterator<Option<Value>> for KeyBuf {
    /// Collects key values in sort-key order: none -> `Empty`, one -> `One`, more -> `Many`.
    fn from_iter<I: IntoIterator<Item = Option<Value>>>(iter: I) -> Self {
        let mut it = iter.into_iter();
        let Some(first) = it.next() else {
            return KeyBuf::Empty;
        };
        let Some(second) = it.next() else {
            return KeyBuf::One(first);
        };
        let mut all = Vec::with_capacity(2 + it.size_hint().0);
        all.push(first);
        all.push(second);
        all.extend(it);
        KeyBuf::Many(all.into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_by_length_and_reads_back_as_the_same_slice() {
        for n in 0..5usize {
            let vals: Vec<Option<Value>> = (0..n)
                .map(|i| match i % 3 {
                    0 => None,
                    1 => Some(Value::Number(i as f64)),
                    _ => Some(Value::Str("a string longer than fifteen bytes".into())),
                })
                .collect();
            let k: KeyBuf = vals.iter().cloned().collect();
            assert_eq!(&*k, vals.as_slice(), "{n} keys");
            let inline = matches!(
                (n, &k),
                (0, KeyBuf::Empty) | (1, KeyBuf::One(_)) | (2.., KeyBuf::Many(_))
            );
            assert!(inline, "{n} keys collected as {k:?}");
            assert_eq!(k.clone(), k);
        }
        assert_eq!(&*KeyBuf::default(), &[] as &[Option<Value>]);
    }
}
