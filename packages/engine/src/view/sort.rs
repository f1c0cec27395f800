//! Sort specifications: `field [asc|desc] {, field [asc|desc]}`, compiled to field ids, and the
//! order of typed values. Ties fall back to the container's natural order (done by the view).
//!
//! Value order within one key (ascending): numbers and timestamps numerically (together), then
//! strings in byte order (UTF-8 code point order, case-sensitive), then bools (false < true);
//! a missing field sorts last in both directions. `desc` reverses present values only.

use std::cmp::Ordering;

use crate::filter::lexer::{tokenize, Tok};
use crate::filter::parser::field_text;
use crate::filter::tokens::Describe;
use crate::filter::ParseError;
use crate::value::Value;

/// Most keys in one sort. @default 8
pub const MAX_SORT_KEYS: usize = tidewire_protocol::limits::MAX_VIEW_SORT_KEYS;

/// One parsed sort key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKey {
    /// Field name.
    pub field: String,
    /// Descending when true.
    pub desc: bool,
}

/// Parses sort text (empty or blank = natural order). `asc`/`desc` are case-insensitive; field
/// names may be quoted like in filters. Errors name the column and the expected token.
pub fn parse_sort(text: &str, max_len: usize) -> Result<Vec<SortKey>, ParseError> {
    if text.len() > max_len {
        return Err(ParseError::new(
            text[..max_len].chars().count() as u32 + 1,
            format!("sort is {} bytes long; at most {max_len} are allowed", text.len()),
        ));
    }
    let toks = tokenize(text)?;
    let mut keys = Vec::new();
    let mut i = 0;
    if toks[0].tok == Tok::End {
        return Ok(keys);
    }
    loop {
        let field = match &toks[i].tok {
            Tok::Ident(s) | Tok::Str(s) => s.clone(),
            t => {
                return Err(ParseError::new(
                    toks[i].col,
                    format!(
                        "expected a field name to sort by, found {}",
                        t.describe().replace("filter", "sort")
                    ),
                ))
            }
        };
        if keys.len() == MAX_SORT_KEYS {
            return Err(ParseError::new(
                toks[i].col,
                format!("a sort has at most {MAX_SORT_KEYS} keys"),
            ));
        }
        i += 1;
        let desc = match toks[i].tok {
            Tok::Kw("asc") => {
                i += 1;
                false
            }
            Tok::Kw("desc") => {
                i += 1;
                true
            }
            _ => false,
        };
        keys.push(SortKey { field, desc });
        match &toks[i].tok {
            Tok::End => return Ok(keys),
            Tok::Sym(",") => i += 1,
            t => {
                return Err(ParseError::new(
                    toks[i].col,
                    format!(
                        "expected 'asc', 'desc', ',' or end of sort, found {}",
                        t.describe().replace("filter", "sort")
                    ),
                ))
            }
        }
    }
}

