//! Where a session keeps its sequence numbers and the messages it sent (for resends).
//!
//! [`FileStore`] survives restarts: `messages` is an append-only log of `[seq u64][len u32][bytes]`
//! records, each a sent message, except that seq `u64::MAX` marks a sequence-number record
//! (next sender, next target, CRC) and seq `u64::MAX - 1` a void record (the MsgSeqNum of a stored
//! message that must never be sent: a resend gap-fills it). Writes go to the OS as they happen; making them durable is
//! one fdatasync of that one file, either now ([`SessionStore::sync`]) or handed to whoever
//! writes the dependent bytes ([`SessionStore::sync_later`], so that one fdatasync can cover
//! every message written since the last). A message is on disk before the counterparty can see
//! it. A torn record at the end of the log (crash mid-append) is cut off on open. A `seqnums`
//! file of an older store is read once and folded into the log.
//!
//! [`MemoryStore`] keeps the sent messages in a bounded [`SentArena`].

use super::arena::SentArena;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// Voids the stored message `seq`: it is no longer returned by `sent` (a resend gap-fills it).
    /// Recorded like a message: durable with the next sync.
    fn void_sent(&mut self, seq: u64) -> io::Result<()>;
    /// Sets both sequence numbers to 1 and forgets the sent messages.
    fn reset(&mut self) -> io::Result<()>;
    /// Makes every change so far durable.
    fn sync(&mut self) -> io::Result<()>;
    /// Like [`SessionStore::sync`], but returns the fdatasync to run (before writing anything
    /// that depends on the changes so far) instead of running it; `None` when nothing is left
    /// to make durable. The store counts the changes as synced from now on.
    fn sync_later(&mut self) -> io::Result<Option<PendingSync>> {
        self.sync().map(|()| None)
    }
}

/// An fdatasync a store handed out ([`SessionStore::sync_later`]). A run makes durable every
/// change the store wrote before the run started: of several for the same file
/// ([`PendingSync::same_file`]) handed out before a run, that one run covers them all.
#[derive(Debug, Clone)]
pub struct PendingSync {
    file: Arc<File>,
    /// The store's "written since the last sync" flag: set again when the sync fails, so the
    /// store syncs once more rather than count the changes as durable.
    unsynced: Arc<AtomicBool>,
}

impl PendingSync {
    /// Runs the fdatasync.
    pub fn run(&self) -> io::Result<()> {
        let r = self.file.sync_data();
        if r.is_err() {
            self.unsynced.store(true, Ordering::Release);
        }
        r
    }

    /// True if `other` syncs the same file.
    pub fn same_file(&self, other: &PendingSync) -> bool {
        Arc::ptr_eq(&self.file, &other.file)
    }
}

/// Sent messages a [`MemoryStore`] keeps by default: the newest 64 MiB.
pub const MEMORY_STORE_LIMIT: usize = 64 << 20;

/// A store in memory (tests, benchmark sessions, and acceptors without a store directory):
/// sequence numbers and the newest sent messages, up to a limit in bytes; a resend of an older
/// message is gap-filled.
#[derive(Debug)]
pub struct MemoryStore {
    sender: u64,
    target: u64,
    messages: SentArena,
    /// Voided MsgSeqNums, ascending.
    voided: Vec<u64>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::with_limit(MEMORY_STORE_LIMIT)
    }
}

