//! Encoders of the view messages (`view.created`, `view.rows`, `view.size`, `view.closed`),
//! byte-identical to `encodeViewFrame` in packages/protocol/src/view-codec.ts (pinned by the
//! golden frames in packages/protocol/vectors/views.json, see tests/golden_views.rs).
//!
//! Like `encode`, every writer appends one message object (no `[`/`]`) to `out`. The two
//! messages with row lists are written incrementally, so a window's rows are encoded straight
//! from the store without building an intermediate list.

use super::encode::{write_image_body, write_u64, write_update_body, FieldRef};

/// Appends a row image `{"index","id","subject","seq","ts","fields"[,"types"]}`.
#[allow(clippy::too_many_arguments)]
fn row_image<'a, I>(out: &mut Vec<u8>, index: u64, id: u32, subject: &str, seq: u64, ts: f64, fields: I)
where
    I: Iterator<Item = FieldRef<'a>> + Clone,
{
    out.extend_from_slice(b"{\"index\":");
    write_u64(out, index);
    out.push(b',');
    write_image_body(out, id, subject, seq, ts, fields);
}

/// Writer of one `view.created`: `begin`, then `row` for each window row in view order, then
/// `finish` (an empty window is `"rows":[]`).
#[derive(Debug)]
pub struct ViewCreated<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> ViewCreated<'o> {
    /// Writes `{"type":"view.created","reqId","viewId"[,"seq"],"count","rows":[`.
    pub fn begin(out: &'o mut Vec<u8>, req_id: u32, view_id: u32, seq: Option<u64>, count: u64) -> Self {
        out.extend_from_slice(b"{\"type\":\"view.created\",\"reqId\":");
        write_u64(out, req_id.into());
        out.extend_from_slice(b",\"viewId\":");
        write_u64(out, view_id.into());
        write_seq(out, seq);
        out.extend_from_slice(b",\"count\":");
        write_u64(out, count);
        out.extend_from_slice(b",\"rows\":[");
        ViewCreated { out, first: true }
    }

    /// One row: `index` is its rank in the whole view; fields in record order.
    pub fn row<'a, I>(&mut self, index: u64, id: u32, subject: &str, seq: u64, ts: f64, fields: I)
    where
        I: Iterator<Item = FieldRef<'a>> + Clone,
    {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        row_image(self.out, index, id, subject, seq, ts, fields);
    }

    /// Closes the row list and the message.
    pub fn finish(self) {
        self.finish_flagged(false);
    }

    /// Closes the row list and the message, with `"reset":true` when `reset` (the answer to a
    /// `view.resume` that could not continue the view: the client's window restarts from it).
    pub fn finish_flagged(self, reset: bool) {
        self.out.push(b']');
        if reset {
            self.out.extend_from_slice(b",\"reset\":true");
        }
        self.out.push(b'}');
    }
}

/// The lists of a `view.rows`, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    None,
    Left,
    Moved,
    Entered,
    Updated,
}

/// Writer of one `view.rows`: `begin`, then the items of `left`, `moved`, `entered`, `updated`
/// in that order (a list with no item is left out), then `finish`.
///
/// # Panics
/// (debug builds) when an item comes after an item of a later list: that would repeat a key.
#[derive(Debug)]
pub struct ViewRows<'o> {
    out: &'o mut Vec<u8>,
    section: Section,
}

impl<'o> ViewRows<'o> {
    /// Writes `{"type":"view.rows","reqId","viewId"[,"seq"]`; `req_id` is the latest
    /// `view.change`'s (or the `view.create`'s, or the `view.resume`'s).
    pub fn begin(out: &'o mut Vec<u8>, req_id: u32, view_id: u32, seq: Option<u64>) -> Self {
        out.extend_from_slice(b"{\"type\":\"view.rows\",\"reqId\":");
        write_u64(out, req_id.into());
        out.extend_from_slice(b",\"viewId\":");
        write_u64(out, view_id.into());
        write_seq(out, seq);
        ViewRows {
            out,
            section: Section::None,
        }
    }

    /// Bytes in the output so far (right after `begin`: where the message's body starts).
    pub fn written(&self) -> usize {
        self.out.len()
    }

    fn item(&mut self, section: Section, key: &[u8]) {
        debug_assert!(section >= self.section, "view.rows lists out of order");
        if section == self.section {
            self.out.push(b',');
            return;
        }
        if self.section != Section::None {
            self.out.push(b']');
        }
        self.out.extend_from_slice(key);
        self.section = section;
    }

    /// A row (record id) that left the window.
    pub fn left(&mut self, id: u32) {
        self.item(Section::Left, b",\"left\":[");
        write_u64(self.out, id.into());
    }

    /// A row that stayed but moved to view index `index`.
    pub fn moved(&mut self, index: u64, id: u32) {
        self.item(Section::Moved, b",\"moved\":[");
        self.out.extend_from_slice(b"{\"index\":");
        write_u64(self.out, index);
        self.out.extend_from_slice(b",\"id\":");
        write_u64(self.out, id.into());
        self.out.push(b'}');
    }

