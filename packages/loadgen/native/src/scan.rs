//! A minimal JSON scanner for server frames (a JSON array of message objects) that reads only
//! what the simulator needs from each message (type, reqId, id, seq, ts, conflated, the number
//! of `records` (and each one's id and pending of record.subscribed / record.resumed), epoch of
//! session.loggedIn, reset of record.image, error code/message, heartbeatMs; orderId of order.ack, field/rule of order.reject; of view messages viewId, count and the id, seq,
//! ts, conflated and subject of each row in `rows`, `entered`, `updated` and `left`) and skips
//! everything else (`fields`, `moved`, subjects of records) without building values. About twice as fast as deserialising with serde on update frames.
//! Malformed JSON is an error, never a panic; golden frames check it against serde_json.

use std::borrow::Cow;
use tidewire_protocol::messages::kind;

/// The parts of one server message the simulator reads.
#[derive(Debug, Default, PartialEq)]
pub struct Msg<'a> {
    pub ty: Cow<'a, str>,
    pub req_id: Option<u64>,
    pub id: Option<u64>,
    pub seq: Option<u64>,
    pub ts: Option<f64>,
    pub conflated: Option<bool>,
    /// Number of elements of `records` (record.subscribed).
    pub records: Option<usize>,
    /// `id` and `pending` of each element of `records` of `record.subscribed` / `record.resumed`,
    /// in order (the order of the request's subjects).
    pub acked: Vec<(u64, bool)>,
    /// `epoch` of `session.loggedIn` (what a resume names).
    pub epoch: Option<u64>,
    /// `reset` of `record.image` (the answer to a resume that could not be replayed).
    pub reset: Option<bool>,
    pub code: Option<Cow<'a, str>>,
    pub message: Option<Cow<'a, str>>,
    pub heartbeat_ms: Option<u64>,
    /// `viewId` of view messages.
    pub view_id: Option<u64>,
    /// `count` of `view.created` / `view.size`.
    pub count: Option<u64>,
    /// Rows of a `view.*` message, in frame order: `rows` (view.created), `left`, `entered`, `updated`.
    pub rows: Vec<Row<'a>>,
    /// `orderId` of `order.ack`.
    pub order_id: Option<u64>,
    /// `field` and `rule` of `order.reject` (and `field` of `error`).
    pub field: Option<Cow<'a, str>>,
    pub rule: Option<Cow<'a, str>>,
}

/// Which list of a view message a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowList {
    /// `view.created` `rows`: the window's image.
    Created,
    /// `view.rows` `entered`: a row image that came into the window.
    Entered,
    /// `view.rows` `updated`: changed fields of a row in the window.
    Updated,
    /// `view.rows` `left`: the id of a row that left the window (no seq or ts).
    Left,
}

/// The parts of one view row the simulator reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    pub list: RowList,
    pub id: u64,
    pub seq: Option<u64>,
    /// Origin timestamp of the record's latest update, epoch ms.
    pub ts: Option<f64>,
    pub conflated: bool,
    /// The record's subject (images only).
    pub subject: Option<Cow<'a, str>>,
}

