//! Record history for `record.resume`: per record, a ring of the record messages its subscribers
//! were sent (the already-encoded `record.update` and `record.status` bytes, as fanned out), bounded
//! per record by the first matching rule (`pattern=count/ageMs`) and in total by `max_bytes`.
//!
//! A client that lost its connection names the seq it holds; `decide` answers whether the ring
//! still holds everything after it (replay those messages, in order) or not (the caller sends a
//! fresh image flagged `reset`). Every entry carries a *tag*: an update's seq, or for a status
//! message the record's seq when it was sent. A client at seq `c` is missing the updates tagged
//! above `c` and the status messages tagged `c` or above (status messages are idempotent, so one
//! it already saw may be replayed, in order, without harm). `min_resume` is the lowest `c` the ring
//! can still serve: evicting an update tagged `s` raises it to `s`, a status tagged `t` to `t + 1`.
//!
//! Records no rule matches have no ring: the fan-out path then does nothing extra.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::analytics::Pattern;
use crate::chunked::ChunkedVec;
use crate::error::{EngineError, Result};

/// How much history one record keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryRule {
    /// Most messages kept (1..=100,000).
    pub count: u32,
    /// Oldest message kept; older ones are never replayed.
    pub age: Duration,
}

/// History settings: rules per subject pattern (the first match applies) and the total bound.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryConfig {
    /// Rules, first match wins; a record no rule matches keeps no history (resumes get a reset).
    pub rules: Vec<(Pattern, HistoryRule)>,
    /// Encoded bytes all rings together may hold; past it the oldest messages (any record) go.
    pub max_bytes: usize,
}

/// Default rule text: every record keeps its last 64 messages for at most 60 s.
pub const DEFAULT_HISTORY_RULES: &str = "/**=64/60000";
/// Default total bound of all rings, bytes (64 MiB).
pub const DEFAULT_HISTORY_MAX_BYTES: usize = 64 << 20;

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig {
            rules: Self::parse_rules(&[DEFAULT_HISTORY_RULES]).unwrap_or_default(),
            max_bytes: DEFAULT_HISTORY_MAX_BYTES,
        }
    }
}

impl HistoryConfig {
    /// Parses rules written `pattern=count/ageMs` (e.g. `/FX/**=256/30000`); the error names the
    /// rule and what is wrong with it.
    pub fn parse_rules<S: AsRef<str>>(rules: &[S]) -> Result<Vec<(Pattern, HistoryRule)>> {
        let bad = |i: usize, rule: &str, why: String| {
            EngineError::bad_request(
                format!("'recordHistory.{i}' ({rule:?}) {why}"),
                Some("recordHistory"),
                None,
            )
        };
        let mut out = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter().enumerate() {
            let rule = rule.as_ref();
            let Some((pattern, bounds)) = rule.rsplit_once('=') else {
                return Err(bad(i, rule, "must be written pattern=count/ageMs".into()));
            };
            let pattern = Pattern::parse(pattern.trim()).map_err(|e| bad(i, rule, e))?;
            let Some((count, age)) = bounds.split_once('/') else {
                return Err(bad(i, rule, "must be written pattern=count/ageMs".into()));
            };
            let count: u32 = count
                .trim()
                .parse()
                .ok()
                .filter(|c| (1..=100_000).contains(c))
                .ok_or_else(|| bad(i, rule, "count must be a whole number 1..100000".into()))?;
            let age: u64 = age
                .trim()
                .parse()
                .ok()
                .filter(|a| (1..=86_400_000).contains(a))
                .ok_or_else(|| bad(i, rule, "ageMs must be a whole number of ms 1..86400000".into()))?;
            out.push((
                pattern,
                HistoryRule {
                    count,
                    age: Duration::from_millis(age),
                },
            ));
        }
        Ok(out)
    }
}

/// What a resuming client at a seq gets for one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Replay ring entries `from..` (possibly none: the client is up to date).
    Replay {
        /// Index of the first entry to send.
        from: usize,
    },
    /// The history does not reach back (or the record keeps none): send a fresh image, `reset`.
    Reset,
}

/// One message in a ring.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Update seq, or the record's seq when a status message was sent.
    tag: u64,
    /// A `record.status` (idempotent) rather than a `record.update`.
    status: bool,
    /// When it was recorded.
    at: Instant,
    /// Its bytes in `Ring::bytes`.
    len: u32,
    /// Global recording order (for the total byte bound).
    serial: u64,
}