impl MemoryStore {
    /// An empty store at sequence numbers 1 / 1 keeping [`MEMORY_STORE_LIMIT`] of messages.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// An empty store keeping about `limit` bytes of the newest sent messages.
    pub fn with_limit(limit: usize) -> MemoryStore {
        MemoryStore {
            sender: 1,
            target: 1,
            messages: SentArena::new(limit),
            voided: Vec::new(),
        }
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
        self.messages.push(seq, message);
        self.sender = seq + 1;
        Ok(())
    }
    fn sent(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) -> io::Result<()> {
        self.messages.range(begin, end, &mut |seq, m| {
            if self.voided.binary_search(&seq).is_err() {
                each(seq, m);
            }
        });
        Ok(())
    }
    fn void_sent(&mut self, seq: u64) -> io::Result<()> {
        if let Err(i) = self.voided.binary_search(&seq) {
            self.voided.insert(i, seq);
        }
        Ok(())
    }
    fn reset(&mut self) -> io::Result<()> {
        self.sender = 1;
        self.target = 1;
        self.messages.clear();
        self.voided.clear();
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn sync_later(&mut self) -> io::Result<Option<PendingSync>> {
        Ok(None)
    }
}

const SEQ_FILE: &str = "seqnums";
const LOG_FILE: &str = "messages";
const RECORD_HEAD: usize = 12;
/// The seq of a sequence-number record in the log.
const SEQS_RECORD: u64 = u64::MAX;
/// The seq of a void record (its payload: the voided MsgSeqNum, u64).
const VOID_RECORD: u64 = u64::MAX - 1;

#[derive(Debug, Clone, Copy)]
struct Stored {
    seq: u64,
    /// Offset of the message bytes in the log.
    at: u64,
    len: u32,
}

/// A store in a directory of its own (one per session).
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    log: Arc<File>,
    log_len: u64,
    /// The stored messages in seq order.
    index: Vec<Stored>,
    sender: u64,
    target: u64,
    /// The sequence numbers the log says (its last records).
    logged: (u64, u64),
    /// Bytes written since the last sync was run or handed out.
    unsynced: Arc<AtomicBool>,
    /// A failed append left bytes past `log_len` that could not be cut off yet.
    torn: bool,
}

