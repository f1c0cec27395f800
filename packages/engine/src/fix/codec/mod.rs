//! FIX tag=value codec: [`Framer`] cuts a TCP byte stream into messages (BodyLength and
//! CheckSum verified, garbled data reported and skipped), [`Parser`] indexes a message's fields
//! as byte ranges into the frame (no copy, no per-message allocation once warm), and
//! [`Builder`] writes a message into a reused buffer with BodyLength and CheckSum filled in.

mod build;
mod frame;
mod parse;
pub mod time;

pub use build::Builder;
pub use frame::{Frame, Framer, GarbledReason};
pub use parse::{FieldSpan, Message, ParseError, Parser};

/// The field delimiter, SOH (0x01).
pub const SOH: u8 = 0x01;

/// Standard tags the codec and the session layer refer to by number.
pub mod tag {
    pub const BEGIN_SEQ_NO: u32 = 7;
    pub const BEGIN_STRING: u32 = 8;
    pub const BODY_LENGTH: u32 = 9;
    pub const CHECK_SUM: u32 = 10;
    pub const CL_ORD_ID: u32 = 11;
    pub const END_SEQ_NO: u32 = 16;
    pub const MSG_SEQ_NUM: u32 = 34;
    pub const MSG_TYPE: u32 = 35;
    pub const NEW_SEQ_NO: u32 = 36;
    pub const POSS_DUP_FLAG: u32 = 43;
    pub const REF_SEQ_NUM: u32 = 45;
    pub const SENDER_COMP_ID: u32 = 49;
    pub const SENDING_TIME: u32 = 52;
    pub const TARGET_COMP_ID: u32 = 56;
    pub const TEXT: u32 = 58;
    pub const POSS_RESEND: u32 = 97;
    pub const ENCRYPT_METHOD: u32 = 98;
    pub const HEART_BT_INT: u32 = 108;
    pub const TEST_REQ_ID: u32 = 112;
    pub const ON_BEHALF_OF_COMP_ID: u32 = 115;
    pub const ON_BEHALF_OF_SUB_ID: u32 = 116;
    pub const ORIG_SENDING_TIME: u32 = 122;
    pub const GAP_FILL_FLAG: u32 = 123;
    pub const DELIVER_TO_COMP_ID: u32 = 128;
    pub const DELIVER_TO_SUB_ID: u32 = 129;
    pub const RESET_SEQ_NUM_FLAG: u32 = 141;
    pub const ON_BEHALF_OF_LOCATION_ID: u32 = 144;
    pub const DELIVER_TO_LOCATION_ID: u32 = 145;
    pub const USERNAME: u32 = 553;
    pub const PASSWORD: u32 = 554;
    pub const REF_TAG_ID: u32 = 371;
    pub const REF_MSG_TYPE: u32 = 372;
    pub const SESSION_REJECT_REASON: u32 = 373;
    pub const BUSINESS_REJECT_REASON: u32 = 380;
    pub const NEXT_EXPECTED_MSG_SEQ_NUM: u32 = 789;
}

/// (length tag, data tag) pairs of the DATA fields of FIX 4.2 and 4.4: the data field's value
/// is exactly the length field's value in bytes and may contain SOH.
pub const DATA_PAIRS: &[(u32, u32)] = &[
    (90, 91),
    (93, 89),
    (95, 96),
    (212, 213),
    (348, 349),
    (350, 351),
    (352, 353),
    (354, 355),
    (356, 357),
    (358, 359),
    (360, 361),
    (362, 363),
    (364, 365),
    (445, 446),
    (618, 619),
    (621, 622),
];

/// Parses an unsigned decimal (digits only, no sign, at most 18 digits).
pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 18 {
        return None;
    }
    let mut n: u64 = 0;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    Some(n)
}

/// Parses a signed decimal integer (optional leading '-', digits, at most 18 digits).
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    match bytes.split_first() {
        Some((b'-', rest)) => parse_u64(rest).map(|n| -(n as i64)),
        _ => parse_u64(bytes).map(|n| n as i64),
    }
}

/// Appends the decimal digits of `n`.
pub fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Appends `n` in decimal, with a leading '-' when negative.
pub fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip() {
        for n in [0i64, 7, -1, 42, 999_999, -123_456_789] {
            let mut out = Vec::new();
            push_i64(&mut out, n);
            assert_eq!(parse_i64(&out), Some(n));
        }
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"+1"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_i64(b"-"), None);
    }
}
