//! Record status: `ok` / `stale` per record. A record turns stale when the source that published
//! it last has been gone for the grace period, or when it was not published within the maximum
//! age of the first age rule its subject matches; a publish makes it ok again. Subscribers get a
//! `record.status` (a record message, in order with the record's updates; a stale record's image
//! is followed by one), views read it as the pseudo-field `_status`, and the order desk refuses
//! orders on a stale instrument.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use super::Hub;
use crate::analytics::Pattern;
use crate::chunked::ChunkedVec;
use crate::error::{EngineError, Result};
use crate::store::STATUS_FIELD;
use crate::wire::encode;

/// How records turn stale.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusConfig {
    /// After a source's session closes, its records (those it published last) turn stale once
    /// this has passed without another source publishing them. Default 5 s; zero: at once.
    pub stale_grace: Duration,
    /// Maximum age per subject pattern: a record not published for this long turns stale. The
    /// first matching rule applies; subjects matching none never age.
    pub max_age: Vec<(Pattern, Duration)>,
}

impl Default for StatusConfig {
    fn default() -> Self {
        StatusConfig {
            stale_grace: Duration::from_secs(5),
            max_age: Vec::new(),
        }
    }
}

impl StatusConfig {
    /// Parses age rules written `pattern=ms` (e.g. `/FX/**=30000`); the error names the rule.
    pub fn parse_max_age<S: AsRef<str>>(rules: &[S]) -> Result<Vec<(Pattern, Duration)>> {
        let bad = |i: usize, rule: &str, why: String| {
            EngineError::bad_request(
                format!("'recordMaxAge.{i}' ({rule:?}) {why}"),
                Some("recordMaxAge"),
                None,
            )
        };
        let mut out = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter().enumerate() {
            let rule = rule.as_ref();
            let Some((pattern, ms)) = rule.rsplit_once('=') else {
                return Err(bad(i, rule, "must be written pattern=ms".into()));
            };
            let pattern = Pattern::parse(pattern.trim()).map_err(|e| bad(i, rule, e))?;
            let ms: u64 = ms
                .trim()
                .parse()
                .ok()
                .filter(|&m| (1..=86_400_000).contains(&m))
                .ok_or_else(|| bad(i, rule, "must end in a whole number of ms 1..86400000".into()))?;
            out.push((pattern, Duration::from_millis(ms)));
        }
        Ok(out)
    }
}

/// `rule` of a record not looked up yet.
const RULE_UNKNOWN: u16 = u16::MAX;
/// `rule` of a record no age rule matches.
const RULE_NONE: u16 = u16::MAX - 1;

/// Status bookkeeping of one record.
#[derive(Debug, Clone)]
struct Entry {
    /// Session id of the source that published it last (0: none known, e.g. engine records).
    owner: u32,
    /// Index of its age rule, or RULE_NONE / RULE_UNKNOWN.
    rule: u16,
    /// An age check is queued for it.
    armed: bool,
    /// When it was published last.
    updated: Option<Instant>,
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            owner: 0,
            rule: RULE_UNKNOWN,
            armed: false,
            updated: None,
        }
    }
}

/// The hub's record status state.
#[derive(Debug, Default)]
pub(super) struct StatusTable {
    cfg: StatusConfig,
    /// By record id - 1.
    entries: ChunkedVec<Entry>,
    /// Records each source session published (may hold records another source took over).
    by_source: HashMap<u32, Vec<u32>>,
    /// Sources gone: (when their records turn stale, source session id).
    gone: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Age checks: (when, record id).
    ages: BinaryHeap<Reverse<(Instant, u32)>>,
}

impl StatusTable {
    /// Lists record `id` under `source`, which just took it over. Lists keep ids another source
    /// took since (checked on use); two sources taking a record from each other again and again
    /// would grow them without bound, so a list past twice the records (+1,024) is compacted.
    fn list_for_source(&mut self, source: u32, id: u32) {
        let list = self.by_source.entry(source).or_default();
        list.push(id);
        if list.len() > 2 * self.entries.len() + 1024 {
            let entries = &self.entries;
            list.retain(|&i| entries.get(i as usize - 1).is_some_and(|e| e.owner == source));
            list.sort_unstable();
            list.dedup();
        }
    }

