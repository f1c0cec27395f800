//! FIX UTC time formats: UTCTimestamp (`YYYYMMDD-HH:MM:SS[.sss]`), UTCTimeOnly, UTCDateOnly,
//! LocalMktDate and MonthYear, without any clock access (the session passes time in).

use crate::filter::time::{civil_from_days, days_from_civil};

/// Appends `utc_ms` (milliseconds since the Unix epoch) as `YYYYMMDD-HH:MM:SS.sss`.
pub fn push_utc_timestamp(out: &mut Vec<u8>, utc_ms: i64) {
    let days = utc_ms.div_euclid(86_400_000);
    let ms_of_day = utc_ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    push_digits(out, y.clamp(0, 9999) as u64, 4);
    push_digits(out, u64::from(m), 2);
    push_digits(out, u64::from(d), 2);
    out.push(b'-');
    push_digits(out, (ms_of_day / 3_600_000) as u64, 2);
    out.push(b':');
    push_digits(out, (ms_of_day / 60_000 % 60) as u64, 2);
    out.push(b':');
    push_digits(out, (ms_of_day / 1000 % 60) as u64, 2);
    out.push(b'.');
    push_digits(out, (ms_of_day % 1000) as u64, 3);
}

/// Parses a UTCTimestamp (`YYYYMMDD-HH:MM:SS` with an optional `.sss`, `.ssssss` or
/// `.sssssssss` fraction) into milliseconds since the Unix epoch; `None` if malformed.
/// A leap second (`:60`) is accepted and counted as the next second.
pub fn parse_utc_timestamp(b: &[u8]) -> Option<i64> {
    if b.len() < 17 || b[8] != b'-' {
        return None;
    }
    let days = parse_date(&b[..8])?;
    let (ms_of_day, rest) = parse_time(&b[9..])?;
    if !rest.is_empty() {
        return None;
    }
    Some(days * 86_400_000 + ms_of_day)
}

/// True if `b` is a UTCTimeOnly: `HH:MM:SS` with an optional fraction as for timestamps.
pub fn is_utc_time_only(b: &[u8]) -> bool {
    matches!(parse_time(b), Some((_, rest)) if rest.is_empty())
}

/// True if `b` is a date `YYYYMMDD` (UTCDateOnly, LocalMktDate).
pub fn is_date(b: &[u8]) -> bool {
    b.len() == 8 && parse_date(b).is_some()
}

/// True if `b` is a MonthYear: `YYYYMM`, `YYYYMMDD` or `YYYYMMwN` (week 1..5).
pub fn is_month_year(b: &[u8]) -> bool {
    if b.len() < 6 || !b[..6].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let month = num(&b[4..6]);
    if !(1..=12).contains(&month) {
        return false;
    }
    match &b[6..] {
        [] => true,
        [b'w', w] => (b'1'..=b'5').contains(w),
        [d1, d2] if d1.is_ascii_digit() && d2.is_ascii_digit() => (1..=31).contains(&num(&b[6..8])),
        _ => false,
    }
}

fn num(b: &[u8]) -> u32 {
    b.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0'))
}

/// `YYYYMMDD` -> days since the epoch.
fn parse_date(b: &[u8]) -> Option<i64> {
    if b.len() != 8 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let (y, m, d) = (num(&b[..4]), num(&b[4..6]), num(&b[6..8]));
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(i64::from(y), m, d))
}

/// `HH:MM:SS[.fff]` -> (ms of day, the bytes after it).
fn parse_time(b: &[u8]) -> Option<(i64, &[u8])> {
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let digits = |r: &[u8]| r.iter().all(u8::is_ascii_digit);
    if !digits(&b[..2]) || !digits(&b[3..5]) || !digits(&b[6..8]) {
        return None;
    }
    let (h, m, s) = (num(&b[..2]), num(&b[3..5]), num(&b[6..8]));
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut ms = i64::from(h) * 3_600_000 + i64::from(m) * 60_000 + i64::from(s) * 1000;
    let mut rest = &b[8..];
    if let Some((b'.', frac)) = rest.split_first() {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if !matches!(n, 3 | 6 | 9) {
            return None;
        }
        ms += i64::from(num(&frac[..3]));
        rest = &frac[n..];
    }
    Some((ms, rest))
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        _ => 31,
    }
}

fn push_digits(out: &mut Vec<u8>, n: u64, width: u32) {
    let mut div = 10u64.pow(width - 1);
    while div > 0 {
        out.push(b'0' + (n / div % 10) as u8);
        div /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats_and_parses_known_instants() {
        let mut out = Vec::new();
        push_utc_timestamp(&mut out, 0);
        assert_eq!(out, b"19700101-00:00:00.000");
        out.clear();
        // 2002-06-19T16:14:10.123Z
        push_utc_timestamp(&mut out, 1_024_503_250_123);
        assert_eq!(out, b"20020619-16:14:10.123");
        assert_eq!(parse_utc_timestamp(b"20020619-16:14:10.123"), Some(1_024_503_250_123));
        assert_eq!(parse_utc_timestamp(b"20020619-16:14:10"), Some(1_024_503_250_000));
        assert_eq!(
            parse_utc_timestamp(b"20020619-16:14:10.123456"),
            Some(1_024_503_250_123)
        );
    }

    #[test]
    fn rejects_malformed_values() {
        for bad in [
            &b"20040415"[..],
            b"20040415-25:00:00",
            b"20040231-10:00:00",
            b"20040415-10:00:00.1",
            b"20040415 10:00:00",
            b"2004041-10:00:00.000",
        ] {
            assert_eq!(parse_utc_timestamp(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert!(is_utc_time_only(b"10:11:12"));
        assert!(!is_utc_time_only(b"10:11"));
        assert!(is_date(b"20240229"));
        assert!(!is_date(b"20230229"));
        assert!(is_month_year(b"202403") && is_month_year(b"202403w2") && is_month_year(b"20240315"));
        assert!(!is_month_year(b"202413") && !is_month_year(b"202403w9"));
    }

    proptest! {
        #[test]
        fn timestamp_round_trips(ms in 0i64..253_402_300_799_999) {
            let mut out = Vec::new();
            push_utc_timestamp(&mut out, ms);
            prop_assert_eq!(parse_utc_timestamp(&out), Some(ms));
        }
    }
}
