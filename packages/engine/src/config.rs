//! Engine configuration: defaults, and validation of values that arrive as JavaScript numbers.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{EngineError, Result};
use crate::journal::{Clock, SyncHook, SystemClock, WriteFault};
use crate::order_book::{SimulatorConfig, MAX_PRICE_TICKS, MAX_TICK_SIZE, MIN_TICK_SIZE};

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
    /// Longest `Engine::shutdown` keeps handling commands queued before it (then the rest are
    /// dropped and counted in its report). Default 5 s; 0 = drop everything queued.
    pub shutdown_drain: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            batching: BatchingConfig::default(),
            outbox_conflate_bytes: 1 << 20,
            slow_consumer: Duration::from_secs(10),
            max_subscriptions_per_session: 10_000,
            shutdown_drain: Duration::from_secs(5),
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

/// Engine settings as JavaScript passes them (the napi `EngineConfig` object; every field
/// optional, unset = the default). The one place the settings are spelled out: `resolve` gives
/// the engine's [`EngineConfig`], `resolve_orders` its [`OrdersConfig`].
#[cfg_attr(feature = "napi", napi_derive::napi(object, js_name = "EngineConfig"))]
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawConfig {
    /// Shortest batching interval, ms. @default 100
    pub burst_min_ms: Option<f64>,
    /// Longest batching interval, ms; 0 turns batching off (flush after each command batch). @default 0
    pub burst_max_ms: Option<f64>,
    /// Interval growth after a busy window (> 3 messages) / shrink after an empty one, ms. @default 50
    pub burst_increment_ms: Option<f64>,
    /// Per (session, record): at most one message per this many ms, updates in between conflated; 0 = off. @default 0
    pub throttle_ms: Option<f64>,
    /// A blocked session whose outbox passes this many bytes switches to conflation. @default 1048576
    pub outbox_conflate_bytes: Option<f64>,
    /// A session blocked this long is closed with 4008, ms. @default 10000
    pub slow_consumer_ms: Option<f64>,
    /// Record subscriptions one session may hold; above it: LIMIT_EXCEEDED. @default 10000
    pub max_subscriptions_per_session: Option<f64>,
    /// Longest `shutdown()` keeps handling queued commands before it drops the rest (and says how
    /// many in its return value), ms. @default 5000
    pub shutdown_drain_ms: Option<f64>,
    /// Order journal directory (created if missing); unset or empty = orders disabled
    /// (`orderSubmit` & co. throw UNAVAILABLE). Replayed at construction: see `recovery()`.
    pub journal_dir: Option<String>,
    /// fdatasync each journal commit group; false only for tests that don't care. @default true
    pub journal_fsync: Option<bool>,
    /// When the journal's segment chain is broken (a missing or short segment, a seq gap, damage to
    /// synced records), cut it back to its last consistent seq and start, reporting what was dropped
    /// in `recovery().cutLine`, instead of refusing to start. An explicit recovery step. @default false
    pub journal_truncate_to_consistent: Option<bool>,
    /// Journal commit window, µs (0..10000; 0 = off): a commit group that starts within this long
    /// of the previous group's end gathers orders until the window has passed, so under load each
    /// fdatasync covers more of them (less CPU), for up to this much added latency. @default 100
    pub journal_commit_window_us: Option<f64>,
    /// Largest quantity of one order; above it: reject quantity/aboveLimit. @default 1000000000
    pub order_max_quantity: Option<f64>,
    /// Tick of instruments whose record has no numeric `tickSize` field (or one outside
    /// 1e-12..1000000), 1e-12..1000000. @default 0.00001
    pub order_default_tick: Option<f64>,
    /// Highest limit price, in the instrument's ticks, 1..1000000000 (a record's `maxPrice` can
    /// only lower it); above it: reject price/aboveLimit. @default 1000000000
    pub order_max_price_ticks: Option<f64>,
    /// Execution simulator RNG seed (same seed + same ticks = same fills), integer 0..2^53. @default 1
    pub simulator_seed: Option<f64>,
    /// Partial fills before an order fills completely (0..100). @default 2
    pub simulator_max_partials: Option<f64>,
    /// Smallest partial fill, as a fraction of the remaining quantity, (0, 1]. @default 0.25
    pub simulator_min_fraction: Option<f64>,
    /// Largest partial fill fraction, [simulatorMinFraction, 1]. @default 0.75
    pub simulator_max_fraction: Option<f64>,
    /// Least time between two executions of one order (keeps partial fills visible), ms. @default 300
    pub simulator_fill_interval_ms: Option<f64>,
    /// UTC time `"HH:MM"` at which open DAY orders expire (cancelled, reason `endOfDay`, journaled
    /// like a cancel); unset or empty = never. @default unset
    pub end_of_day: Option<String>,
    /// Pre-trade risk rules per instrument type, first match wins (`order::risk`). @default none
    pub risk_rules: Option<Vec<RawRiskRule>>,
    /// A source's records turn stale this long after its session closed, unless another source
    /// published them since, ms (0: at once). @default 5000
    pub record_stale_grace_ms: Option<f64>,
    /// Maximum age rules `pattern=ms` (e.g. `/FX/**=30000`): a record not published for that long
    /// turns stale; the first matching rule applies. @default none
    pub record_max_age: Option<Vec<String>>,
    /// Record history rules `pattern=count/ageMs` (e.g. `/FX/**=256/30000`) kept for
    /// `record.resume`, first match wins; an empty list keeps none. @default ["/**=64/60000"]
    pub record_history: Option<Vec<String>>,
    /// Bytes all record histories together may hold (1 KiB..16 GiB); past it the oldest
    /// messages go. @default 67108864
    pub record_history_max_bytes: Option<f64>,
    /// How long a dropped session's views are held for `view.resume`, ms (0..3,600,000; 0: not
    /// held). @default 30000
    pub view_resume_grace_ms: Option<f64>,
    /// Most views held for one user (0..10,000); past it the user's oldest closes. @default 100
    pub view_resume_max_per_user: Option<f64>,
    /// Most views held in all (0..1,000,000); past it the oldest closes. @default 10000
    pub view_resume_max: Option<f64>,
    /// Most view messages each view keeps for `view.resume` to replay (0..10,000; 0: none kept).
    /// @default 64
    pub view_resume_history_messages: Option<f64>,
    /// Most bytes of view messages each view keeps for replay (0..67,108,864; 0: none kept).
    /// @default 262144
    pub view_resume_history_bytes: Option<f64>,
    /// How long a sent view message is kept for replay while its view is live, ms
    /// (0..3,600,000). @default 60000
    pub view_resume_history_ms: Option<f64>,
    /// Most bytes of view messages all views together keep for replay (0..17,179,869,184; 0: no
    /// bound but the per-view ones); past it a view's own oldest go, then its new ones are not
    /// kept. @default 268435456
    pub view_resume_history_total_bytes: Option<f64>,
    /// Cluster mode: NATS server URLs (`nats://host:port`); unset or empty = one process, no
    /// NATS. @default unset
    pub cluster_urls: Option<Vec<String>>,
    /// Cluster mode: this node's name, unique in the cluster. @default the host name
    pub cluster_node: Option<String>,
    /// Cluster mode: the cluster's name (prefix of its NATS subjects, stream and buckets).
    /// @default "tidewire"
    pub cluster_name: Option<String>,
    /// Cluster mode: replicas of the order stream (3 for a 3-server NATS cluster). @default 3
    pub cluster_replicas: Option<f64>,
    /// Cluster mode: longest wait for NATS on an order before it is answered `UNAVAILABLE`.
    /// @default 2000
    pub cluster_request_timeout_ms: Option<f64>,
}