impl FileStore {
    /// Opens (or creates) the store in `dir`. Fails if a sequence-number record (or an older
    /// store's `seqnums`) is corrupt rather than silently restarting at 1.
    pub fn open(dir: &Path) -> io::Result<FileStore> {
        std::fs::create_dir_all(dir)?;
        let corrupt =
            |what: &Path| io::Error::new(io::ErrorKind::InvalidData, format!("{} is corrupt", what.display()));
        let legacy = match File::open(dir.join(SEQ_FILE)) {
            Ok(mut f) => {
                let mut raw = Vec::new();
                f.read_to_end(&mut raw)?;
                if raw.is_empty() {
                    Some((1, 1))
                } else {
                    Some(decode_seqs(&raw).ok_or_else(|| corrupt(&dir.join(SEQ_FILE)))?)
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let log = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(dir.join(LOG_FILE))?;
        let (sender, target) = legacy.unwrap_or((1, 1));
        let mut store = FileStore {
            dir: dir.to_path_buf(),
            log: Arc::new(log),
            log_len: 0,
            index: Vec::new(),
            sender,
            target,
            logged: (sender, target),
            unsynced: Arc::new(AtomicBool::new(false)),
            torn: false,
        };
        store.load_index().map_err(|e| {
            if e.kind() == io::ErrorKind::InvalidData {
                corrupt(&dir.join(LOG_FILE))
            } else {
                e
            }
        })?;
        if legacy.is_some() {
            // fold the older store's seqnums into the log, then drop the file
            store.logged = (0, 0);
            store.append_seqs()?;
            store.sync()?;
            std::fs::remove_file(dir.join(SEQ_FILE))?;
        }
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
        let mut seqs = [0u8; 20];
        while pos + RECORD_HEAD as u64 <= len {
            self.log.read_exact_at(&mut head, pos)?;
            let seq = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8]));
            let n = u32::from_le_bytes(head[8..].try_into().unwrap_or([0; 4]));
            let start = pos + RECORD_HEAD as u64;
            if start + u64::from(n) > len {
                break;
            }
            if seq == SEQS_RECORD {
                if n as usize != seqs.len() {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                self.log.read_exact_at(&mut seqs, start)?;
                let (s, t) = decode_seqs(&seqs).ok_or(io::ErrorKind::InvalidData)?;
                self.sender = s;
                self.target = t;
            } else if seq == VOID_RECORD {
                let mut v = [0u8; 8];
                if n as usize != v.len() {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                self.log.read_exact_at(&mut v, start)?;
                remove_stored(&mut self.index, u64::from_le_bytes(v));
            } else {
                push_stored(&mut self.index, Stored { seq, at: start, len: n });
                self.sender = self.sender.max(seq + 1);
            }
            pos = start + u64::from(n);
        }
        if pos < len {
            // a torn last record: cut it off so the next append starts on a record boundary
            self.log.set_len(pos)?;
        }
        self.log_len = pos;
        self.logged = (self.sender, self.target);
        Ok(())
    }

    fn append(&mut self, seq: u64, bytes: &[u8]) -> io::Result<u64> {
        let mut head = [0u8; RECORD_HEAD];
        head[..8].copy_from_slice(&seq.to_le_bytes());
        head[8..].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        if self.torn {
            self.log.set_len(self.log_len)?;
            self.torn = false;
        }
        let mut log: &File = &self.log;
        let written = if bytes.len() <= 512 {
            // one write for the record
            let mut rec = [0u8; RECORD_HEAD + 512];
            rec[..RECORD_HEAD].copy_from_slice(&head);
            rec[RECORD_HEAD..RECORD_HEAD + bytes.len()].copy_from_slice(bytes);
            log.write_all(&rec[..RECORD_HEAD + bytes.len()])
        } else {
            log.write_all(&head).and_then(|()| log.write_all(bytes))
        };
        if let Err(e) = written {
            // a part of the record may be in the file (a full disk): cut it off before any
            // later record lands behind it (or before the next append, if this cut fails too)
            self.torn = self.log.set_len(self.log_len).is_err();
            return Err(e);
        }
        let at = self.log_len + RECORD_HEAD as u64;
        self.log_len = at + bytes.len() as u64;
        self.unsynced.store(true, Ordering::Release);
        Ok(at)
    }

    /// Records the sequence numbers in the log if they differ from what it says.
    fn append_seqs(&mut self) -> io::Result<()> {
        if self.logged != (self.sender, self.target) {
            self.append(SEQS_RECORD, &encode_seqs(self.sender, self.target))?;
            self.logged = (self.sender, self.target);
        }
        Ok(())
    }
}

/// Adds `s` to the seq-ordered `index`; a seq at or below the newest replaces what follows.
fn push_stored(index: &mut Vec<Stored>, s: Stored) {
    while index.last().is_some_and(|l| l.seq >= s.seq) {
        index.pop();
    }
    index.push(s);
}

/// Removes message `seq` from the seq-ordered `index`, if there.
fn remove_stored(index: &mut Vec<Stored>, seq: u64) {
    if let Ok(i) = index.binary_search_by_key(&seq, |s| s.seq) {
        index.remove(i);
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
        // recorded in the log by the next sync (or when the store is dropped)
        self.sender = seq;
        Ok(())
    }
    fn set_next_target_seq(&mut self, seq: u64) -> io::Result<()> {
        self.target = seq;
        Ok(())
    }
    fn save_sent(&mut self, seq: u64, message: &[u8]) -> io::Result<()> {
        if seq >= VOID_RECORD {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "MsgSeqNum out of range"));
        }
        let at = self.append(seq, message)?;
        push_stored(
            &mut self.index,
            Stored {
                seq,
                at,
                len: message.len() as u32,
            },
        );
        self.sender = seq + 1;
        // a message record says the next sender seq; the target is recorded by the next sync
        self.logged.0 = self.sender;
        Ok(())
    }
    fn sent(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) -> io::Result<()> {
        let mut buf = Vec::new();
        let start = self.index.partition_point(|s| s.seq < begin);
        for s in &self.index[start..] {
            if s.seq > end {
                break;
            }
            buf.resize(s.len as usize, 0);
            self.log.read_exact_at(&mut buf, s.at)?;
            each(s.seq, &buf);
        }
        Ok(())
    }
    fn void_sent(&mut self, seq: u64) -> io::Result<()> {
        if self.index.binary_search_by_key(&seq, |s| s.seq).is_err() {
            return Ok(());
        }
        self.append(VOID_RECORD, &seq.to_le_bytes())?;
        remove_stored(&mut self.index, seq);
        Ok(())
    }
    fn reset(&mut self) -> io::Result<()> {
        self.log.set_len(0)?;
        self.log_len = 0;
        self.index.clear();
        self.sender = 1;
        self.target = 1;
        // an empty log says 1 / 1
        self.logged = (1, 1);
        self.unsynced.store(true, Ordering::Release);
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        match self.sync_later()? {
            Some(p) => p.run(),
            None => Ok(()),
        }
    }
    fn sync_later(&mut self) -> io::Result<Option<PendingSync>> {
        self.append_seqs()?;
        if !self.unsynced.swap(false, Ordering::AcqRel) {
            return Ok(None);
        }
        Ok(Some(PendingSync {
            file: Arc::clone(&self.log),
            unsynced: Arc::clone(&self.unsynced),
        }))
    }
}