/// Canonical sort text: `name asc, price desc` (direction always spelled).
pub fn sort_text(keys: &[SortKey]) -> String {
    keys.iter()
        .map(|k| format!("{} {}", field_text(&k.field), if k.desc { "desc" } else { "asc" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A compiled sort: field ids and directions.
#[derive(Debug, Clone, Default)]
pub struct Sort {
    keys: Vec<(u32, bool)>,
    fields: Vec<u32>,
}

impl Sort {
    /// Compiles `keys`, resolving names with `field_id`.
    pub fn compile(keys: &[SortKey], field_id: &mut dyn FnMut(&str) -> u32) -> Sort {
        let keys: Vec<(u32, bool)> = keys.iter().map(|k| (field_id(&k.field), k.desc)).collect();
        let mut fields: Vec<u32> = keys.iter().map(|k| k.0).collect();
        fields.sort_unstable();
        fields.dedup();
        Sort { keys, fields }
    }

    /// Field ids read, sorted, no duplicates (empty = natural order).
    pub fn fields(&self) -> &[u32] {
        &self.fields
    }

    /// `(field id, descending)` per key, in priority order.
    pub fn keys(&self) -> &[(u32, bool)] {
        &self.keys
    }

    /// True when there are no keys (natural order).
    pub fn is_natural(&self) -> bool {
        self.keys.is_empty()
    }

    /// A 128-bit summary of key tuple `key`'s first value that orders like [`Sort::compare`]
    /// as far as it goes: `prefix(a) < prefix(b)` implies `compare(a, b)` is `Less`, and
    /// `compare(a, b)` being `Less` implies `prefix(a) <= prefix(b)`; equal prefixes decide
    /// nothing. A bulk sort compares the prefixes (one integer compare) and runs the full
    /// comparison only on ties. The high bits hold the value's class (numbers, strings, bools,
    /// missing; reversed for `desc`, missing always last), the low 64 bits its order within the
    /// class: a number's (or timestamp's, as f64) total-order bits, a string's first 8 bytes.
    /// 0 for natural order.
    pub fn prefix(&self, key: &[Option<Value>]) -> u128 {
        let Some(&(_, desc)) = self.keys.first() else {
            return 0;
        };
        let (class, bits) = match key.first().and_then(Option::as_ref) {
            None => return 3 << 64,
            Some(Value::Number(x)) => (0u128, total_order_bits(*x)),
            Some(Value::Timestamp(t)) => (0, total_order_bits(*t as f64)),
            Some(Value::Str(s)) => {
                let mut b = [0u8; 8];
                let n = s.len().min(8);
                b[..n].copy_from_slice(&s.as_bytes()[..n]);
                (1, u64::from_be_bytes(b))
            }
            Some(Value::Bool(b)) => (2, *b as u64),
        };
        if desc {
            ((2 - class) << 64) | u128::from(!bits)
        } else {
            (class << 64) | u128::from(bits)
        }
    }

    /// Compares two cached key tuples (one `Option<Value>` per key, `None` = missing).
    pub fn compare(&self, a: &[Option<Value>], b: &[Option<Value>]) -> Ordering {
        for ((x, y), &(_, desc)) in a.iter().zip(b).zip(&self.keys) {
            let o = match (x, y) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(x), Some(y)) => {
                    let o = value_order(x, y);
                    if desc {
                        o.reverse()
                    } else {
                        o
                    }
                }
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

fn type_rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) | Value::Timestamp(_) => 0,
        Value::Str(_) => 1,
        Value::Bool(_) => 2,
    }
}

/// `x`'s bits mapped so that unsigned order is `f64::total_cmp` order.
#[inline]
fn total_order_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Ascending order of two present values (see the module doc).
pub fn value_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.total_cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.cmp(y),
        (Value::Number(x), Value::Timestamp(y)) => x.total_cmp(&(*y as f64)),
        (Value::Timestamp(x), Value::Number(y)) => (*x as f64).total_cmp(y),
        (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => type_rank(a).cmp(&type_rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prints_and_errors() {
        let keys = parse_sort(" name , price DESC, \"Last Price\" asc", 4096).unwrap();
        assert_eq!(sort_text(&keys), "name asc, price desc, \"Last Price\" asc");
        assert!(parse_sort("  ", 4096).unwrap().is_empty());
        let err = |t: &str| parse_sort(t, 4096).unwrap_err().to_string();
        assert_eq!(
            err("price desc name"),
            "at 12: expected 'asc', 'desc', ',' or end of sort, found field 'name'"
        );
        assert_eq!(
            err("price,"),
            "at 7: expected a field name to sort by, found end of sort"
        );
        assert_eq!(err("desc"), "at 1: expected a field name to sort by, found 'desc'");
        assert_eq!(err("a @"), "at 3: unexpected character '@'");
        assert_eq!(err("a,b,c,d,e,f,g,h,i"), "at 17: a sort has at most 8 keys");
        assert_eq!(
            parse_sort("abcdef", 3).unwrap_err().to_string(),
            "at 4: sort is 6 bytes long; at most 3 are allowed"
        );
    }

    #[test]
    fn orders_values_and_puts_missing_last() {
        let s = Sort::compile(
            &[SortKey {
                field: "a".into(),
                desc: true,
            }],
            &mut |_| 1,
        );
        let n = |x: f64| Some(Value::Number(x));
        assert_eq!(s.compare(&[n(2.0)], &[n(1.0)]), Ordering::Less);
        assert_eq!(s.compare(&[None], &[n(1.0)]), Ordering::Greater);
        assert_eq!(s.compare(&[n(1.0)], &[None]), Ordering::Less);
        assert_eq!(
            value_order(&Value::Timestamp(5), &Value::Number(4.5)),
            Ordering::Greater
        );
        assert_eq!(
            value_order(&Value::Str("B".into()), &Value::Str("a".into())),
            Ordering::Less
        );
        assert_eq!(
            value_order(&Value::Number(9.0), &Value::Str("a".into())),
            Ordering::Less
        );
        assert_eq!(
            value_order(&Value::Bool(false), &Value::Str("a".into())),
            Ordering::Greater
        );
    }

    #[test]
    fn prefix_never_contradicts_compare() {
        let vals: Vec<Option<Value>> = vec![
            None,
            Some(Value::Number(f64::NEG_INFINITY)),
            Some(Value::Number(-2.5)),
            Some(Value::Number(-0.0)),
            Some(Value::Number(0.0)),
            Some(Value::Number(1.0)),
            Some(Value::Number(9_007_199_254_740_993.0)),
            Some(Value::Timestamp(-1)),
            Some(Value::Timestamp(1)),
            Some(Value::Timestamp(9_007_199_254_740_993)),
            Some(Value::Timestamp(9_007_199_254_740_994)),
            Some(Value::Str("".into())),
            Some(Value::Str("\0".into())),
            Some(Value::Str("ab".into())),
            Some(Value::Str("ab\0".into())),
            Some(Value::Str("abcdefgh".into())),
            Some(Value::Str("abcdefgh Holdings".into())),
            Some(Value::Str("abcdefgi".into())),
            Some(Value::Str("é".into())),
            Some(Value::Bool(false)),
            Some(Value::Bool(true)),
        ];
        for desc in [false, true] {
            let s = Sort::compile(
                &[
                    SortKey {
                        field: "a".into(),
                        desc,
                    },
                    SortKey {
                        field: "b".into(),
                        desc: false,
                    },
                ],
                &mut |n| n.len() as u32,
            );
            for a in &vals {
                for b in &vals {
                    let (ka, kb) = ([a.clone(), None], [b.clone(), Some(Value::Number(1.0))]);
                    let (pa, pb) = (s.prefix(&ka), s.prefix(&kb));
                    let o = s.compare(&ka, &kb);
                    if pa != pb {
                        assert_eq!(pa.cmp(&pb), o, "{a:?} vs {b:?}, desc {desc}");
                    }
                }
            }
        }
        assert_eq!(Sort::default().prefix(&[]), 0, "natural order");
    }
}