impl RawConfig {
    /// Cluster settings, or `None` without `cluster_urls` (one process). `host` names the node
    /// when `cluster_node` is unset.
    pub fn resolve_cluster(&self, host: &str) -> Result<Option<crate::cluster::ClusterConfig>> {
        let urls: Vec<String> = self
            .cluster_urls
            .iter()
            .flatten()
            .map(|u| u.trim().to_owned())
            .filter(|u| !u.is_empty())
            .collect();
        if urls.is_empty() {
            return Ok(None);
        }
        let mut c =
            crate::cluster::ClusterConfig::new(urls, self.cluster_node.clone().unwrap_or_else(|| host.to_owned()));
        if let Some(name) = &self.cluster_name {
            c.name = name.clone();
        }
        c.replicas = int("clusterReplicas", self.cluster_replicas, c.replicas as u64, 1, 5)? as usize;
        c.request_timeout = ms(
            "clusterRequestTimeoutMs",
            self.cluster_request_timeout_ms,
            c.request_timeout,
        )?;
        c.validate()
            .map_err(|e| EngineError::bad_request(e.to_string(), Some("cluster"), None))?;
        Ok(Some(c))
    }

    /// Record status settings (stale grace, maximum age rules); errors name the setting.
    pub fn resolve_status(&self) -> Result<crate::hub::StatusConfig> {
        let d = crate::hub::StatusConfig::default();
        Ok(crate::hub::StatusConfig {
            stale_grace: ms("recordStaleGraceMs", self.record_stale_grace_ms, d.stale_grace)?,
            max_age: crate::hub::StatusConfig::parse_max_age(self.record_max_age.as_deref().unwrap_or_default())?,
        })
    }

