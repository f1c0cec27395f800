//! Lookup tables built once per version from the generated definitions, for the checks that run
//! on every field of every message: which tags a message type (or the header, or the trailer)
//! defines, which of them are required, where its groups start, and each field's enumerated
//! values as a table instead of a list to scan.

use super::{FieldType, GroupDef, Member, Tables};

/// A set of tags: one bit per tag.
#[derive(Debug, Default)]
pub(crate) struct TagSet(Vec<u64>);

impl TagSet {
    fn insert(&mut self, tag: u32) {
        let t = tag as usize;
        if self.0.len() <= t / 64 {
            self.0.resize(t / 64 + 1, 0);
        }
        self.0[t / 64] |= 1 << (t % 64);
    }

    /// True if `tag` is in the set (tags outside `1..` never are).
    pub fn contains(&self, tag: i32) -> bool {
        if tag <= 0 {
            return false;
        }
        let t = tag as usize;
        self.0.get(t / 64).is_some_and(|w| w & (1 << (t % 64)) != 0)
    }
}

/// One part of a message (the header, a message type's body, the trailer) by tag.
#[derive(Debug, Default)]
pub(crate) struct PartIndex {
    /// Every tag of the part's own members (not of their groups' entries).
    pub members: TagSet,
    /// The required members' tags, ascending (at most 64, which the tests hold the tables to:
    /// a missing one is found with one mask).
    pub required: Vec<u32>,
    required_set: TagSet,
    /// NumInGroup tag -> the group it starts.
    groups: Vec<(u32, &'static GroupDef)>,
}

impl PartIndex {
    fn new(members: &'static [Member]) -> PartIndex {
        let mut p = PartIndex::default();
        for m in members {
            p.members.insert(m.tag);
            if m.required {
                p.required.push(m.tag);
                p.required_set.insert(m.tag);
            }
            if let Some(g) = m.group {
                p.groups.push((m.tag, g));
            }
        }
        p.required.sort_unstable();
        p.required.dedup();
        p
    }

    /// The group `tag` starts (its NumInGroup field), if it is one of the part's.
    pub fn group(&self, tag: i32) -> Option<&'static GroupDef> {
        self.groups.iter().find(|(t, _)| *t as i32 == tag).map(|(_, g)| *g)
    }

    /// The bit of a required `tag` in a mask over `required`, if it is required.
    pub fn required_bit(&self, tag: i32) -> Option<u64> {
        if !self.required_set.contains(tag) {
            return None;
        }
        let i = self.required.binary_search(&(tag as u32)).ok()?;
        1u64.checked_shl(i as u32)
    }

    /// The lowest required tag whose bit `seen` lacks.
    pub fn first_missing(&self, seen: u64) -> Option<u32> {
        let missing = !seen & mask(self.required.len());
        (missing != 0).then(|| self.required[missing.trailing_zeros() as usize])
    }
}

fn mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// A field's enumerated values as a table.
#[derive(Debug)]
pub(crate) enum ValueSet {
    /// Any value of the type.
    Any,
    /// Every value is one byte: one bit per byte.
    Bytes([u64; 4]),
    /// Longer values, sorted (binary search).
    Strings(Vec<&'static [u8]>),
}

impl ValueSet {
    fn new(values: &'static [&'static str]) -> ValueSet {
        if values.is_empty() {
            return ValueSet::Any;
        }
        if values.iter().all(|v| v.len() == 1) {
            let mut bits = [0u64; 4];
            for v in values {
                let b = v.as_bytes()[0] as usize;
                bits[b / 64] |= 1 << (b % 64);
            }
            return ValueSet::Bytes(bits);
        }
        let mut all: Vec<&'static [u8]> = values.iter().map(|v| v.as_bytes()).collect();
        all.sort_unstable();
        ValueSet::Strings(all)
    }

