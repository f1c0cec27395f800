//! Engine configuration: defaults, and validation of values that arrive as JavaScript numbers.

use std::time::Duration;

use crate::error::{EngineError, Result};

/// Batching and throttling of session outboxes (Liberator semantics, see `batch::Burst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchingConfig {
    /// Shortest batching interval; where a session's interval starts. Default 100 ms.
    pub burst_min: Duration,
    /// Longest batching interval. Zero (default) turns batching off: a session is flushed as
    /// soon as the commands being processed are done.
    pub burst_max: Duration,
    /// Growth (after an interval with more than 3 messages) / shrink (after an empty one). Default 50 ms.
    pub burst_increment: Duration,
    /// Per (session, record): at most one message per this interval; updates in between
    /// conflate. Zero (default) turns throttling off.
    pub throttle: Duration,
}

impl Default for BatchingConfig {
    fn default() -> Self {
        BatchingConfig {
            burst_min: Duration::from_millis(100),
            burst_max: Duration::ZERO,
            burst_increment: Duration::from_millis(50),
            throttle: Duration::ZERO,
        }
    }
}

impl BatchingConfig {
    /// true when batching is off (`burst_max` is zero).
    pub fn batching_off(&self) -> bool {
        self.burst_max.is_zero()
    }

    /// Checks the relations between the settings.
    pub fn validate(&self) -> Result<()> {
        if !self.batching_off() && self.burst_max < self.burst_min {
            return Err(config_error(
                "burstMaxMs",
                self.burst_max.as_millis() as f64,
                &format!(
                    "must be 0 (batching off) or at least burstMinMs ({})",
                    self.burst_min.as_millis()
                ),
            ));
        }
        Ok(())
    }
}

/// Everything an engine is configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Batching and throttling.
    pub batching: BatchingConfig,
    /// A blocked session whose outbox passes this many bytes switches to conflation. Default 1 MiB.
    pub outbox_conflate_bytes: usize,
    /// A session blocked this long is closed with 4008. Default 10 s.
    pub slow_consumer: Duration,
    /// Record subscriptions one session may hold. Default 10,000.
    pub max_subscriptions_per_session: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            batching: BatchingConfig::default(),
            outbox_conflate_bytes: 1 << 20,
            slow_consumer: Duration::from_secs(10),
            max_subscriptions_per_session: 10_000,
        }
    }
}

/// Most milliseconds any duration setting takes (one day).
const MAX_MS: f64 = 86_400_000.0;

fn config_error(name: &str, value: f64, rule: &str) -> EngineError {
    EngineError::bad_request(format!("'{name}' ({value}) {rule}"), Some(name), None)
}

/// A duration in whole milliseconds `0..=86_400_000` from a JS number.
pub fn ms(name: &str, value: Option<f64>, default: Duration) -> Result<Duration> {
    match value {
        None => Ok(default),
        Some(v) if v.fract() == 0.0 && (0.0..=MAX_MS).contains(&v) => Ok(Duration::from_millis(v as u64)),
        Some(v) => Err(config_error(
            name,
            v,
            "must be an integer number of milliseconds 0..86400000",
        )),
    }
}

/// An integer `min..=max` from a JS number.
pub fn int(name: &str, value: Option<f64>, default: u64, min: u64, max: u64) -> Result<u64> {
    match value {
        None => Ok(default),
        Some(v) if v.fract() == 0.0 && v >= min as f64 && v <= max as f64 => Ok(v as u64),
        Some(v) => Err(config_error(name, v, &format!("must be an integer {min}..{max}"))),
    }
}

/// Raw settings as JavaScript passes them (all optional, milliseconds / counts).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RawConfig {
    /// See `BatchingConfig::burst_min`.
    pub burst_min_ms: Option<f64>,
    /// See `BatchingConfig::burst_max`.
    pub burst_max_ms: Option<f64>,
    /// See `BatchingConfig::burst_increment`.
    pub burst_increment_ms: Option<f64>,
    /// See `BatchingConfig::throttle`.
    pub throttle_ms: Option<f64>,
    /// See `EngineConfig::outbox_conflate_bytes`.
    pub outbox_conflate_bytes: Option<f64>,
    /// See `EngineConfig::slow_consumer`.
    pub slow_consumer_ms: Option<f64>,
    /// See `EngineConfig::max_subscriptions_per_session`.
    pub max_subscriptions_per_session: Option<f64>,
}

impl RawConfig {
    /// Validates every value (an error names the setting, the value and the rule) and fills defaults.
    pub fn resolve(&self) -> Result<EngineConfig> {
        let d = EngineConfig::default();
        let batching = BatchingConfig {
            burst_min: ms("burstMinMs", self.burst_min_ms, d.batching.burst_min)?,
            burst_max: ms("burstMaxMs", self.burst_max_ms, d.batching.burst_max)?,
            burst_increment: ms("burstIncrementMs", self.burst_increment_ms, d.batching.burst_increment)?,
            throttle: ms("throttleMs", self.throttle_ms, d.batching.throttle)?,
        };
        batching.validate()?;
        Ok(EngineConfig {
            batching,
            outbox_conflate_bytes: int(
                "outboxConflateBytes",
                self.outbox_conflate_bytes,
                d.outbox_conflate_bytes as u64,
                1,
                1 << 32,
            )? as usize,
            slow_consumer: ms("slowConsumerMs", self.slow_consumer_ms, d.slow_consumer)?,
            max_subscriptions_per_session: int(
                "maxSubscriptionsPerSession",
                self.max_subscriptions_per_session,
                d.max_subscriptions_per_session.into(),
                1,
                10_000_000,
            )? as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_validation() {
        let c = RawConfig::default().resolve().unwrap();
        assert_eq!(c, EngineConfig::default());
        assert!(c.batching.batching_off());
        let bad = RawConfig {
            burst_min_ms: Some(-1.0),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(bad.field(), Some("burstMinMs"));
        assert_eq!(
            bad.to_string(),
            "'burstMinMs' (-1) must be an integer number of milliseconds 0..86400000"
        );
        let bad = RawConfig {
            burst_max_ms: Some(50.0),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(bad.field(), Some("burstMaxMs"));
        let bad = RawConfig {
            max_subscriptions_per_session: Some(0.5),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(bad.field(), Some("maxSubscriptionsPerSession"));
        let bad = RawConfig {
            outbox_conflate_bytes: Some(f64::NAN),
            ..Default::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(bad.field(), Some("outboxConflateBytes"));
        let ok = RawConfig {
            burst_max_ms: Some(500.0),
            throttle_ms: Some(1000.0),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(ok.batching.burst_max, Duration::from_millis(500));
    }
}