    /// Record history settings (`record.resume`); errors name the setting and the rule.
    pub fn resolve_history(&self) -> Result<crate::hub::HistoryConfig> {
        let rules = match &self.record_history {
            None => crate::hub::HistoryConfig::default().rules,
            Some(rules) => crate::hub::HistoryConfig::parse_rules(rules)?,
        };
        let max_bytes = int(
            "recordHistoryMaxBytes",
            self.record_history_max_bytes,
            crate::hub::DEFAULT_HISTORY_MAX_BYTES as u64,
            1024,
            1 << 34,
        )? as usize;
        Ok(crate::hub::HistoryConfig { rules, max_bytes })
    }

    /// Held view settings (`view.resume`); errors name the setting and the rule.
    pub fn resolve_view_resume(&self) -> Result<crate::hub::ViewResumeConfig> {
        use crate::hub::{DEFAULT_VIEW_RESUME_GRACE_MS, DEFAULT_VIEW_RESUME_MAX, DEFAULT_VIEW_RESUME_MAX_PER_USER};
        let grace = int(
            "viewResumeGraceMs",
            self.view_resume_grace_ms,
            DEFAULT_VIEW_RESUME_GRACE_MS,
            0,
            3_600_000,
        )?;
        let per_user = int(
            "viewResumeMaxPerUser",
            self.view_resume_max_per_user,
            DEFAULT_VIEW_RESUME_MAX_PER_USER as u64,
            0,
            10_000,
        )?;
        let total = int(
            "viewResumeMax",
            self.view_resume_max,
            DEFAULT_VIEW_RESUME_MAX as u64,
            0,
            1_000_000,
        )?;
        let messages = int(
            "viewResumeHistoryMessages",
            self.view_resume_history_messages,
            crate::hub::DEFAULT_VIEW_HISTORY_MESSAGES as u64,
            0,
            10_000,
        )?;
        let bytes = int(
            "viewResumeHistoryBytes",
            self.view_resume_history_bytes,
            crate::hub::DEFAULT_VIEW_HISTORY_BYTES as u64,
            0,
            64 << 20,
        )?;
        let age = int(
            "viewResumeHistoryMs",
            self.view_resume_history_ms,
            crate::hub::DEFAULT_VIEW_HISTORY_MS,
            0,
            3_600_000,
        )?;
        let total_bytes = int(
            "viewResumeHistoryTotalBytes",
            self.view_resume_history_total_bytes,
            crate::hub::DEFAULT_VIEW_HISTORY_TOTAL_BYTES as u64,
            0,
            1 << 34,
        )?;
        Ok(crate::hub::ViewResumeConfig {
            grace: std::time::Duration::from_millis(grace),
            max_per_user: per_user as usize,
            max_total: total as usize,
            history: crate::hub::ViewHistoryConfig {
                messages: messages as usize,
                bytes: bytes as usize,
                max_age: std::time::Duration::from_millis(age),
                total_bytes: total_bytes as usize,
            },
        })
    }

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
            shutdown_drain: ms("shutdownDrainMs", self.shutdown_drain_ms, d.shutdown_drain)?,
        })
    }
}

/// One pre-trade risk rule as JavaScript passes it (`orders.risk` in the server's config).
#[cfg_attr(feature = "napi", napi_derive::napi(object))]
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawRiskRule {
    /// Instruments of this type: a subject pattern (`/FX/*`, `/EQ/**`).
    pub pattern: String,
    /// `"price"` (default): notional = quantity x price; `"quantity"`: notional = quantity (FX
    /// amounts in the base currency).
    pub notional_basis: Option<String>,
    /// Collar around the touch, percent (a buy limit above ask x (1 + pct/100) is refused).
    pub collar_pct: Option<f64>,
    /// Largest notional (quantity x price) of one order.
    pub max_notional: Option<f64>,
    /// Largest open notional of one user over the instruments of this type.
    pub max_open_notional: Option<f64>,
    /// Orders on a quote older than this are refused (`stale`).
    pub max_quote_age_ms: Option<f64>,
}

