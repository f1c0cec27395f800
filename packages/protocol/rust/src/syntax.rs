// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

//! Syntax rules of subjects, field names and client order ids (the TypeScript `SUBJECT_PATTERN`,
//! `FIELD_NAME_PATTERN`, `CLIENT_ORDER_ID_PATTERN`), as byte predicates.

use crate::limits::{MAX_CLIENT_ORDER_ID_CHARS, MAX_FIELD_NAME_BYTES, MAX_SUBJECT_BYTES};

/// `SUBJECT_PATTERN`: Subject syntax: '/' then segments of [A-Za-z0-9_.@:-], separated by '/'.
pub const SUBJECT_PATTERN: &str = "^/[A-Za-z0-9_.@:-]+(?:/[A-Za-z0-9_.@:-]+)*$";
/// `FIELD_NAME_PATTERN`: A field name: a letter or '_' first, then letters, digits, '_'; never numeric-only (JSON key order).
pub const FIELD_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";
/// `CLIENT_ORDER_ID_PATTERN`: `clientOrderId` syntax: 1..MAX_CLIENT_ORDER_ID_CHARS of letters, digits and `._:-`.
pub const CLIENT_ORDER_ID_PATTERN: &str = "^[A-Za-z0-9._:-]{1,64}$";

/// A byte of a subject segment: `[A-Za-z0-9_.@:-]`.
#[inline]
pub fn is_subject_segment_byte(b: u8) -> bool {
    matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'@' | b':' | b'-')
}

/// The first byte of a field name: `[A-Za-z_]`.
#[inline]
pub fn is_field_name_start_byte(b: u8) -> bool {
    matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'_')
}

/// A byte of a field name after the first: `[A-Za-z0-9_]`.
#[inline]
pub fn is_field_name_byte(b: u8) -> bool {
    matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_')
}

/// A byte of a client order id: `[A-Za-z0-9._:-]`.
#[inline]
pub fn is_client_order_id_byte(b: u8) -> bool {
    matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b':' | b'-')
}

/// `SUBJECT_PATTERN` and `MAX_SUBJECT_BYTES`: '/' then non-empty segments separated by single '/', no
/// trailing '/'.
pub fn is_subject(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 2 || b.len() > MAX_SUBJECT_BYTES || b[0] != b'/' || b[b.len() - 1] == b'/' {
        return false;
    }
    let mut prev_slash = true;
    for &c in &b[1..] {
        if c == b'/' {
            if prev_slash {
                return false;
            }
            prev_slash = true;
        } else if is_subject_segment_byte(c) {
            prev_slash = false;
        } else {
            return false;
        }
    }
    true
}

/// `FIELD_NAME_PATTERN` and `MAX_FIELD_NAME_BYTES`.
pub fn is_field_name(s: &str) -> bool {
    let b = s.as_bytes();
    let Some((&first, rest)) = b.split_first() else {
        return false;
    };
    b.len() <= MAX_FIELD_NAME_BYTES && is_field_name_start_byte(first) && rest.iter().all(|&c| is_field_name_byte(c))
}

/// `CLIENT_ORDER_ID_PATTERN`: 1..=`MAX_CLIENT_ORDER_ID_CHARS` bytes, each a client order id byte.
pub fn is_client_order_id(s: &str) -> bool {
    (1..=MAX_CLIENT_ORDER_ID_CHARS).contains(&s.len()) && s.bytes().all(is_client_order_id_byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        for s in ["/A", "/a/b", "/x@T1", "/_.:-/9"] {
            assert!(is_subject(s), "{s}");
        }
        for s in ["", "/", "//", "/a/", "a", "/a b", "/a//b", "/a\u{e9}"] {
            assert!(!is_subject(s), "{s}");
        }
        assert!(is_subject(&format!("/{}", "a".repeat(MAX_SUBJECT_BYTES - 1))));
        assert!(!is_subject(&format!("/{}", "a".repeat(MAX_SUBJECT_BYTES))));
    }

    #[test]
    fn field_names() {
        for s in ["bid", "_x1", "A"] {
            assert!(is_field_name(s), "{s}");
        }
        for s in ["", "1x", "a-b", "a b", "\u{e9}"] {
            assert!(!is_field_name(s), "{s}");
        }
        assert!(is_field_name(&"a".repeat(MAX_FIELD_NAME_BYTES)));
        assert!(!is_field_name(&"a".repeat(MAX_FIELD_NAME_BYTES + 1)));
    }

    #[test]
    fn client_order_ids() {
        assert!(is_client_order_id("a.b_c:d-e") && is_client_order_id(&"z".repeat(MAX_CLIENT_ORDER_ID_CHARS)));
        assert!(!is_client_order_id("") && !is_client_order_id(&"z".repeat(MAX_CLIENT_ORDER_ID_CHARS + 1)));
        assert!(!is_client_order_id("a/b") && !is_client_order_id("a@b"));
    }
}
