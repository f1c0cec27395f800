//! Plays one acceptance definition against an acceptor.
//!
//! Steps (one per line, `#` comments): `iCONNECT` / `i2,CONNECT` opens a connection,
//! `i1,DISCONNECT` closes one; `I<msg>`
//! sends (BodyLength and CheckSum filled in unless given, `10=0` sent as `10=000`, `<TIME>`,
//! `<TIME-N>`, `<TIME+N>` replaced by now shifted by N x 1.1 s; a line that does not start with
//! `8=FIX` is sent as it is); `E<msg>` expects the next message from the acceptor; `eDISCONNECT`
//! expects the acceptor to close. Comparison: same MsgType; every field the acceptor sent must be
//! expected with the same value (Text 58 by prefix; the values of 9, 10, 52, 60 and 122 are not
//! compared); every expected field must be present. What the acceptor sends must frame with a
//! correct BodyLength and CheckSum.

use std::collections::HashMap;
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tidewire_engine::fix::codec::time::push_utc_timestamp;
use tidewire_engine::fix::codec::{Frame, Framer};

const SOH: char = '\u{1}';
/// How long an expected message or disconnect may take (heartbeat-driven ones get longer).
const TIMEOUT: Duration = Duration::from_secs(5);

struct Client {
    stream: TcpStream,
    framer: Framer,
    /// A send failed because the acceptor had closed the connection.
    closed: bool,
}

enum Read {
    Message(Vec<u8>),
    Closed,
    TimedOut,
}

impl Client {
    fn read(&mut self, timeout: Duration) -> Result<Read, String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.framer.next_frame() {
                Some(Frame::Message(r)) => return Ok(Read::Message(self.framer.bytes()[r].to_vec())),
                Some(Frame::Garbled(g)) => return Err(format!("acceptor sent a garbled message: {g}")),
                None => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Read::TimedOut);
            }
            self.stream.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
            match self.framer.read_from(&mut self.stream) {
                Ok(0) => return Ok(Read::Closed),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return Ok(Read::TimedOut),
                Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) => {
                    return Ok(Read::Closed)
                }
                Err(e) => return Err(format!("read failed: {e}")),
            }
        }
    }
}

/// Runs the definition `text` against the acceptor at `addr`; `Err` says which step failed.
pub fn run(text: &str, addr: SocketAddr) -> Result<(), String> {
    let mut clients: HashMap<u32, Client> = HashMap::new();
    let mut heartbeat_secs = 30u64;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("line {}: {e}\n  step: {}", n + 1, line.replace(SOH, "|"));
        let (kind, rest) = line.split_at(1);
        let (id, body) = client_prefix(rest);
        let timeout = if heartbeat_secs <= 10 {
            TIMEOUT.max(Duration::from_secs(3 * heartbeat_secs))
        } else {
            TIMEOUT
        };
        match kind {
            "i" if body == "CONNECT" => {
                let stream = TcpStream::connect(addr).map_err(|e| at(format!("connect: {e}")))?;
                stream.set_nodelay(true).map_err(|e| at(e.to_string()))?;
                clients.insert(
                    id,
                    Client {
                        stream,
                        framer: Framer::new(1 << 20),
                        closed: false,
                    },
                );
            }
            "i" if body == "DISCONNECT" => {
                clients.remove(&id);
            }
            "I" => {
                let msg = expand(rest);
                if let Some(h) = heartbeat_of(&msg) {
                    heartbeat_secs = h;
                }
                let c = clients.get_mut(&id).ok_or_else(|| at(format!("no connection {id}")))?;
                if c.stream.write_all(msg.as_bytes()).is_err() {
                    c.closed = true;
                }
            }
            "E" => {
                let c = clients.get_mut(&id).ok_or_else(|| at(format!("no connection {id}")))?;
                let expected = fields(body);
                match c.read(timeout).map_err(at)? {
                    Read::Message(m) => compare(&expected, &String::from_utf8_lossy(&m)).map_err(at)?,
                    Read::Closed => return Err(at("connection closed instead".into())),
                    Read::TimedOut => return Err(at(format!("no message within {timeout:?}"))),
                }
            }
            "e" if body == "DISCONNECT" => {
                let c = clients.get_mut(&id).ok_or_else(|| at(format!("no connection {id}")))?;
                if !c.closed {
                    match c.read(timeout).map_err(at)? {
                        Read::Closed => {}
                        Read::Message(m) => {
                            let m = String::from_utf8_lossy(&m).replace(SOH, "|");
                            return Err(at(format!("expected a disconnect, got {m}")));
                        }
                        Read::TimedOut => return Err(at(format!("still connected after {timeout:?}"))),
                    }
                }
                clients.remove(&id);
            }
            _ => return Err(at("unknown step".into())),
        }
    }
    Ok(())
}

