//! The FIX tag=value wire format as far as the FIX presets need it: building a message (standard
//! header, BodyLength, CheckSum), cutting complete messages out of a receive buffer, and reading
//! a field of one. Nothing is validated beyond framing: the acceptors under test do that.

use std::time::{SystemTime, UNIX_EPOCH};

const SOH: u8 = 1;

/// Builds one message at a time into a reused buffer.
#[derive(Default)]
pub struct Builder {
    body: Vec<u8>,
    out: Vec<u8>,
}

impl Builder {
    /// Builds `msg_type` from `sender` to `target` with MsgSeqNum `seq`, SendingTime now and the
    /// `body` fields, in order. Returns the bytes (valid until the next build).
    pub fn build(&mut self, begin: &str, msg_type: &str, sender: &str, target: &str, seq: u64, body: &[(u32, &str)]) -> &[u8] {
        self.body.clear();
        push_field(&mut self.body, 35, msg_type.as_bytes());
        push_field(&mut self.body, 49, sender.as_bytes());
        push_field(&mut self.body, 56, target.as_bytes());
        push_field(&mut self.body, 34, seq.to_string().as_bytes());
        push_field(&mut self.body, 52, utc_timestamp().as_bytes());
        for (tag, value) in body {
            push_field(&mut self.body, *tag, value.as_bytes());
        }
        self.out.clear();
        push_field(&mut self.out, 8, begin.as_bytes());
        push_field(&mut self.out, 9, self.body.len().to_string().as_bytes());
        self.out.extend_from_slice(&self.body);
        let sum = self.out.iter().fold(0u32, |s, b| s + u32::from(*b)) % 256;
        push_field(&mut self.out, 10, format!("{sum:03}").as_bytes());
        &self.out
    }
}

fn push_field(out: &mut Vec<u8>, tag: u32, value: &[u8]) {
    out.extend_from_slice(tag.to_string().as_bytes());
    out.push(b'=');
    out.extend_from_slice(value);
    out.push(SOH);
}

/// `YYYYMMDD-HH:MM:SS.sss`, UTC.
pub fn utc_timestamp() -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // civil from days (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}:{:02}:{:02}.{:03}",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Cuts complete messages (`8=...` through `10=nnn<SOH>`) out of the bytes read so far.
#[derive(Default)]
pub struct Framer {
    buf: Vec<u8>,
    start: usize,
}

impl Framer {
    /// Appends bytes read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, if any. `Err` when the bytes are not FIX.
    pub fn next(&mut self) -> Result<Option<&[u8]>, String> {
        let rest = &self.buf[self.start..];
        if rest.len() < 16 {
            return Ok(None);
        }
        if !rest.starts_with(b"8=FIX") {
            return Err(format!(
                "not a FIX message: {:?}",
                String::from_utf8_lossy(&rest[..rest.len().min(40)])
            ));
        }
        // BodyLength gives the end: 8=...|9=N|<N bytes>10=nnn|
        let Some(p9) = find(rest, b"\x019=") else { return Ok(None) };
        let Some(len_end) = rest[p9 + 3..].iter().position(|b| *b == SOH).map(|i| p9 + 3 + i) else {
            return Ok(None);
        };
        let body_len: usize = std::str::from_utf8(&rest[p9 + 3..len_end])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("bad BodyLength")?;
        let total = len_end + 1 + body_len + 7;
        if rest.len() < total {
            if self.start > 0 && self.buf.len() > 1 << 20 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            return Ok(None);
        }
        let from = self.start;
        self.start += total;
        Ok(Some(&self.buf[from..from + total]))
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The value of `tag` in `msg` (the first occurrence).
pub fn field(msg: &[u8], tag: u32) -> Option<&str> {
    let key = format!("\x01{tag}=");
    let at = find(msg, key.as_bytes())? + key.len();
    let end = msg[at..].iter().position(|b| *b == SOH)? + at;
    std::str::from_utf8(&msg[at..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_frames_and_reads_back() {
        let mut b = Builder::default();
        let msg = b.build("FIX.4.2", "D", "CLIENT", "TW", 7, &[(11, "42"), (55, "EUR/USD")]).to_vec();
        assert!(msg.starts_with(b"8=FIX.4.2\x019="));
        let body_start = msg.iter().skip(10).position(|b| *b == SOH).unwrap() + 11;
        let body_len: usize = field(&msg, 9).unwrap().parse().unwrap();
        assert_eq!(
            msg.len(),
            body_start + body_len + 7,
            "BodyLength counts 35= through the SOH before 10="
        );
        let sum = msg[..msg.len() - 7].iter().fold(0u32, |s, b| s + u32::from(*b)) % 256;
        assert_eq!(field(&msg, 10), Some(format!("{sum:03}").as_str()));
        let mut f = Framer::default();
        f.push(&msg[..20]);
        assert_eq!(f.next().unwrap(), None);
        f.push(&msg[20..]);
        f.push(&msg);
        for _ in 0..2 {
            let m = f.next().unwrap().unwrap();
            assert_eq!(field(m, 11), Some("42"));
            assert_eq!(field(m, 34), Some("7"));
        }
        assert_eq!(f.next().unwrap(), None);
        f.push(b"GET / HTTP/1.1\r\nHost: x\r\n");
        assert!(f.next().is_err());
    }

    #[test]
    fn timestamps_are_fix_utc() {
        let t = utc_timestamp();
        assert_eq!(t.len(), 21);
        assert_eq!(&t[8..9], "-");
        assert!(t.starts_with("20"));
    }
}
