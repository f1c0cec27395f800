//! Server -> client message encoder. Output is byte-identical to JavaScript's
//! `JSON.stringify` of the message with the canonical key order of
//! packages/protocol/src/messages.ts (pinned by the golden frames in packages/protocol/vectors).
//!
//! Every function appends one message object (no surrounding `[`/`]`) to `out`; a frame is
//! `[` + messages joined by `,` + `]` (see `session::Outbox`).

use crate::error::ErrorCode;
use crate::value::{FieldType, Value};

/// One field of an image or update: name, value (`None` = deleted, encoded `null`), and the
/// type to name in the message's `types` map (the store names timestamps only).
pub type FieldRef<'a> = (&'a str, Option<&'a Value>, Option<FieldType>);

/// One subject's acknowledgement inside `record.subscribed`.
#[derive(Debug, Clone, PartialEq)]
pub struct SubscribedRef<'a> {
    /// The subject as subscribed.
    pub subject: &'a str,
    /// Its server-wide id.
    pub id: u32,
    /// true when no source has published it yet.
    pub pending: bool,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string exactly like `JSON.stringify`: `\"` `\\` `\b` `\f` `\n` `\r` `\t`,
/// other control characters as `\u00xx` (lowercase hex), everything else raw UTF-8.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => &[],
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends a number as JavaScript prints it (`5.0` -> `5`, `1e21` -> `1e+21`, `-0` -> `0`).
/// Non-finite numbers (never stored) print `null`, as `JSON.stringify` does.
pub fn write_f64(out: &mut Vec<u8>, n: f64) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    if n == 0.0 {
        out.push(b'0');
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(n).as_bytes());
}

/// Appends an unsigned integer in decimal.
pub fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn write_value(out: &mut Vec<u8>, v: Option<&Value>) {
    match v {
        None => out.extend_from_slice(b"null"),
        Some(Value::Number(n)) => write_f64(out, *n),
        Some(Value::Str(s)) => write_str(out, s),
        Some(Value::Bool(true)) => out.extend_from_slice(b"true"),
        Some(Value::Bool(false)) => out.extend_from_slice(b"false"),
        // Exact for |ms| <= 2^53 (every real date); JSON.stringify prints the same digits.
        Some(Value::Timestamp(ms)) => write_f64(out, *ms as f64),
    }
}

/// `"fields":{...}` then, when any value is a timestamp, `,"types":{...}`.
pub(crate) fn write_fields<'a, I>(out: &mut Vec<u8>, fields: I)
where
    I: Iterator<Item = FieldRef<'a>> + Clone,
{
    out.extend_from_slice(b",\"fields\":{");
    let mut first = true;
    let mut any_typed = false;
    for (name, value, ty) in fields.clone() {
        if !first {
            out.push(b',');
        }
        first = false;
        write_str(out, name);
        out.push(b':');
        write_value(out, value);
        any_typed |= ty.is_some();
    }
    out.push(b'}');
    if any_typed {
        out.extend_from_slice(b",\"types\":{");
        let mut first = true;
        for (name, _, ty) in fields {
            if let Some(ty) = ty {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_str(out, name);
                out.push(b':');
                write_str(out, ty.as_str());
            }
        }
        out.push(b'}');
    }
}

/// `record.subscribed`: `{"type","reqId","records":[{"subject","id","pending"}]}`.
pub fn subscribed(out: &mut Vec<u8>, req_id: u32, records: &[SubscribedRef<'_>]) {
    acks(out, b"{\"type\":\"record.subscribed\",\"reqId\":", req_id, records);
}

/// `head` (`{"type":..,"reqId":`) + the reqId and the acknowledged records.
fn acks(out: &mut Vec<u8>, head: &[u8], req_id: u32, records: &[SubscribedRef<'_>]) {
    out.extend_from_slice(head);
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"records\":[");
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"subject\":");
        write_str(out, r.subject);
        out.extend_from_slice(b",\"id\":");
        write_u64(out, r.id.into());
        out.extend_from_slice(if r.pending {
            b",\"pending\":true}"
        } else {
            b",\"pending\":false}"
        });
    }
    out.extend_from_slice(b"]}");
}

/// `{"type":"record.resumed","reqId":..,"records":[{"subject":..,"id":..,"pending":..},..]}`.
pub fn resumed(out: &mut Vec<u8>, req_id: u32, records: &[SubscribedRef<'_>]) {
    acks(out, b"{\"type\":\"record.resumed\",\"reqId\":", req_id, records);
}

/// Flags the `record.image` that `out` ends with as a reset (`,"reset":true` before its closing
/// brace): a resume could not replay what the client missed.
pub fn flag_reset(out: &mut Vec<u8>) {
    if out.last() == Some(&b'}') {
        out.pop();
        out.extend_from_slice(b",\"reset\":true}");
    }
}

/// `{"type":"record.status","id":..,"status":"ok"|"stale"}`.
pub fn record_status(out: &mut Vec<u8>, id: u32, stale: bool) {
    out.extend_from_slice(b"{\"type\":\"record.status\",\"id\":");
    write_u64(out, id.into());
    out.extend_from_slice(if stale {
        b",\"status\":\"stale\"}"
    } else {
        b",\"status\":\"ok\"}"
    });
}

/// `{"type":"source.registered","reqId":..,"active":..}`.
pub fn source_registered(out: &mut Vec<u8>, req_id: u32, active: bool) {
    out.extend_from_slice(b"{\"type\":\"source.registered\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(if active {
        b",\"active\":true}"
    } else {
        b",\"active\":false}"
    });
}

