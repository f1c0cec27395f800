//! String interning: subjects and field names become dense `u32` ids starting at 1.
//! Ids are permanent for the life of the engine (clients cache subject ids).

use std::collections::HashMap;

/// Maps strings to dense ids `1..=len` and back. Id 0 is never handed out.
#[derive(Debug, Default)]
pub struct Interner {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `name`, allocating the next one if it is new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.names.push(name.into());
        // Dense ids: the count after the push; at most u32::MAX names fit in memory anyway.
        let id = self.names.len() as u32;
        self.ids.insert(name.into(), id);
        id
    }

    /// The id of `name`, if interned.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The string of `id`; empty for id 0 or an id never handed out.
    pub fn name(&self, id: u32) -> &str {
        match id.checked_sub(1).and_then(|i| self.names.get(i as usize)) {
            Some(s) => s,
            None => "",
        }
    }

    /// Number of interned strings (= the highest id).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when nothing has been interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
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
}
