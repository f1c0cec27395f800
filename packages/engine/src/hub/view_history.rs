//! The view messages a window sent last, for `view.resume` to replay what a dropped socket lost.
//!
//! A dropped connection loses what was in flight: under live traffic a reconnecting client's
//! last seq is usually behind the last seq the server sent. So while views are held for resume
//! (`views.resumeGraceMs` > 0), every `view.size` / `view.rows` a window sends is also kept here,
//! per window, in a compact form (a `view.size`'s count; a `view.rows`'s reqId and the bytes after
//! its header), bounded by a count, bytes and an age (`ViewHistoryConfig`). A resume whose seq
//! lies inside a window's history gets the messages after it re-encoded with the view's new
//! viewId and their original seqs and reqIds (`ViewHistories::replay`), then the diff since the
//! drop. A window's history is contiguous: it holds the messages numbered `base` + 1 to the last
//! sent, so a client holding any seq from `base` to the last can continue.
//!
//! All windows' histories together are bounded too (`ViewHistoryConfig::total_bytes`): a message
//! that would pass the total first pushes out its own window's oldest messages; when even its
//! window's whole history cannot make room it is not kept, and that history restarts after it
//! (a resume from before it gets a reset, never a replay with a hole).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::wire::view::{view_size, ViewRows};

/// Most messages a window keeps for replay. @default 64
pub const DEFAULT_VIEW_HISTORY_MESSAGES: usize = 64;
/// Most bytes a window's kept messages may take. @default 262,144 (256 KiB)
pub const DEFAULT_VIEW_HISTORY_BYTES: usize = 256 * 1024;
/// How long a sent message is kept for replay while its view is live, ms. @default 60,000
pub const DEFAULT_VIEW_HISTORY_MS: u64 = 60_000;
/// Most bytes all windows' histories may take together. @default 268,435,456 (256 MiB)
pub const DEFAULT_VIEW_HISTORY_TOTAL_BYTES: usize = 256 << 20;

/// Bounds of each window's history of sent messages, and of all of them together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewHistoryConfig {
    /// Most messages kept per window; 0: none (a resume must name the last seq sent).
    pub messages: usize,
    /// Most bytes kept per window (see `ViewHistories::bytes`); 0: none.
    pub bytes: usize,
    /// How long a message is kept after it was sent, counted while its view is live (a held
    /// view's history stays as it was at the drop, until the view resumes or closes).
    pub max_age: Duration,
    /// Most bytes kept by all windows together (counted like `bytes`); 0: no bound but the
    /// per-window ones.
    pub total_bytes: usize,
}

impl Default for ViewHistoryConfig {
    fn default() -> Self {
        ViewHistoryConfig {
            messages: DEFAULT_VIEW_HISTORY_MESSAGES,
            bytes: DEFAULT_VIEW_HISTORY_BYTES,
            max_age: Duration::from_millis(DEFAULT_VIEW_HISTORY_MS),
            total_bytes: DEFAULT_VIEW_HISTORY_TOTAL_BYTES,
        }
    }
}

/// What a kept message was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `view.size` with this count.
    Size(u64),
    /// `view.rows` tagged with this reqId; its body is the next `len` bytes of `tails`.
    Rows(u32),
}

/// One kept message.
#[derive(Debug, Clone, Copy)]
struct Entry {
    seq: u64,
    kind: Kind,
    /// Bytes of its body in `WindowHistory::tails` (0 for a `view.size`).
    len: u32,
    at: Instant,
}

/// Fixed cost of one kept message, counted in the bytes bound and the total.
const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

/// One window's kept messages, numbered `base` + 1 to `base` + `entries.len()`.
#[derive(Debug, Default)]
struct WindowHistory {
    base: u64,
    entries: VecDeque<Entry>,
    /// The bodies of the kept `view.rows`, in order: what follows `"seq":N` in each.
    tails: VecDeque<u8>,
    bytes: usize,
    /// When the oldest kept message was sent (`None` when none is kept): the age check on every
    /// send reads it here, beside the counts, instead of from the entries ring, which sits in
    /// memory no recent send touched.
    oldest_at: Option<Instant>,
}

