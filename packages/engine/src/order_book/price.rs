//! Limit prices as whole ticks: an instrument's tick grid and price range ([`PriceGrid`]), and the
//! formatting of prices with the decimals of the tick.
//!
//! A price is accepted when it is finite, > 0, a whole number of ticks `n` (within
//! [`TICK_TOLERANCE`] of a tick) and `n` lies in the range: `1..=`[`MAX_PRICE_TICKS`] narrowed by
//! `OrderLimits::max_price_ticks` and the instrument's own `minPrice` / `maxPrice`. The tick count
//! bound is what keeps the on-tick decision sound: the doubles a client sends for `n` ticks and
//! the tick itself are each off the decimal they stand for by up to half an ulp, together at most
//! about `3.3e-16 * n` ticks, which stays well inside the tolerance (`3.3e-7` ticks at 10^9). With
//! more ticks a double could no longer tell "on tick" from "a millionth of a tick off".

use super::validate::{reject, OrderReject, RejectField, RejectRule};

/// Most ticks a limit price may have (10^9: 10,000 with a tick of 0.00001, 10,000,000 with 0.01).
pub const MAX_PRICE_TICKS: u64 = 1_000_000_000;

/// How far from a whole number of ticks a price may be and still count as on tick, in ticks.
/// Absorbs the binary rounding of decimal prices and ticks (`1.0852` / `0.00001` is not exactly
/// an integer in doubles); anything further off is `offTick`.
pub const TICK_TOLERANCE: f64 = 1e-6;

/// Smallest tick size an instrument record may set (`orders.defaultTick` has the same bounds).
pub const MIN_TICK_SIZE: f64 = 1e-12;

/// Largest tick size an instrument record may set.
pub const MAX_TICK_SIZE: f64 = 1e6;

/// Most decimals a tick is shown with (a tick of 1e-12 needs 12).
const MAX_DECIMALS: u32 = 12;

/// The prices of one instrument: whole ticks from `min_ticks` to `max_ticks`, shown with the
/// tick's decimals. An empty range (min above max, e.g. a record's `minPrice` above its
/// `maxPrice`) accepts no price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceGrid {
    tick: f64,
    decimals: Option<u32>,
    min_ticks: u64,
    max_ticks: u64,
}

impl PriceGrid {
    /// The grid of `tick` (finite, > 0; callers pass a tick within
    /// [`MIN_TICK_SIZE`]..=[`MAX_TICK_SIZE`]), `max_ticks` (clamped to 1..=[`MAX_PRICE_TICKS`])
    /// and the instrument's optional price bounds: `min_price` rounds up and `max_price` down to a
    /// whole tick (within [`TICK_TOLERANCE`]); a bound that is not a finite number > 0 is ignored.
    pub fn new(tick: f64, max_ticks: u64, min_price: Option<f64>, max_price: Option<f64>) -> PriceGrid {
        let limit = max_ticks.clamp(1, MAX_PRICE_TICKS);
        let bound = |p: Option<f64>| p.filter(|p| p.is_finite() && *p > 0.0).map(|p| p / tick);
        // Float to tick counts: clamped in f64 first, so a huge bound (or an inf quotient) is the limit.
        let min_ticks = match bound(min_price) {
            Some(q) => (q - TICK_TOLERANCE).ceil().clamp(1.0, limit as f64 + 1.0) as u64,
            None => 1,
        };
        let max_ticks = match bound(max_price) {
            Some(q) => (q + TICK_TOLERANCE).floor().clamp(0.0, limit as f64) as u64,
            None => limit,
        };
        PriceGrid {
            tick,
            decimals: decimals_of(tick),
            min_ticks,
            max_ticks,
        }
    }

    /// The tick size.
    pub fn tick(&self) -> f64 {
        self.tick
    }

    /// Decimals of the tick (`0.00001` -> 5, `0.25` -> 2, `1` -> 0); `None` when the tick is no
    /// whole number of 10^-12 (e.g. 1/3): prices are then shown as JavaScript would.
    pub fn decimals(&self) -> Option<u32> {
        self.decimals
    }

    /// Smallest accepted price, in ticks (1 or more).
    pub fn min_ticks(&self) -> u64 {
        self.min_ticks
    }

    /// Largest accepted price, in ticks (at most [`MAX_PRICE_TICKS`]; 0 when no price is).
    pub fn max_ticks(&self) -> u64 {
        self.max_ticks
    }

