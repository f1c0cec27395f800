//! Which node owns which subject, as the ingest threads see it: a source frame publishing a
//! subject owned by another live node is refused whole (`NOT_ENTITLED`) before it is queued. The
//! engine thread keeps the authoritative owners (`Replica`) and mirrors the remote ones here.

use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;

use crate::error::{EngineError, Result};
use crate::hub::ContainerOp;
use crate::wire::Publish;

/// Subjects owned by other nodes, and those nodes' liveness.
#[derive(Debug, Default)]
pub struct OwnerTable {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Subject -> index into `nodes`.
    subjects: FxHashMap<Box<str>, u16>,
    /// Node name and whether it is alive (heard from within `owner_timeout`).
    nodes: Vec<(Arc<str>, bool)>,
}

fn refusal(subject: &str, node: &str, field: String, index: Option<u32>) -> EngineError {
    EngineError::NotEntitled {
        message: format!(
            "'{subject}' is published by cluster node '{node}': a subject has one publishing node; \
             publish it there (or here once that node is gone)"
        ),
        field: Some(field),
        index,
    }
}

impl OwnerTable {
    /// `NOT_ENTITLED` (naming the message index, the subject and its node) when a publish of
    /// `batch` targets a subject another live node owns.
    pub fn check_publishes(&self, batch: &[Publish]) -> Result<()> {
        let Ok(g) = self.inner.read() else { return Ok(()) };
        if g.subjects.is_empty() {
            return Ok(());
        }
        for (i, p) in batch.iter().enumerate() {
            if let Some(node) = g.live_owner(&p.subject) {
                let index = (batch.len() > 1).then_some(i as u32);
                return Err(refusal(&p.subject, node, "subject".into(), index));
            }
        }
        Ok(())
    }

    /// `NOT_ENTITLED` when container `subject` is fed by another live node.
    pub fn check_container(&self, subject: &str, _ops: &[ContainerOp]) -> Result<()> {
        let Ok(g) = self.inner.read() else { return Ok(()) };
        match g.live_owner(subject) {
            Some(node) => Err(refusal(subject, node, "subject".into(), None)),
            None => Ok(()),
        }
    }

    /// Whether `subject` is owned by another live node.
    pub fn owned_elsewhere(&self, subject: &str) -> bool {
        self.inner.read().is_ok_and(|g| g.live_owner(subject).is_some())
    }

    pub(super) fn set_remote(&self, subject: &str, node: u16) {
        if let Ok(mut g) = self.inner.write() {
            match g.subjects.get_mut(subject) {
                Some(n) => *n = node,
                None => {
                    g.subjects.insert(subject.into(), node);
                }
            }
        }
    }

    pub(super) fn remove(&self, subject: &str) {
        if let Ok(mut g) = self.inner.write() {
            g.subjects.remove(subject);
        }
    }

    pub(super) fn set_node(&self, node: u16, name: &Arc<str>, alive: bool) {
        if let Ok(mut g) = self.inner.write() {
            let i = node as usize;
            if g.nodes.len() <= i {
                g.nodes.resize(i + 1, (Arc::from(""), false));
            }
            g.nodes[i] = (Arc::clone(name), alive);
        }
    }
}

impl Inner {
    fn live_owner(&self, subject: &str) -> Option<&str> {
        let &n = self.subjects.get(subject)?;
        match self.nodes.get(n as usize) {
            Some((name, true)) => Some(name),
            _ => None,
        }
    }
}
