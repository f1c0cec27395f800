//! Where a session keeps its sequence numbers and the messages it sent (for resends).
//!
//! [`FileStore`] survives restarts: `seqnums` holds the next sender and target sequence numbers
//! (with a CRC), `messages` is an append-only log of `[seq u64][len u32][bytes]` records. Writes go
//! to the OS as they happen; [`SessionStore::sync`] makes them durable (fdatasync) and is called
//! before outbound bytes are written to the socket, so a message is on disk before the
//! counterparty can see it. A torn record at the end of the log (crash mid-append) is cut off
//! on open.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Storage of one session's sequence numbers and sent messages.
pub trait SessionStore: Send {
    /// MsgSeqNum of the next message we send (1 after a reset).
    fn next_sender_seq(&self) -> u64;
    /// MsgSeqNum we expect next from the counterparty (1 after a reset).
    fn next_target_seq(&self) -> u64;
    /// Sets the next sender sequence number.
    fn set_next_sender_seq(&mut self, seq: u64) -> io::Result<()>;
    /// Sets the next target sequence number.
    fn set_next_target_seq(&mut self, seq: u64) -> io::Result<()>;
    /// Keeps a sent message for resends and sets the next sender sequence number to `seq + 1`.
    fn save_sent(&mut self, seq: u64, message: &[u8]) -> io::Result<()>;
    /// Calls `each` with the stored messages whose seq is in `begin..=end`, in seq order.
    fn sent(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) -> io::Result<()>;
    /// Sets both sequence numbers to 1 and forgets the sent messages.
    fn reset(&mut self) -> io::Result<()>;
    /// Makes every change so far durable.
    fn sync(&mut self) -> io::Result<()>;
}

/// A store in memory (tests, and sessions that need nothing to survive a restart).
#[derive(Debug)]
pub struct MemoryStore {
    sender: u64,
    target: u64,
    messages: BTreeMap<u64, Vec<u8>>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            sender: 1,
            target: 1,
            messages: BTreeMap::new(),
        }
    }
}

impl MemoryStore {
    /// An empty store at sequence numbers 1 / 1.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl SessionStore for MemoryStore {
    fn next_sender_seq(&self) -> u64 {
        self.sender
    }
    fn next_target_seq(&self) -> u64 {
        self.target
    }
    fn set_next_sender_seq(&mut self, seq: u64) -> io::Result<()> {
        self.sender = seq;
        Ok(())
    }
    fn set_next_target_seq(&mut self, seq: u64) -> io::Result<()> {
        self.target = seq;
        Ok(())
    }
    fn save_sent(&mut self, seq: u64, message: &[u8]) -> io::Result<()> {
        self.messages.insert(seq, message.to_vec());
        self.sender = seq + 1;
        Ok(())
    }
    fn sent(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) -> io::Result<()> {
        for (seq, m) in self.messages.range(begin..=end.max(begin)) {
            each(*seq, m);
        }
        Ok(())
    }
    fn reset(&mut self) -> io::Result<()> {
        *self = MemoryStore::default();
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const SEQ_FILE: &str = "seqnums";
const LOG_FILE: &str = "messages";
const RECORD_HEAD: usize = 12;

/// A store in a directory of its own (one per session).
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    seq_file: File,
    log: File,
    log_len: u64,
    /// seq -> (offset of the message bytes, length)
    index: BTreeMap<u64, (u64, u32)>,
    sender: u64,
    target: u64,
    dirty: bool,
}

impl FileStore {
    /// Opens (or creates) the store in `dir`. Fails if `seqnums` is corrupt rather than
    /// silently restarting at 1.
    pub fn open(dir: &Path) -> io::Result<FileStore> {
        std::fs::create_dir_all(dir)?;
        let mut seq_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(SEQ_FILE))?;
        let mut raw = Vec::new();
        seq_file.read_to_end(&mut raw)?;
        let (sender, target) = if raw.is_empty() {
            (1, 1)
        } else {
            decode_seqs(&raw).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is corrupt", dir.join(SEQ_FILE).display()),
                )
            })?
        };
        let log = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(dir.join(LOG_FILE))?;
        let mut store = FileStore {
            dir: dir.to_path_buf(),
            seq_file,
            log,
            log_len: 0,
            index: BTreeMap::new(),
            sender,
            target,
            dirty: false,
        };
        store.load_index()?;
        Ok(store)
    }

    /// The directory of this store.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn load_index(&mut self) -> io::Result<()> {
        let len = self.log.metadata()?.len();
        let mut pos = 0u64;
        let mut head = [0u8; RECORD_HEAD];
        while pos + RECORD_HEAD as u64 <= len {
            self.log.read_exact_at(&mut head, pos)?;
            let seq = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8]));
            let n = u32::from_le_bytes(head[8..].try_into().unwrap_or([0; 4]));
            let start = pos + RECORD_HEAD as u64;
            if start + u64::from(n) > len {
                break;
            }
            self.index.insert(seq, (start, n));
            pos = start + u64::from(n);
        }
        if pos < len {
            // a torn last record: cut it off so the next append starts on a record boundary
            self.log.set_len(pos)?;
        }
        self.log_len = pos;
        Ok(())
    }

    fn write_seqs(&mut self) -> io::Result<()> {
        self.seq_file.write_all_at(&encode_seqs(self.sender, self.target), 0)?;
        self.dirty = true;
        Ok(())
    }
}