/// The history of one record.
#[derive(Debug, Default)]
struct Ring {
    entries: VecDeque<Entry>,
    /// Entry bytes back to back from `head` (compacted once the dead prefix is half of it).
    bytes: Vec<u8>,
    head: usize,
    /// Lowest client seq this ring can serve.
    min_resume: u64,
}

impl Ring {
    fn pop_front(&mut self) -> usize {
        let Some(e) = self.entries.pop_front() else { return 0 };
        self.head += e.len as usize;
        self.min_resume = self.min_resume.max(if e.status { e.tag + 1 } else { e.tag });
        if self.entries.is_empty() {
            self.bytes.clear();
            self.head = 0;
        } else if self.head > 4096 && self.head * 2 > self.bytes.len() {
            self.bytes.drain(..self.head);
            self.head = 0;
        }
        e.len as usize
    }

    fn expire(&mut self, rule: HistoryRule, now: Instant) -> usize {
        let mut freed = 0;
        while self
            .entries
            .front()
            .is_some_and(|e| now.saturating_duration_since(e.at) > rule.age)
        {
            freed += self.pop_front();
        }
        freed
    }
}

/// `Slot::rule` of a record not looked up yet.
const RULE_UNKNOWN: u16 = u16::MAX;
/// `Slot::rule` of a record no rule matches.
const RULE_NONE: u16 = u16::MAX - 1;

#[derive(Debug)]
struct Slot {
    rule: u16,
    ring: Option<Box<Ring>>,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            rule: RULE_UNKNOWN,
            ring: None,
        }
    }
}

/// Every record's history.
#[derive(Debug)]
pub struct History {
    cfg: HistoryConfig,
    /// By record id - 1.
    slots: ChunkedVec<Slot>,
    /// (record id, serial) in recording order: the oldest first when `max_bytes` needs room.
    order: VecDeque<(u32, u64)>,
    next_serial: u64,
    /// Bytes held by all rings.
    total: usize,
    /// Entries held by all rings.
    live: usize,
    /// Entries dropped by the total bound (`enforce_total`) since this history was made.
    evicted: u64,
}

impl Default for History {
    fn default() -> Self {
        History::new(HistoryConfig::default())
    }
}

impl History {
    /// Empty history under `cfg`.
    pub fn new(cfg: HistoryConfig) -> Self {
        History {
            cfg,
            slots: ChunkedVec::default(),
            order: VecDeque::new(),
            next_serial: 0,
            total: 0,
            live: 0,
            evicted: 0,
        }
    }

    /// New settings: every ring is dropped (clients resuming later get resets).
    pub fn set_config(&mut self, cfg: HistoryConfig) {
        *self = History::new(cfg);
    }

    /// true when some rule exists (records may keep history).
    #[inline]
    pub fn enabled(&self) -> bool {
        !self.cfg.rules.is_empty()
    }

    /// Bytes held by all rings.
    pub fn bytes(&self) -> usize {
        self.total
    }

    /// Entries (messages) held by all rings.
    pub fn entries(&self) -> usize {
        self.live
    }

    /// Entries dropped to keep the total under `max_bytes`, since this history was made (a new
    /// configuration makes a new one).
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The rule of record `id` (`subject`), looked up once per record. `None`: it keeps no history.
    #[inline]
    pub fn rule(&mut self, id: u32, subject: &str) -> Option<HistoryRule> {
        if self.cfg.rules.is_empty() || id == 0 {
            return None;
        }
        self.slots.grow_with(id as usize, Slot::default);
        let slot = &mut self.slots[id as usize - 1];
        if slot.rule == RULE_UNKNOWN {
            slot.rule = self
                .cfg
                .rules
                .iter()
                .position(|(p, _)| p.matches(subject))
                .map_or(RULE_NONE, |i| i.min(RULE_NONE as usize - 1) as u16);
        }
        self.cfg.rules.get(slot.rule as usize).map(|(_, r)| *r)
    }

    /// Record `id` was created at seq `seq` (its image is not kept: a client at seq 0 gets an
    /// image anyway). Its ring starts empty and serves clients from `seq` on.
    pub fn created(&mut self, id: u32, seq: u64) {
        if let Some(slot) = self.slots.get_mut(id as usize - 1) {
            if let Some(ring) = slot.ring.as_deref_mut() {
                self.total -= ring.bytes.len() - ring.head;
                self.live -= ring.entries.len();
            }
            slot.ring = Some(Box::new(Ring {
                min_resume: seq,
                ..Ring::default()
            }));
        }
    }

