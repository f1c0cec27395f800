//! Flushing a [`ViewSet`]: the per-window diffs gathered since the last flush, the pooled diff
//! vectors handed back after sending, and the per-flush encoded-row cache.

use rustc_hash::FxHashMap;

use super::super::fanout::ContainerState;
use super::super::row_bytes::RowBytes;
use super::super::shown::Mark;
use super::super::window::WindowDiff;
use super::ViewSet;

/// A light diff dropped because its window was re-sliced later in the same flush.
const DEAD: u32 = u32::MAX;

impl ViewSet {
    /// Appends every window's diff since the last flush to `out` (windows with nothing to send
    /// are skipped) and resets the conflation state. Windows of views whose rows changed, and
    /// moved windows, diff their slice; others only get the field updates of rows they show,
    /// found per updated row in the index of windows showing it, not by scanning windows or
    /// views. Only views that changed, windows that moved and rows updated are visited: a flush
    /// costs O(what changed), not O(views). Clears [`ViewSet::row_bytes`]. Diffs handed back
    /// through [`ViewSet::recycle`] are reused.
    pub fn flush(&mut self, out: &mut Vec<WindowDiff>) {
        self.marks.begin(self.windows.len());
        self.row_bytes.clear();
        // Windows not re-sliced this flush: count changes and field updates gathered here.
        let mut light = std::mem::take(&mut self.light);
        let empty: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let no_merged: rustc_hash::FxHashSet<u32> = Default::default();
        // Views whose rows changed, then windows opened or moved (of any view).
        let mut visits = std::mem::take(&mut self.visits);
        visits.clear();
        visits.extend(self.touched.drain(..).map(|v| (v, u32::MAX)));
        for w in self.moved_windows.drain(..) {
            if let Some((v, _)) = self.windows.get(w as usize).and_then(Option::as_ref) {
                visits.push((*v, w));
            }
        }
        for &(v, only) in &visits {
            let Some(slot) = self.views.get_mut(v as usize).and_then(Option::as_mut) else {
                continue;
            };
            let range = if only == u32::MAX {
                slot.queued = false;
                slot.view.take_touched()
            } else {
                None
            };
            let c = self.containers.get(&slot.container);
            let dirty = c.map_or(&empty, |c| &c.dirty);
            let merged = c.map_or(&no_merged, |c| &c.merged);
            for &w in &slot.windows {
                if only != u32::MAX && only != w {
                    continue;
                }
                let mark = self.marks.get(w);
                if mark == Mark::Full {
                    continue;
                }
                let Some((_, win)) = self.windows[w as usize].as_mut() else {
                    continue;
                };
                if win.is_detached() {
                    continue; // sends nothing; its first diff after a re-attach re-slices
                }
                let hit =
                    range.is_some_and(|(lo, hi)| lo < win.offset().saturating_add(win.size()) && hi >= win.offset());
                if hit || win.needs_slice() {
                    // A count-only diff gathered earlier in this flush gives way to the full
                    // diff, which must still carry the count it already took.
                    let earlier = match mark {
                        Mark::Light(i) => {
                            light[i].window = DEAD;
                            light[i].count.take()
                        }
                        _ => None,
                    };
                    self.marks.set(w, Mark::Full);
                    match win.diff(w, &slot.view, hit, dirty) {
                        Some(mut d) => {
                            d.count = d.count.or(earlier);
                            for &r in &d.left {
                                self.shown.remove(r, w);
                            }
                            for &(_, r) in &d.entered {
                                self.shown.add(r, w, slot.container);
                            }
                            if !merged.is_empty() {
                                d.conflated
                                    .extend(d.updated.iter().map(|u| u.0).filter(|r| merged.contains(r)));
                            }
                            d.conflated.sort_unstable();
                            d.conflated.dedup();
                            out.push(d);
                        }
                        None => {
                            if let Some(n) = earlier {
                                let mut d = self.pool.diff(w, win.offset());
                                d.count = Some(n);
                                out.push(d);
                            }
                        }
                    }
                } else if mark == Mark::None {
                    if let Some(d) = win.count_diff(w, &slot.view) {
                        self.marks.set(w, Mark::Light(light.len()));
                        light.push(d);
                    }
                }
            }
        }
        self.visits = visits;
        for container in std::mem::take(&mut self.dirty_containers) {
            let Some(c) = self.containers.get_mut(&container) else {
                continue;
            };
            let ContainerState {
                dirty,
                merged,
                bits,
                words,
                bit_updates,
                updated,
                updated_flag,
                ..
            } = c;
            // Per view holding an updated row, one more row update (ViewInfo::updates): a count
            // per membership bit, contiguous, instead of a visit of each view.
            for &s in updated.iter() {
                let Some(flag) = updated_flag.get_mut(s as usize) else {
                    continue;
                };
                if !std::mem::take(flag) {
                    continue; // the member left since (or a reused slot listed twice)
                }
                let base = s as usize * *words;
                for (pi, plane) in bits.iter().enumerate() {
                    let first = pi * *words;
                    for (wi, &word) in plane.get(base..base + *words).unwrap_or(&[]).iter().enumerate() {
                        let mut word = word;
                        while word != 0 {
                            bit_updates[(first + wi) * 64 + word.trailing_zeros() as usize] += 1;
                            word &= word - 1;
                        }
                    }
                }
            }
            updated.clear();
            for (&row, fields) in dirty.iter() {
                for &(w, wc) in self.shown.windows(row) {
                    if wc != container {
                        continue;
                    }
                    if let Some((_, win)) = self.windows[w as usize].as_mut().filter(|(_, win)| win.is_detached()) {
                        win.gather(row, fields, merged.contains(&row));
                        continue;
                    }
                    let i = match self.marks.get(w) {
                        Mark::Full => continue,
                        Mark::Light(i) => i,
                        Mark::None => {
                            let Some((_, win)) = self.windows[w as usize].as_ref() else {
                                continue;
                            };
                            self.marks.set(w, Mark::Light(light.len()));
                            light.push(self.pool.diff(w, win.offset()));
                            light.len() - 1
                        }
                    };
                    let d = &mut light[i];
                    d.updated.push((row, self.pool.fields(fields)));
                    if merged.contains(&row) {
                        d.conflated.push(row);
                    }
                }
            }
            for (_, f) in dirty.drain() {
                self.pool.put_fields(f);
            }
            merged.clear();
        }
        for mut d in light.drain(..) {
            if d.window == DEAD {
                self.pool.put(d);
                continue;
            }
            d.updated.sort_unstable_by_key(|u| u.0);
            d.conflated.sort_unstable();
            out.push(d);
        }
        self.light = light;
    }

    /// Takes back the diffs of a flush (after they were sent), leaving `diffs` empty: their
    /// vectors are reused by later flushes instead of allocated again.
    pub fn recycle(&mut self, diffs: &mut Vec<WindowDiff>) {
        for d in diffs.drain(..) {
            self.pool.put(d);
        }
    }

    /// The encoded-row cache of the current flush (cleared by [`ViewSet::flush`]): lets the
    /// caller encode an updated row once for every window diff that carries it.
    pub fn row_bytes(&mut self) -> &mut RowBytes {
        &mut self.row_bytes
    }
}