    /// `price` as a whole number of ticks in range, or the reject (field `price`) naming the
    /// value, the rule and, for `instrument`, the bound with the tick's decimals: `notFinite`,
    /// `notPositive` (<= 0, also -0), `belowLimit` (below the minimum, e.g. 5e-324),
    /// `aboveLimit` (above the maximum, e.g. 1e308), `offTick`. Never panics.
    pub fn ticks(&self, price: f64, instrument: &str) -> Result<u64, OrderReject> {
        use RejectField::Price;
        let shown = show_number(price);
        if !price.is_finite() {
            let msg = format!("price {shown} is not a finite number");
            return Err(reject(Price, RejectRule::NotFinite, msg));
        }
        if price <= 0.0 {
            return Err(reject(
                Price,
                RejectRule::NotPositive,
                format!("price {shown} must be > 0"),
            ));
        }
        // Finite and > 0 over a tick >= 1e-12: `q` is >= 0 (0 for subnormal prices) or +inf.
        let q = price / self.tick;
        if q < self.min_ticks as f64 - TICK_TOLERANCE {
            let msg = format!(
                "price {shown} is below the minimum {} for {instrument}",
                self.format_ticks(self.min_ticks)
            );
            return Err(reject(Price, RejectRule::BelowLimit, msg));
        }
        if q > self.max_ticks as f64 + TICK_TOLERANCE {
            let msg = format!(
                "price {shown} is above the maximum {} for {instrument}",
                self.format_ticks(self.max_ticks)
            );
            return Err(reject(Price, RejectRule::AboveLimit, msg));
        }
        // In range, so min_ticks <= n <= max_ticks <= 10^9: exact in f64 and in u64.
        let n = q.round();
        // n * tick - price rounded once (fused): the distance to the tick, not a rounding artefact.
        let off = n.mul_add(self.tick, -price);
        if off.abs() > TICK_TOLERANCE * self.tick {
            let (lo, hi) = (q.floor() as u64, q.ceil() as u64);
            let msg = format!(
                "price {shown} is not a multiple of tick {} for {instrument} (nearest: {}, {})",
                self.format(self.tick),
                self.format_ticks(lo),
                self.format_ticks(hi)
            );
            return Err(reject(Price, RejectRule::OffTick, msg));
        }
        Ok(n as u64)
    }

    /// `price` with the tick's decimals (`1.08520` for tick 0.00001), else as JavaScript shows it.
    pub fn format(&self, price: f64) -> String {
        match self.decimals {
            Some(d) if price.is_finite() => format!("{price:.*}", d as usize),
            _ => show_number(price),
        }
    }

    /// `ticks` whole ticks as a price, with the tick's decimals.
    pub fn format_ticks(&self, ticks: u64) -> String {
        self.format(ticks as f64 * self.tick)
    }
}

/// The decimals a tick needs: the least `d` <= 12 for which `tick * 10^d` is a whole number, up
/// to the rounding of doubles (relative 1e-14, so JavaScript's `10 ** -5`, 0.000009999999999999999,
/// gives 5); `None` for a tick that has none (1/3).
pub fn decimals_of(tick: f64) -> Option<u32> {
    (0..=MAX_DECIMALS).find(|&d| {
        let x = tick * 10f64.powi(d as i32);
        let whole = x.round();
        whole >= 1.0 && (x - whole).abs() <= 1e-14 * x
    })
}

