//! Sent messages kept in memory without an allocation per message: the bytes go into large
//! chunks appended in order, an index in seq order points into them. Bounded: once the chunks
//! hold more than the limit, the oldest chunk (and the messages in it) is dropped and its
//! buffer reused. A resend of a dropped message is covered by a SequenceReset-GapFill, as for
//! any message the store does not have.

use std::collections::VecDeque;

/// Bytes per chunk; a larger message gets a chunk of its own.
const CHUNK: usize = 1 << 20;

#[derive(Debug, Clone, Copy)]
struct Slot {
    seq: u64,
    /// Absolute chunk number (the front chunk is `first_chunk`).
    chunk: u64,
    offset: u32,
    len: u32,
}

/// Sent messages by seq, in chunks of at most `limit` bytes in all.
#[derive(Debug)]
pub struct SentArena {
    chunks: VecDeque<Vec<u8>>,
    first_chunk: u64,
    index: VecDeque<Slot>,
    /// A dropped chunk's buffer, reused for the next chunk.
    spare: Option<Vec<u8>>,
    limit: usize,
    held: usize,
}

impl SentArena {
    /// An empty arena keeping about `limit` bytes of messages (at least the newest message).
    pub fn new(limit: usize) -> SentArena {
        SentArena {
            chunks: VecDeque::new(),
            first_chunk: 0,
            index: VecDeque::new(),
            spare: None,
            limit,
            held: 0,
        }
    }

    /// Keeps `message` as `seq`. Seqs are expected in increasing order; a seq at or below the
    /// newest kept replaces it and everything after it.
    pub fn push(&mut self, seq: u64, message: &[u8]) {
        while self.index.back().is_some_and(|s| s.seq >= seq) {
            self.index.pop_back();
        }
        let fits = self
            .chunks
            .back()
            .is_some_and(|c| c.capacity() - c.len() >= message.len());
        if !fits {
            let mut chunk = if message.len() <= CHUNK {
                self.spare.take().unwrap_or_else(|| Vec::with_capacity(CHUNK))
            } else {
                Vec::with_capacity(message.len())
            };
            chunk.clear();
            self.held += chunk.capacity();
            self.chunks.push_back(chunk);
        }
        let chunk = self.first_chunk + self.chunks.len() as u64 - 1;
        let Some(buf) = self.chunks.back_mut() else { return };
        let offset = buf.len() as u32;
        buf.extend_from_slice(message);
        self.index.push_back(Slot {
            seq,
            chunk,
            offset,
            len: message.len() as u32,
        });
        while self.held > self.limit && self.chunks.len() > 1 {
            self.drop_oldest();
        }
    }

    fn drop_oldest(&mut self) {
        let Some(old) = self.chunks.pop_front() else { return };
        self.held -= old.capacity();
        while self.index.front().is_some_and(|s| s.chunk == self.first_chunk) {
            self.index.pop_front();
        }
        self.first_chunk += 1;
        if old.capacity() == CHUNK {
            self.spare = Some(old);
        }
    }

    /// Calls `each` with the kept messages whose seq is in `begin..=end`, in seq order.
    pub fn range(&self, begin: u64, end: u64, each: &mut dyn FnMut(u64, &[u8])) {
        let start = self.index.partition_point(|s| s.seq < begin);
        for s in self.index.range(start..) {
            if s.seq > end {
                break;
            }
            let chunk = &self.chunks[(s.chunk - self.first_chunk) as usize];
            let at = s.offset as usize;
            each(s.seq, &chunk[at..at + s.len as usize]);
        }
    }

    /// The oldest seq kept, if any.
    pub fn first_seq(&self) -> Option<u64> {
        self.index.front().map(|s| s.seq)
    }

