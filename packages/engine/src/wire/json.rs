//! A borrowed, order-preserving JSON tree: one serde_json pass over a source frame, strings
//! borrowed from the input unless they contain escapes. Key order matters to us (it is the
//! record's field order) and duplicate keys must be seen (we reject them), so serde_json's
//! `Value` (sorted map, last duplicate wins) does not fit.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value; objects keep their keys in input order, duplicates included.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// Any number, as JavaScript would read it (a double).
    Num(f64),
    /// A string.
    Str(Cow<'a, str>),
    /// An array.
    Arr(Vec<Json<'a>>),
    /// An object, keys in input order.
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl Json<'_> {
    /// What kind of value this is, for error messages (`"an object"`, `"a string"`...).
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(_) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }

    /// The value re-encoded as JSON (as `JSON.stringify` would print it).
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.write(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn write(&self, out: &mut Vec<u8>) {
        use super::encode::{write_f64, write_str};
        match self {
            Json::Null => out.extend_from_slice(b"null"),
            Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Json::Num(n) => write_f64(out, *n),
            Json::Str(s) => write_str(out, s),
            Json::Arr(items) => {
                out.push(b'[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    v.write(out);
                }
                out.push(b']');
            }
            Json::Obj(entries) => {
                out.push(b'{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_str(out, k);
                    out.push(b':');
                    v.write(out);
                }
                out.push(b'}');
            }
        }
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(Json::Num(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        while let Some(Key(k)) = map.next_key()? {
            entries.push((k, map.next_value()?));
        }
        if let [(k, Json::Str(lit))] = entries.as_slice() {
            if k == HUGE_NUMBER_KEY {
                let n = if lit.starts_with('-') {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
                return Ok(Json::Num(n));
            }
        }
        Ok(Json::Obj(entries))
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// Key of the one-entry object that stands for a number too large for a double (see `parse`).
const HUGE_NUMBER_KEY: &str = "$tidewire$huge";

/// Parses `text` into a borrowed tree; `Err` is serde_json's message (line, column).
///
/// Like `JSON.parse`, a number literal beyond the double range (`1e999`) reads as ±Infinity, so
/// validation can name the field holding it; serde_json refuses such numbers, so on that error
/// the text is re-parsed with those literals marked.
pub fn parse(text: &str) -> Result<Json<'_>, String> {
    match serde_json::from_str(text) {
        Ok(j) => Ok(j),
        Err(e) if e.to_string().starts_with("number out of range") => {
            let marked = mark_huge_numbers(text);
            match serde_json::from_str::<Json<'_>>(&marked) {
                Ok(j) => Ok(j.into_owned()),
                Err(_) => Err(e.to_string()),
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Rewrites number literals outside strings that overflow a double as
/// `{"$tidewire$huge":"<literal>"}` (read back as ±Infinity).
fn mark_huge_numbers(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let (mut i, mut copied, mut in_str) = (0, 0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        if c == b'-' || c.is_ascii_digit() {
            let start = i;
            while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                i += 1;
            }
            let lit = &text[start..i];
            if lit.parse::<f64>().is_ok_and(|n| n.is_infinite()) {
                out.push_str(&text[copied..start]);
                out.push_str("{\"");
                out.push_str(HUGE_NUMBER_KEY);
                out.push_str("\":\"");
                out.push_str(lit);
                out.push_str("\"}");
                copied = i;
            }
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

impl Json<'_> {
    /// Detaches the tree from its input.
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Num(n) => Json::Num(n),
            Json::Str(s) => Json::Str(Cow::Owned(s.into_owned())),
            Json::Arr(a) => Json::Arr(a.into_iter().map(Json::into_owned).collect()),
            Json::Obj(o) => Json::Obj(
                o.into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_duplicates_and_borrows() {
        let j = parse(r#"{"b":1,"a":[true,null,"x\n"],"b":2.5}"#).unwrap();
        let Json::Obj(e) = &j else { panic!("object expected") };
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].0, "b");
        assert!(matches!(e[0].0, Cow::Borrowed(_)));
        assert_eq!(e[2].1, Json::Num(2.5));
        assert_eq!(j.to_json(), r#"{"b":1,"a":[true,null,"x\n"],"b":2.5}"#);
        assert!(parse("[1,").is_err());
        assert_eq!(
            parse(r#"[1e999,"1e999",-1e400,2]"#).unwrap(),
            Json::Arr(vec![
                Json::Num(f64::INFINITY),
                Json::Str("1e999".into()),
                Json::Num(f64::NEG_INFINITY),
                Json::Num(2.0)
            ])
        );
        assert!(parse(r#"[1e999,"#).is_err());
        assert_eq!(parse("18446744073709551615").unwrap(), Json::Num(1.8446744073709552e19));
    }
}
