//! Hooks for cluster record replication (`cluster::records`): the replica installed here sees
//! every local publish and container op (`publish`, `container_publish` call it), and applies the
//! other nodes' changes through the functions below. While it applies them it is taken out of
//! the hub, so nothing it applies is captured again (no loopback).

use std::time::Instant;

use super::{ContainerOp, Hub};
use crate::cluster::records::{Inbound, Replica};
use crate::wire::rules::check_subject;
use crate::wire::Publish;

impl Hub {
    /// Installs record replication: from now on this node's publishes and container ops (but
    /// not the order desk's `/TRADE/` and `/BLOTTER/` ones) are captured for the cluster.
    pub fn install_records(&mut self, replica: Replica) {
        self.records = Some(Box::new(replica));
    }

    /// Whether record replication is installed.
    pub fn has_records(&self) -> bool {
        self.records.is_some()
    }

    /// Applies a message from another node (no-op without replication).
    pub fn records_inbound(&mut self, msg: Inbound, now: Instant) {
        let Some(mut r) = self.records.take() else { return };
        r.handle(self, msg, now);
        self.records = Some(r);
    }

    /// The engine pass ended: this node's changes of the pass go out as one batch.
    pub fn records_end_pass(&mut self) {
        if let Some(r) = self.records.as_deref_mut() {
            r.end_pass();
        }
    }

    /// The id of `subject`, interning it.
    pub fn subject_id(&mut self, subject: &str) -> u32 {
        self.store.subject_id(subject)
    }

    /// The id of container `subject` (interned), `None` for a subject the rules refuse.
    pub fn container_id(&mut self, subject: &str) -> Option<u32> {
        check_subject(subject).ok()?;
        Some(self.store.subject_id(subject))
    }

    /// Applies a publish another node applied first, with its `seq` (`p.ts` set); subscribers get
    /// an image when `as_image` (the record jumped: a gap healed), else what a local publish
    /// gives. Views and tiers follow as for a local publish; call `finish_replicated` after a
    /// message's publishes. False when the store refused it (field limit).
    pub fn apply_replicated(&mut self, p: &Publish, seq: u64, as_image: bool, now: Instant) -> bool {
        let received_ms = p.ts.unwrap_or(0.0);
        if !self.apply_one(p, received_ms, Some(seq), as_image, now) {
            return false;
        }
        // statements run on every node over every record, whichever node's source published it
        if self.statements.active() {
            self.statements.note_wall(now, received_ms);
            self.feed_statements(self.applied.id, now);
        }
        true
    }

    /// Applies another node's container ops (views flushed).
    pub fn apply_replicated_container(&mut self, subject: &str, ops: &[ContainerOp], now: Instant) {
        self.container_publish(subject, ops, now);
    }

    /// After a message of replicated publishes: conflation and view flushes, as after a local batch.
    pub fn finish_replicated(&mut self, now: Instant) {
        self.publish_tail(now);
    }
}
