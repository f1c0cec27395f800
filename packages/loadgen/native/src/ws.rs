//! A minimal RFC 6455 WebSocket client codec: the upgrade request and response, masked client
//! frames, and a decoder of unmasked server frames. Enough for the Tidewire protocol (text frames,
//! ping/pong, close); no extensions are requested, so frames are never compressed.

use base64::Engine as _;

/// Server frame opcodes this client understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    Continuation,
    Text,
    Binary,
    Close,
    Ping,
    Pong,
}

impl Opcode {
    fn from_bits(bits: u8) -> Option<Opcode> {
        match bits {
            0x0 => Some(Opcode::Continuation),
            0x1 => Some(Opcode::Text),
            0x2 => Some(Opcode::Binary),
            0x8 => Some(Opcode::Close),
            0x9 => Some(Opcode::Ping),
            0xA => Some(Opcode::Pong),
            _ => None,
        }
    }
}

/// One decoded frame header; the payload is `buf[start..start + len]` of the decoded buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub fin: bool,
    pub opcode: Opcode,
    /// Offset of the payload in the buffer passed to `decode_frame`.
    pub start: usize,
    /// Payload length, bytes.
    pub len: usize,
}

/// Why a server frame cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// Reserved bits set or an unknown opcode.
    Unsupported(u8),
    /// A server frame must not be masked (RFC 6455 5.1).
    Masked,
    /// Longer than the configured maximum.
    TooLarge(u64),
}

/// Decodes the frame header at the start of `buf`: `Ok(None)` when more bytes are needed
/// (the whole payload must be in `buf` too), `Ok(Some(h))` when the frame is complete.
/// Frames longer than `max_len` bytes are refused.
pub fn decode_frame(buf: &[u8], max_len: usize) -> Result<Option<FrameHeader>, FrameError> {
    if buf.len() < 2 {
        return Ok(None);
    }
    let b0 = buf[0];
    let b1 = buf[1];
    if b0 & 0x70 != 0 {
        return Err(FrameError::Unsupported(b0));
    }
    let opcode = Opcode::from_bits(b0 & 0x0f).ok_or(FrameError::Unsupported(b0))?;
    if b1 & 0x80 != 0 {
        return Err(FrameError::Masked);
    }
    let (len, start) = match b1 & 0x7f {
        126 => {
            if buf.len() < 4 {
                return Ok(None);
            }
            (u16::from_be_bytes([buf[2], buf[3]]) as u64, 4)
        }
        127 => {
            if buf.len() < 10 {
                return Ok(None);
            }
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[2..10]);
            (u64::from_be_bytes(b), 10)
        }
        n => (n as u64, 2),
    };
    if len > max_len as u64 {
        return Err(FrameError::TooLarge(len));
    }
    let len = len as usize;
    if buf.len() < start + len {
        return Ok(None);
    }
    Ok(Some(FrameHeader {
        fin: b0 & 0x80 != 0,
        opcode,
        start,
        len,
    }))
}

/// Appends a masked client frame (FIN set) with `payload` to `out`.
pub fn encode_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8], mask: [u8; 4]) {
    out.push(0x80 | (opcode & 0x0f));
    let len = payload.len();
    if len < 126 {
        out.push(0x80 | len as u8);
    } else if len <= 0xffff {
        out.push(0x80 | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i & 3]));
}

/// The HTTP upgrade request for `path` on `host`, with the given 16-byte nonce.
/// Returns the request text and the `Sec-WebSocket-Accept` value the server must answer.
pub fn upgrade_request(host: &str, path: &str, nonce: [u8; 16]) -> (String, String) {
    let key = base64::engine::general_purpose::STANDARD.encode(nonce);
    let mut sha = sha1_smol::Sha1::new();
    sha.update(key.as_bytes());
    sha.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    let accept = base64::engine::general_purpose::STANDARD.encode(sha.digest().bytes());
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    (req, accept)
}

/// Result of looking for a complete upgrade response at the start of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Upgrade {
    /// The header is not complete yet.
    Incomplete,
    /// Switched to WebSocket; frames start at this offset.
    Done(usize),
    /// Refused or malformed; the text says why (status line or missing header).
    Refused(String),
}

/// Checks an upgrade response: status 101 and the expected `Sec-WebSocket-Accept`.
pub fn parse_upgrade_response(buf: &[u8], accept: &str) -> Upgrade {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        if buf.len() > 16 * 1024 {
            return Upgrade::Refused("upgrade response header over 16 KiB".into());
        }
        return Upgrade::Incomplete;
    };
    let head = String::from_utf8_lossy(&buf[..end]);
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or("");
    if status.split(' ').nth(1) != Some("101") {
        return Upgrade::Refused(format!("upgrade refused: {status}"));
    }
    let ok = lines.any(|l| {
        let mut kv = l.splitn(2, ':');
        let k = kv.next().unwrap_or("").trim();
        let v = kv.next().unwrap_or("").trim();
        k.eq_ignore_ascii_case("sec-websocket-accept") && v == accept
    });
    if !ok {
        return Upgrade::Refused("upgrade response lacks the expected Sec-WebSocket-Accept".into());
    }
    Upgrade::Done(end + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_matches_rfc_example() {
        // RFC 6455 section 1.3: key dGhlIHNhbXBsZSBub25jZQ== -> s3pPLMBiTxaQ9kYGzzhZRbK+xOo=
        let nonce = *b"the sample nonce";
        let (req, accept) = upgrade_request("h", "/stream", nonce);
        assert!(req.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"));
        assert_eq!(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        let resp = format!("HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: {accept}\r\n\r\nxy");
        assert_eq!(parse_upgrade_response(resp.as_bytes(), &accept), Upgrade::Done(resp.len() - 2));
        assert!(matches!(
            parse_upgrade_response(b"HTTP/1.1 404 Not Found\r\n\r\n", &accept),
            Upgrade::Refused(_)
        ));
        assert_eq!(parse_upgrade_response(b"HTTP/1.1 101 Swi", &accept), Upgrade::Incomplete);
    }

    #[test]
    fn decodes_lengths_and_partial_frames() {
        let mut f = vec![0x81, 5];
        f.extend_from_slice(b"hello");
        assert_eq!(decode_frame(&f[..4], 1 << 20), Ok(None));
        let h = decode_frame(&f, 1 << 20).unwrap().unwrap();
        assert_eq!((h.opcode, h.start, h.len, h.fin), (Opcode::Text, 2, 5, true));
        let mut big = vec![0x81, 126, 0x01, 0x00];
        big.extend(std::iter::repeat_n(b'a', 256));
        assert_eq!(decode_frame(&big, 1 << 20).unwrap().unwrap().len, 256);
        assert_eq!(decode_frame(&big, 100), Err(FrameError::TooLarge(256)));
        assert_eq!(decode_frame(&[0x81, 0x85, 0, 0, 0, 0], 10), Err(FrameError::Masked));
        assert!(matches!(decode_frame(&[0x83, 0], 10), Err(FrameError::Unsupported(_))));
    }

    #[test]
    fn masks_client_frames() {
        let mut out = Vec::new();
        encode_frame(&mut out, 1, b"abcd", [1, 2, 3, 4]);
        assert_eq!(out, vec![0x81, 0x84, 1, 2, 3, 4, b'a' ^ 1, b'b' ^ 2, b'c' ^ 3, b'd' ^ 4]);
    }
}
