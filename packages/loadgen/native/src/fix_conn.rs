//! One FIX initiator connection of the FIX presets: a non-blocking socket (TCP_NODELAY), the
//! framer, a builder with the session's CompIDs and the next MsgSeqNum. Logon (ResetSeqNumFlag=Y,
//! so every run starts at 1) and Logout wait (spinning, bounded) for the acceptor's answer.

use crate::fix_wire::{field, Builder, Framer};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The session an initiator logs on to.
#[derive(Clone, Debug)]
pub struct SessionIds {
    /// `FIX.4.2` or `FIX.4.4`.
    pub begin: String,
    /// Our CompID (the acceptor's TargetCompID).
    pub sender: String,
    /// The acceptor's CompID.
    pub target: String,
}

/// A connected initiator.
pub struct Conn {
    s: TcpStream,
    pub framer: Framer,
    builder: Builder,
    ids: SessionIds,
    seq: u64,
    /// Bytes a non-blocking write did not take yet.
    unsent: Vec<u8>,
    buf: Vec<u8>,
}

impl Conn {
    /// Connects to `addr` (loopback or not: the caller decides).
    pub fn connect(addr: SocketAddr, ids: SessionIds) -> io::Result<Conn> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        s.set_nodelay(true)?;
        s.set_nonblocking(true)?;
        Ok(Conn {
            s,
            framer: Framer::default(),
            builder: Builder::default(),
            ids,
            seq: 1,
            unsent: Vec::new(),
            buf: vec![0; 64 * 1024],
        })
    }

    /// Builds and writes message `msg_type` with `body` (after anything unsent); returns its size.
    pub fn send(&mut self, msg_type: &str, body: &[(u32, &str)]) -> io::Result<usize> {
        let msg = self
            .builder
            .build(&self.ids.begin, msg_type, &self.ids.sender, &self.ids.target, self.seq, body);
        self.seq += 1;
        let len = msg.len();
        if self.unsent.is_empty() {
            match self.s.write(msg) {
                Ok(n) if n == len => return Ok(len),
                Ok(n) => self.unsent.extend_from_slice(&msg[n..]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.unsent.extend_from_slice(msg),
                Err(e) => return Err(e),
            }
        } else {
            self.unsent.extend_from_slice(msg);
        }
        self.flush()?;
        Ok(len)
    }

    /// Writes what a non-blocking write left over, as far as the socket takes it now.
    pub fn flush(&mut self) -> io::Result<()> {
        while !self.unsent.is_empty() {
            match self.s.write(&self.unsent) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.unsent.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what is available into the framer. Ok(false): nothing to read now.
    pub fn poll_read(&mut self) -> io::Result<bool> {
        match self.s.read(&mut self.buf) {
            Ok(0) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed by the acceptor")),
            Ok(n) => {
                self.framer.push(&self.buf[..n]);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Waits for the next message other than a Heartbeat; returns (MsgType, Text).
    fn recv(&mut self, deadline: Instant) -> io::Result<(String, String)> {
        loop {
            if let Some(m) = self.framer.next().map_err(io::Error::other)? {
                let t = field(m, 35).unwrap_or_default().to_string();
                if t == "0" {
                    continue;
                }
                return Ok((t, field(m, 58).unwrap_or_default().to_string()));
            }
            self.flush()?;
            if !self.poll_read()? {
                if Instant::now() > deadline {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer from the acceptor"));
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Logs on with ResetSeqNumFlag=Y and HeartBtInt 30; `Err` names the acceptor's answer.
    pub fn logon(&mut self) -> io::Result<()> {
        self.send("A", &[(98, "0"), (108, "30"), (141, "Y")])?;
        let (t, text) = self.recv(Instant::now() + Duration::from_secs(15))?;
        if t != "A" {
            return Err(io::Error::other(format!("logon answered with 35={t} {text}")));
        }
        Ok(())
    }

    /// Logs out and waits (bounded) for the acceptor's Logout.
    pub fn logout(&mut self) {
        if self.send("5", &[]).is_err() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Ok((t, _)) = self.recv(deadline) {
            if t == "5" {
                return;
            }
        }
    }
}