    /// A row that entered the window at view index `index`, as a full image.
    pub fn entered<'a, I>(&mut self, index: u64, id: u32, subject: &str, seq: u64, ts: f64, fields: I)
    where
        I: Iterator<Item = FieldRef<'a>> + Clone,
    {
        self.item(Section::Entered, b",\"entered\":[");
        row_image(self.out, index, id, subject, seq, ts, fields);
    }

    /// Changed fields of a row that stayed; `conflated` when several updates were merged.
    pub fn updated<'a, I>(&mut self, id: u32, seq: u64, ts: f64, fields: I, conflated: bool)
    where
        I: Iterator<Item = FieldRef<'a>> + Clone,
    {
        self.item(Section::Updated, b",\"updated\":[");
        self.out.push(b'{');
        write_update_body(self.out, id, seq, ts, fields, conflated);
        self.out.push(b'}');
    }

    /// True when no item was written (a `view.rows` with nothing in it is not worth sending).
    pub fn is_empty(&self) -> bool {
        self.section == Section::None
    }

    /// Closes the open list and the message.
    pub fn finish(self) {
        if self.section != Section::None {
            self.out.push(b']');
        }
        self.out.push(b'}');
    }
}

/// `,"seq":n` when `seq` is set.
fn write_seq(out: &mut Vec<u8>, seq: Option<u64>) {
    if let Some(seq) = seq {
        out.extend_from_slice(b",\"seq\":");
        write_u64(out, seq);
    }
}

/// `view.size`: `{"type":"view.size","viewId"[,"seq"],"count"}`.
pub fn view_size(out: &mut Vec<u8>, view_id: u32, seq: Option<u64>, count: u64) {
    out.extend_from_slice(b"{\"type\":\"view.size\",\"viewId\":");
    write_u64(out, view_id.into());
    write_seq(out, seq);
    out.extend_from_slice(b",\"count\":");
    write_u64(out, count);
    out.push(b'}');
}

/// `view.closed`: `{"type":"view.closed","reqId","viewId"}`.
pub fn view_closed(out: &mut Vec<u8>, req_id: u32, view_id: u32) {
    out.extend_from_slice(b"{\"type\":\"view.closed\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"viewId\":");
    write_u64(out, view_id.into());
    out.push(b'}');
}

/// `view.resumed`: `{"type":"view.resumed","reqId","viewId","seq"}`: the view continues from
/// `seq` (the last message the client holds); the messages it missed follow from `seq + 1`.
pub fn view_resumed(out: &mut Vec<u8>, req_id: u32, view_id: u32, seq: u64) {
    out.extend_from_slice(b"{\"type\":\"view.resumed\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"viewId\":");
    write_u64(out, view_id.into());
    out.extend_from_slice(b",\"seq\":");
    write_u64(out, seq);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn rows_writer_skips_empty_lists_and_closes_the_open_one() {
        let mut out = Vec::new();
        let mut w = ViewRows::begin(&mut out, 3, 1, None);
        assert!(w.is_empty());
        w.left(4);
        w.left(5);
        let bid = Value::Number(1.5);
        w.updated(7, 2, 10.0, [("bid", Some(&bid), None)].into_iter(), false);
        w.finish();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"type":"view.rows","reqId":3,"viewId":1,"left":[4,5],"updated":[{"id":7,"seq":2,"ts":10,"fields":{"bid":1.5}}]}"#
        );
    }

    #[test]
    fn empty_created_and_empty_rows() {
        let mut out = Vec::new();
        ViewCreated::begin(&mut out, 1, 2, None, 0).finish();
        out.push(b' ');
        ViewRows::begin(&mut out, 1, 2, None).finish();
        out.push(b' ');
        ViewCreated::begin(&mut out, 1, 2, Some(1), 0).finish_flagged(true);
        out.push(b' ');
        ViewRows::begin(&mut out, 1, 2, Some(4)).finish();
        out.push(b' ');
        view_size(&mut out, 2, Some(5), 9);
        out.push(b' ');
        view_resumed(&mut out, 3, 2, 5);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            [
                r#"{"type":"view.created","reqId":1,"viewId":2,"count":0,"rows":[]}"#,
                r#"{"type":"view.rows","reqId":1,"viewId":2}"#,
                r#"{"type":"view.created","reqId":1,"viewId":2,"seq":1,"count":0,"rows":[],"reset":true}"#,
                r#"{"type":"view.rows","reqId":1,"viewId":2,"seq":4}"#,
                r#"{"type":"view.size","viewId":2,"seq":5,"count":9}"#,
                r#"{"type":"view.resumed","reqId":3,"viewId":2,"seq":5}"#,
            ]
            .join(" ")
        );
    }
}