    /// Records `msg` (encoded bytes as queued to subscribers) for record `id` under `rule` (from
    /// `rule`): an update of seq `tag`, or a status message (`status`) sent at record seq `tag`.
    pub fn record(&mut self, id: u32, rule: HistoryRule, tag: u64, status: bool, msg: &[u8], now: Instant) {
        let Some(slot) = self.slots.get_mut(id as usize - 1) else {
            return;
        };
        let ring = slot.ring.get_or_insert_with(|| {
            // a ring started mid-life cannot tell what came before this message (status
            // messages of earlier seqs): it serves clients at this update's seq or later, or
            // after a status message, from the next seq on
            Box::new(Ring {
                min_resume: if status { tag + 1 } else { tag },
                ..Ring::default()
            })
        });
        let before = ring.entries.len();
        let mut freed = ring.expire(rule, now);
        while ring.entries.len() >= rule.count as usize {
            freed += ring.pop_front();
        }
        let popped = before - ring.entries.len();
        let Ok(len) = u32::try_from(msg.len()) else { return };
        let serial = self.next_serial;
        self.next_serial += 1;
        ring.bytes.extend_from_slice(msg);
        ring.entries.push_back(Entry {
            tag,
            status,
            at: now,
            len,
            serial,
        });
        self.total = self.total + msg.len() - freed;
        self.live = self.live + 1 - popped;
        self.order.push_back((id, serial));
        self.enforce_total();
    }

    /// Drops the oldest messages (of any record) until the total fits `max_bytes`; keeps `order`
    /// from growing past twice the live entries.
    fn enforce_total(&mut self) {
        while self.total > self.cfg.max_bytes {
            let Some((id, serial)) = self.order.pop_front() else {
                break;
            };
            let Some(ring) = self.slots.get_mut(id as usize - 1).and_then(|s| s.ring.as_deref_mut()) else {
                continue;
            };
            if ring.entries.front().is_some_and(|e| e.serial == serial) {
                self.total -= ring.pop_front();
                self.live -= 1;
                self.evicted += 1;
            }
        }
        if self.order.len() > 2 * self.live + 1024 {
            let slots = &self.slots;
            self.order.retain(|&(id, serial)| {
                slots
                    .get(id as usize - 1)
                    .and_then(|s| s.ring.as_deref())
                    .and_then(|r| r.entries.front())
                    .is_some_and(|front| serial >= front.serial)
            });
        }
    }

    /// What a client holding record `id` at `client_seq` gets, the record being at `current_seq`
    /// now. Messages past their age are dropped first. `client_seq` 0 (the client had no image)
    /// and `client_seq` above `current_seq` (a seq this record never had here) are resets.
    pub fn decide(&mut self, id: u32, client_seq: u64, current_seq: u64, now: Instant) -> Decision {
        if client_seq == 0 || client_seq > current_seq {
            return Decision::Reset;
        }
        let Some(slot) = self.slots.get_mut(id as usize - 1) else {
            return Decision::Reset;
        };
        let (Some(ring), Some((_, rule))) = (slot.ring.as_deref_mut(), self.cfg.rules.get(slot.rule as usize)) else {
            return Decision::Reset;
        };
        let before = ring.entries.len();
        let freed = ring.expire(*rule, now);
        self.total -= freed;
        self.live -= before - ring.entries.len();
        if client_seq < ring.min_resume {
            return Decision::Reset;
        }
        let from = ring
            .entries
            .iter()
            .position(|e| e.tag > client_seq || (e.status && e.tag == client_seq))
            .unwrap_or(ring.entries.len());
        // the newest update kept must be the record's current seq, else something was not recorded
        let newest = ring.entries.iter().rev().find(|e| !e.status).map(|e| e.tag);
        if current_seq > client_seq && newest != Some(current_seq) {
            return Decision::Reset;
        }
        Decision::Replay { from }
    }