impl WindowHistory {
    fn last(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    /// Drops the oldest message; returns the bytes freed.
    fn pop(&mut self) -> usize {
        let Some(e) = self.entries.pop_front() else { return 0 };
        self.tails.drain(..e.len as usize);
        self.base = e.seq;
        self.oldest_at = self.entries.front().map(|e| e.at);
        let freed = ENTRY_BYTES + e.len as usize;
        self.bytes -= freed;
        freed
    }

    /// Empties the history; the next message kept is `seq` + 1. Returns the bytes freed.
    fn restart(&mut self, seq: u64) -> usize {
        let freed = self.bytes;
        self.entries.clear();
        self.tails.clear();
        self.bytes = 0;
        self.base = seq;
        self.oldest_at = None;
        freed
    }
}

/// Every window's history of sent messages (only while `enabled`).
#[derive(Debug)]
pub(super) struct ViewHistories {
    cfg: ViewHistoryConfig,
    enabled: bool,
    /// Indexed by window id (the view set reuses freed ids, so this stays as long as the most
    /// windows open at once): the hot send path finds a window's history by one index, not a
    /// hash probe. A window without history holds an empty one (`base` 0, no messages).
    by_window: Vec<WindowHistory>,
    bytes: usize,
    /// Messages dropped early or not kept to stay under `cfg.total_bytes`, since start.
    evicted: u64,
}

impl Default for ViewHistories {
    /// The default bounds, kept: views are held for resume by default.
    fn default() -> Self {
        ViewHistories {
            cfg: ViewHistoryConfig::default(),
            enabled: true,
            by_window: Vec::new(),
            bytes: 0,
            evicted: 0,
        }
    }
}

impl ViewHistories {
    /// New bounds; `enabled`: views are held for resume (otherwise nothing is kept, and what was
    /// is freed). The per-window bounds apply to each window as it next sends; a lower total
    /// applies at once (whole windows' histories go, counted as evicted, until under it).
    pub(super) fn configure(&mut self, cfg: ViewHistoryConfig, enabled: bool) {
        self.cfg = cfg;
        self.enabled = enabled && cfg.messages > 0 && cfg.bytes > 0;
        if !self.enabled {
            self.by_window.clear();
            self.bytes = 0;
        }
        if cfg.total_bytes > 0 {
            for h in &mut self.by_window {
                if self.bytes <= cfg.total_bytes {
                    break;
                }
                self.evicted += h.entries.len() as u64;
                self.bytes -= h.restart(h.last());
            }
        }
    }

    /// Bytes held by every window's history: the kept bodies plus a fixed cost per message.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Messages dropped from a history before their time, or not kept, because all histories
    /// together reached `total_bytes`, since start.
    pub(super) fn evicted(&self) -> u64 {
        self.evicted
    }

    /// `window` sent its `view.created`, numbered `seq`: its history starts after it.
    pub(super) fn start(&mut self, window: u32, seq: u64) {
        if !self.enabled {
            return;
        }
        let h = Self::slot(&mut self.by_window, window);
        self.bytes -= h.restart(seq);
    }

    /// The history of `window`, grown to hold it.
    fn slot(by_window: &mut Vec<WindowHistory>, window: u32) -> &mut WindowHistory {
        let i = window as usize;
        if by_window.len() <= i {
            by_window.resize_with(i + 1, WindowHistory::default);
        }
        &mut by_window[i]
    }

    fn get(&self, window: u32) -> Option<&WindowHistory> {
        self.by_window.get(window as usize)
    }

    /// `window` sent `view.size` `seq` with `count`, at `now`.
    pub(super) fn sent_size(&mut self, window: u32, seq: u64, count: u64, now: Instant) {
        self.keep(window, seq, Kind::Size(count), &[], now);
    }

    /// `window` sent `view.rows` `seq` tagged `req_id`, whose body (what follows its `"seq":N`)
    /// is `tail`, at `now`.
    pub(super) fn sent_rows(&mut self, window: u32, seq: u64, req_id: u32, tail: &[u8], now: Instant) {
        self.keep(window, seq, Kind::Rows(req_id), tail, now);
    }