    /// Number of messages kept.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True if no message is kept.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Forgets every message (keeps one buffer for reuse).
    pub fn clear(&mut self) {
        while let Some(c) = self.chunks.pop_front() {
            if c.capacity() == CHUNK {
                self.spare = Some(c);
            }
        }
        self.first_chunk = 0;
        self.held = 0;
        self.index.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(a: &SentArena, begin: u64, end: u64) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        a.range(begin, end, &mut |seq, m| out.push((seq, m.to_vec())));
        out
    }

    #[test]
    fn ranges_are_inclusive_and_in_order() {
        let mut a = SentArena::new(1 << 30);
        for seq in 1..=5u64 {
            a.push(seq, format!("m{seq}").as_bytes());
        }
        assert_eq!(
            collect(&a, 2, 4),
            vec![(2, b"m2".to_vec()), (3, b"m3".to_vec()), (4, b"m4".to_vec())]
        );
        assert_eq!(collect(&a, 5, 99), vec![(5, b"m5".to_vec())]);
        assert!(collect(&a, 6, 9).is_empty());
        assert!(collect(&a, 4, 3).is_empty());
    }

    #[test]
    fn a_gap_in_seqs_is_kept_as_a_gap() {
        let mut a = SentArena::new(1 << 30);
        a.push(1, b"a");
        a.push(4, b"d");
        assert_eq!(collect(&a, 1, 4), vec![(1, b"a".to_vec()), (4, b"d".to_vec())]);
        assert_eq!(collect(&a, 2, 3), vec![]);
    }

    #[test]
    fn a_lower_seq_replaces_the_newer_ones() {
        let mut a = SentArena::new(1 << 30);
        for seq in 1..=4u64 {
            a.push(seq, b"old");
        }
        a.push(3, b"new");
        assert_eq!(
            collect(&a, 1, 9),
            vec![(1, b"old".to_vec()), (2, b"old".to_vec()), (3, b"new".to_vec())]
        );
    }

    #[test]
    fn bounded_drops_whole_oldest_chunks_and_reuses_them() {
        // room for two chunks: the third drops the first
        let mut a = SentArena::new(2 * CHUNK);
        let msg = vec![b'x'; 1000];
        let per_chunk = (CHUNK / msg.len()) as u64;
        let total = 3 * per_chunk;
        for seq in 1..=total {
            a.push(seq, &msg);
        }
        let first = a.first_seq().expect("kept");
        assert_eq!(first, per_chunk + 1, "the first chunk's messages are gone");
        assert_eq!(a.len() as u64, total - per_chunk);
        assert!(a.held <= 2 * CHUNK);
        let got = collect(&a, 1, total);
        assert_eq!(got.first().map(|m| m.0), Some(per_chunk + 1));
        assert_eq!(got.last().map(|m| m.0), Some(total));
        assert!(got.iter().all(|(_, m)| m == &msg));
        // the dropped chunk's buffer is used again rather than a new one
        let spare = a.spare.as_ref().map(|c| c.as_ptr());
        for seq in total + 1..=total + per_chunk {
            a.push(seq, &msg);
        }
        assert!(spare.is_some());
        assert!(a.chunks.iter().any(|c| Some(c.as_ptr()) == spare));
    }

    #[test]
    fn a_message_larger_than_a_chunk_is_kept_whole() {
        let mut a = SentArena::new(1);
        let big = vec![7u8; CHUNK + 10];
        a.push(1, b"small");
        a.push(2, &big);
        // over the limit: only the newest is kept
        assert_eq!(collect(&a, 1, 2), vec![(2, big.clone())]);
        a.push(3, b"after");
        assert_eq!(collect(&a, 1, 3), vec![(3, b"after".to_vec())]);
    }

    #[test]
    fn clear_forgets_everything() {
        let mut a = SentArena::new(1 << 30);
        a.push(1, b"a");
        a.clear();
        assert!(a.is_empty());
        a.push(1, b"b");
        assert_eq!(collect(&a, 1, 1), vec![(1, b"b".to_vec())]);
    }
}
