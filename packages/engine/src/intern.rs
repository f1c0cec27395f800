//! String interning: subjects and field names become dense `u32` ids starting at 1.
//! Ids are permanent for the life of the engine (clients cache subject ids).
//!
//! Memory: each string is stored once, in 64 KiB text chunks (no allocation per string), and the
//! lookup table holds only ids (4 bytes + 1 control byte a slot). About `len + 17` bytes per
//! string at 2,000,000 subjects, where a `HashMap<Box<str>, u32>` plus a `Vec<Box<str>>` took
//! two allocations of the text and ~60 bytes of headers.
//!
//! Growth: the lookup table is split in `SHARDS` tables (by hash bits the tables do not use
//! themselves). One table of ids doubled and rehashed every string at once: with each order a new
//! trade-record subject, the engine thread stalled 17 ms at 229,376 subjects and ~45 ms at 458,752.
//! A shard holds 1/64 of the ids, and the shards fill at slightly different counts, so their
//! rehashes come one at a time, each 1/64 of the work.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Size of one text chunk (a longer string gets a chunk of its own). @default 64 KiB.
const CHUNK_BYTES: usize = 64 * 1024;

/// Lookup tables (a power of two); see the module doc.
const SHARDS: usize = 64;

/// The shard of hash `h`: bits 40.. (a table indexes buckets with the low bits and tags them
/// with the top 7, so the bits picking the shard leave both as random as before).
fn shard(h: u64) -> usize {
    (h >> 40) as usize & (SHARDS - 1)
}

/// Where one interned string lives: chunk index, byte offset in it, byte length.
#[derive(Debug, Clone, Copy)]
struct Span {
    chunk: u32,
    start: u32,
    len: u32,
}

/// Maps strings to dense ids `1..=len` and back. Id 0 is never handed out.
#[derive(Debug, Default)]
pub struct Interner {
    /// Ids, hashed by their string (FxHash), in `SHARDS` tables (none until the first string).
    tables: Vec<HashTable<u32>>,
    /// Span of id `i + 1`.
    spans: Vec<Span>,
    /// Text chunks; a chunk never reallocates (strings handed out stay where they are).
    chunks: Vec<String>,
}