    fn keep(&mut self, window: u32, seq: u64, kind: Kind, tail: &[u8], now: Instant) {
        if !self.enabled {
            return;
        }
        let cfg = self.cfg;
        let h = Self::slot(&mut self.by_window, window);
        let cost = ENTRY_BYTES + tail.len();
        if cost > cfg.bytes || u32::try_from(tail.len()).is_err() {
            // too big to keep: the history restarts after it
            self.bytes -= h.restart(seq);
            return;
        }
        if h.last() + 1 != seq {
            // a gap (messages sent while nothing was kept): the history restarts with this one
            self.bytes -= h.restart(seq.saturating_sub(1));
        }
        Self::age_out(h, &mut self.bytes, cfg.max_age, now);
        while !h.entries.is_empty() && (h.entries.len() >= cfg.messages || h.bytes + cost > cfg.bytes) {
            self.bytes -= h.pop();
        }
        if cfg.total_bytes > 0 && self.bytes + cost > cfg.total_bytes {
            // past the total: this window's own oldest go first
            while !h.entries.is_empty() && self.bytes + cost > cfg.total_bytes {
                self.bytes -= h.pop();
                self.evicted += 1;
            }
            if self.bytes + cost > cfg.total_bytes {
                // other windows hold the rest: not kept, the history restarts after it
                self.bytes -= h.restart(seq);
                self.evicted += 1;
                return;
            }
        }
        if h.entries.is_empty() {
            h.oldest_at = Some(now);
        }
        h.entries.push_back(Entry {
            seq,
            kind,
            len: tail.len() as u32,
            at: now,
        });
        h.tails.extend(tail);
        h.bytes += cost;
        self.bytes += cost;
    }

    /// Drops the messages of `h` sent more than `max_age` before `now`.
    fn age_out(h: &mut WindowHistory, total: &mut usize, max_age: Duration, now: Instant) {
        while h
            .oldest_at
            .is_some_and(|at| now.saturating_duration_since(at) > max_age)
        {
            *total -= h.pop();
        }
    }

    /// Drops the messages of `window` older than the age bound at `now` (its session dropped:
    /// from here its history waits unchanged for the resume).
    pub(super) fn age(&mut self, window: u32, now: Instant) {
        if let Some(h) = self.by_window.get_mut(window as usize) {
            Self::age_out(h, &mut self.bytes, self.cfg.max_age, now);
        }
    }

    /// `window` closed: its history is freed.
    pub(super) fn remove(&mut self, window: u32) {
        if let Some(h) = self.by_window.get_mut(window as usize) {
            self.bytes -= std::mem::take(h).bytes;
        }
    }

    /// The lowest seq a client of `window` may hold and be replayed from, when `last` is the
    /// seq of the last message it sent: `last` itself when nothing is kept.
    pub(super) fn oldest(&self, window: u32, last: u64) -> u64 {
        match self.get(window) {
            Some(h) if h.last() == last => h.base,
            _ => last,
        }
    }

    /// Appends to `out`, each after a `,`, the kept messages of `window` numbered after `seq`,
    /// as sent but addressed to `view_id`. Returns how many; 0 when `seq` is not inside the
    /// history (`oldest` says when it is).
    pub(super) fn replay(&self, window: u32, seq: u64, view_id: u32, out: &mut Vec<u8>) -> usize {
        let Some(h) = self.get(window) else { return 0 };
        if seq < h.base || seq >= h.last() {
            return 0;
        }
        let skip = (seq - h.base) as usize;
        let mut at: usize = h.entries.iter().take(skip).map(|e| e.len as usize).sum();
        for e in h.entries.iter().skip(skip) {
            out.push(b',');
            match e.kind {
                Kind::Size(count) => view_size(out, view_id, Some(e.seq), count),
                Kind::Rows(req_id) => {
                    ViewRows::begin(out, req_id, view_id, Some(e.seq)); // the header alone
                    out.extend(h.tails.range(at..at + e.len as usize));
                }
            }
            at += e.len as usize;
        }
        h.entries.len() - skip
    }
}

#[cfg(test)]
#[path = "view_history_tests.rs"]
mod tests;
