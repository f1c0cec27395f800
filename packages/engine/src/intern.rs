//! String interning: subjects and field names become dense `u32` ids starting at 1.
//! Ids are permanent for the life of the engine (clients cache subject ids).
//!
//! Memory: each string is stored once, in 64 KiB text chunks (no allocation per string), and the
//! lookup table holds only ids (4 bytes + 1 control byte a slot). About `len + 17` bytes per
//! string at 2,000,000 subjects, where a `HashMap<Box<str>, u32>` plus a `Vec<Box<str>>` took
//! two allocations of the text and ~60 bytes of headers.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Size of one text chunk (a longer string gets a chunk of its own). @default 64 KiB.
const CHUNK_BYTES: usize = 64 * 1024;

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
    /// Ids, hashed by their string (FxHash).
    table: HashTable<u32>,
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
        if let Some(&id) = self.table.find(h, |&id| self.text(self.spans[id as usize - 1]) == name) {
            return id;
        }
        let span = self.store_text(name);
        self.spans.push(span);
        // Dense ids: the count after the push; at most u32::MAX names fit in memory anyway.
        let id = self.spans.len() as u32;
        let (spans, chunks) = (&self.spans, &self.chunks);
        self.table.insert_unique(h, id, |&id| {
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
        self.table
            .find(hash(name), |&id| self.text(self.spans[id as usize - 1]) == name)
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
            + self.table.capacity() * (std::mem::size_of::<u32>() + 1)
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
}