    /// Earliest pending status deadline.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        let a = self.gone.peek().map(|Reverse((t, _))| *t);
        let b = self.ages.peek().map(|Reverse((t, _))| *t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Hub {
    /// Replaces the status settings (age rules apply to records published from now on).
    pub fn set_status_config(&mut self, cfg: StatusConfig) {
        self.status.cfg = cfg;
        for i in 0..self.status.entries.len() {
            if let Some(e) = self.status.entries.get_mut(i) {
                e.rule = RULE_UNKNOWN;
            }
        }
    }

    /// After record `id` was published by `source` (0: not a source session) at `now`: ok again,
    /// owner and age check updated.
    pub(super) fn status_published(&mut self, id: u32, source: u32, now: Instant) {
        let t = &mut self.status;
        t.entries.grow_with(id as usize, Entry::default);
        let Some(e) = t.entries.get_mut(id as usize - 1) else {
            return;
        };
        let taken = source != 0 && e.owner != source;
        if taken {
            e.owner = source;
        }
        e.updated = Some(now);
        if e.rule == RULE_UNKNOWN {
            let subject = self.store.subject(id);
            e.rule = t
                .cfg
                .max_age
                .iter()
                .position(|(p, _)| p.matches(subject))
                .map_or(RULE_NONE, |i| i as u16);
        }
        if let Some(&(_, age)) = t.cfg.max_age.get(e.rule as usize) {
            if !e.armed {
                e.armed = true;
                t.ages.push(Reverse((now + age, id)));
            }
        }
        if taken {
            t.list_for_source(source, id);
        }
        if self.store.set_stale(id, false) {
            self.status_changed(id, now);
        }
    }

    /// Session `sid` closed: if it was a source, its records turn stale after the grace period
    /// (at once when `now_stale`: a standby is taking over, its images make them ok again).
    pub(super) fn status_session_closed(&mut self, sid: u32, now_stale: bool, now: Instant) {
        if self.status.by_source.contains_key(&sid) {
            let at = if now_stale {
                now
            } else {
                now + self.status.cfg.stale_grace
            };
            self.status.gone.push(Reverse((at, sid)));
        }
    }

    /// Marks records stale whose source's grace or whose maximum age passed by `now`.
    pub(super) fn expire_status(&mut self, now: Instant) {
        let before = self.stats.status_changes;
        while let Some(&Reverse((at, sid))) = self.status.gone.peek() {
            if at > now {
                break;
            }
            self.status.gone.pop();
            // A source that logged in again has a new session id: this one stays gone.
            for id in self.status.by_source.remove(&sid).unwrap_or_default() {
                let owned = self
                    .status
                    .entries
                    .get_mut(id as usize - 1)
                    .filter(|e| e.owner == sid)
                    .map(|e| e.owner = 0)
                    .is_some();
                if owned && self.store.set_stale(id, true) {
                    self.status_changed(id, now);
                }
            }
        }
        while let Some(&Reverse((at, id))) = self.status.ages.peek() {
            if at > now {
                break;
            }
            self.status.ages.pop();
            let t = &mut self.status;
            let Some(e) = t.entries.get_mut(id as usize - 1) else {
                continue;
            };
            let Some(&(_, age)) = t.cfg.max_age.get(e.rule as usize) else {
                e.armed = false;
                continue;
            };
            let due = e.updated.map_or(now, |u| u + age);
            if due > now {
                t.ages.push(Reverse((due, id)));
                continue;
            }
            e.armed = false;
            if self.store.set_stale(id, true) {
                self.status_changed(id, now);
            }
        }
        if self.stats.status_changes != before && !self.views.window_owner.is_empty() {
            self.flush_views(now);
        }
    }

    /// Record `id`'s status changed: its subscribers get `record.status`, views re-read `_status`
    /// (the caller flushes the views).
    fn status_changed(&mut self, id: u32, now: Instant) {
        let Some(rec) = self.store.get(id) else { return };
        let stale = rec.stale;
        self.stats.status_changes += 1;
        if self.views.set.view_count() > 0 {
            self.views.set.record_updated(id, &[STATUS_FIELD], &self.store);
        }
        self.scratch.clear();
        self.scratch.push(b',');
        encode::record_status(&mut self.scratch, id, stale);
        self.fan_out_message(id, now);
        if self.history.enabled() {
            self.record_history_status(id, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineConfig;
    use crate::hub::Command;
    use crate::wire::decode_source_frame;

    #[test]
    fn two_sources_taking_a_record_from_each_other_keep_their_lists_bounded() {
        let mut hub = Hub::new(EngineConfig::default());
        let now = Instant::now();
        let frame = r#"{"type":"record.publish","subject":"/X","fields":{"n":1}}"#;
        for i in 0..10_000u32 {
            let batch = decode_source_frame(frame).expect("frame");
            hub.handle(
                Command::SourcePublish {
                    source: 1 + i % 2,
                    batch,
                    received_ms: 0.0,
                },
                now,
            );
        }
        for source in [1, 2] {
            let len = hub.status.by_source.get(&source).map_or(0, Vec::len);
            assert!(len <= 2 + 1024, "source {source}: {len} entries");
        }
        assert_eq!(hub.status.entries.get(0).map(|e| e.owner), Some(2));
    }
}
