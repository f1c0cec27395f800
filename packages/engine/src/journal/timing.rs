//! Per-commit timing of the writer thread ([`CommitTiming`], delivered to a [`CommitHook`]) and the
//! zero-fill activity counters the writer samples to tell whether a sync overlapped background
//! zero writes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where the time of one commit group went, by the journal's clock (nanoseconds). Given to the
/// [`CommitHook`] on the writer thread after the group's appends were completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitTiming {
    /// Seq of the group's first record.
    pub first_seq: u64,
    /// Records in the group (at least 1).
    pub records: u32,
    /// The group's oldest append: queued -> the writer took the group (waiting behind the previous
    /// commit, or for the writer thread to run).
    pub queued_nanos: u64,
    /// Time in `pwrite` (all writes of the group, rotation included).
    pub write_nanos: u64,
    /// Time in `fdatasync` (all syncs of the group, rotation included).
    pub sync_nanos: u64,
    /// Time switching segments (creating a segment, or taking a spare), 0 when the group did not.
    pub rotate_nanos: u64,
    /// Time running the appends' completion callbacks (the acknowledgements).
    pub complete_nanos: u64,
    /// Segment switches in this group (0 normally; 1 when it crossed a segment boundary).
    pub rotations: u32,
    /// The group's write extended its file (a size change that fdatasync must commit).
    pub grew: bool,
    /// Background zero writes (spare segment preparation) were running during the group's syncs.
    pub zero_fill_overlap: bool,
}

/// Called on the writer thread after each commit group with its [`CommitTiming`]; for benches and
/// diagnostics, must be quick (it delays the next group).
pub type CommitHook = Arc<dyn Fn(&CommitTiming) + Send + Sync>;

/// Counts of zero-filling runs started / finished by the helper thread. A sync overlapped one when
/// a run was in progress when it started or one started before it ended.
#[derive(Debug, Default)]
pub(crate) struct ZeroActivity {
    started: AtomicU64,
    finished: AtomicU64,
}

impl ZeroActivity {
    /// The helper starts writing zeros.
    pub fn start(&self) {
        self.started.fetch_add(1, Ordering::AcqRel);
    }

    /// The helper finished (or abandoned) the run it started.
    pub fn finish(&self) {
        self.finished.fetch_add(1, Ordering::AcqRel);
    }

    /// (started, finished) now.
    pub fn sample(&self) -> (u64, u64) {
        let finished = self.finished.load(Ordering::Acquire);
        (self.started.load(Ordering::Acquire), finished)
    }

    /// True when zeros were being written at some point between `before` (a [`ZeroActivity::sample`])
    /// and now.
    pub fn overlapped_since(&self, before: (u64, u64)) -> bool {
        before.0 != before.1 || self.started.load(Ordering::Acquire) != before.0
    }
}