impl Drop for FileStore {
    fn drop(&mut self) {
        // a clean stop keeps the last sequence numbers (written, not synced)
        let _ = self.append_seqs();
    }
}

/// Which writes a [`FailingStore`] refuses while its flag is set.
#[cfg(test)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refuses {
    /// Sent messages (`save_sent`), as a full disk refuses them.
    Saves,
    /// Void records (`void_sent`), as a disk that refuses them.
    Voids,
}

/// A store for tests whose writes of one kind ([`FailingStore::refuses`]) fail with ENOSPC while
/// [`FailingStore::failing`] is set; everything else goes to the [`FileStore`] inside.
#[cfg(test)]
pub(crate) struct FailingStore {
    pub inner: FileStore,
    pub refuses: Refuses,
    pub failing: Arc<AtomicBool>,
}

#[cfg(test)]
impl FailingStore {
    /// A [`FileStore`] in `dir` whose `refuses` writes fail while the returned flag is set.
    pub fn open(dir: &Path, refuses: Refuses) -> (FailingStore, Arc<AtomicBool>) {
        let failing = Arc::new(AtomicBool::new(false));
        let store = FailingStore {
            inner: FileStore::open(dir).expect("store"),
            refuses,
            failing: Arc::clone(&failing),
        };
        (store, failing)
    }

    fn refused(&self, kind: Refuses) -> io::Result<()> {
        if self.refuses == kind && self.failing.load(Ordering::Acquire) {
            return Err(io::Error::from_raw_os_error(28)); // ENOSPC
        }
        Ok(())
    }
}