impl RawRiskRule {
    fn resolve(&self) -> Result<crate::order_book::RiskRule> {
        let bad = |m: String| EngineError::bad_request(format!("'riskRules': {m}"), Some("riskRules"), None);
        let pattern = crate::analytics::pattern::Pattern::parse(&self.pattern).map_err(bad)?;
        let age = match self.max_quote_age_ms {
            None => None,
            Some(v) => Some(int("riskRules.maxQuoteAgeMs", Some(v), 0, 1, 86_400_000)?),
        };
        let basis = match self.notional_basis.as_deref() {
            None | Some("price") => crate::order_book::NotionalBasis::Price,
            Some("quantity") => crate::order_book::NotionalBasis::Quantity,
            Some(other) => {
                return Err(bad(format!(
                    "notionalBasis must be \"price\" or \"quantity\", got {other:?}"
                )))
            }
        };
        Ok(crate::order_book::RiskRule {
            pattern,
            basis,
            collar_pct: self.collar_pct,
            max_notional: self.max_notional,
            max_open_notional: self.max_open_notional,
            max_quote_age_ms: age,
        })
    }
}

/// Orders: the journal, validation limits and the execution simulator. An engine started with
/// one has orders enabled (see `runtime::Engine::start_with_orders`).
#[derive(Clone)]
pub struct OrdersConfig {
    /// Directory of the order journal (created if missing).
    pub journal_dir: PathBuf,
    /// fdatasync per commit group. Default true; false only for tests that do not care.
    pub journal_fsync: bool,
    /// Cut a broken journal chain back to its last consistent seq instead of refusing to open
    /// (`JournalOptions::truncate_to_consistent`). Default false.
    pub journal_truncate_to_consistent: bool,
    /// Journal commit window (`JournalOptions::commit_window`). Default 100 µs.
    pub journal_commit_window: Duration,
    /// Largest quantity of one order. Default 1,000,000,000.
    pub max_quantity: u64,
    /// Tick of instruments whose record has no numeric `tickSize` field. Default 0.00001.
    pub default_tick: f64,
    /// Highest limit price in ticks (`OrderLimits::max_price_ticks`). Default 10^9.
    pub max_price_ticks: u64,
    /// Execution simulator policy (seed, partial fills).
    pub simulator: SimulatorConfig,
    /// Least time between two executions of one order (so partial fills stay visible). Default 300 ms.
    pub fill_interval: Duration,
    /// Period of the execution pass over orders of instruments that did not tick. Default 250 ms.
    pub pass_interval: Duration,
    /// Wall clock for order timestamps (`created`, `updated`) and the journal. Default the system clock.
    pub clock: Arc<dyn Clock>,
    /// Hook after each journal fdatasync (tests: hold the writer to observe "no ack before durable").
    pub sync_hook: Option<SyncHook>,
    /// Injected journal write failure (tests: a disk that fails under the running desk).
    pub journal_write_fault: Option<WriteFault>,
    /// When open DAY orders expire (cancelled with reason `endOfDay`, journaled like a cancel), in
    /// UTC by `clock`. Default `None`: DAY orders never expire (napi: `endOfDay` unset or empty).
    pub end_of_day: Option<EndOfDay>,
    /// Pre-trade risk rules (collar, notional limits, stale quotes). Default none.
    pub risk: crate::order_book::RiskRules,
}

/// Milliseconds in a day.
pub const DAY_MS: u64 = 86_400_000;

/// A time of day in UTC at which DAY orders expire (minute resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndOfDay {
    /// Minutes after midnight UTC, 0..1440.
    minute: u32,
}

impl EndOfDay {
    /// `"HH:MM"` (24-hour, UTC, `00:00`..`23:59`). Errors (`BAD_REQUEST` naming `endOfDay`) on
    /// anything else.
    pub fn parse(s: &str) -> Result<EndOfDay> {
        let bad = || {
            EngineError::bad_request(
                format!("'endOfDay' ({s:?}) must be a UTC time \"HH:MM\" from 00:00 to 23:59"),
                Some("endOfDay"),
                None,
            )
        };
        let b = s.as_bytes();
        if b.len() != 5 || b[2] != b':' || ![0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit()) {
            return Err(bad());
        }
        let num = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
        let (h, m) = (num(0), num(3));
        if h > 23 || m > 59 {
            return Err(bad());
        }
        Ok(EndOfDay { minute: h * 60 + m })
    }

