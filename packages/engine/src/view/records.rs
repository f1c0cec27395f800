//! Where views read record fields: the [`Records`] trait, implemented for the engine's `Store`.

use crate::filter::Row;
use crate::store::{Record, Store};
use crate::value::Value;

/// Field access to records by subject id. A view never copies a record; it reads through this.
pub trait Records {
    /// The row type handed to filters.
    type Row: Row + ?Sized;
    /// The record `id`, `None` while unknown or pending (then every field reads as missing).
    fn row(&self, id: u32) -> Option<&Self::Row>;
}

/// A row with no fields (an unknown or pending record).
pub struct EmptyRow;

impl Row for EmptyRow {
    fn get(&self, _: u32) -> Option<&Value> {
        None
    }
}

/// The status pseudo-field's values (`store::STATUS_FIELD_NAME`).
static STATUS_OK: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| Value::Str("ok".into()));
static STATUS_STALE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| Value::Str("stale".into()));

impl Row for Record {
    /// Linear scan of the record's slots (at most 128, usually a handful); the status
    /// pseudo-field comes from the record's `stale` flag.
    #[inline]
    fn get(&self, field: u32) -> Option<&Value> {
        if field == crate::store::STATUS_FIELD {
            return Some(if self.stale { &STATUS_STALE } else { &STATUS_OK });
        }
        self.slots
            .iter()
            .find(|s| s.name == field)
            .and_then(|s| s.value.as_ref())
    }
}

impl Records for Store {
    type Row = Record;
    fn row(&self, id: u32) -> Option<&Record> {
        self.get(id)
    }
}

/// The value of `field` in record `id` of `records`, `None` when missing.
pub fn field_of<R: Records + ?Sized>(records: &R, id: u32, field: u32) -> Option<&Value> {
    records.row(id).and_then(|r| r.get(field))
}