impl Row<'_> {
    /// A row known only by its id (a `left` entry, or an object before its fields are read).
    fn bare(list: RowList, id: u64) -> Self {
        Row {
            list,
            id,
            seq: None,
            ts: None,
            conflated: false,
            subject: None,
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

type R<T> = Result<T, String>;

impl<'a> Scanner<'a> {
    fn err<T>(&self, what: &str) -> R<T> {
        Err(format!("{what} at byte {}", self.i))
    }

    fn ws(&mut self) {
        while let Some(c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// After a member or element: true at `,` (another follows), false at `close` (the object or
    /// array ended); both are consumed.
    fn more(&mut self, close: u8) -> R<bool> {
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            _ => self.err(&format!("expected ',' or '{}'", close as char)),
        }
    }

    /// An object member's key (raw, escapes not decoded: the keys read here have none) and its `:`.
    fn key(&mut self) -> R<&'a [u8]> {
        let (key, _) = self.string_raw()?;
        self.expect(b':')?;
        self.ws();
        Ok(key)
    }

    fn expect(&mut self, c: u8) -> R<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            self.err(&format!("expected '{}'", c as char))
        }
    }

    /// A string at the cursor: its raw content (between the quotes) and whether it has escapes.
    fn string_raw(&mut self) -> R<(&'a [u8], bool)> {
        self.expect(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            match self.b.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    let raw = &self.b[start..self.i];
                    self.i += 1;
                    return Ok((raw, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    self.i += 2;
                }
                Some(_) => self.i += 1,
            }
        }
    }

    fn string(&mut self) -> R<Cow<'a, str>> {
        let start = self.i;
        let (raw, escaped) = self.string_raw()?;
        if escaped {
            // rare (error messages): let serde_json decode the escapes exactly
            let quoted = &self.b[start..self.i];
            let s: String = serde_json::from_slice(quoted).map_err(|e| format!("bad string: {e}"))?;
            Ok(Cow::Owned(s))
        } else {
            std::str::from_utf8(raw)
                .map(Cow::Borrowed)
                .map_err(|_| "string is not UTF-8".to_string())
        }
    }

    /// The bytes of the number at the cursor (not validated beyond its character set).
    fn number_span(&mut self) -> R<&'a [u8]> {
        self.ws();
        let start = self.i;
        while let Some(c) = self.b.get(self.i) {
            if !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                break;
            }
            self.i += 1;
        }
        if start == self.i {
            return self.err("expected a number");
        }
        Ok(&self.b[start..self.i])
    }

    fn number_slice(&mut self) -> R<&'a str> {
        let span = self.number_span()?;
        // only ASCII bytes were accepted by number_span
        std::str::from_utf8(span).map_err(|_| "bad number".to_string())
    }

    fn u64(&mut self) -> R<u64> {
        let span = self.number_span()?;
        // fast path: plain digits (ids, seqs); anything else (1e3, 5.0) goes through f64
        if span.len() <= 19 && span.iter().all(u8::is_ascii_digit) {
            return Ok(span.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')));
        }
        let s = std::str::from_utf8(span).map_err(|_| "bad number".to_string())?;
        match s.parse::<f64>() {
            Ok(f) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => Ok(f as u64),
            _ => Err(format!("expected an unsigned integer, got {s}")),
        }
    }

    fn f64(&mut self) -> R<f64> {
        let s = self.number_slice()?;
        s.parse::<f64>().map_err(|_| format!("bad number {s}"))
    }

    fn literal(&mut self, word: &[u8]) -> R<()> {
        if self.b.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            Ok(())
        } else {
            self.err("bad literal")
        }
    }

    fn bool(&mut self) -> R<bool> {
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|_| true),
            Some(b'f') => self.literal(b"false").map(|_| false),
            _ => self.err("expected a boolean"),
        }
    }

    /// Skips any value; for an array, returns its element count.
    fn skip_value(&mut self, depth: usize) -> R<usize> {
        if depth > 64 {
            return self.err("nesting deeper than 64");
        }
        match self.peek() {
            Some(b'"') => self.string_raw().map(|_| 0),
            Some(b'{') => {
                self.i += 1;
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(0);
                }
                loop {
                    self.string_raw()?;
                    self.expect(b':')?;
                    self.skip_value(depth + 1)?;
                    if !self.more(b'}')? {
                        return Ok(0);
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(0);
                }
                let mut n = 0;
                loop {
                    self.skip_value(depth + 1)?;
                    n += 1;
                    if !self.more(b']')? {
                        return Ok(n);
                    }
                }
            }
            Some(b't') => self.literal(b"true").map(|_| 0),
            Some(b'f') => self.literal(b"false").map(|_| 0),
            Some(b'n') => self.literal(b"null").map(|_| 0),
            Some(_) => self.number_span().map(|_| 0),
            None => self.err("unexpected end"),
        }
    }

    /// A view row object of list `list`: id (required), seq, ts, conflated, subject; other keys skipped.
    fn row(&mut self, list: RowList) -> R<Row<'a>> {
        self.expect(b'{')?;
        let mut r = Row::bare(list, 0);
        let mut has_id = false;
        if self.peek() == Some(b'}') {
            return self.err("view row without 'id'");
        }
        loop {
            let key = self.key()?;
            match key {
                b"id" => {
                    r.id = self.u64()?;
                    has_id = true;
                }
                b"seq" => r.seq = Some(self.u64()?),
                b"ts" => r.ts = Some(self.f64()?),
                b"conflated" => r.conflated = self.bool()?,
                b"subject" => r.subject = Some(self.string()?),
                _ => {
                    self.skip_value(2)?;
                }
            }
            if !self.more(b'}')? {
                break;
            }
        }
        if !has_id {
            return self.err("view row without 'id'");
        }
        Ok(r)
    }

    /// A view message's row list into `out`: objects, or plain ids for `left`.
    fn rows(&mut self, list: RowList, out: &mut Vec<Row<'a>>) -> R<()> {
        self.expect(b'[')?;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            if list == RowList::Left {
                let id = self.u64()?;
                out.push(Row::bare(list, id));
            } else {
                out.push(self.row(list)?);
            }
            if !self.more(b']')? {
                return Ok(());
            }
        }
    }

    /// The `records` of a subscribe / resume ack into `out`: (id, pending) per element, other keys
    /// skipped; an element without `id` is an error.
    fn acked_records(&mut self, out: &mut Vec<(u64, bool)>) -> R<()> {
        self.expect(b'[')?;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.expect(b'{')?;
            let (mut id, mut pending) = (None, false);
            if self.peek() != Some(b'}') {
                loop {
                    match self.key()? {
                        b"id" => id = Some(self.u64()?),
                        b"pending" => pending = self.bool()?,
                        _ => {
                            self.skip_value(3)?;
                        }
                    }
                    if !self.more(b'}')? {
                        break;
                    }
                }
            } else {
                self.i += 1;
            }
            let Some(id) = id else {
                return self.err("acknowledged record without 'id'");
            };
            out.push((id, pending));
            if !self.more(b']')? {
                return Ok(());
            }
        }
    }

    fn message(&mut self) -> R<Msg<'a>> {
        self.expect(b'{')?;
        let mut m = Msg::default();
        let mut has_type = false;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return self.err("message without 'type'");
        }
        loop {
            let key = self.key()?;
            match key {
                b"type" => {
                    m.ty = self.string()?;
                    has_type = true;
                }
                b"reqId" => m.req_id = Some(self.u64()?),
                b"id" => m.id = Some(self.u64()?),
                b"seq" => m.seq = Some(self.u64()?),
                b"ts" => m.ts = Some(self.f64()?),
                b"conflated" => m.conflated = Some(self.bool()?),
                b"records" if m.ty == kind::RECORD_SUBSCRIBED || m.ty == kind::RECORD_RESUMED => {
                    self.acked_records(&mut m.acked)?;
                    m.records = Some(m.acked.len());
                }
                b"records" => m.records = Some(self.skip_value(1)?),
                b"epoch" if m.ty == kind::SESSION_LOGGED_IN => m.epoch = Some(self.u64()?),
                b"reset" if m.ty == kind::RECORD_IMAGE => m.reset = Some(self.bool()?),
                b"code" => m.code = Some(self.string()?),
                b"message" => m.message = Some(self.string()?),
                b"heartbeatMs" => m.heartbeat_ms = Some(self.u64()?),
                b"viewId" => m.view_id = Some(self.u64()?),
                b"orderId" if m.ty == kind::ORDER_ACK => m.order_id = Some(self.u64()?),
                b"field" if m.ty == kind::ORDER_REJECT || m.ty == kind::ERROR => m.field = Some(self.string()?),
                b"rule" if m.ty == kind::ORDER_REJECT => m.rule = Some(self.string()?),
                b"count" if m.ty.starts_with("view.") => m.count = Some(self.u64()?),
                // the server writes `type` first; row lists of other messages are skipped
                b"rows" if m.ty == kind::VIEW_CREATED => self.rows(RowList::Created, &mut m.rows)?,
                b"entered" if m.ty == kind::VIEW_ROWS => self.rows(RowList::Entered, &mut m.rows)?,
                b"updated" if m.ty == kind::VIEW_ROWS => self.rows(RowList::Updated, &mut m.rows)?,
                b"left" if m.ty == kind::VIEW_ROWS => self.rows(RowList::Left, &mut m.rows)?,
                _ => {
                    self.skip_value(1)?;
                }
            }
            if !self.more(b'}')? {
                break;
            }
        }
        if !has_type {
            return self.err("message without 'type'");
        }
        Ok(m)
    }
}