#[cfg(test)]
impl SessionStore for FailingStore {
    fn next_sender_seq(&self) -> u64 {
        self.inner.next_sender_seq()
    }
    fn next_target_seq(&self) -> u64 {
        self.inner.next_target_seq()
    }
    fn set_next_sender_seq(&mut self, seq: u64) -> io::Result<()> {
        self.inner.set_next_sender_seq(seq)
    }
    fn set_next_target_seq(&mut self, seq: u64) -> io::Result<()> {
        self.inner.set_next_target_seq(seq)
    }
    fn save_sent(&mut self, seq: u64, message: &[u8]) -> io::Result<()> {
        self.refused(Refuses::Saves)?;
        self.inner.save_sent(seq, message)
    }
    fn sent(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) -> io::Result<()> {
        self.inner.sent(begin, end, each)
    }
    fn void_sent(&mut self, seq: u64) -> io::Result<()> {
        self.refused(Refuses::Voids)?;
        self.inner.void_sent(seq)
    }
    fn reset(&mut self) -> io::Result<()> {
        self.inner.reset()
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()
    }
    fn sync_later(&mut self) -> io::Result<Option<PendingSync>> {
        self.inner.sync_later()
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
    fn a_voided_message_is_never_returned_again_also_after_a_reopen() {
        let mut m = MemoryStore::new();
        let dir = temp_dir("void");
        let mut f = FileStore::open(&dir).expect("open");
        for s in [&mut m as &mut dyn SessionStore, &mut f] {
            for seq in 1..=4 {
                s.save_sent(seq, format!("m{seq}").as_bytes()).expect("save");
            }
            s.void_sent(2).expect("void");
            s.void_sent(9).expect("voiding what is not stored changes nothing");
            let seqs: Vec<u64> = collect(s, 1, 4).iter().map(|(q, _)| *q).collect();
            assert_eq!(seqs, [1, 3, 4]);
            assert_eq!(s.next_sender_seq(), 5, "voiding keeps the sequence numbers");
            s.sync().expect("sync");
        }
        drop(f);
        let f = FileStore::open(&dir).expect("reopen");
        let kept: Vec<(u64, Vec<u8>)> = collect(&f, 1, 4);
        assert_eq!(kept, [(1, b"m1".to_vec()), (3, b"m3".to_vec()), (4, b"m4".to_vec())]);
        assert_eq!(f.next_sender_seq(), 5);
        let _ = std::fs::remove_dir_all(&dir);
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
    fn file_store_resends_and_sequence_numbers_survive_restarts() {
        let dir = temp_dir("restart");
        {
            let mut s = FileStore::open(&dir).expect("open");
            for seq in 1..=5u64 {
                s.save_sent(seq, format!("m{seq}").as_bytes()).expect("save");
            }
            s.set_next_target_seq(7).expect("target");
            s.sync().expect("sync");
        }
        let mut s = FileStore::open(&dir).expect("reopen");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (6, 7));
        assert_eq!(
            collect(&s, 2, 4),
            vec![(2, b"m2".to_vec()), (3, b"m3".to_vec()), (4, b"m4".to_vec())]
        );
        assert_eq!(collect(&s, 5, 0).len(), 0, "an empty range");
        assert_eq!(collect(&s, 5, 99), vec![(5, b"m5".to_vec())]);
        // a target seq changed without a sync is kept by a clean drop
        s.set_next_target_seq(8).expect("target");
        drop(s);
        let mut s = FileStore::open(&dir).expect("reopen");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (6, 8));
        s.reset().expect("reset");
        s.sync().expect("sync");
        drop(s);
        let s = FileStore::open(&dir).expect("reopen after reset");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
        assert!(collect(&s, 1, 99).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sync_later_hands_out_one_sync_per_batch_of_changes() {
        let dir = temp_dir("later");
        let mut s = FileStore::open(&dir).expect("open");
        assert!(s.sync_later().expect("clean").is_none(), "nothing written yet");
        s.save_sent(1, b"one").expect("save");
        s.save_sent(2, b"two").expect("save");
        let first = s.sync_later().expect("later").expect("a sync to run");
        assert!(
            s.sync_later().expect("again").is_none(),
            "counted as synced once handed out"
        );
        s.set_next_target_seq(3).expect("target");
        let second = s.sync_later().expect("later").expect("the target seq needs a sync");
        assert!(first.same_file(&second));
        second.run().expect("run");
        first.run().expect("run");
        drop(s);
        let s = FileStore::open(&dir).expect("reopen");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (3, 3));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_older_stores_seqnums_file_is_folded_into_the_log() {
        let dir = temp_dir("legacy");
        std::fs::create_dir_all(&dir).expect("dir");
        // the older layout: seqnums beside a log of message records only
        std::fs::write(dir.join(SEQ_FILE), encode_seqs(3, 11)).expect("seqnums");
        let mut log = Vec::new();
        for (seq, m) in [(1u64, &b"one"[..]), (2, b"two")] {
            log.extend_from_slice(&seq.to_le_bytes());
            log.extend_from_slice(&(m.len() as u32).to_le_bytes());
            log.extend_from_slice(m);
        }
        std::fs::write(dir.join(LOG_FILE), &log).expect("log");
        let s = FileStore::open(&dir).expect("open");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (3, 11));
        assert!(!dir.join(SEQ_FILE).exists());
        drop(s);
        let s = FileStore::open(&dir).expect("reopen");
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (3, 11));
        assert_eq!(collect(&s, 1, 2), vec![(1, b"one".to_vec()), (2, b"two".to_vec())]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrupt_sequence_number_record_refuses_to_open() {
        let dir = temp_dir("corrupt-record");
        {
            let mut s = FileStore::open(&dir).expect("open");
            s.set_next_target_seq(5).expect("target");
            s.sync().expect("sync");
        }
        let mut raw = std::fs::read(dir.join(LOG_FILE)).expect("log");
        let last = raw.len() - 1;
        raw[last] ^= 0xff;
        std::fs::write(dir.join(LOG_FILE), &raw).expect("corrupt");
        let err = FileStore::open(&dir).expect_err("corrupt");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn memory_store_is_bounded_and_keeps_the_newest() {
        let mut s = MemoryStore::with_limit(1);
        let big = vec![b'x'; 2 << 20];
        s.save_sent(1, &big).expect("save");
        s.save_sent(2, &big).expect("save");
        assert_eq!(s.next_sender_seq(), 3);
        let kept: Vec<u64> = collect(&s, 1, 2).into_iter().map(|m| m.0).collect();
        assert_eq!(kept, vec![2]);
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