    /// Minutes after midnight UTC.
    pub fn minute_of_day(self) -> u32 {
        self.minute
    }

    /// The first end of day strictly after `now_ms` (ms since the Unix epoch, UTC).
    pub fn next_after(self, now_ms: u64) -> u64 {
        let offset = u64::from(self.minute) * 60_000;
        let today = now_ms - now_ms % DAY_MS + offset;
        if today > now_ms {
            today
        } else {
            today + DAY_MS
        }
    }

    /// The last end of day at or before `now_ms` (orders created before it have expired).
    pub fn last_at_or_before(self, now_ms: u64) -> u64 {
        self.next_after(now_ms).saturating_sub(DAY_MS)
    }
}

impl std::fmt::Debug for OrdersConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrdersConfig")
            .field("journal_dir", &self.journal_dir)
            .field("journal_fsync", &self.journal_fsync)
            .field("journal_truncate_to_consistent", &self.journal_truncate_to_consistent)
            .field("journal_commit_window", &self.journal_commit_window)
            .field("max_quantity", &self.max_quantity)
            .field("default_tick", &self.default_tick)
            .field("max_price_ticks", &self.max_price_ticks)
            .field("simulator", &self.simulator)
            .field("fill_interval", &self.fill_interval)
            .field("pass_interval", &self.pass_interval)
            .finish_non_exhaustive()
    }
}

impl OrdersConfig {
    /// Defaults with the journal in `journal_dir`.
    pub fn new(journal_dir: impl Into<PathBuf>) -> OrdersConfig {
        OrdersConfig {
            journal_dir: journal_dir.into(),
            journal_fsync: true,
            journal_truncate_to_consistent: false,
            journal_commit_window: Duration::from_micros(100),
            max_quantity: 1_000_000_000,
            default_tick: 0.00001,
            max_price_ticks: MAX_PRICE_TICKS,
            simulator: SimulatorConfig::default(),
            fill_interval: Duration::from_millis(300),
            pass_interval: Duration::from_millis(250),
            clock: Arc::new(SystemClock),
            sync_hook: None,
            journal_write_fault: None,
            end_of_day: None,
            risk: crate::order_book::RiskRules::default(),
        }
    }
}

fn fraction(name: &str, value: Option<f64>, default: f64) -> Result<f64> {
    match value {
        None => Ok(default),
        Some(v) if v > 0.0 && v <= 1.0 => Ok(v),
        Some(v) => Err(config_error(name, v, "must be a number in (0, 1]")),
    }
}

impl RawConfig {
    /// Validates every value (errors name the setting) and fills defaults; `Ok(None)` when
    /// `journal_dir` is unset or empty (orders disabled).
    pub fn resolve_orders(&self) -> Result<Option<OrdersConfig>> {
        let Some(dir) = self.journal_dir.as_deref().filter(|d| !d.is_empty()) else {
            return Ok(None);
        };
        self.orders_in(dir).map(Some)
    }

    /// Orders settings in cluster mode: orders are always on (the replicated order stream replaces
    /// the journal, so `journalDir` and the journal settings are not used).
    pub fn resolve_cluster_orders(&self) -> Result<OrdersConfig> {
        self.orders_in("")
    }

