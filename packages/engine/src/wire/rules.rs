//! Wire rules shared by the decoder and the subscription commands; the limits and byte classes
//! are the protocol's (the crate tidewire-protocol, generated from
//! packages/protocol/schema/protocol.json).

pub use tidewire_protocol::limits::{
    MAX_FIELDS_PER_RECORD, MAX_FIELD_NAME_BYTES, MAX_PUBLISHES_PER_FRAME, MAX_STRING_VALUE_BYTES,
    MAX_SUBJECTS_PER_REQUEST, MAX_SUBJECT_BYTES,
};
use tidewire_protocol::syntax::{
    is_field_name_byte, is_field_name_start_byte, is_subject_segment_byte as is_segment_byte,
};

/// Checks `SUBJECT_PATTERN` (`/seg(/seg)*`, segments of `[A-Za-z0-9_.@:-]`) and the length.
/// `Err` is the rule broken, phrased to follow "must ...".
pub fn check_subject(s: &str) -> Result<(), &'static str> {
    let b = s.as_bytes();
    if b.first() != Some(&b'/') {
        return Err("must be a subject starting with '/'");
    }
    if b.len() > MAX_SUBJECT_BYTES {
        return Err("must be at most 256 bytes");
    }
    let mut prev_slash = true;
    for &c in &b[1..] {
        if c == b'/' {
            if prev_slash {
                return Err("must not contain an empty segment");
            }
            prev_slash = true;
        } else if is_segment_byte(c) {
            prev_slash = false;
        } else {
            return Err("must contain only [A-Za-z0-9_.@:-] between '/' separators");
        }
    }
    if prev_slash {
        return Err("must not end with '/'");
    }
    Ok(())
}

/// Checks `FIELD_NAME_PATTERN` (`[A-Za-z_][A-Za-z0-9_]*`) and `MAX_FIELD_NAME_BYTES`.
pub fn check_field_name(s: &str) -> Result<(), &'static str> {
    let b = s.as_bytes();
    match b.first() {
        Some(&c) if is_field_name_start_byte(c) => {}
        _ => return Err("must be a field name starting with a letter or '_'"),
    }
    if b.len() > MAX_FIELD_NAME_BYTES {
        return Err("must be at most 64 bytes");
    }
    if !b.iter().all(|&c| is_field_name_byte(c)) {
        return Err("must contain only letters, digits and '_'");
    }
    Ok(())
}

/// A short JSON rendering of a value for error messages (strings quoted, long ones cut).
pub fn show(raw: &str) -> String {
    const MAX: usize = 40;
    if raw.len() <= MAX {
        return raw.to_owned();
    }
    let mut end = MAX;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &raw[..end])
}

/// `show` of a string value, JSON-quoted.
pub fn show_str(s: &str) -> String {
    let mut v = Vec::new();
    super::encode::write_str(&mut v, s);
    show(&String::from_utf8_lossy(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        assert!(check_subject("/FX/EURUSD").is_ok());
        assert!(check_subject("/FX/EURUSD@T2").is_ok());
        assert!(check_subject("/a.b:c-d_e").is_ok());
        assert_eq!(check_subject("EURUSD"), Err("must be a subject starting with '/'"));
        assert_eq!(check_subject(""), Err("must be a subject starting with '/'"));
        assert!(check_subject("/").is_err());
        assert!(check_subject("/FX//X").is_err());
        assert!(check_subject("/FX/").is_err());
        assert!(check_subject("/FX/EUR USD").is_err());
        assert!(check_subject("/FX/é").is_err());
        let long = format!("/{}", "a".repeat(255));
        assert!(check_subject(&long).is_ok());
        assert_eq!(check_subject(&format!("{long}a")), Err("must be at most 256 bytes"));
    }

    #[test]
    fn field_names() {
        assert!(check_field_name("bid").is_ok());
        assert!(check_field_name("_x1").is_ok());
        assert!(check_field_name("1x").is_err());
        assert!(check_field_name("").is_err());
        assert!(check_field_name("a-b").is_err());
        assert!(check_field_name(&"a".repeat(64)).is_ok());
        assert!(check_field_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn show_cuts_long_values() {
        assert_eq!(show("1"), "1");
        assert_eq!(show(&"x".repeat(50)), format!("{}...", "x".repeat(40)));
        assert_eq!(show_str("a\"b"), "\"a\\\"b\"");
    }
}
