//! The instrument catalog is the record store: an instrument is a published record with a numeric
//! `bid` or `ask` field; its tick is its numeric `tickSize` field (else the configured default);
//! its numeric `minPrice` / `maxPrice` fields narrow the limit prices it accepts (`PriceGrid`);
//! its live market is its current `bid` / `ask`.

use crate::order_book::{Instrument, InstrumentCatalog, Market, Quote};
use crate::store::{Record, Store};
use crate::value::Value;

/// Field names the catalog reads.
pub const BID: &str = "bid";
/// Ask field.
pub const ASK: &str = "ask";
/// Tick size field (numeric, 1e-12..=1e6; else the default tick applies).
pub const TICK_SIZE: &str = "tickSize";
/// Lowest limit price field (numeric, > 0; rounded up to a whole tick).
pub const MIN_PRICE: &str = "minPrice";
/// Highest limit price field (numeric, > 0; rounded down to a whole tick).
pub const MAX_PRICE: &str = "maxPrice";

/// `InstrumentCatalog` over the store (borrowed for one decision).
pub struct StoreCatalog<'a> {
    store: &'a Store,
    /// Now, ms since the epoch, for the age of a quote (`None`: ages unknown).
    now_ms: Option<u64>,
}

impl<'a> StoreCatalog<'a> {
    /// A catalog reading `store`.
    pub fn new(store: &'a Store) -> Self {
        StoreCatalog { store, now_ms: None }
    }

    /// The same catalog answering quote ages as of `now_ms` (ms since the epoch).
    pub fn at(self, now_ms: u64) -> Self {
        StoreCatalog {
            now_ms: Some(now_ms),
            ..self
        }
    }

    fn record(&self, subject: &str) -> Option<&'a Record> {
        self.store.get(self.store.lookup(subject)?)
    }

    fn number(&self, rec: &Record, field: &str) -> Option<f64> {
        let id = self.store.field_lookup(field)?;
        rec.slots.iter().find(|s| s.name == id).and_then(|s| match s.value {
            Some(Value::Number(n)) if n.is_finite() => Some(n),
            _ => None,
        })
    }

    /// The live bid/ask of `subject` (sides missing, non-numeric or <= 0 are `None`); an unknown
    /// subject has no market.
    pub fn quote(&self, subject: &str) -> Quote {
        let Some(rec) = self.record(subject) else {
            return Quote::default();
        };
        let side = |f| self.number(rec, f).filter(|p| *p > 0.0);
        Quote {
            bid: side(BID),
            ask: side(ASK),
        }
    }
}

impl InstrumentCatalog for StoreCatalog<'_> {
    /// The quote and the age of the record's last update (its origin `ts`; a `ts` in the future
    /// counts as age 0).
    fn market(&self, subject: &str) -> Market {
        let age_ms = match (self.now_ms, self.record(subject)) {
            (Some(now), Some(rec)) if rec.ts.is_finite() => Some(now.saturating_sub(rec.ts.max(0.0) as u64)),
            _ => None,
        };
        Market {
            quote: self.quote(subject),
            age_ms,
        }
    }

    fn instrument(&self, subject: &str) -> Option<Instrument> {
        if super::privacy::is_private(subject) {
            return None; // trade records and blotters are not instruments
        }
        let rec = self.record(subject)?;
        if self.number(rec, BID).is_none() && self.number(rec, ASK).is_none() {
            return None;
        }
        let positive = |f| self.number(rec, f).filter(|v| *v > 0.0);
        Some(Instrument {
            tick_size: positive(TICK_SIZE),
            min_price: positive(MIN_PRICE),
            max_price: positive(MAX_PRICE),
        })
    }

    fn stale(&self, subject: &str) -> bool {
        self.record(subject).is_some_and(|r| r.stale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Applied;
    use crate::wire::decode_source_frame;

    fn store(frame: &str) -> Store {
        let mut s = Store::new();
        let mut a = Applied::default();
        for p in decode_source_frame(frame).unwrap() {
            s.apply(&p, 0.0, &mut a).unwrap();
        }
        s
    }

    #[test]
    fn instruments_are_records_with_a_market() {
        let s = store(
            r#"[{"type":"record.publish","subject":"/FX/EURUSD","image":true,"fields":{"bid":1.1,"ask":1.2,"tickSize":0.0001}},
                {"type":"record.publish","subject":"/NEWS/1","image":true,"fields":{"headline":"x"}},
                {"type":"record.publish","subject":"/P/1","image":true,"fields":{"ask":5,"tickSize":"bad"}},
                {"type":"record.publish","subject":"/P/2","image":true,"fields":{"bid":5,"tickSize":0.25,"minPrice":1,"maxPrice":0}}]"#,
        );
        let c = StoreCatalog::new(&s);
        assert_eq!(
            c.instrument("/FX/EURUSD"),
            Some(Instrument {
                tick_size: Some(0.0001),
                ..Instrument::default()
            })
        );
        assert_eq!(c.instrument("/P/1"), Some(Instrument::default()));
        assert_eq!(
            c.instrument("/P/2"),
            Some(Instrument {
                tick_size: Some(0.25),
                min_price: Some(1.0),
                max_price: None, // not > 0: ignored
            })
        );
        assert_eq!(c.instrument("/NEWS/1"), None, "no bid/ask: not an instrument");
        assert_eq!(c.instrument("/NOPE"), None);
        assert_eq!(
            c.quote("/FX/EURUSD"),
            Quote {
                bid: Some(1.1),
                ask: Some(1.2)
            }
        );
        assert_eq!(
            c.quote("/P/1"),
            Quote {
                bid: None,
                ask: Some(5.0)
            }
        );
        assert_eq!(c.quote("/NOPE"), Quote::default());
    }
}
