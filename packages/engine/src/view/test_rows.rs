//! Records of two fields by id, for the view tests (`expiry_tests`, `growth_tests`).

use super::Records;
use crate::filter::Row;
use crate::value::Value;

/// One record: fields 0 and 1.
pub(super) struct Rec(pub(super) [Value; 2]);

impl Row for Rec {
    fn get(&self, f: u32) -> Option<&Value> {
        self.0.get(f as usize)
    }
}

/// Records by id (the index in the vector).
pub(super) struct Rows(pub(super) Vec<Rec>);

impl Records for Rows {
    type Row = Rec;
    fn row(&self, id: u32) -> Option<&Rec> {
        self.0.get(id as usize)
    }
}