    fn orders_in(&self, dir: &str) -> Result<OrdersConfig> {
        let mut c = OrdersConfig::new(dir);
        c.journal_fsync = self.journal_fsync.unwrap_or(true);
        c.journal_truncate_to_consistent = self.journal_truncate_to_consistent.unwrap_or(false);
        let window = int(
            "journalCommitWindowUs",
            self.journal_commit_window_us,
            c.journal_commit_window.as_micros() as u64,
            0,
            10_000,
        )?;
        c.journal_commit_window = Duration::from_micros(window);
        c.max_quantity = int("orderMaxQuantity", self.order_max_quantity, c.max_quantity, 1, 1 << 53)?;
        if let Some(t) = self.order_default_tick {
            if !(MIN_TICK_SIZE..=MAX_TICK_SIZE).contains(&t) {
                return Err(config_error("orderDefaultTick", t, "must be a number 1e-12..1000000"));
            }
            c.default_tick = t;
        }
        c.max_price_ticks = int(
            "orderMaxPriceTicks",
            self.order_max_price_ticks,
            c.max_price_ticks,
            1,
            MAX_PRICE_TICKS,
        )?;
        let rules = self
            .risk_rules
            .iter()
            .flatten()
            .map(RawRiskRule::resolve)
            .collect::<Result<Vec<_>>>()?;
        c.risk = crate::order_book::RiskRules::new(rules)
            .map_err(|m| EngineError::bad_request(format!("'riskRules': {m}"), Some("riskRules"), None))?;
        let d = SimulatorConfig::default();
        c.simulator = SimulatorConfig {
            seed: int("simulatorSeed", self.simulator_seed, d.seed, 0, 1 << 53)?,
            max_partials: int(
                "simulatorMaxPartials",
                self.simulator_max_partials,
                d.max_partials.into(),
                0,
                100,
            )? as u32,
            min_fraction: fraction("simulatorMinFraction", self.simulator_min_fraction, d.min_fraction)?,
            max_fraction: fraction("simulatorMaxFraction", self.simulator_max_fraction, d.max_fraction)?,
            min_partial: d.min_partial,
        };
        if c.simulator.max_fraction < c.simulator.min_fraction {
            return Err(config_error(
                "simulatorMaxFraction",
                c.simulator.max_fraction,
                &format!("must be at least simulatorMinFraction ({})", c.simulator.min_fraction),
            ));
        }
        c.fill_interval = ms(
            "simulatorFillIntervalMs",
            self.simulator_fill_interval_ms,
            c.fill_interval,
        )?;
        c.end_of_day = match self.end_of_day.as_deref() {
            None | Some("") => None,
            Some(s) => Some(EndOfDay::parse(s)?),
        };
        Ok(c)
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

    #[test]
    fn view_resume_history_defaults_and_validation() {
        let d = RawConfig::default().resolve_view_resume().unwrap();
        assert_eq!(d, crate::hub::ViewResumeConfig::default());
        assert_eq!(
            (
                d.history.messages,
                d.history.bytes,
                d.history.max_age,
                d.history.total_bytes
            ),
            (64, 256 * 1024, Duration::from_secs(60), 256 << 20)
        );
        let set = RawConfig {
            view_resume_history_messages: Some(8.0),
            view_resume_history_bytes: Some(0.0),
            view_resume_history_ms: Some(1500.0),
            view_resume_history_total_bytes: Some(0.0),
            ..Default::default()
        }
        .resolve_view_resume()
        .unwrap();
        assert_eq!(
            (
                set.history.messages,
                set.history.bytes,
                set.history.max_age,
                set.history.total_bytes
            ),
            (8, 0, Duration::from_millis(1500), 0)
        );
        for (raw, field) in [
            (
                RawConfig {
                    view_resume_history_messages: Some(10_001.0),
                    ..Default::default()
                },
                "viewResumeHistoryMessages",
            ),
            (
                RawConfig {
                    view_resume_history_bytes: Some(-1.0),
                    ..Default::default()
                },
                "viewResumeHistoryBytes",
            ),
            (
                RawConfig {
                    view_resume_history_ms: Some(0.5),
                    ..Default::default()
                },
                "viewResumeHistoryMs",
            ),
            (
                RawConfig {
                    view_resume_history_total_bytes: Some(17_179_869_185.0),
                    ..Default::default()
                },
                "viewResumeHistoryTotalBytes",
            ),
            (
                RawConfig {
                    view_resume_history_total_bytes: Some(1.5),
                    ..Default::default()
                },
                "viewResumeHistoryTotalBytes",
            ),
        ] {
            assert_eq!(raw.resolve_view_resume().unwrap_err().field(), Some(field));
        }
    }

    fn with_tick(r: &RawConfig, t: f64) -> RawConfig {
        RawConfig {
            order_default_tick: Some(t),
            ..r.clone()
        }
    }

    fn with_ticks(r: &RawConfig, n: f64) -> RawConfig {
        RawConfig {
            order_max_price_ticks: Some(n),
            ..r.clone()
        }
    }

    #[test]
    fn orders_config_defaults_and_validation() {
        assert!(
            RawConfig::default().resolve_orders().unwrap().is_none(),
            "no journalDir: disabled"
        );
        let off = RawConfig {
            journal_dir: Some(String::new()),
            ..Default::default()
        };
        assert!(off.resolve_orders().unwrap().is_none());
        let on = RawConfig {
            journal_dir: Some("/tmp/j".into()),
            ..Default::default()
        };
        let c = on.resolve_orders().unwrap().unwrap();
        assert_eq!(
            (c.max_quantity, c.default_tick, c.journal_fsync, c.journal_commit_window),
            (1_000_000_000, 0.00001, true, Duration::from_micros(100))
        );
        assert_eq!(c.max_price_ticks, 1_000_000_000);
        let ticks = with_ticks(&on, 500.0).resolve_orders().unwrap().unwrap();
        assert_eq!(ticks.max_price_ticks, 500);
        let bad = |r: RawConfig| r.resolve_orders().unwrap_err().field().map(str::to_owned);
        let with = |f: fn(&mut RawConfig)| {
            let mut r = on.clone();
            f(&mut r);
            r
        };
        let window = |r: RawConfig| r.resolve_orders().unwrap().unwrap().journal_commit_window;
        assert_eq!(window(with(|r| r.journal_commit_window_us = Some(0.0))), Duration::ZERO);
        assert_eq!(
            window(with(|r| r.journal_commit_window_us = Some(250.0))),
            Duration::from_micros(250)
        );
        for v in [-1.0, 10_001.0, 1.5] {
            let mut r = on.clone();
            r.journal_commit_window_us = Some(v);
            assert_eq!(bad(r).as_deref(), Some("journalCommitWindowUs"), "{v}");
        }
        assert_eq!(
            bad(with(|r| r.order_max_quantity = Some(0.0))).as_deref(),
            Some("orderMaxQuantity")
        );
        for t in [-1.0, 0.0, 1e-13, 2e6, f64::NAN] {
            let r = with_tick(&on, t);
            assert_eq!(bad(r).as_deref(), Some("orderDefaultTick"), "{t}");
        }
        for n in [0.0, 1.5, 1e9 + 1.0, f64::INFINITY] {
            assert_eq!(bad(with_ticks(&on, n)).as_deref(), Some("orderMaxPriceTicks"), "{n}");
        }
        assert_eq!(
            bad(with(|r| r.simulator_min_fraction = Some(1.5))).as_deref(),
            Some("simulatorMinFraction")
        );
        let inverted = with(|r| {
            r.simulator_min_fraction = Some(0.8);
            r.simulator_max_fraction = Some(0.2);
        });
        assert_eq!(bad(inverted).as_deref(), Some("simulatorMaxFraction"));
        assert_eq!(
            bad(with(|r| r.simulator_fill_interval_ms = Some(0.5))).as_deref(),
            Some("simulatorFillIntervalMs")
        );
        assert_eq!(c.end_of_day, None, "DAY expiry off by default");
        for b in ["24:00", "7:00", "07:60", "0700", "07:00 ", "ab:cd"] {
            let r = with(|r| r.end_of_day = Some(String::new()));
            assert!(r.resolve_orders().unwrap().unwrap().end_of_day.is_none());
            let mut r = on.clone();
            r.end_of_day = Some(b.into());
            assert_eq!(bad(r).as_deref(), Some("endOfDay"), "{b}");
        }
        let mut r = on.clone();
        r.end_of_day = Some("22:00".into());
        let eod = r.resolve_orders().unwrap().unwrap().end_of_day.unwrap();
        assert_eq!(eod.minute_of_day(), 22 * 60);
    }

    #[test]
    fn end_of_day_boundaries() {
        let eod = EndOfDay::parse("22:00").unwrap();
        let day = 20_000 * DAY_MS; // some midnight UTC
        let at = day + 22 * 3_600_000;
        assert_eq!(eod.next_after(day), at);
        assert_eq!(eod.next_after(at - 1), at);
        assert_eq!(eod.next_after(at), at + DAY_MS, "strictly after");
        assert_eq!(eod.last_at_or_before(at), at);
        assert_eq!(eod.last_at_or_before(at - 1), at - DAY_MS);
        assert_eq!(EndOfDay::parse("00:00").unwrap().next_after(day), day + DAY_MS);
        assert_eq!(EndOfDay::parse("23:59").unwrap().minute_of_day(), 1439);
    }
}
