//! The socket and frame layer every simulated user shares (fan-out users in conn.rs, view users
//! in view_conn.rs): finishing the non-blocking connect and sending the WebSocket upgrade,
//! checking the upgrade answer, reading (edge-triggered) and assembling frames (fragments,
//! ping/pong, close), masked sends, the output buffer, the `session.ping` heartbeat and the
//! closing handshake. What a message means is left to the user type, through `Event`s.

use crate::clock::Clock;
use crate::ws::{self, Opcode, Upgrade};
use mio::net::TcpStream;
use std::io::{self, Read, Write};

/// What the frame layer hands to the user type while reading.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// The server accepted the upgrade: the user sends its login now.
    Upgraded,
    /// A frame of any opcode was decoded; its payload length, bytes (fragments and control
    /// frames included: the fan-out users count frames on the wire).
    Frame(usize),
    /// A whole text or binary message (fragments joined).
    Message(&'a [u8]),
}

/// What `on_writable` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connect {
    /// Output flushed (as far as the socket took it), or a wake-up before the TCP connect
    /// completed (nothing done); the link's phase is unchanged.
    Unchanged,
    /// Just connected; the upgrade request is queued and flushed as far as the socket took it.
    Upgrading,
}

/// One client WebSocket over a non-blocking TCP stream.
pub struct Link {
    pub stream: TcpStream,
    /// The `Sec-WebSocket-Accept` the server must answer; set by `on_writable`.
    accept: String,
    /// True from the upgrade request until the upgrade answer was read.
    upgrading: bool,
    inbuf: Vec<u8>,
    frag: Vec<u8>,
    outbuf: Vec<u8>,
    rng: u64,
    heartbeat_ms: f64,
    /// When the next heartbeat is due, ms on the run clock; `f64::MAX` until `start_heartbeat`.
    next_ping_ms: f64,
    next_req_id: u64,
}

impl Link {
    /// A link over a connecting `stream`; `seed` varies masks and nonces, request ids handed out
    /// by `next_req_id` start at `first_req_id` (ids below it are the user's fixed ones).
    pub fn new(stream: TcpStream, seed: u64, first_req_id: u64) -> Link {
        Link {
            stream,
            accept: String::new(),
            upgrading: false,
            inbuf: Vec::with_capacity(4096),
            frag: Vec::new(),
            outbuf: Vec::new(),
            rng: seed | 1,
            heartbeat_ms: 5000.0,
            next_ping_ms: f64::MAX,
            next_req_id: first_req_id,
        }
    }

