//! Ingest and apply, the tick's first stage: a batch of validated publishes is merged into the
//! store (captured for the other nodes in cluster mode), and each change is delivered: to views,
//! to subscribers (encoded once into `scratch`, then `fan_out.rs`), to tier mirrors, the
//! record's history, statuses and statements. After the batch, sessions past the conflation
//! threshold start conflating and the views flush (`views/flush.rs`); outboxes are flushed by the
//! timer pass (`flush.rs`).

use std::time::Instant;

use super::Hub;
use crate::wire::Publish;

impl Hub {
    pub(super) fn publish(&mut self, batch: &[Publish], received_ms: f64, source: u32, now: Instant) {
        let statements = self.statements.active();
        if statements {
            self.statements.note_wall(now, received_ms);
        }
        for p in batch {
            // Cluster mode: this node's own publishes are captured for the other nodes, except
            // the order desk's (every node derives those from the replicated order stream).
            let captured = match self.records.as_deref_mut() {
                Some(r) if !crate::order_desk::privacy::is_private(&p.subject) => {
                    let id = self.store.subject_id(&p.subject);
                    if !r.admit(id, &p.subject) {
                        continue;
                    }
                    true
                }
                _ => false,
            };
            if !self.apply_one(p, received_ms, None, false, now) {
                continue;
            }
            let id = self.applied.id;
            if captured {
                if let (Some(r), Some(rec)) = (self.records.as_deref_mut(), self.store.get(id)) {
                    r.capture(p, rec.seq, rec.ts);
                }
            }
            self.status_published(id, source, now);
            if statements {
                // last: statement results reuse `applied`
                self.feed_statements(id, now);
            }
        }
        self.publish_tail(now);
    }

    /// Merges one publish into the store (with `seq` when another node applied it first) and
    /// delivers it: to subscribers (an image when it created the record or `as_image`), views
    /// and tiers. False when the store refused it.
    pub(super) fn apply_one(
        &mut self,
        p: &Publish,
        received_ms: f64,
        seq: Option<u64>,
        as_image: bool,
        now: Instant,
    ) -> bool {
        let applied = match seq {
            None => self.store.apply(p, received_ms, &mut self.applied),
            Some(seq) => self.store.apply_with_seq(p, seq, received_ms, &mut self.applied),
        };
        if applied.is_err() {
            // Only the field limit can fail here; the frame was validated on ingest.
            self.stats.publishes_rejected += 1;
            return false;
        }
        self.stats.publishes_applied += 1;
        self.after_apply(as_image, now);
        true
    }

    /// After a batch of publishes: slow sessions start conflating, views flush.
    pub(super) fn publish_tail(&mut self, now: Instant) {
        while let Some(slot) = self.subscriptions.to_conflate.pop() {
            self.start_conflation(slot);
        }
        if !self.views.window_owner.is_empty() {
            self.flush_views(now);
        }
    }

    /// Delivers the record update just applied (`self.applied`) to views, subscribers (an image
    /// when it created the record or `as_image`) and tiers, and keeps it in the record's history.
    pub(super) fn after_apply(&mut self, as_image: bool, now: Instant) {
        if self.applied.created && !self.tiers.is_empty() {
            self.tier_record_created(self.applied.id);
        }
        self.views_record_updated();
        let id = self.applied.id;
        self.subscriptions.ensure(id);
        let created = self.applied.created;
        let image = created || as_image;
        let encoded = self.subscriptions.has_subscribers(id);
        if encoded {
            self.encode_publish(id, image);
            self.fan_out(id, image, self.applied.mask, now);
        }
        if self.history.enabled() {
            self.record_history(id, image, encoded, now);
        }
        if created {
            self.retarget_tier_subscribers(id, now);
        }
    }

    /// Encodes `,` + the message for the publish just applied into `scratch`: an image when it
    /// created the record (pending subscribers), else an update of the changed fields.
    pub(super) fn encode_publish(&mut self, id: u32, created: bool) {
        use crate::wire::encode;
        self.scratch.clear();
        self.scratch.push(b',');
        let Some(rec) = self.store.get(id) else { return };
        if created {
            let fields = self.store.image_fields(rec);
            encode::image(&mut self.scratch, id, self.store.subject(id), rec.seq, rec.ts, fields);
        } else {
            let fields = self
                .store
                .fields_at(rec, self.applied.changed.iter().map(|&c| c as usize));
            encode::update(&mut self.scratch, id, rec.seq, rec.ts, fields, false);
        }
    }
}