    fn one(&self, v: &[u8]) -> bool {
        match self {
            ValueSet::Any => true,
            ValueSet::Bytes(bits) => match v {
                [b] => bits[usize::from(*b) / 64] & (1 << (b % 64)) != 0,
                _ => false,
            },
            ValueSet::Strings(all) => all.binary_search(&v).is_ok(),
        }
    }

    /// True if `value` is one of the values (for MultipleValueString each space-separated one).
    pub fn allows(&self, ty: FieldType, value: &[u8]) -> bool {
        if ty == FieldType::MultipleValueString {
            value.split(|&b| b == b' ').all(|v| self.one(v))
        } else {
            self.one(value)
        }
    }
}

/// The tables of one version.
#[derive(Debug)]
pub(crate) struct Index {
    pub header: PartIndex,
    pub trailer: PartIndex,
    /// Per message definition, in the tables' order.
    pub messages: Vec<PartIndex>,
    /// Per field, in the tables' order.
    pub values: Vec<ValueSet>,
    /// The MsgType (35) values.
    pub msg_types: ValueSet,
}

impl Index {
    pub fn new(t: &'static Tables) -> Index {
        let msg_types = t
            .fields
            .iter()
            .find(|f| f.tag == 35)
            .map_or(ValueSet::Strings(Vec::new()), |f| ValueSet::new(f.values));
        Index {
            header: PartIndex::new(t.header),
            trailer: PartIndex::new(t.trailer),
            messages: t.messages.iter().map(|m| PartIndex::new(m.members)).collect(),
            values: t.fields.iter().map(|f| ValueSet::new(f.values)).collect(),
            msg_types,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_tables_answer_as_the_lists_do() {
        static ONE: [&str; 3] = ["1", "2", "A"];
        static LONG: [&str; 3] = ["AA", "B", "10"];
        let one = ValueSet::new(&ONE);
        assert!(one.allows(FieldType::Char, b"A") && one.allows(FieldType::Char, b"1"));
        assert!(!one.allows(FieldType::Char, b"3") && !one.allows(FieldType::Char, b"12"));
        assert!(one.allows(FieldType::MultipleValueString, b"1 A 2"));
        assert!(!one.allows(FieldType::MultipleValueString, b"1 B"));
        let long = ValueSet::new(&LONG);
        for ok in ["AA", "B", "10"] {
            assert!(long.allows(FieldType::String, ok.as_bytes()), "{ok}");
        }
        for bad in ["A", "", "100", "b"] {
            assert!(!long.allows(FieldType::String, bad.as_bytes()), "{bad}");
        }
        assert!(ValueSet::new(&[]).allows(FieldType::String, b"anything"));
    }

    #[test]
    fn required_masks_name_the_lowest_missing_tag() {
        static MEMBERS: [Member; 3] = [
            Member {
                tag: 55,
                required: true,
                group: None,
            },
            Member {
                tag: 11,
                required: true,
                group: None,
            },
            Member {
                tag: 1,
                required: false,
                group: None,
            },
        ];
        let p = PartIndex::new(&MEMBERS);
        assert_eq!(p.required, vec![11, 55]);
        assert_eq!(p.required_bit(1), None);
        let b55 = p.required_bit(55).expect("required");
        assert_eq!(p.first_missing(0), Some(11));
        assert_eq!(p.first_missing(b55), Some(11));
        assert_eq!(p.first_missing(b55 | p.required_bit(11).expect("required")), None);
        assert!(p.members.contains(1) && !p.members.contains(2) && !p.members.contains(-1));
    }

    #[test]
    fn no_part_of_either_version_has_more_than_64_required_tags() {
        for d in [super::super::Dictionary::fix42(), super::super::Dictionary::fix44()] {
            let i = d.index();
            let parts = [&i.header, &i.trailer].into_iter().chain(i.messages.iter());
            for p in parts {
                assert!(p.required.len() <= 64, "{}: {:?}", d.begin_string(), p.required);
            }
        }
    }
}
