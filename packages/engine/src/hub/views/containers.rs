//! `container.publish` in the hub: a source's ops applied to the container (and its tier
//! mirrors and statements), and every publish of a container member reported to the views.
//! `container.publish` arrives decoded (the server's protocol decoder) as
//! `Command::ContainerPublish`.

use std::time::Instant;

use crate::hub::Hub;
use crate::wire::rules::check_subject;

/// One operation of a `container.publish` (packages/protocol `ContainerOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerOp {
    /// Append subjects not yet members (members stay where they are).
    Add(Vec<String>),
    /// Insert subjects, in order, before position `index` (past the end: append); members
    /// already present are moved there.
    InsertAt(usize, Vec<String>),
    /// Remove members; non-members are ignored.
    Remove(Vec<String>),
    /// Remove every member.
    Clear,
}

impl Hub {
    /// Applies a source's container ops, in order, then flushes the views.
    pub(in crate::hub) fn container_publish(&mut self, subject: &str, ops: &[ContainerOp], now: Instant) {
        if check_subject(subject).is_err() {
            return; // validated on ingest; the hub trusts no caller but has no one to tell
        }
        let c = self.store.subject_id(subject);
        if let Some(r) = self.records.as_deref_mut() {
            if !crate::order_desk::privacy::is_private(subject) {
                if !r.admit(c, subject) {
                    return;
                }
                r.capture_container(subject, ops);
            }
        }
        for op in ops {
            match op {
                ContainerOp::Clear => {
                    self.statement_members_cleared(c);
                    self.views.set.clear(c);
                    self.mirror_clear(c);
                }
                ContainerOp::Remove(subjects) => {
                    for s in subjects {
                        if let Some(id) = self.store.lookup(s) {
                            if self.views.set.remove(c, id).is_some() {
                                self.mirror_remove(c, id);
                                self.statement_member(c, id, false);
                            }
                        }
                    }
                }
                ContainerOp::Add(subjects) => {
                    for s in subjects.iter().filter(|s| check_subject(s).is_ok()) {
                        let id = self.store.subject_id(s);
                        let member = self.views.set.container(c).is_some_and(|k| k.contains(id));
                        if !member {
                            // Only the member limit can fail: the op is cut there.
                            match self.views.set.insert(c, None, id, &self.store) {
                                Ok(pos) => {
                                    self.mirror_insert(c, pos, id);
                                    self.statement_member(c, id, true);
                                }
                                Err(_) => break,
                            }
                        }
                    }
                }
                ContainerOp::InsertAt(index, subjects) => {
                    let mut at = *index;
                    for s in subjects.iter().filter(|s| check_subject(s).is_ok()) {
                        let id = self.store.subject_id(s);
                        if let Some(old) = self.views.set.remove(c, id) {
                            self.mirror_remove(c, id);
                            self.statement_member(c, id, false);
                            if old < at {
                                at -= 1;
                            }
                        }
                        let len = self.views.set.container(c).map_or(0, |k| k.len());
                        match self.views.set.insert(c, Some(at.min(len)), id, &self.store) {
                            Ok(pos) => {
                                self.mirror_insert(c, pos, id);
                                self.statement_member(c, id, true);
                                at = pos + 1;
                            }
                            Err(_) => break,
                        }
                    }
                }
            }
        }
        self.flush_views(now);
    }

    /// Reports the publish just applied (`self.applied`) to the views of containers holding it.
    pub(in crate::hub) fn views_record_updated(&mut self) {
        if self.views.set.view_count() == 0 {
            return; // a view built later reads the records as they are then
        }
        let id = self.applied.id;
        let Some(rec) = self.store.get(id) else { return };
        self.views.changed_ids.clear();
        if self.applied.created || self.applied.layout_changed {
            self.views.changed_ids.extend(rec.slots.iter().map(|s| s.name));
        } else {
            self.views.changed_ids.extend(
                self.applied
                    .changed
                    .iter()
                    .filter_map(|&i| rec.slots.get(i as usize))
                    .map(|s| s.name),
            );
        }
        self.views.changed_ids.sort_unstable();
        self.views.changed_ids.dedup();
        self.views.set.record_updated(id, &self.views.changed_ids, &self.store);
    }

    /// Interns the field names `filter` and `sort` read (when they parse: otherwise `open`
    /// reports the error), so the view compiles with ids the store shares.
    pub(super) fn intern_view_fields(&mut self, filter: &str, sort: &str) {
        let limits = crate::filter::FilterLimits::default();
        let mut names: Vec<String> = Vec::new();
        if let Ok(expr) = crate::filter::parse(filter, &limits) {
            crate::filter::Filter::compile(&expr, &mut |n| {
                names.push(n.to_owned());
                0
            });
        }
        if let Ok(keys) = crate::view::parse_sort(sort, limits.max_len) {
            names.extend(keys.into_iter().map(|k| k.field));
        }
        for n in &names {
            self.store.field_id(n);
        }
    }
}