    /// The bytes of record `id`'s entries from index `from` on, oldest first.
    pub fn entries_from(&self, id: u32, from: usize) -> impl Iterator<Item = &[u8]> + '_ {
        let ring = self.slots.get(id as usize - 1).and_then(|s| s.ring.as_deref());
        let mut pos = ring.map_or(0, |r| r.head);
        ring.into_iter().flat_map(move |r| {
            let skip: usize = r.entries.iter().take(from).map(|e| e.len as usize).sum();
            pos += skip;
            r.entries.iter().skip(from).map(move |e| {
                let start = pos;
                pos += e.len as usize;
                &r.bytes[start..pos]
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rules: &[&str], max_bytes: usize) -> HistoryConfig {
        HistoryConfig {
            rules: HistoryConfig::parse_rules(rules).unwrap(),
            max_bytes,
        }
    }

    fn upd(seq: u64) -> Vec<u8> {
        format!(",{{\"type\":\"record.update\",\"id\":1,\"seq\":{seq}}}").into_bytes()
    }

    /// A history with record 1 (`/A/X`) created at seq 1 and updated to `last`.
    fn filled(rules: &[&str], max_bytes: usize, last: u64, now: Instant) -> History {
        let mut h = History::new(cfg(rules, max_bytes));
        let rule = h.rule(1, "/A/X").unwrap();
        h.created(1, 1);
        for seq in 2..=last {
            h.record(1, rule, seq, false, &upd(seq), now);
        }
        h
    }

    fn replayed(h: &History, from: usize) -> Vec<String> {
        h.entries_from(1, from)
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn parses_rules_and_names_the_bad_one() {
        let rules = HistoryConfig::parse_rules(&["/FX/**=256/30000", " /EQ/* = 8 / 1000 "]).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(
            rules[0].1,
            HistoryRule {
                count: 256,
                age: Duration::from_secs(30)
            }
        );
        for (rule, why) in [
            ("/FX/**", "pattern=count/ageMs"),
            ("/FX/**=10", "pattern=count/ageMs"),
            ("/FX/**=0/10", "count"),
            ("/FX/**=10/x", "ageMs"),
            ("FX=10/10", "must start with '/'"),
        ] {
            let e = HistoryConfig::parse_rules(&["/A=1/1", rule]).unwrap_err().to_string();
            assert!(e.contains("'recordHistory.1'") && e.contains(why), "{rule}: {e}");
        }
        assert_eq!(HistoryConfig::default().rules.len(), 1);
    }

    #[test]
    fn replays_every_missed_update_in_order() {
        let now = Instant::now();
        let mut h = filled(&["/**=100/60000"], 1 << 20, 10, now);
        // entries are seqs 2..=10: a client at 7 misses 8, 9, 10
        assert_eq!(h.decide(1, 7, 10, now), Decision::Replay { from: 6 });
        let want: Vec<String> = [8, 9, 10].map(|s| String::from_utf8(upd(s)).unwrap()).to_vec();
        assert_eq!(replayed(&h, 6), want);
        // created at 1: a client holding the first image gets every update
        assert_eq!(h.decide(1, 1, 10, now), Decision::Replay { from: 0 });
        // up to date: nothing to replay
        assert_eq!(h.decide(1, 10, 10, now), Decision::Replay { from: 9 });
        assert_eq!(h.entries_from(1, 9).count(), 0);
    }

    #[test]
    fn resets_when_the_count_no_longer_reaches_back() {
        let now = Instant::now();
        let mut h = filled(&["/**=4/60000"], 1 << 20, 10, now);
        // kept: 7..=10, so a client at 6 is served, one at 5 is not
        assert_eq!(h.decide(1, 6, 10, now), Decision::Replay { from: 0 });
        assert_eq!(h.decide(1, 5, 10, now), Decision::Reset);
        assert_eq!(h.bytes(), (7..=10).map(|s| upd(s).len()).sum::<usize>());
    }

    #[test]
    fn resets_past_the_age() {
        let t0 = Instant::now();
        let mut h = filled(&["/**=100/1000"], 1 << 20, 5, t0);
        assert_eq!(
            h.decide(1, 3, 5, t0 + Duration::from_millis(1000)),
            Decision::Replay { from: 2 }
        );
        assert_eq!(h.decide(1, 3, 5, t0 + Duration::from_millis(1001)), Decision::Reset);
        assert_eq!(h.bytes(), 0);
        // an up-to-date client needs nothing, even with the ring expired
        assert_eq!(
            h.decide(1, 5, 5, t0 + Duration::from_millis(1001)),
            Decision::Replay { from: 0 }
        );
    }

    #[test]
    fn resets_unknown_records_first_images_and_foreign_seqs() {
        let now = Instant::now();
        let mut h = filled(&["/A/**=100/60000"], 1 << 20, 5, now);
        assert_eq!(h.decide(1, 0, 5, now), Decision::Reset, "no image yet");
        assert_eq!(h.decide(1, 9, 5, now), Decision::Reset, "a seq this record never had");
        assert_eq!(h.decide(2, 1, 5, now), Decision::Reset, "no ring");
        assert_eq!(h.rule(3, "/B/Y"), None, "no rule matches");
        assert_eq!(h.decide(3, 1, 5, now), Decision::Reset);
        assert_eq!(History::new(cfg(&[], 1)).rule(1, "/A/X"), None);
    }

    #[test]
    fn a_ring_started_mid_life_serves_only_from_its_first_message() {
        let now = Instant::now();
        let mut h = History::new(cfg(&["/**=10/60000"], 1 << 20));
        let rule = h.rule(1, "/A/X").unwrap();
        h.record(1, rule, 40, false, &upd(40), now);
        h.record(1, rule, 41, false, &upd(41), now);
        assert_eq!(h.decide(1, 39, 41, now), Decision::Reset);
        assert_eq!(h.decide(1, 40, 41, now), Decision::Replay { from: 1 });
        // an update the ring never saw (recorded elsewhere) makes it unusable
        assert_eq!(h.decide(1, 40, 42, now), Decision::Reset);
    }

    #[test]
    fn status_messages_replay_from_the_clients_seq_and_bound_it_when_evicted() {
        let now = Instant::now();
        let mut h = filled(&["/**=3/60000"], 1 << 20, 4, now);
        let rule = h.rule(1, "/A/X").unwrap();
        h.record(1, rule, 4, true, b",S4", now); // stale at seq 4: kept 2, 3, 4, S4
        assert_eq!(h.decide(1, 4, 4, now), Decision::Replay { from: 2 });
        assert_eq!(replayed(&h, 2), vec![",S4".to_owned()]);
        h.record(1, rule, 5, false, &upd(5), now); // kept 4, S4, 5
        assert_eq!(h.decide(1, 3, 5, now), Decision::Replay { from: 0 });
        h.record(1, rule, 6, false, &upd(6), now); // kept S4, 5, 6: update 4 is gone
        assert_eq!(h.decide(1, 3, 6, now), Decision::Reset);
        assert_eq!(h.decide(1, 4, 6, now), Decision::Replay { from: 0 });
        h.record(1, rule, 7, false, &upd(7), now); // kept 5, 6, 7: the status tagged 4 is gone
        assert_eq!(h.decide(1, 4, 7, now), Decision::Reset);
        assert_eq!(h.decide(1, 5, 7, now), Decision::Replay { from: 1 });
    }

    #[test]
    fn the_total_bound_drops_the_oldest_messages_of_any_record() {
        let now = Instant::now();
        let one = upd(2).len();
        let mut h = History::new(cfg(&["/**=100/60000"], 3 * one));
        let r = h.rule(1, "/A/X").unwrap();
        h.rule(2, "/A/Y");
        h.created(1, 1);
        h.created(2, 1);
        h.record(1, r, 2, false, &upd(2), now);
        h.record(2, r, 2, false, &upd(2), now);
        h.record(1, r, 3, false, &upd(3), now);
        h.record(2, r, 3, false, &upd(3), now); // record 1's seq 2 goes
        assert_eq!(h.bytes(), 3 * one);
        assert_eq!(h.decide(1, 1, 3, now), Decision::Reset);
        assert_eq!(h.decide(1, 2, 3, now), Decision::Replay { from: 0 });
        assert_eq!(h.decide(2, 1, 3, now), Decision::Replay { from: 0 });
    }

    #[test]
    fn order_and_bytes_stay_bounded_over_many_messages() {
        let now = Instant::now();
        let mut h = History::new(cfg(&["/**=8/60000"], 1 << 30));
        let r = h.rule(1, "/A/X").unwrap();
        h.created(1, 1);
        for seq in 2..50_000 {
            h.record(1, r, seq, false, &upd(seq), now);
        }
        assert!(h.order.len() <= 2 * 8 + 1024, "order {}", h.order.len());
        let ring = h.slots[0].ring.as_deref().unwrap();
        assert!(ring.bytes.len() < 3 * 4096, "ring buffer {}", ring.bytes.len());
        assert_eq!(h.bytes(), (49_992..50_000).map(|s| upd(s).len()).sum::<usize>());
        assert_eq!(h.decide(1, 49_991, 49_999, now), Decision::Replay { from: 0 });
        assert_eq!(replayed(&h, 7), vec![String::from_utf8(upd(49_999)).unwrap()]);
    }

    #[test]
    fn a_recreated_record_starts_a_fresh_ring() {
        let now = Instant::now();
        let mut h = filled(&["/**=100/60000"], 1 << 20, 5, now);
        h.created(1, 1);
        assert_eq!(h.bytes(), 0);
        assert_eq!(h.decide(1, 1, 1, now), Decision::Replay { from: 0 });
        assert_eq!(h.decide(1, 3, 1, now), Decision::Reset);
    }
}
