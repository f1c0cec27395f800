//! Messages an application hands to the session for sending: MsgType, extra header fields and
//! body fields, encoded once into reused buffers. The session adds the standard header
//! (SenderCompID, TargetCompID, MsgSeqNum, SendingTime), BodyLength and CheckSum.

use crate::fix::codec::{push_i64, push_u64, SOH};
use std::ops::Range;

#[derive(Debug, Clone)]
struct Entry {
    msg_type: Range<usize>,
    header: Range<usize>,
    body: Range<usize>,
}

/// Outgoing application messages, in order.
#[derive(Debug, Default)]
pub struct Outbox {
    types: Vec<u8>,
    header: Vec<u8>,
    body: Vec<u8>,
    entries: Vec<Entry>,
}

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Outbox {
        Outbox::default()
    }

    /// Starts a message of type `msg_type`; add fields with the returned writer.
    pub fn message(&mut self, msg_type: &[u8]) -> MessageWriter<'_> {
        let t = self.types.len();
        self.types.extend_from_slice(msg_type);
        let (h, b) = (self.header.len(), self.body.len());
        self.entries.push(Entry {
            msg_type: t..self.types.len(),
            header: h..h,
            body: b..b,
        });
        MessageWriter { outbox: self }
    }

    /// Number of messages queued.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if no message is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The queued messages as (MsgType, encoded extra header fields, encoded body fields).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8], &[u8])> + '_ {
        self.entries.iter().map(|e| {
            (
                &self.types[e.msg_type.clone()],
                &self.header[e.header.clone()],
                &self.body[e.body.clone()],
            )
        })
    }

    /// Appends a message given as MsgType, encoded extra header fields and encoded body fields.
    pub fn push_encoded(&mut self, msg_type: &[u8], header: &[u8], body: &[u8]) {
        let t = self.types.len();
        self.types.extend_from_slice(msg_type);
        let h = self.header.len();
        self.header.extend_from_slice(header);
        let b = self.body.len();
        self.body.extend_from_slice(body);
        self.entries.push(Entry {
            msg_type: t..self.types.len(),
            header: h..self.header.len(),
            body: b..self.body.len(),
        });
    }

    /// Empties the outbox, keeping its buffers.
    pub fn clear(&mut self) {
        self.types.clear();
        self.header.clear();
        self.body.clear();
        self.entries.clear();
    }
}

/// Adds fields to the message last started in an [`Outbox`].
pub struct MessageWriter<'a> {
    outbox: &'a mut Outbox,
}

impl MessageWriter<'_> {
    fn entry(&mut self) -> &mut Entry {
        let last = self.outbox.entries.len() - 1;
        &mut self.outbox.entries[last]
    }

    /// Adds a header field other than those the session writes (e.g. PossResend, routing).
    pub fn header(&mut self, tag: u32, value: &[u8]) -> &mut Self {
        put(&mut self.outbox.header, tag, value);
        let end = self.outbox.header.len();
        self.entry().header.end = end;
        self
    }

    /// Adds a body field.
    pub fn field(&mut self, tag: u32, value: &[u8]) -> &mut Self {
        put(&mut self.outbox.body, tag, value);
        let end = self.outbox.body.len();
        self.entry().body.end = end;
        self
    }

    /// Adds a body field with an integer value.
    pub fn field_i64(&mut self, tag: u32, value: i64) -> &mut Self {
        let b = &mut self.outbox.body;
        push_u64(b, u64::from(tag));
        b.push(b'=');
        push_i64(b, value);
        b.push(SOH);
        let end = b.len();
        self.entry().body.end = end;
        self
    }

    /// Adds a body field with a UTCTimestamp value (`utc_ms`: ms since the Unix epoch).
    pub fn field_timestamp(&mut self, tag: u32, utc_ms: i64) -> &mut Self {
        let b = &mut self.outbox.body;
        push_u64(b, u64::from(tag));
        b.push(b'=');
        crate::fix::codec::time::push_utc_timestamp(b, utc_ms);
        b.push(SOH);
        let end = b.len();
        self.entry().body.end = end;
        self
    }

    /// Adds a body field with a decimal value: the shortest text that reads back as `value`,
    /// never with an exponent (a non-finite value is written as 0).
    pub fn field_f64(&mut self, tag: u32, value: f64) -> &mut Self {
        use std::io::Write;
        let b = &mut self.outbox.body;
        push_u64(b, u64::from(tag));
        b.push(b'=');
        let _ = write!(b, "{}", if value.is_finite() { value } else { 0.0 });
        b.push(SOH);
        let end = b.len();
        self.entry().body.end = end;
        self
    }
}

fn put(buf: &mut Vec<u8>, tag: u32, value: &[u8]) {
    push_u64(buf, u64::from(tag));
    buf.push(b'=');
    buf.extend_from_slice(value);
    buf.push(SOH);
}