fn encode_seqs(sender: u64, target: u64) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[..8].copy_from_slice(&sender.to_le_bytes());
    b[8..16].copy_from_slice(&target.to_le_bytes());
    let crc = crc32fast::hash(&b[..16]);
    b[16..].copy_from_slice(&crc.to_le_bytes());
    b
}

fn decode_seqs(b: &[u8]) -> Option<(u64, u64)> {
    if b.len() != 20 || crc32fast::hash(&b[..16]).to_le_bytes() != b[16..20] {
        return None;
    }
    Some((
        u64::from_le_bytes(b[..8].try_into().ok()?),
        u64::from_le_bytes(b[8..16].try_into().ok()?),
    ))
}

impl SessionStore for FileStore {
    fn next_sender_seq(&self) -> u64 {
        self.sender
    }
    fn next_target_seq(&self) -> u64 {
        self.target
    }
    fn set_next_sender_seq(&mut self, seq: u64) -> io::Result<()> {
        self.sender = seq;
        self.write_seqs()
    }
    fn set_next_target_seq(&mut self, seq: u64) -> io::Result<()> {
        self.target = seq;
        self.write_seqs()
    }
    fn save_sent(&mut self, seq: u64, message: &[u8]) -> io::Result<()> {
        let mut head = [0u8; RECORD_HEAD];
        head[..8].copy_from_slice(&seq.to_le_bytes());
        head[8..].copy_from_slice(&(message.len() as u32).to_le_bytes());
        self.log.write_all(&head)?;
        self.log.write_all(message)?;
        self.index
            .insert(seq, (self.log_len + RECORD_HEAD as u64, message.len() as u32));
        self.log_len += (RECORD_HEAD + message.len()) as u64;
        self.sender = seq + 1;
        self.write_seqs()
    }
    fn sent(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) -> io::Result<()> {
        let mut buf = Vec::new();
        for (&seq, &(at, n)) in self.index.range(begin..=end.max(begin)) {
            buf.resize(n as usize, 0);
            self.log.read_exact_at(&mut buf, at)?;
            each(seq, &buf);
        }
        Ok(())
    }
    fn reset(&mut self) -> io::Result<()> {
        self.log.set_len(0)?;
        self.log_len = 0;
        self.index.clear();
        self.sender = 1;
        self.target = 1;
        self.write_seqs()
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.dirty {
            self.log.sync_data()?;
            self.seq_file.sync_data()?;
            self.dirty = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tw-fix-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn collect(s: &dyn SessionStore, begin: u64, end: u64) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        s.sent(begin, end, &mut |seq, m| out.push((seq, m.to_vec())))
            .expect("read");
        out
    }

    fn exercise(s: &mut dyn SessionStore) {
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
        s.save_sent(1, b"one").expect("save");
        s.save_sent(2, b"two").expect("save");
        s.save_sent(3, b"three").expect("save");
        s.set_next_target_seq(9).expect("target");
        s.sync().expect("sync");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (4, 9));
        assert_eq!(collect(s, 2, 3), vec![(2, b"two".to_vec()), (3, b"three".to_vec())]);
    }

    #[test]
    fn memory_store_keeps_seqs_and_messages() {
        let mut s = MemoryStore::new();
        exercise(&mut s);
        s.reset().expect("reset");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
        assert!(collect(&s, 1, 10).is_empty());
    }

    #[test]
    fn file_store_survives_reopen_and_cuts_torn_records() {
        let dir = temp_dir("reopen");
        {
            let mut s = FileStore::open(&dir).expect("open");
            exercise(&mut s);
        }
        // a crash in the middle of an append leaves half a record
        let mut log = OpenOptions::new().append(true).open(dir.join(LOG_FILE)).expect("log");
        log.write_all(&[4, 0, 0, 0, 0, 0, 0, 0, 50, 0]).expect("torn");
        drop(log);
        let mut s = FileStore::open(&dir).expect("reopen");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (4, 9));
        assert_eq!(collect(&s, 1, 3).len(), 3);
        s.save_sent(4, b"four").expect("append after torn record");
        drop(s);
        let s = FileStore::open(&dir).expect("reopen again");
        assert_eq!(collect(&s, 4, 4), vec![(4, b"four".to_vec())]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn corrupt_seqnums_refuse_to_open() {
        let dir = temp_dir("corrupt");
        FileStore::open(&dir)
            .expect("open")
            .set_next_target_seq(5)
            .expect("write");
        std::fs::write(dir.join(SEQ_FILE), [1u8; 20]).expect("corrupt");
        let err = FileStore::open(&dir).expect_err("corrupt");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