fn hash(s: &str) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    h.write(s.as_bytes());
    h.write_u8(0xff);
    h.finish()
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text of span `s`.
    fn text(&self, s: Span) -> &str {
        let chunk = &self.chunks[s.chunk as usize];
        &chunk[s.start as usize..(s.start + s.len) as usize]
    }

    /// The id of `name`, allocating the next one if it is new.
    pub fn intern(&mut self, name: &str) -> u32 {
        let h = hash(name);
        if self.tables.is_empty() {
            self.tables.resize_with(SHARDS, HashTable::new);
        }
        let t = shard(h);
        if let Some(&id) = self.tables[t].find(h, |&id| self.text(self.spans[id as usize - 1]) == name) {
            return id;
        }
        let span = self.store_text(name);
        self.spans.push(span);
        // Dense ids: the count after the push; at most u32::MAX names fit in memory anyway.
        let id = self.spans.len() as u32;
        let (spans, chunks) = (&self.spans, &self.chunks);
        self.tables[t].insert_unique(h, id, |&id| {
            let s = spans[id as usize - 1];
            hash(&chunks[s.chunk as usize][s.start as usize..(s.start + s.len) as usize])
        });
        id
    }

    /// Copies `name` into the current chunk (a new one when it does not fit).
    fn store_text(&mut self, name: &str) -> Span {
        let fits = self.chunks.last().is_some_and(|c| c.capacity() - c.len() >= name.len());
        if !fits {
            self.chunks.push(String::with_capacity(CHUNK_BYTES.max(name.len())));
        }
        let chunk = self.chunks.len() - 1;
        let c = &mut self.chunks[chunk];
        let start = c.len();
        c.push_str(name);
        // Chunks are at most max(64 KiB, one string) long and strings are bounded by the wire
        // limits, so offsets and lengths fit u32.
        Span {
            chunk: chunk as u32,
            start: start as u32,
            len: name.len() as u32,
        }
    }

    /// The id of `name`, if interned.
    pub fn get(&self, name: &str) -> Option<u32> {
        let h = hash(name);
        self.tables
            .get(shard(h))?
            .find(h, |&id| self.text(self.spans[id as usize - 1]) == name)
            .copied()
    }

    /// The string of `id`; empty for id 0 or an id never handed out.
    pub fn name(&self, id: u32) -> &str {
        match id.checked_sub(1).and_then(|i| self.spans.get(i as usize)) {
            Some(&s) => self.text(s),
            None => "",
        }
    }

    /// Number of interned strings (= the highest id).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when nothing has been interned.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Heap bytes held (text chunks, spans, table), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.chunks.iter().map(String::capacity).sum::<usize>()
            + self.spans.capacity() * std::mem::size_of::<Span>()
            + self.tables.capacity() * std::mem::size_of::<HashTable<u32>>()
            + self
                .tables
                .iter()
                .map(|t| t.capacity() * (std::mem::size_of::<u32>() + 1))
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_start_at_one_and_are_stable() {
        let mut i = Interner::new();
        assert_eq!(i.intern("/FX/EURUSD"), 1);
        assert_eq!(i.intern("/FX/GBPUSD"), 2);
        assert_eq!(i.intern("/FX/EURUSD"), 1);
        assert_eq!(i.name(2), "/FX/GBPUSD");
        assert_eq!(i.name(0), "");
        assert_eq!(i.name(9), "");
        assert_eq!(i.get("/nope"), None);
        assert_eq!(i.len(), 2);
    }

    #[test]
    fn many_strings_across_chunks_and_long_ones() {
        let mut i = Interner::new();
        let long = "x".repeat(CHUNK_BYTES + 10);
        let n = 20_000u32;
        for k in 0..n {
            assert_eq!(i.intern(&format!("/TRADE/user{}/{k}", k % 7)), k + 1);
        }
        let big = i.intern(&long);
        assert_eq!(big, n + 1);
        assert_eq!(i.intern(""), n + 2);
        assert!(i.chunks.len() > 2, "spread over chunks");
        for k in (0..n).step_by(997) {
            let s = format!("/TRADE/user{}/{k}", k % 7);
            assert_eq!(i.get(&s), Some(k + 1));
            assert_eq!(i.name(k + 1), s);
            assert_eq!(i.intern(&s), k + 1);
        }
        assert_eq!(i.name(big), long);
        assert_eq!(i.get(""), Some(n + 2));
        assert_eq!(i.get("/TRADE/user0/20000"), None);
        assert!(i.heap_bytes() > 0);
    }

    #[test]
    fn ids_spread_over_the_shards_and_each_table_grows_alone() {
        let mut i = Interner::new();
        assert_eq!(i.get("/a"), None, "no table before the first string");
        let n = 100_000u32;
        for k in 0..n {
            assert_eq!(i.intern(&format!("/TRADE/bench-t1/{k}")), k + 1);
        }
        assert_eq!(i.tables.len(), SHARDS);
        let sizes: Vec<usize> = i.tables.iter().map(HashTable::len).collect();
        assert_eq!(sizes.iter().sum::<usize>(), n as usize);
        // Every shard holds a share (a bad shard pick would leave most empty and one huge).
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        let even = n as usize / SHARDS;
        assert!(
            *min > even / 2 && *max < even * 2,
            "shard sizes {min}..{max}, even {even}"
        );
        for k in (0..n).step_by(101) {
            assert_eq!(i.get(&format!("/TRADE/bench-t1/{k}")), Some(k + 1));
        }
        assert_eq!(i.get("/TRADE/bench-t1/100000"), None);
    }
}
