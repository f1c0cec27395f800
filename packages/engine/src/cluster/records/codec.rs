//! The binary format of record replication messages on NATS (docs/architecture.md, "Cluster
//! mode: records"). Little-endian fixed fields, LEB128 varints for counts and seqs, strings as a
//! varint length and UTF-8 bytes.
//!
//! ```text
//! message   = kind:u8 version:u8 incarnation:u64 seq:u64 body
//! batch     (kind 'B', seq = batch seq)        : entry*
//! snapshot  (kind 'S', seq = last batch seq)   : for:str id:u64 chunk:varint last:u8 full:u8 entry*
//! heartbeat (kind 'H', seq = last batch seq)   : (nothing)
//! request   (kind 'R', on <name>.img.<owner>)  : from:str count:varint subject:str*  (no subjects: all)
//! entry     = 1 subject:str seq:varint ts:f64 image:u8 count:varint (name:str value)*   a record
//!           | 2 subject:str count:varint op*                                            container ops
//! value     = tag:u8 [payload]; tag 0 delete, 1 number f64, 2 string str, 3 false, 4 true,
//!             5 timestamp (zigzag varint); bit 0x80: the source named the field's type
//! op        = 0 clear | 1 add count subject* | 2 insert index:varint count subject* | 3 remove count subject*
//! ```

use crate::hub::ContainerOp;
use crate::value::Value;
use crate::wire::{PubField, Publish};

/// Format version in every message; a message of another version is refused whole.
pub const VERSION: u8 = 1;
/// Bytes of the fixed header.
pub const HEADER_BYTES: usize = 18;

/// A batch of one engine pass.
pub const KIND_BATCH: u8 = b'B';
/// (A chunk of) a snapshot or an image reply.
pub const KIND_SNAPSHOT: u8 = b'S';
/// "Still here; my last batch is seq".
pub const KIND_HEARTBEAT: u8 = b'H';
/// A request for images.
pub const KIND_REQUEST: u8 = b'R';

/// One replicated change.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A publish as the owner applied it: its resulting `seq`, and `ts` resolved (`publish.ts`).
    Record {
        /// The publish (`ts` is always `Some`).
        publish: Publish,
        /// The record's seq after it.
        seq: u64,
    },
    /// Container ops, in order.
    Container {
        /// Container subject.
        subject: String,
        /// The ops.
        ops: Vec<ContainerOp>,
    },
}

/// The header of every message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `KIND_*`.
    pub kind: u8,
    /// The sender's incarnation (random at start: a restarted node has a new one).
    pub incarnation: u64,
    /// Batch seq (batch) or the sender's last batch seq (snapshot, heartbeat).
    pub seq: u64,
}

/// What a snapshot chunk carries besides entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotHead {
    /// The node that asked (the others skip it).
    pub for_node: String,
    /// Snapshot id (unique per sender).
    pub id: u64,
    /// Chunk number from 0.
    pub chunk: u32,
    /// The last chunk.
    pub last: bool,
    /// A full snapshot (every record and container the sender owns), not images of some subjects.
    pub full: bool,
}

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cluster record message: {0}")]
pub struct CodecError(pub String);

type R<T> = std::result::Result<T, CodecError>;

/// Appends the header (`seq` can be set later with [`set_seq`]).
pub fn header(out: &mut Vec<u8>, kind: u8, incarnation: u64, seq: u64) {
    out.push(kind);
    out.push(VERSION);
    out.extend_from_slice(&incarnation.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
}

/// Sets the seq of a message started with [`header`].
pub fn set_seq(msg: &mut [u8], seq: u64) {
    msg[10..18].copy_from_slice(&seq.to_le_bytes());
}

/// Appends a snapshot chunk's head (after its header).
pub fn snapshot_head(out: &mut Vec<u8>, h: &SnapshotHead) {
    put_str(out, &h.for_node);
    out.extend_from_slice(&h.id.to_le_bytes());
    put_varint(out, u64::from(h.chunk));
    out.push(u8::from(h.last));
    out.push(u8::from(h.full));
}

/// A request message: images of `subjects` (none: a full snapshot) for node `from`.
pub fn request(from: &str, subjects: &[String]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + subjects.iter().map(|s| s.len() + 2).sum::<usize>());
    out.push(KIND_REQUEST);
    out.push(VERSION);
    put_str(&mut out, from);
    put_varint(&mut out, subjects.len() as u64);
    for s in subjects {
        put_str(&mut out, s);
    }
    out
}