/// Reads a server frame: a JSON array of message objects.
pub fn scan_frame(frame: &[u8]) -> Result<Vec<Msg<'_>>, String> {
    let mut s = Scanner { b: frame, i: 0 };
    s.expect(b'[')?;
    let mut out = Vec::new();
    if s.peek() == Some(b']') {
        s.i += 1;
    } else {
        loop {
            out.push(s.message()?);
            match s.peek() {
                Some(b',') => s.i += 1,
                Some(b']') => {
                    s.i += 1;
                    break;
                }
                _ => return s.err("expected ',' or ']'"),
            }
        }
    }
    if s.peek().is_some() {
        return s.err("trailing bytes after the frame");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Server-direction golden frames: (valid ones, ones that are not a JSON array of objects).
    /// Frames refused only for an unknown `type` are left out: the simulator ignores unknown types.
    fn golden_frames() -> (Vec<String>, Vec<String>) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../protocol/vectors/frames.json");
        let text = std::fs::read_to_string(path).expect("golden frames readable");
        let v: Value = serde_json::from_str(&text).expect("golden frames are JSON");
        let server: Vec<&Value> = v
            .as_array()
            .expect("an array of vectors")
            .iter()
            .filter(|f| f["direction"] == "server")
            .collect();
        let frame = |f: &&Value| f["frame"].as_str().map(String::from);
        (
            server.iter().filter(|f| f.get("error").is_none()).filter_map(frame).collect(),
            server
                .iter()
                .filter(|f| f["error"]["code"] == "BAD_FRAME")
                .filter_map(frame)
                .collect(),
        )
    }

    /// The view golden frames (vectors/views.json) in the server direction.
    fn golden_view_frames() -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../protocol/vectors/views.json");
        let text = std::fs::read_to_string(path).expect("view golden frames readable");
        let v: Value = serde_json::from_str(&text).expect("view golden frames are JSON");
        v.as_array()
            .expect("an array of vectors")
            .iter()
            .filter(|f| f["direction"] == "server")
            .filter_map(|f| f["frame"].as_str().map(String::from))
            .collect()
    }

    #[test]
    fn agrees_with_serde_on_every_golden_view_frame() {
        let frames = golden_view_frames();
        assert!(frames.len() >= 4, "view golden server frames found: {}", frames.len());
        let mut lists = std::collections::HashSet::new();
        for frame in frames {
            let scanned = scan_frame(frame.as_bytes()).unwrap_or_else(|e| panic!("{e} in {frame}"));
            let parsed: Vec<Value> = serde_json::from_str(&frame).expect("golden frame is JSON");
            assert_eq!(scanned.len(), parsed.len());
            for (m, v) in scanned.iter().zip(&parsed) {
                assert_eq!(m.ty, v["type"].as_str().unwrap_or_default());
                assert_eq!(m.view_id, v["viewId"].as_u64());
                assert_eq!(m.count, v["count"].as_u64());
                assert_eq!(m.req_id, v["reqId"].as_u64());
                let mut expected = Vec::new();
                for (key, list) in [
                    ("rows", RowList::Created),
                    ("left", RowList::Left),
                    ("entered", RowList::Entered),
                    ("updated", RowList::Updated),
                ] {
                    for r in v[key].as_array().into_iter().flatten() {
                        let id = if list == RowList::Left { r.as_u64() } else { r["id"].as_u64() };
                        expected.push((
                            list,
                            id.expect("row id"),
                            r["seq"].as_u64(),
                            r["ts"].as_f64(),
                            r["conflated"].as_bool().unwrap_or(false),
                            r["subject"].as_str().map(String::from),
                        ));
                    }
                }
                // the scanner keeps frame order; the golden frames list keys in the order above
                let got: Vec<_> = m
                    .rows
                    .iter()
                    .map(|r| (r.list, r.id, r.seq, r.ts, r.conflated, r.subject.as_deref().map(String::from)))
                    .collect();
                assert_eq!(got, expected, "rows of {frame}");
                lists.extend(m.rows.iter().map(|r| r.list));
            }
        }
        assert_eq!(
            lists.len(),
            4,
            "golden view frames cover rows, left, entered and updated: {lists:?}"
        );
    }

    #[test]
    fn refuses_malformed_view_rows() {
        for bad in [
            &br#"[{"type":"view.rows","viewId":1,"updated":[{"seq":1}]}]"#[..],
            br#"[{"type":"view.rows","viewId":1,"left":["a"]}]"#,
            br#"[{"type":"view.rows","viewId":1,"entered":[1]}]"#,
            br#"[{"type":"view.created","viewId":1,"rows":[{"id":1,"ts":"x"}]}]"#,
            br#"[{"type":"view.rows","viewId":1,"updated":[{"id":1}"#,
        ] {
            assert!(scan_frame(bad).is_err(), "accepted {:?}", String::from_utf8_lossy(bad));
        }
        // row lists of other message types are skipped, whatever their shape
        let m = scan_frame(br#"[{"type":"admin.x","rows":[1,"a"],"left":{}}]"#).unwrap();
        assert!(m[0].rows.is_empty());
    }

    #[test]
    fn refuses_the_golden_bad_frames() {
        for frame in golden_frames().1 {
            assert!(scan_frame(frame.as_bytes()).is_err(), "accepted {frame}");
        }
    }

    #[test]
    fn agrees_with_serde_on_every_golden_server_frame() {
        let frames = golden_frames().0;
        assert!(frames.len() >= 5, "golden server frames found: {}", frames.len());
        let (mut acks, mut epochs, mut resets) = (std::collections::HashSet::new(), 0, 0);
        for frame in frames {
            let scanned = scan_frame(frame.as_bytes()).unwrap_or_else(|e| panic!("{e} in {frame}"));
            let parsed: Vec<Value> = serde_json::from_str(&frame).expect("golden frame is JSON");
            assert_eq!(scanned.len(), parsed.len());
            for (m, v) in scanned.iter().zip(&parsed) {
                assert_eq!(m.ty, v["type"].as_str().unwrap_or_default());
                assert_eq!(m.id, v["id"].as_u64());
                assert_eq!(m.seq, v["seq"].as_u64());
                assert_eq!(m.req_id, v["reqId"].as_u64());
                assert_eq!(m.ts, v["ts"].as_f64());
                assert_eq!(m.conflated, v["conflated"].as_bool());
                assert_eq!(m.records, v["records"].as_array().map(|a| a.len()));
                let ty = m.ty.as_ref();
                if ty == kind::RECORD_SUBSCRIBED || ty == kind::RECORD_RESUMED {
                    let expected: Vec<(u64, bool)> = v["records"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|r| (r["id"].as_u64().expect("acked id"), r["pending"].as_bool().unwrap_or(false)))
                        .collect();
                    assert_eq!(m.acked, expected, "acked records of {frame}");
                    acks.insert(ty.to_string());
                }
                if ty == kind::SESSION_LOGGED_IN {
                    assert_eq!(m.epoch, v["epoch"].as_u64(), "epoch of {frame}");
                    epochs += usize::from(m.epoch.is_some());
                }
                if ty == kind::RECORD_IMAGE {
                    assert_eq!(m.reset, v["reset"].as_bool(), "reset of {frame}");
                    resets += usize::from(m.reset == Some(true));
                }
                assert_eq!(m.code.as_deref(), v["code"].as_str());
                assert_eq!(m.message.as_deref(), v["message"].as_str());
                assert_eq!(m.heartbeat_ms, v["heartbeatMs"].as_u64());
                assert_eq!(m.order_id, v["orderId"].as_u64());
                assert_eq!(m.field.as_deref(), v["field"].as_str());
                assert_eq!(m.rule.as_deref(), v["rule"].as_str());
            }
        }
        // the resume fields are covered: both acks, an epoch and a reset image
        assert_eq!(acks.len(), 2, "golden frames hold record.subscribed and record.resumed: {acks:?}");
        assert!(
            epochs > 0 && resets > 0,
            "golden frames hold an epoch ({epochs}) and a reset image ({resets})"
        );
    }

    #[test]
    fn reads_acked_records_and_refuses_one_without_id() {
        let f = br#"[{"type":"record.resumed","reqId":4,"records":[{"subject":"/A","id":1,"pending":false},{"id":9,"subject":"/B","pending":true},{}]}]"#;
        assert!(scan_frame(f).is_err());
        let f = br#"[{"type":"record.subscribed","reqId":2,"records":[{"subject":"/A","id":1},{"id":9,"pending":true}]}]"#;
        let m = scan_frame(f).unwrap();
        assert_eq!((m[0].acked.clone(), m[0].records), (vec![(1, false), (9, true)], Some(2)));
        // another message's `records` is only counted
        let m = scan_frame(br#"[{"type":"admin.x","records":[{},1]}]"#).unwrap();
        assert_eq!((m[0].acked.len(), m[0].records), (0, Some(2)));
    }

    #[test]
    fn skips_nested_fields_and_strings_with_brackets() {
        let f = br#"[{"type":"record.update","id":7,"seq":3,"ts":1700000000000.125,"fields":{"a":"]},{\"x","b":[1,{"c":null}],"d":-1e-7,"e":true},"conflated":true}]"#;
        let m = scan_frame(f).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].id, m[0].seq, m[0].ts, m[0].conflated),
            (Some(7), Some(3), Some(1700000000000.125), Some(true))
        );
    }

    #[test]
    fn refuses_malformed_frames_without_panicking() {
        for bad in [
            &b""[..],
            b"[",
            b"{}",
            b"[{}]",
            b"[{\"type\":}]",
            b"[{\"type\":\"x\"",
            b"[{\"type\":\"x\"}] x",
            b"[{\"type\":\"x\",\"id\":-1}]",
            b"[\"a\"]",
        ] {
            assert!(scan_frame(bad).is_err(), "accepted {:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(scan_frame(b" [ ] ").unwrap().len(), 0);
    }
}