    fn random(&mut self) -> u64 {
        // xorshift64: masks and nonces only need to vary, not to be secret (load generator).
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// A fresh request id (for heartbeats and the user's own requests).
    pub fn next_req_id(&mut self) -> u64 {
        let id = self.next_req_id;
        self.next_req_id += 1;
        id
    }

    /// Queues `text` as one masked text frame (sent by the next `flush`).
    pub fn send_text(&mut self, text: &str) {
        self.send_frame(0x1, text.as_bytes());
    }

    fn send_frame(&mut self, opcode: u8, payload: &[u8]) {
        let mask = (self.random() as u32).to_le_bytes();
        ws::encode_frame(&mut self.outbuf, opcode, payload, mask);
    }

    /// Writes as much of the pending output as the socket takes.
    pub fn flush(&mut self) -> io::Result<()> {
        while !self.outbuf.is_empty() {
            match self.stream.write(&self.outbuf) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
                Ok(n) => {
                    self.outbuf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Flushes, as the text a user closes with on failure ("write failed: ...").
    pub fn flush_or_reason(&mut self) -> Result<(), String> {
        self.flush().map_err(|e| format!("write failed: {e}"))
    }

    /// The socket became writable: while `connecting`, checks the TCP connect and queues the
    /// upgrade request for `host` and `path`; then flushes. Err is the reason to close with.
    pub fn on_writable(&mut self, connecting: bool, host: &str, path: &str) -> Result<Connect, String> {
        if !connecting {
            return self.flush_or_reason().map(|()| Connect::Unchanged);
        }
        match self.stream.take_error() {
            Ok(Some(e)) | Err(e) => return Err(format!("connect failed: {e}")),
            Ok(None) => {}
        }
        if let Err(e) = self.stream.peer_addr() {
            if e.kind() == io::ErrorKind::NotConnected {
                return Ok(Connect::Unchanged); // spurious wake-up before the connect completed
            }
            return Err(format!("connect failed: {e}"));
        }
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&self.random().to_le_bytes());
        nonce[8..].copy_from_slice(&self.random().to_le_bytes());
        let (req, accept) = ws::upgrade_request(host, path, nonce);
        self.accept = accept;
        self.outbuf.extend_from_slice(req.as_bytes());
        self.upgrading = true;
        self.flush_or_reason()?;
        Ok(Connect::Upgrading)
    }

    /// Starts (or restarts) the heartbeat: every `heartbeat_ms` from `now_ms` (run clock).
    pub fn start_heartbeat(&mut self, heartbeat_ms: f64, now_ms: f64) {
        self.heartbeat_ms = heartbeat_ms;
        self.next_ping_ms = now_ms + heartbeat_ms;
    }

    /// Sends a `session.ping` (and flushes) if one is due at `now_ms`; Err is the reason to close.
    pub fn ping_if_due(&mut self, now_ms: f64) -> Result<(), String> {
        if now_ms < self.next_ping_ms {
            return Ok(());
        }
        self.next_ping_ms = now_ms + self.heartbeat_ms;
        let req = self.next_req_id();
        self.send_text(&format!(r#"{{"type":"session.ping","reqId":{req},"ts":{now_ms:.3}}}"#));
        self.flush_or_reason()
    }

    /// Sends a WebSocket close (1000) if `open` and the socket takes it now, then shuts the socket.
    pub fn goodbye(&mut self, open: bool) {
        if open {
            self.send_frame(0x8, &1000u16.to_be_bytes());
            let _ = self.flush();
        }
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    /// Reads everything the socket has (edge-triggered), handing each event to `on_event` with
    /// the receipt time (ms on `clock`), then flushes what was queued. Frames longer than
    /// `max_frame_bytes` end the link. Err (from the socket, the frames, or `on_event`) is the
    /// reason to close with; nothing more is read after it.
    pub fn on_readable<F>(&mut self, clock: &Clock, scratch: &mut [u8], max_frame_bytes: usize, mut on_event: F) -> Result<(), String>
    where
        F: FnMut(&mut Link, Event<'_>, f64) -> Result<(), String>,
    {
        loop {
            match self.stream.read(scratch) {
                Ok(0) => return Err("server closed the connection".into()),
                Ok(n) => {
                    let recv_ms = clock.now_ms();
                    if self.inbuf.is_empty() {
                        // common case: whole frames straight from the read buffer, copy only a partial tail
                        let data = &scratch[..n];
                        let used = self.process(data, recv_ms, max_frame_bytes, &mut on_event)?;
                        self.inbuf.extend_from_slice(&data[used..]);
                    } else {
                        self.inbuf.extend_from_slice(&scratch[..n]);
                        let mut buf = std::mem::take(&mut self.inbuf);
                        let r = self.process(&buf, recv_ms, max_frame_bytes, &mut on_event);
                        if let Ok(used) = &r {
                            buf.drain(..*used);
                        }
                        self.inbuf = buf;
                        r?;
                    }
                    if n < scratch.len() {
                        // A short read drained the socket: more data raises a new edge, so the
                        // extra read that would only return WouldBlock (one syscall per event) is skipped.
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("read failed: {e}")),
            }
        }
        self.flush_or_reason()
    }

    /// Handles the complete frames at the start of `buf` (after the upgrade answer while
    /// upgrading); returns the bytes used.
    fn process<F>(&mut self, buf: &[u8], recv_ms: f64, max_frame_bytes: usize, on_event: &mut F) -> Result<usize, String>
    where
        F: FnMut(&mut Link, Event<'_>, f64) -> Result<(), String>,
    {
        let mut pos = 0;
        if self.upgrading {
            match ws::parse_upgrade_response(buf, &self.accept) {
                Upgrade::Incomplete => return Ok(0),
                Upgrade::Refused(why) => return Err(why),
                Upgrade::Done(n) => {
                    pos = n;
                    self.upgrading = false;
                    on_event(self, Event::Upgraded, recv_ms)?;
                }
            }
        }
        loop {
            let header = match ws::decode_frame(&buf[pos..], max_frame_bytes) {
                Ok(Some(h)) => h,
                Ok(None) => return Ok(pos),
                Err(e) => return Err(format!("bad frame from server: {e:?}")),
            };
            let payload = &buf[pos + header.start..pos + header.start + header.len];
            pos += header.start + header.len;
            on_event(self, Event::Frame(header.len), recv_ms)?;
            match header.opcode {
                Opcode::Text | Opcode::Binary if header.fin && self.frag.is_empty() => on_event(self, Event::Message(payload), recv_ms)?,
                Opcode::Text | Opcode::Binary | Opcode::Continuation => {
                    self.frag.extend_from_slice(payload);
                    if header.fin {
                        let whole = std::mem::take(&mut self.frag);
                        on_event(self, Event::Message(&whole), recv_ms)?;
                    }
                }
                Opcode::Ping => self.send_frame(0xA, payload),
                Opcode::Pong => {}
                Opcode::Close => {
                    let code = if payload.len() >= 2 {
                        u16::from_be_bytes([payload[0], payload[1]])
                    } else {
                        1005
                    };
                    let text = String::from_utf8_lossy(payload.get(2..).unwrap_or(&[])).into_owned();
                    return Err(format!("server closed with {code} {text}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use mio::{Events, Interest, Poll, Token};
    use std::time::{Duration, Instant};

    /// Reads one masked client frame (payload < 126 bytes) from a blocking socket: (opcode, payload).
    fn read_client_frame(s: &mut std::net::TcpStream) -> (u8, Vec<u8>) {
        let mut head = [0u8; 6];
        s.read_exact(&mut head).expect("frame head");
        assert_eq!(head[1] & 0x80, 0x80, "client frames are masked");
        let mut payload = vec![0u8; (head[1] & 0x7f) as usize];
        s.read_exact(&mut payload).expect("payload");
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= head[2 + (i & 3)];
        }
        (head[0] & 0x0f, payload)
    }

    /// A one-connection server: upgrade, a fragmented message split across writes, a ping, a close.
    /// Returns the login text and the pong payload it received.
    fn serve(listener: std::net::TcpListener) -> (String, Vec<u8>) {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let mut req = Vec::new();
        let mut byte = [0u8; 1];
        while !req.ends_with(b"\r\n\r\n") && req.len() < 4096 {
            s.read_exact(&mut byte).expect("request");
            req.push(byte[0]);
        }
        let req = String::from_utf8(req).expect("utf8");
        let key = req.lines().find_map(|l| l.strip_prefix("Sec-WebSocket-Key: ")).expect("key");
        let mut sha = sha1_smol::Sha1::new();
        sha.update(key.as_bytes());
        sha.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
        let accept = base64::engine::general_purpose::STANDARD.encode(sha.digest().bytes());
        let mut out = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        )
        .into_bytes();
        out.extend_from_slice(&[0x01, 2, b'a', b'b']); // text "ab", not final
        out.extend_from_slice(&[0x80]); // the first byte of the final continuation
        s.write_all(&out).expect("write");
        let (op, login) = read_client_frame(&mut s);
        assert_eq!(op, 0x1);
        s.write_all(&[1, b'c', 0x89, 1, b'p']).expect("write"); // rest of "c", then ping "p"
        let (op, pong) = read_client_frame(&mut s);
        assert_eq!(op, 0xA);
        s.write_all(&[0x88, 5, 0x03, 0xE9, b'b', b'y', b'e']).expect("write"); // close 1001 "bye"
        (String::from_utf8(login).expect("utf8"), pong)
    }

    #[test]
    fn connects_upgrades_assembles_fragments_answers_pings_and_ends_on_close() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = std::thread::spawn(move || serve(listener));
        let mut link = Link::new(TcpStream::connect(addr).expect("connect"), 7, 3);
        let mut poll = Poll::new().expect("poll");
        poll.registry()
            .register(&mut link.stream, Token(0), Interest::READABLE | Interest::WRITABLE)
            .expect("register");
        let clock = Clock::from_system();
        let mut scratch = vec![0u8; 64 * 1024];
        let mut events = Events::with_capacity(8);
        let mut seen: Vec<String> = Vec::new();
        let (mut connected, mut ended) = (false, None);
        let deadline = Instant::now() + Duration::from_secs(10);
        for _ in 0..1000 {
            if ended.is_some() || Instant::now() > deadline {
                break;
            }
            poll.poll(&mut events, Some(Duration::from_millis(100))).expect("poll");
            for ev in events.iter() {
                if ev.is_writable() && !connected {
                    connected = link.on_writable(true, "127.0.0.1", "/stream").expect("connect") == Connect::Upgrading;
                }
                if ev.is_readable() && ended.is_none() {
                    let r = link.on_readable(&clock, &mut scratch, 1024, |link, event, _| {
                        if event == Event::Upgraded {
                            link.send_text(r#"{"type":"session.login","reqId":1,"token":"t"}"#);
                        }
                        seen.push(match event {
                            Event::Upgraded => "upgraded".into(),
                            Event::Frame(n) => format!("frame {n}"),
                            Event::Message(m) => format!("message {}", String::from_utf8_lossy(m)),
                        });
                        Ok(())
                    });
                    if let Err(e) = r {
                        ended = Some(e);
                    }
                }
            }
        }
        assert_eq!(ended.as_deref(), Some("server closed with 1001 bye"));
        assert_eq!(seen, ["upgraded", "frame 2", "frame 1", "message abc", "frame 1", "frame 5"]);
        let (login, pong) = server.join().expect("server");
        assert_eq!(login, r#"{"type":"session.login","reqId":1,"token":"t"}"#);
        assert_eq!(pong, b"p");
        assert_eq!(link.next_req_id(), 3);
    }

    #[test]
    fn a_refused_upgrade_or_an_oversized_frame_is_an_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let std_stream = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (_server, _) = listener.accept().expect("accept"); // kept open for the test
        let mut link = Link::new(TcpStream::from_std(std_stream), 1, 10);
        link.upgrading = true;
        link.accept = "x".into();
        let mut calls = 0;
        let r = link.process(
            b"HTTP/1.1 403 Forbidden\r\n\r\n",
            0.0,
            1024,
            &mut |_: &mut Link, _: Event<'_>, _| {
                calls += 1;
                Ok(())
            },
        );
        assert!(r.is_err(), "{r:?}");
        link.upgrading = false;
        let r = link.process(&[0x81, 126, 0x10, 0x00], 0.0, 1024, &mut |_: &mut Link, _: Event<'_>, _| {
            calls += 1;
            Ok(())
        });
        assert_eq!(r, Err("bad frame from server: TooLarge(4096)".into()));
        assert_eq!(calls, 0);
        // the user's own error ends the link too
        let r = link.process(&[0x81, 1, b'x'], 0.0, 1024, &mut |_: &mut Link, e: Event<'_>, _| match e {
            Event::Message(_) => Err("no".into()),
            _ => Ok(()),
        });
        assert_eq!(r, Err("no".into()));
    }
}