/// Appends a record entry: a publish (its own fields, `typed` flags kept) with the record's
/// resulting `seq` and resolved `ts`.
pub fn put_publish(out: &mut Vec<u8>, p: &Publish, seq: u64, ts: f64) {
    let fields = p.fields.iter().map(|f| (f.name.as_str(), f.value.as_ref(), f.typed));
    put_record(out, &p.subject, seq, ts, p.image, p.fields.len(), fields);
}

/// Appends a record entry from parts (`count` = number of `fields`).
pub fn put_record<'a>(
    out: &mut Vec<u8>,
    subject: &str,
    seq: u64,
    ts: f64,
    image: bool,
    count: usize,
    fields: impl Iterator<Item = (&'a str, Option<&'a Value>, bool)>,
) {
    out.push(1);
    put_str(out, subject);
    put_varint(out, seq);
    out.extend_from_slice(&ts.to_le_bytes());
    out.push(u8::from(image));
    put_varint(out, count as u64);
    for (name, value, typed) in fields {
        put_str(out, name);
        let flag = if typed { 0x80 } else { 0 };
        match value {
            None => out.push(flag),
            Some(Value::Number(n)) => {
                out.push(1 | flag);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Some(Value::Str(s)) => {
                out.push(2 | flag);
                put_str(out, s);
            }
            Some(Value::Bool(b)) => out.push(if *b { 4 } else { 3 } | flag),
            Some(Value::Timestamp(t)) => {
                out.push(5 | flag);
                put_varint(out, ((*t << 1) ^ (*t >> 63)) as u64);
            }
        }
    }
}

/// Appends a container entry.
pub fn put_container<S: AsRef<str>>(out: &mut Vec<u8>, subject: &str, ops: &[(u8, usize, &[S])]) {
    out.push(2);
    put_str(out, subject);
    put_varint(out, ops.len() as u64);
    for (tag, index, subjects) in ops {
        out.push(*tag);
        if *tag == OP_CLEAR {
            continue;
        }
        if *tag == OP_INSERT {
            put_varint(out, *index as u64);
        }
        put_varint(out, subjects.len() as u64);
        for s in subjects.iter() {
            put_str(out, s.as_ref());
        }
    }
}

/// Container op tags.
pub const OP_CLEAR: u8 = 0;
/// `Add`.
pub const OP_ADD: u8 = 1;
/// `InsertAt`.
pub const OP_INSERT: u8 = 2;
/// `Remove`.
pub const OP_REMOVE: u8 = 3;

/// Appends container ops as the hub got them.
pub fn put_container_ops(out: &mut Vec<u8>, subject: &str, ops: &[ContainerOp]) {
    let parts: Vec<(u8, usize, &[String])> = ops
        .iter()
        .map(|op| match op {
            ContainerOp::Clear => (OP_CLEAR, 0, &[][..]),
            ContainerOp::Add(s) => (OP_ADD, 0, s.as_slice()),
            ContainerOp::InsertAt(i, s) => (OP_INSERT, *i, s.as_slice()),
            ContainerOp::Remove(s) => (OP_REMOVE, 0, s.as_slice()),
        })
        .collect();
    put_container(out, subject, &parts);
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A reader over one message.
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, at: 0 }
    }

    /// Whether everything was read.
    pub fn done(&self) -> bool {
        self.at >= self.buf.len()
    }

    /// The header (kind checked against `KIND_*` by the caller; version checked here).
    pub fn header(&mut self) -> R<Header> {
        let kind = self.u8()?;
        let version = self.u8()?;
        if version != VERSION {
            return Err(CodecError(format!("version {version}, this node reads {VERSION}")));
        }
        let incarnation = self.u64_le()?;
        let seq = self.u64_le()?;
        Ok(Header { kind, incarnation, seq })
    }

    /// A snapshot chunk's head.
    pub fn snapshot_head(&mut self) -> R<SnapshotHead> {
        let for_node = self.string()?;
        let id = self.u64_le()?;
        let chunk = u32::try_from(self.varint()?).map_err(|_| CodecError("chunk number too large".into()))?;
        let last = self.u8()? != 0;
        let full = self.u8()? != 0;
        Ok(SnapshotHead {
            for_node,
            id,
            chunk,
            last,
            full,
        })
    }

    /// A request (after its kind and version bytes): the asking node and the subjects.
    pub fn request(&mut self) -> R<(String, Vec<String>)> {
        let kind = self.u8()?;
        let version = self.u8()?;
        if kind != KIND_REQUEST || version != VERSION {
            return Err(CodecError(format!("not a version {VERSION} request")));
        }
        let from = self.string()?;
        let n = self.count()?;
        let subjects = (0..n).map(|_| self.string()).collect::<R<_>>()?;
        Ok((from, subjects))
    }

    /// The next entry.
    pub fn entry(&mut self) -> R<Entry> {
        match self.u8()? {
            1 => {
                let subject = self.string()?;
                let seq = self.varint()?;
                let ts = f64::from_le_bytes(self.array()?);
                let image = self.u8()? != 0;
                let n = self.count()?;
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    let name = self.str()?;
                    let tag = self.u8()?;
                    let value = match tag & 0x7f {
                        0 => None,
                        1 => Some(Value::Number(f64::from_le_bytes(self.array()?))),
                        2 => Some(Value::Str(self.str()?.into())),
                        3 => Some(Value::Bool(false)),
                        4 => Some(Value::Bool(true)),
                        5 => {
                            let z = self.varint()?;
                            Some(Value::Timestamp(((z >> 1) as i64) ^ -((z & 1) as i64)))
                        }
                        t => return Err(CodecError(format!("unknown value tag {t}"))),
                    };
                    fields.push(PubField {
                        name: name.into(),
                        value,
                        typed: tag & 0x80 != 0,
                    });
                }
                Ok(Entry::Record {
                    publish: Publish {
                        subject,
                        ts: Some(ts),
                        image,
                        fields,
                    },
                    seq,
                })
            }
            2 => {
                let subject = self.string()?;
                let n = self.count()?;
                let mut ops = Vec::with_capacity(n);
                for _ in 0..n {
                    let tag = self.u8()?;
                    if tag == OP_CLEAR {
                        ops.push(ContainerOp::Clear);
                        continue;
                    }
                    let index = if tag == OP_INSERT { self.varint()? as usize } else { 0 };
                    let m = self.count()?;
                    let subjects = (0..m).map(|_| self.string()).collect::<R<Vec<_>>>()?;
                    ops.push(match tag {
                        OP_ADD => ContainerOp::Add(subjects),
                        OP_INSERT => ContainerOp::InsertAt(index, subjects),
                        OP_REMOVE => ContainerOp::Remove(subjects),
                        t => return Err(CodecError(format!("unknown container op {t}"))),
                    });
                }
                Ok(Entry::Container { subject, ops })
            }
            t => Err(CodecError(format!("unknown entry tag {t}"))),
        }
    }

    fn u8(&mut self) -> R<u8> {
        let b = *self.buf.get(self.at).ok_or_else(|| CodecError("truncated".into()))?;
        self.at += 1;
        Ok(b)
    }

    fn array<const N: usize>(&mut self) -> R<[u8; N]> {
        let s = self
            .buf
            .get(self.at..self.at + N)
            .ok_or_else(|| CodecError("truncated".into()))?;
        self.at += N;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u64_le(&mut self) -> R<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn varint(&mut self) -> R<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(CodecError("varint longer than 10 bytes".into()))
    }

    /// A count, bounded by the bytes left (each counted item takes at least one byte), so a bad
    /// count cannot make a huge allocation.
    fn count(&mut self) -> R<usize> {
        let n = self.varint()?;
        if n > (self.buf.len() - self.at) as u64 {
            return Err(CodecError(format!("count {n} exceeds the message")));
        }
        Ok(n as usize)
    }

    fn str(&mut self) -> R<&'a str> {
        let n = self.count()?;
        let s = &self.buf[self.at..self.at + n];
        self.at += n;
        std::str::from_utf8(s).map_err(|e| CodecError(format!("bad UTF-8: {e}")))
    }

    fn string(&mut self) -> R<String> {
        self.str().map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, value: Option<Value>, typed: bool) -> PubField {
        PubField {
            name: name.into(),
            value,
            typed,
        }
    }

    #[test]
    fn entries_round_trip() {
        let p = Publish {
            subject: "/FX/EURUSD".into(),
            ts: Some(1.7e12),
            image: true,
            fields: vec![
                field("bid", Some(Value::Number(1.0842)), false),
                field("name", Some(Value::Str("Euro / US dollar, spot".into())), false),
                field("live", Some(Value::Bool(true)), false),
                field("off", Some(Value::Bool(false)), false),
                field("at", Some(Value::Timestamp(-1_700_000_000_123)), true),
                field("gone", None, false),
            ],
        };
        let ops = vec![
            ContainerOp::Clear,
            ContainerOp::Add(vec!["/A".into(), "/B".into()]),
            ContainerOp::InsertAt(7, vec!["/C".into()]),
            ContainerOp::Remove(vec!["/A".into()]),
        ];
        let mut out = Vec::new();
        header(&mut out, KIND_BATCH, 0xfeed, 0);
        put_publish(&mut out, &p, 300, 1.7e12);
        put_container_ops(&mut out, "/C/ALL", &ops);
        set_seq(&mut out, 12);
        let mut r = Reader::new(&out);
        assert_eq!(
            r.header().unwrap(),
            Header {
                kind: KIND_BATCH,
                incarnation: 0xfeed,
                seq: 12
            }
        );
        assert_eq!(r.entry().unwrap(), Entry::Record { publish: p, seq: 300 });
        assert_eq!(
            r.entry().unwrap(),
            Entry::Container {
                subject: "/C/ALL".into(),
                ops
            }
        );
        assert!(r.done());
    }

    #[test]
    fn snapshot_head_and_request_round_trip() {
        let mut out = Vec::new();
        header(&mut out, KIND_SNAPSHOT, 1, 9);
        let h = SnapshotHead {
            for_node: "b".into(),
            id: 3,
            chunk: 2,
            last: true,
            full: false,
        };
        snapshot_head(&mut out, &h);
        let mut r = Reader::new(&out);
        assert_eq!(r.header().unwrap().seq, 9);
        assert_eq!(r.snapshot_head().unwrap(), h);
        let req = request("b", &["/X".into(), "/Y".into()]);
        assert_eq!(
            Reader::new(&req).request().unwrap(),
            ("b".to_owned(), vec!["/X".to_owned(), "/Y".to_owned()])
        );
    }

    #[test]
    fn bad_messages_are_errors_never_panics() {
        let mut good = Vec::new();
        header(&mut good, KIND_BATCH, 1, 1);
        let p = Publish {
            subject: "/A".into(),
            ts: Some(1.0),
            image: false,
            fields: vec![field("x", Some(Value::Str("text".into())), false)],
        };
        put_publish(&mut good, &p, 1, 1.0);
        for cut in 0..good.len() {
            let mut r = Reader::new(&good[..cut]);
            let ok = r.header().and_then(|_| r.entry());
            assert!(ok.is_err(), "a message cut at {cut} is refused");
        }
        let mut wrong = good.clone();
        wrong[1] = 99;
        assert!(Reader::new(&wrong).header().is_err());
        // A count far past the message is refused before any allocation.
        let mut huge = Vec::new();
        header(&mut huge, KIND_BATCH, 1, 1);
        huge.extend_from_slice(&[1, 1, b'/', 1]);
        huge.extend_from_slice(&0f64.to_le_bytes());
        huge.push(0);
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        let mut r = Reader::new(&huge);
        r.header().unwrap();
        assert!(r.entry().unwrap_err().0.contains("exceeds"));
    }
}
