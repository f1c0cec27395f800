//! Subscriber windows of a [`ViewSet`]: opening, moving, tagging and closing the row slices
//! that sessions watch on a view (their diffs come out of the flush, `flush.rs`).

use super::super::window::Window;
use super::{ViewSet, WindowTag};
use crate::error::{EngineError, Result};

fn bad(message: String, field: &str) -> EngineError {
    EngineError::bad_request(message, Some(field), None)
}

impl ViewSet {
    fn check_window(&self, size: usize) -> Result<()> {
        if size == 0 || size > self.config.max_window_rows {
            return Err(bad(
                format!("window size {size} must be 1 to {}", self.config.max_window_rows),
                "window.size",
            ));
        }
        Ok(())
    }

    /// Opens a window of `size` rows from `offset` on `view`; its first flush is a snapshot.
    pub fn open_window(&mut self, view: u32, offset: usize, size: usize) -> Result<u32> {
        self.check_window(size)?;
        let slot = self
            .views
            .get_mut(view as usize)
            .and_then(Option::as_mut)
            .ok_or_else(|| EngineError::NotFound {
                message: format!("view {view} does not exist"),
            })?;
        let id = match self.free_windows.pop() {
            Some(id) => id,
            None => {
                self.windows.push(None);
                self.windows.len() as u32 - 1
            }
        };
        slot.windows.push(id);
        self.windows[id as usize] = Some((view, Window::new(offset, size)));
        if let Some(t) = self.tags.get_mut(id as usize) {
            *t = [0; 4];
        }
        if let Some(q) = self.seqs.get_mut(id as usize) {
            *q = 0;
        }
        self.moved_windows.push(id);
        Ok(id)
    }

    fn window_mut(&mut self, window: u32) -> Result<&mut (u32, Window)> {
        self.windows
            .get_mut(window as usize)
            .and_then(Option::as_mut)
            .ok_or_else(|| EngineError::NotFound {
                message: format!("window {window} does not exist"),
            })
    }

    /// Attaches `tag` to open `window` (replacing any earlier one); `NOT_FOUND` if it is not open.
    pub fn set_window_tag(&mut self, window: u32, tag: WindowTag) -> Result<()> {
        self.window_mut(window)?;
        if self.tags.len() <= window as usize {
            self.tags.resize(window as usize + 1, [0; 4]);
        }
        self.tags[window as usize] = tag;
        Ok(())
    }

    /// The tag of open `window` (`[0; 4]` if never set), `None` if it is not open. O(1).
    #[inline]
    pub fn window_tag(&self, window: u32) -> Option<WindowTag> {
        self.windows.get(window as usize)?.as_ref()?;
        Some(self.tags.get(window as usize).copied().unwrap_or([0; 4]))
    }

    /// Moves or resizes a window (no filter work: the next flush diffs the new slice).
    pub fn move_window(&mut self, window: u32, offset: usize, size: usize) -> Result<()> {
        self.check_window(size)?;
        self.window_mut(window)?.1.set(offset, size);
        self.moved_windows.push(window);
        Ok(())
    }

    /// The seq of the last message sent for open `window` (0: none yet), `None` if it is not open.
    /// The owner numbers the window's messages (`view.created` 1, then +1 per `view.size` and
    /// `view.rows`) and records each here.
    #[inline]
    pub fn window_seq(&self, window: u32) -> Option<u64> {
        self.windows.get(window as usize)?.as_ref()?;
        Some(self.seqs.get(window as usize).copied().unwrap_or(0))
    }

    /// Records `seq` as the last message sent for open `window` (see [`ViewSet::window_seq`]).
    pub fn set_window_seq(&mut self, window: u32, seq: u64) -> Result<()> {
        self.window_mut(window)?;
        if self.seqs.len() <= window as usize {
            self.seqs.resize(window as usize + 1, 0);
        }
        self.seqs[window as usize] = seq;
        Ok(())
    }

    /// Detaches open `window` (its subscriber's connection dropped): flushes send nothing for it
    /// and gather the field updates of the rows it last sent, until [`ViewSet::attach_window`].
    pub fn detach_window(&mut self, window: u32) -> Result<()> {
        self.window_mut(window)?.1.detach();
        Ok(())
    }

    /// Re-attaches a detached window at (`offset`, `size`): the next flush diffs its slice
    /// against the rows last sent, with the field updates gathered meanwhile.
    pub fn attach_window(&mut self, window: u32, offset: usize, size: usize) -> Result<()> {
        self.check_window(size)?;
        self.window_mut(window)?.1.attach(offset, size);
        self.moved_windows.push(window);
        Ok(())
    }

    /// Closes a window.
    pub fn close_window(&mut self, window: u32) -> Result<()> {
        let view = self.window_mut(window)?.0;
        if let Some((_, win)) = self.windows[window as usize].take() {
            for &r in win.sent() {
                self.shown.remove(r, window);
            }
        }
        self.free_windows.push(window);
        if let Some(slot) = self.views[view as usize].as_mut() {
            slot.windows.retain(|&w| w != window);
        }
        Ok(())
    }

    /// The view a window belongs to.
    pub fn window_view(&self, window: u32) -> Option<u32> {
        self.windows.get(window as usize).and_then(Option::as_ref).map(|w| w.0)
    }
}