/// A number as JavaScript's `String(n)` shows it (`1e+308`, `5e-324`, `NaN`): a value as the
/// client sent it, without 300 digits of Rust's plain notation.
pub fn show_number(v: f64) -> String {
    ryu_js::Buffer::new().format(v).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(g: &PriceGrid, p: f64) -> Result<u64, RejectRule> {
        g.ticks(p, "/FX/EURUSD").map_err(|r| r.rule)
    }

    #[test]
    fn decimals_come_from_the_tick() {
        for (tick, d) in [
            (0.00001, Some(5)),
            (0.000009999999999999999, Some(5)), // JavaScript's 10 ** -5
            (0.0001, Some(4)),
            (0.01, Some(2)),
            (0.25, Some(2)),
            (0.5, Some(1)),
            (1.0, Some(0)),
            (5.0, Some(0)),
            (1e6, Some(0)),
            (1e-12, Some(12)),
            (1.0 / 3.0, None),
            (1e-13, None),
        ] {
            assert_eq!(decimals_of(tick), d, "{tick}");
        }
    }

    #[test]
    fn whole_ticks_in_range_only() {
        let g = PriceGrid::new(0.000009999999999999999, MAX_PRICE_TICKS, None, None);
        assert_eq!((g.min_ticks(), g.max_ticks()), (1, MAX_PRICE_TICKS));
        assert_eq!(rule(&g, 1.0852), Ok(108_520));
        assert_eq!(rule(&g, 0.00001), Ok(1));
        assert_eq!(rule(&g, 10000.0), Ok(MAX_PRICE_TICKS));
        assert_eq!(rule(&g, 9999.99999), Ok(MAX_PRICE_TICKS - 1));
        assert_eq!(rule(&g, 1.080001), Err(RejectRule::OffTick));
        assert_eq!(rule(&g, 1e-9), Err(RejectRule::BelowLimit));
        assert_eq!(rule(&g, 5e-324), Err(RejectRule::BelowLimit));
        assert_eq!(rule(&g, 10000.00001), Err(RejectRule::AboveLimit));
        assert_eq!(rule(&g, 1e308), Err(RejectRule::AboveLimit));
        assert_eq!(rule(&g, f64::MAX), Err(RejectRule::AboveLimit));
        assert_eq!(rule(&g, 0.0), Err(RejectRule::NotPositive));
        assert_eq!(rule(&g, -0.0), Err(RejectRule::NotPositive));
        assert_eq!(rule(&g, -1.0852), Err(RejectRule::NotPositive));
        assert_eq!(rule(&g, f64::NAN), Err(RejectRule::NotFinite));
        assert_eq!(rule(&g, f64::INFINITY), Err(RejectRule::NotFinite));
        // Prices a client computed in floating point are on tick: 1.0851 + 0.0001 = 1.0852000000000002.
        assert_eq!(rule(&g, 1.0851 + 0.0001), Ok(108_520));
        let cents = PriceGrid::new(0.01, MAX_PRICE_TICKS, None, None);
        assert_eq!(rule(&cents, 0.1 + 0.2), Ok(30));
        assert_eq!(rule(&cents, 99.755), Err(RejectRule::OffTick));
        assert_eq!(rule(&cents, 10_000_000.0), Ok(MAX_PRICE_TICKS));
        assert_eq!(rule(&cents, 9_999_999.99), Ok(MAX_PRICE_TICKS - 1));
        assert_eq!(rule(&cents, 9_999_999.995), Err(RejectRule::OffTick));
    }

    #[test]
    fn the_instrument_bounds_narrow_the_range() {
        let g = PriceGrid::new(0.0001, MAX_PRICE_TICKS, Some(0.50003), Some(2.00009));
        assert_eq!((g.min_ticks(), g.max_ticks()), (5001, 20_000));
        assert_eq!(rule(&g, 0.5), Err(RejectRule::BelowLimit));
        assert_eq!(rule(&g, 0.5001), Ok(5001));
        assert_eq!(rule(&g, 2.0), Ok(20_000));
        assert_eq!(rule(&g, 2.0001), Err(RejectRule::AboveLimit));
        // Bounds on tick stay as they are; invalid ones are ignored; the configured tick count caps.
        let g = PriceGrid::new(0.01, 500, Some(1.1), Some(f64::NAN));
        assert_eq!((g.min_ticks(), g.max_ticks()), (110, 500));
        let g = PriceGrid::new(0.01, 500, Some(-1.0), Some(1e308));
        assert_eq!((g.min_ticks(), g.max_ticks()), (1, 500));
        // Min above max: nothing is accepted, and the reject says why.
        let g = PriceGrid::new(0.01, MAX_PRICE_TICKS, Some(5.0), Some(4.0));
        assert_eq!(rule(&g, 4.5), Err(RejectRule::BelowLimit));
        assert_eq!(rule(&g, 5.0), Err(RejectRule::AboveLimit));
        // A max below one tick: empty too.
        let g = PriceGrid::new(0.01, MAX_PRICE_TICKS, None, Some(0.001));
        assert_eq!(g.max_ticks(), 0);
        assert_eq!(rule(&g, 0.01), Err(RejectRule::AboveLimit));
        // max_ticks is clamped to 1..=MAX_PRICE_TICKS.
        assert_eq!(PriceGrid::new(0.01, 0, None, None).max_ticks(), 1);
        assert_eq!(PriceGrid::new(0.01, u64::MAX, None, None).max_ticks(), MAX_PRICE_TICKS);
    }

    #[test]
    fn messages_show_values_as_sent_and_bounds_with_the_tick_decimals() {
        let g = PriceGrid::new(0.000009999999999999999, MAX_PRICE_TICKS, None, None);
        let msg = |p| g.ticks(p, "/FX/EURUSD").unwrap_err().message;
        assert_eq!(
            msg(1e308),
            "price 1e+308 is above the maximum 10000.00000 for /FX/EURUSD"
        );
        assert_eq!(msg(5e-324), "price 5e-324 is below the minimum 0.00001 for /FX/EURUSD");
        assert_eq!(msg(1e-9), "price 1e-9 is below the minimum 0.00001 for /FX/EURUSD");
        assert_eq!(
            msg(1.080001),
            "price 1.080001 is not a multiple of tick 0.00001 for /FX/EURUSD (nearest: 1.08000, 1.08001)"
        );
        assert_eq!(msg(-0.0), "price 0 must be > 0");
        assert_eq!(msg(f64::NAN), "price NaN is not a finite number");
        assert_eq!(g.format(1.0852), "1.08520");
        let third = PriceGrid::new(1.0 / 3.0, MAX_PRICE_TICKS, None, None);
        assert_eq!(third.format_ticks(3), "1");
    }
}