/// `{"type":"source.activate","patterns":[...]}`.
pub fn source_activate<S: AsRef<str>>(out: &mut Vec<u8>, patterns: &[S]) {
    out.extend_from_slice(b"{\"type\":\"source.activate\",\"patterns\":[");
    for (i, p) in patterns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, p.as_ref());
    }
    out.extend_from_slice(b"]}");
}

/// `record.unsubscribed`: `{"type","reqId","subjects":[...]}`.
pub fn unsubscribed<S: AsRef<str>>(out: &mut Vec<u8>, req_id: u32, subjects: &[S]) {
    out.extend_from_slice(b"{\"type\":\"record.unsubscribed\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"subjects\":[");
    for (i, s) in subjects.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, s.as_ref());
    }
    out.extend_from_slice(b"]}");
}

/// `record.image`: `{"type","id","subject","seq","ts","fields"[,"types"]}`; fields in record order.
pub fn image<'a, I>(out: &mut Vec<u8>, id: u32, subject: &str, seq: u64, ts: f64, fields: I)
where
    I: Iterator<Item = FieldRef<'a>> + Clone,
{
    out.extend_from_slice(b"{\"type\":\"record.image\",");
    write_image_body(out, id, subject, seq, ts, fields);
}

/// The part of a record image after the object's leading keys: `"id","subject","seq","ts",
/// "fields"[,"types"]}` (closes the object). Shared by `record.image` and view row images, so
/// both carry a record the same way.
#[inline]
pub(crate) fn write_image_body<'a, I>(out: &mut Vec<u8>, id: u32, subject: &str, seq: u64, ts: f64, fields: I)
where
    I: Iterator<Item = FieldRef<'a>> + Clone,
{
    out.extend_from_slice(b"\"id\":");
    write_u64(out, id.into());
    out.extend_from_slice(b",\"subject\":");
    write_str(out, subject);
    out.extend_from_slice(b",\"seq\":");
    write_u64(out, seq);
    out.extend_from_slice(b",\"ts\":");
    write_f64(out, ts);
    write_fields(out, fields);
    out.push(b'}');
}

/// `record.update`: `{"type","id","seq","ts","fields"[,"types"][,"conflated":true]}`.
pub fn update<'a, I>(out: &mut Vec<u8>, id: u32, seq: u64, ts: f64, fields: I, conflated: bool)
where
    I: Iterator<Item = FieldRef<'a>> + Clone,
{
    out.extend_from_slice(b"{\"type\":\"record.update\",");
    write_update_body(out, id, seq, ts, fields, conflated);
    out.push(b'}');
}

/// The body shared by `record.update` and a `view.rows` `updated` item, without braces:
/// `"id":..,"seq":..,"ts":..,"fields":{..}[,"types":{..}][,"conflated":true]`.
pub fn write_update_body<'a, I>(out: &mut Vec<u8>, id: u32, seq: u64, ts: f64, fields: I, conflated: bool)
where
    I: Iterator<Item = FieldRef<'a>> + Clone,
{
    out.extend_from_slice(b"\"id\":");
    write_u64(out, id.into());
    out.extend_from_slice(b",\"seq\":");
    write_u64(out, seq);
    out.extend_from_slice(b",\"ts\":");
    write_f64(out, ts);
    write_fields(out, fields);
    if conflated {
        out.extend_from_slice(b",\"conflated\":true");
    }
}

/// `error`: `{"type","reqId"?,"code","message","field"?,"index"?}`.
pub fn error(
    out: &mut Vec<u8>,
    req_id: Option<u32>,
    code: ErrorCode,
    message: &str,
    field: Option<&str>,
    index: Option<u32>,
) {
    out.extend_from_slice(b"{\"type\":\"error\"");
    if let Some(r) = req_id {
        out.extend_from_slice(b",\"reqId\":");
        write_u64(out, r.into());
    }
    out.extend_from_slice(b",\"code\":");
    write_str(out, code.as_str());
    out.extend_from_slice(b",\"message\":");
    write_str(out, message);
    if let Some(f) = field {
        out.extend_from_slice(b",\"field\":");
        write_str(out, f);
    }
    if let Some(i) = index {
        out.extend_from_slice(b",\"index\":");
        write_u64(out, i.into());
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(n: f64) -> String {
        let mut v = Vec::new();
        write_f64(&mut v, n);
        String::from_utf8(v).unwrap()
    }

    fn s(x: &str) -> String {
        let mut v = Vec::new();
        write_str(&mut v, x);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(num(5.0), "5");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(1.0841), "1.0841");
        assert_eq!(num(1e21), "1e+21");
        assert_eq!(num(1e20), "100000000000000000000");
        assert_eq!(num(-0.000001), "-0.000001");
        assert_eq!(num(1e-7), "1e-7");
        assert_eq!(num(1700000000000.25), "1700000000000.25");
        assert_eq!(num(f64::NAN), "null");
        assert_eq!(num(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(s("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(s("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(s("\u{1}\u{1f}"), r#""\u0001\u001f""#);
        assert_eq!(s("é€😀\u{2028}\u{7f}"), "\"é€😀\u{2028}\u{7f}\"");
        assert_eq!(s(""), "\"\"");
    }

    #[test]
    fn integers() {
        let mut v = Vec::new();
        write_u64(&mut v, 0);
        v.push(b' ');
        write_u64(&mut v, u64::MAX);
        assert_eq!(String::from_utf8(v).unwrap(), "0 18446744073709551615");
    }
}
