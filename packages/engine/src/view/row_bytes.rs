//! [`RowBytes`]: bytes encoded once per flush for an updated row, for every window message that
//! carries the row. With thousands of held windows a row shown in 30 windows is encoded once and
//! copied 30 times, instead of formatting its numbers 30 times.

use rustc_hash::FxHashMap;

/// Where one cached encoding lives: byte range, the field list it was encoded for, its flag.
#[derive(Debug, Clone, Copy)]
struct Cached {
    bytes: (u32, u32),
    fields: (u32, u32),
    conflated: bool,
}

/// Per-flush cache of encoded row items, keyed by record id and checked against the changed
/// fields and conflation flag they were encoded with (a record in two containers may carry
/// different conflated field sets; a mismatch re-encodes). Cleared by every `ViewSet::flush`:
/// valid while the store does not change, i.e. while one flush's diffs are encoded.
#[derive(Debug, Default)]
pub struct RowBytes {
    at: FxHashMap<u32, Cached>,
    bytes: Vec<u8>,
    fields: Vec<u32>,
}

/// Buffers above this capacity are shrunk back when cleared (one huge flush must not pin memory).
const KEEP_BYTES: usize = 4 << 20;

impl RowBytes {
    /// Forgets every cached row.
    pub fn clear(&mut self) {
        self.at.clear();
        self.bytes.clear();
        self.fields.clear();
        if self.bytes.capacity() > KEEP_BYTES {
            self.bytes.shrink_to(KEEP_BYTES / 4);
        }
        if self.fields.capacity() > KEEP_BYTES / 4 {
            self.fields.shrink_to(KEEP_BYTES / 16);
        }
    }

    /// The bytes of row `id` updated with `fields` (sorted field ids) and `conflated`: cached, or
    /// written now by `encode` (which appends them to the buffer it is given) and cached.
    pub fn get_or_encode(
        &mut self,
        id: u32,
        fields: &[u32],
        conflated: bool,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> &[u8] {
        let hit =
            self.at.get(&id).copied().filter(|c| {
                c.conflated == conflated && self.fields[c.fields.0 as usize..c.fields.1 as usize] == *fields
            });
        let c = match hit {
            Some(c) => c,
            None => {
                let b0 = self.bytes.len() as u32;
                encode(&mut self.bytes);
                let f0 = self.fields.len() as u32;
                self.fields.extend_from_slice(fields);
                let c = Cached {
                    bytes: (b0, self.bytes.len() as u32),
                    fields: (f0, self.fields.len() as u32),
                    conflated,
                };
                self.at.insert(id, c);
                c
            }
        };
        &self.bytes[c.bytes.0 as usize..c.bytes.1 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_once_per_row_and_shape() {
        let mut r = RowBytes::default();
        let calls = std::cell::Cell::new(0);
        let mut get = |id: u32, f: &[u32], c: bool| {
            r.get_or_encode(id, f, c, |out| {
                calls.set(calls.get() + 1);
                out.extend_from_slice(format!("{id}:{f:?}:{c}").as_bytes());
            })
            .to_vec()
        };
        assert_eq!(get(1, &[2, 3], false), b"1:[2, 3]:false");
        assert_eq!(get(1, &[2, 3], false), b"1:[2, 3]:false");
        assert_eq!(get(1, &[2], false), b"1:[2]:false");
        assert_eq!(get(1, &[2], true), b"1:[2]:true");
        assert_eq!(get(4, &[2], true), b"4:[2]:true");
        assert_eq!(calls.get(), 4, "the repeat is a hit");
        r.clear();
        assert_eq!(r.get_or_encode(4, &[2], true, |out| out.push(b'x')), b"x");
    }
}