/// `1,rest` -> (1, rest); `rest` -> (1, rest).
fn client_prefix(rest: &str) -> (u32, &str) {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with(',') {
        (rest[..digits].parse().unwrap_or(1), &rest[digits + 1..])
    } else {
        (1, rest)
    }
}

/// The bytes an `I` step sends.
fn expand(step: &str) -> String {
    let (_, body) = client_prefix(step);
    let version_end = body.find(SOH).map(|i| i + 1);
    let structured = body.starts_with("8=FIX.") && version_end.is_some();
    let mut msg = if let (true, Some(v)) = (structured, version_end) {
        let (version, rest) = body.split_at(v);
        // the tail up to a CheckSum field that starts right after a SOH
        let cs_at = std::iter::once(0)
            .chain(rest.match_indices(SOH).map(|(i, _)| i + 1))
            .find(|&i| rest[i..].starts_with("10="))
            .filter(|&i| i > 0);
        let (tail, checksum) = match cs_at {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let tail = insert_times(tail);
        let checksum = if checksum == "10=0\u{1}" {
            "10=000\u{1}"
        } else {
            checksum
        };
        let length = if tail.starts_with("9=") {
            String::new()
        } else {
            format!("9={}{SOH}", tail.len())
        };
        format!("{version}{length}{tail}{checksum}")
    } else {
        body.to_string()
    };
    if !msg.contains("\u{1}10=") {
        let sum = msg.bytes().fold(0u8, |a, b| a.wrapping_add(b));
        msg.push_str(&format!("10={sum:03}{SOH}"));
    }
    msg
}

fn insert_times(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 32);
    let mut rest = s;
    while let Some(i) = rest.find("<TIME") {
        out.push_str(&rest[..i]);
        let Some(end) = rest[i..].find('>') else { break };
        let spec = &rest[i + 5..i + end];
        let offset_ms: i64 = match spec.split_at_checked(1) {
            Some(("+", n)) => n.parse::<i64>().unwrap_or(0) * 1100,
            Some(("-", n)) => -n.parse::<i64>().unwrap_or(0) * 1100,
            _ => 0,
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut ts = Vec::new();
        push_utc_timestamp(&mut ts, now + offset_ms);
        out.push_str(&String::from_utf8_lossy(&ts));
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    out
}

fn heartbeat_of(msg: &str) -> Option<u64> {
    if !msg.contains("\u{1}35=A\u{1}") {
        return None;
    }
    msg.split(SOH)
        .find_map(|f| f.strip_prefix("108="))
        .and_then(|v| v.parse().ok())
}

/// Fields of an expected message: `tag=value` followed by SOH, with a non-empty value.
fn fields(s: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut parts: Vec<&str> = s.split(SOH).collect();
    // the last piece has no SOH after it
    parts.pop();
    for p in parts {
        if let Some((t, v)) = p.split_once('=') {
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && !v.is_empty() {
                out.insert(t.to_string(), v.to_string());
            }
        }
    }
    out
}

fn compare(expected: &HashMap<String, String>, actual_text: &str) -> Result<(), String> {
    let actual = fields(actual_text);
    let shown = actual_text.replace(SOH, "|");
    if expected.get("35") != actual.get("35") {
        return Err(format!("wrong MsgType: got {shown}"));
    }
    for (k, v) in &actual {
        if ["9", "10", "52", "60", "122"].contains(&k.as_str()) {
            continue;
        }
        match expected.get(k) {
            None => return Err(format!("unexpected field {k}={v} in {shown}")),
            Some(e) if k == "58" && !v.starts_with(e.as_str()) => {
                return Err(format!("field 58 is {v:?}, expected it to start with {e:?}"))
            }
            Some(e) if k != "58" && e != v => return Err(format!("field {k} is {v:?}, expected {e:?} in {shown}")),
            _ => {}
        }
    }
    for k in expected.keys() {
        if !actual.contains_key(k) {
            return Err(format!("missing field {k} in {shown}"));
        }
    }
    Ok(())
}
