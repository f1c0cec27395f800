//! ISO-8601 timestamp literals <-> epoch milliseconds (proleptic Gregorian, UTC).

/// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`). The FIX codec's
/// UTCTimestamp fields use it too.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a day count since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn digits(s: &[u8], at: usize, n: usize) -> Option<u32> {
    let part = s.get(at..at + n)?;
    part.iter()
        .try_fold(0u32, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + (c - b'0') as u32))
}

/// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH:MM:SS` or with `.fff` (1 to 3 digits),
/// each optionally followed by `Z` or `+HH:MM` / `-HH:MM` (no zone = UTC). Returns epoch ms, or
/// `None` if the text is not exactly such a timestamp or names an impossible date/time.
pub fn parse_iso(text: &str) -> Option<i64> {
    let s = text.as_bytes();
    let y = digits(s, 0, 4)? as i64;
    if s.get(4) != Some(&b'-') || s.get(7) != Some(&b'-') {
        return None;
    }
    let (m, d) = (digits(s, 5, 2)?, digits(s, 8, 2)?);
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    let mut i = 10;
    if i == s.len() {
        return Some(ms);
    }
    if s[i] != b'T' {
        return None;
    }
    let (h, mi) = (digits(s, 11, 2)?, digits(s, 14, 2)?);
    if s.get(13) != Some(&b':') || h > 23 || mi > 59 {
        return None;
    }
    ms += (h as i64 * 3600 + mi as i64 * 60) * 1000;
    i = 16;
    if s.get(i) == Some(&b':') {
        let sec = digits(s, 17, 2)?;
        if sec > 59 {
            return None;
        }
        ms += sec as i64 * 1000;
        i = 19;
        if s.get(i) == Some(&b'.') {
            let start = i + 1;
            let mut end = start;
            while end < s.len() && s[end].is_ascii_digit() {
                end += 1;
            }
            if end == start || end - start > 3 {
                return None;
            }
            let frac = digits(s, start, end - start)?;
            ms += (frac * 10u32.pow(3 - (end - start) as u32)) as i64;
            i = end;
        }
    }
    match s.get(i) {
        None => Some(ms),
        Some(b'Z') if i + 1 == s.len() => Some(ms),
        Some(&sign @ (b'+' | b'-')) if i + 6 == s.len() && s[i + 3] == b':' => {
            let (oh, om) = (digits(s, i + 1, 2)?, digits(s, i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = (oh as i64 * 60 + om as i64) * 60_000;
            Some(if sign == b'+' { ms - off } else { ms + off })
        }
        _ => None,
    }
}

/// Formats epoch ms as the shortest canonical ISO text: `2030-01-01` at midnight,
/// `2030-01-01T12:00:00Z` on whole seconds, else `2030-01-01T12:00:00.250Z`.
pub fn format_iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    if rem == 0 {
        return format!("{y:04}-{m:02}-{d:02}");
    }
    let (h, mi, s, f) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    if f == 0 {
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{f:03}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats_round_trip() {
        assert_eq!(parse_iso("1970-01-01"), Some(0));
        assert_eq!(parse_iso("2030-01-01"), Some(1_893_456_000_000));
        assert_eq!(parse_iso("2030-01-01T12:00:00Z"), Some(1_893_456_000_000 + 43_200_000));
        assert_eq!(parse_iso("2030-01-01T12:00"), Some(1_893_456_000_000 + 43_200_000));
        assert_eq!(
            parse_iso("2030-01-01T13:00:00+01:00"),
            parse_iso("2030-01-01T12:00:00Z")
        );
        assert_eq!(parse_iso("2030-01-01T00:00:00.5Z"), Some(1_893_456_000_500));
        assert_eq!(parse_iso("2024-02-29"), Some(1_709_164_800_000));
        for bad in [
            "2023-02-29",
            "2030-13-01",
            "2030-01-01T24:00",
            "2030-01-01X",
            "2030-1-01",
            "2030-01-01T00:00:00.1234Z",
        ] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
        for ms in [0, 1_893_456_000_000, 1_893_499_200_000, 1_893_456_000_250, -86_400_001] {
            assert_eq!(parse_iso(&format_iso(ms)), Some(ms), "{ms}");
        }
        assert_eq!(format_iso(1_893_499_200_000), "2030-01-01T12:00:00Z");
    }
}
