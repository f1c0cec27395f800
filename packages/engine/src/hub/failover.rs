//! Source failover: sources that register the same subject patterns (`source.register`) form a
//! group; the first to register is active, the others stand by. When the active source's session
//! closes, the standby with the lowest `priority` (then the earliest registered) becomes active and
//! is told `source.activate` with the patterns: it publishes images of them, and subscribers see
//! the records go stale (at once: a standby is taking over) and ok again, without resubscribing.
//! A standby that registers with a better priority than the active source does not preempt it.

use std::collections::HashMap;
use std::time::Instant;

use super::subscribe::ReqError;
use super::Hub;
use crate::analytics::Pattern;
use crate::error::ErrorCode;
use crate::wire::encode;

/// Most patterns one source registers.
pub const MAX_SOURCE_PATTERNS: usize = 64;

/// One registered source.
#[derive(Debug, Clone, Copy)]
struct Member {
    sid: u32,
    priority: u32,
    /// Registration order (ties of priority go to the earliest).
    order: u64,
}

/// Sources serving one set of patterns.
#[derive(Debug)]
struct Group {
    /// The patterns, sorted and deduplicated: the group's identity.
    patterns: Vec<String>,
    members: Vec<Member>,
    /// Session id of the active source (0: none).
    active: u32,
}

/// The hub's failover groups.
#[derive(Debug, Default)]
pub(super) struct Failover {
    groups: Vec<Group>,
    /// Source session id -> index in `groups`.
    by_sid: HashMap<u32, usize>,
    next_order: u64,
}

impl Failover {
    /// Drops group `g` once it has no member (the last group moves into its place).
    fn prune(&mut self, g: usize) {
        if !self.groups.get(g).is_some_and(|group| group.members.is_empty()) {
            return;
        }
        self.groups.swap_remove(g);
        if let Some(moved) = self.groups.get(g) {
            for m in &moved.members {
                self.by_sid.insert(m.sid, g);
            }
        }
    }

    fn remove(&mut self, sid: u32) -> Option<usize> {
        let g = self.by_sid.remove(&sid)?;
        let group = self.groups.get_mut(g)?;
        group.members.retain(|m| m.sid != sid);
        Some(g)
    }
}

fn check_patterns(patterns: &[String]) -> Result<Vec<String>, ReqError> {
    if patterns.is_empty() || patterns.len() > MAX_SOURCE_PATTERNS {
        return Err(ReqError {
            code: ErrorCode::BadRequest,
            message: format!(
                "'patterns' must hold 1..{MAX_SOURCE_PATTERNS} patterns, got {}",
                patterns.len()
            ),
            field: Some("patterns".into()),
        });
    }
    let mut out = Vec::with_capacity(patterns.len());
    for (i, p) in patterns.iter().enumerate() {
        let parsed = Pattern::parse(p).map_err(|rule| ReqError {
            code: ErrorCode::BadRequest,
            message: format!("'patterns.{i}' ({p:?}): {rule}"),
            field: Some(format!("patterns.{i}")),
        })?;
        out.push(parsed.as_str().to_owned());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

impl Hub {
    /// `source.register` of source session `sid`: joins (or re-joins) the group serving
    /// `patterns`; `source.registered` says whether it is active.
    pub(super) fn source_register(&mut self, sid: u32, req_id: u32, patterns: &[String], priority: u32, now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let patterns = match check_patterns(patterns) {
            Ok(p) => p,
            Err(e) => return self.send_error(slot, req_id, e, now),
        };
        // Re-registering moves the source: out of its old group first (which may fail over).
        self.failover_leave(sid, now);
        let f = &mut self.failover;
        let g = match f.groups.iter().position(|g| g.patterns == patterns) {
            Some(g) => g,
            None => {
                f.groups.push(Group {
                    patterns,
                    members: Vec::new(),
                    active: 0,
                });
                f.groups.len() - 1
            }
        };
        let order = f.next_order;
        f.next_order += 1;
        let group = &mut f.groups[g];
        group.members.push(Member { sid, priority, order });
        let active = group.active == 0;
        if active {
            group.active = sid;
        }
        f.by_sid.insert(sid, g);
        self.scratch.clear();
        encode::source_registered(&mut self.scratch, req_id, active);
        self.send_reply(slot, now);
    }

    /// Session `sid` is gone (or re-registers): when it was a group's active source, the best
    /// standby becomes active and gets `source.activate`. Returns true when a standby took over.
    pub(super) fn failover_leave(&mut self, sid: u32, now: Instant) -> bool {
        let f = &mut self.failover;
        let Some(g) = f.remove(sid) else { return false };
        let next = match f.groups.get_mut(g) {
            Some(group) if group.active == sid => {
                let next = group
                    .members
                    .iter()
                    .min_by_key(|m| (m.priority, m.order))
                    .map(|m| m.sid);
                group.active = next.unwrap_or(0);
                next.map(|n| (n, group.patterns.clone()))
            }
            _ => None,
        };
        f.prune(g);
        let Some((next, patterns)) = next else { return false };
        self.scratch.clear();
        encode::source_activate(&mut self.scratch, &patterns);
        self.stats.failovers += 1;
        if let Some(slot) = self.sessions.slot(next) {
            self.send_reply(slot, now);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_groups_are_dropped_and_moved_groups_keep_their_members() {
        let mut f = Failover::default();
        let mut group = |patterns: &str, sids: &[u32]| {
            f.groups.push(Group {
                patterns: vec![patterns.to_owned()],
                members: sids
                    .iter()
                    .map(|&sid| Member {
                        sid,
                        priority: 1,
                        order: 0,
                    })
                    .collect(),
                active: sids[0],
            });
            let g = f.groups.len() - 1;
            for &sid in sids {
                f.by_sid.insert(sid, g);
            }
        };
        group("/A/**", &[1]);
        group("/B/**", &[2, 3]);
        let g = f.remove(1).expect("member");
        f.prune(g);
        assert_eq!(f.groups.len(), 1);
        assert_eq!(f.groups[0].patterns, ["/B/**"]);
        assert_eq!(f.by_sid.get(&2), Some(&0), "the moved group's members follow it");
        assert_eq!(f.by_sid.get(&3), Some(&0));
        let g = f.remove(2).expect("member");
        f.prune(g);
        assert_eq!(f.groups.len(), 1, "a group with a member stays");
        let g = f.remove(3).expect("member");
        f.prune(g);
        assert!(f.groups.is_empty() && f.by_sid.is_empty());
    }
}
