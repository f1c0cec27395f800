//! The views' flush: every window's diff is encoded once per window and queued to its
//! subscriber (`view.created`, `view.size`, `view.rows`). A row updated several times between
//! two view flushes gets one merged update with `conflated: true` (its `seq` jumps by more than
//! one).

use std::time::Instant;

use super::{open_sub, HubViews, TAG_LIVE};
use crate::hub::Hub;
use crate::view::WindowDiff;
use crate::wire::view::{view_size, ViewCreated, ViewRows};

impl Hub {
    /// Encodes every window's diff once and queues it to the window's subscriber.
    pub(in crate::hub) fn flush_views(&mut self, now: Instant) {
        self.views.diffs.clear();
        let mut diffs = std::mem::take(&mut self.views.diffs);
        self.views.set.flush(&mut diffs);
        for d in &diffs {
            // The usual case, a held window's live changes: owner and reqId from the window's
            // tag (a dense array), not from three per-session maps.
            if let Some([slot, view_id, req_id, TAG_LIVE]) = self.views.set.window_tag(d.window) {
                self.scratch.clear();
                if self.encode_rows(d, req_id, view_id, false, now) {
                    self.send_control(slot, now);
                    self.sample_view_rows(slot);
                }
                continue;
            }
            let Some(&(slot, view_id)) = self.views.window_owner.get(&d.window) else {
                continue;
            };
            let Some(sub) = open_sub(&mut self.views.by_session, slot, view_id) else {
                continue;
            };
            let creating = sub.creating.take();
            let reset = std::mem::take(&mut sub.reset);
            let req_id = sub.req_id;
            let answers_change = std::mem::take(&mut sub.change_pending);
            let _ = self
                .views
                .set
                .set_window_tag(d.window, [slot, view_id, req_id, TAG_LIVE]);
            let reply = creating.is_some() || answers_change;
            self.scratch.clear();
            match creating {
                Some(create_req) => self.encode_created(d, create_req, view_id, reset),
                None => {
                    if !self.encode_rows(d, req_id, view_id, answers_change, now) {
                        continue;
                    }
                }
            }
            if reply {
                self.send_reply(slot, now);
            } else {
                self.send_control(slot, now);
            }
            self.sample_view_rows(slot);
        }
        self.views.set.recycle(&mut diffs);
        self.views.diffs = diffs;
    }

    /// `view.created` (seq 1 of the window) from its first diff, a snapshot.
    pub(super) fn encode_created(&mut self, d: &WindowDiff, req_id: u32, view_id: u32, reset: bool) {
        let count = d.count.unwrap_or(0) as u64;
        let _ = self.views.set.set_window_seq(d.window, 1);
        self.views.history.start(d.window, 1);
        let Hub { scratch, store, .. } = self;
        let mut w = ViewCreated::begin(scratch, req_id, view_id, Some(1), count);
        for &(i, id) in &d.entered {
            let index = (d.offset + i as usize) as u64;
            match store.get(id) {
                Some(rec) => w.row(index, id, store.subject(id), rec.seq, rec.ts, store.image_fields(rec)),
                None => w.row(index, id, store.subject(id), 0, 0.0, std::iter::empty()),
            }
        }
        w.finish_flagged(reset);
    }

    /// `view.size` (count changed) then `view.rows`; false when there is nothing to send.
    /// `always`: a `view.change` waits for this reply, so an empty `view.rows` is sent too.
    /// Each updated row is encoded once per flush (`ViewSet::row_bytes`) and copied into every
    /// window's message that carries it. Each message sent takes the window's next seq and is
    /// kept in the window's history (`view_history.rs`) as sent at `now`.
    pub(super) fn encode_rows(
        &mut self,
        d: &WindowDiff,
        req_id: u32,
        view_id: u32,
        always: bool,
        now: Instant,
    ) -> bool {
        let mut seq = self.views.set.window_seq(d.window).unwrap_or(0);
        let sent = self.encode_rows_at(d, req_id, view_id, always, &mut seq, now);
        let _ = self.views.set.set_window_seq(d.window, seq);
        sent
    }

    /// `encode_rows` after the message numbered `seq`; `seq` ends as the last one written.
    pub(super) fn encode_rows_at(
        &mut self,
        d: &WindowDiff,
        req_id: u32,
        view_id: u32,
        always: bool,
        seq: &mut u64,
        now: Instant,
    ) -> bool {
        let Hub {
            scratch,
            store,
            views,
            sampling,
            ..
        } = self;
        let HubViews {
            set: views,
            history: view_history,
            ..
        } = views;
        sampling.rows.clear();
        if let Some(count) = d.count {
            *seq += 1;
            view_size(scratch, view_id, Some(*seq), count as u64);
            view_history.sent_size(d.window, *seq, count as u64, now);
        }
        let mark = scratch.len();
        if mark > 0 {
            scratch.push(b',');
        }
        let mut w = ViewRows::begin(scratch, req_id, view_id, Some(*seq + 1));
        let body = w.written();
        for &id in &d.left {
            w.left(id);
        }
        for &(i, id) in &d.moved {
            w.moved((d.offset + i as usize) as u64, id);
        }
        for &(i, id) in &d.entered {
            let index = (d.offset + i as usize) as u64;
            match store.get(id) {
                Some(rec) => w.entered(index, id, store.subject(id), rec.seq, rec.ts, store.image_fields(rec)),
                None => w.entered(index, id, store.subject(id), 0, 0.0, std::iter::empty()),
            }
        }
        let empty = w.is_empty();
        // `updated` is the last list of a `view.rows`: close the message, reopen it after the
        // lists written so far, and append the cached items.
        w.finish();
        scratch.pop(); // the closing '}'
        let before = scratch.len();
        scratch.extend_from_slice(UPDATED_KEY);
        let cache = views.row_bytes();
        let mut items = 0;
        for (id, fields) in &d.updated {
            let Some(rec) = store.get(*id) else { continue };
            let conflated = d.conflated.binary_search(id).is_ok();
            let bytes = cache.get_or_encode(*id, fields, conflated, |out| {
                let it = fields.iter().map(|&f| store.field_by_id(rec, f));
                updated_item(out, *id, rec.seq, rec.ts, it, conflated);
            });
            if items > 0 {
                scratch.push(b',');
            }
            scratch.extend_from_slice(bytes);
            sampling.rows.push(rec.ts);
            items += 1;
        }
        if items == 0 {
            scratch.truncate(before);
            if empty && !always {
                scratch.truncate(if mark > 0 { mark } else { 0 });
                return mark > 0;
            }
            scratch.push(b'}');
        } else {
            scratch.extend_from_slice(b"]}");
        }
        *seq += 1;
        view_history.sent_rows(d.window, *seq, req_id, &scratch[body..], now);
        true
    }
}

/// Key of the `updated` list of a `view.rows` (`wire::view::ViewRows::updated`).
pub(super) const UPDATED_KEY: &[u8] = b",\"updated\":[";

/// One item of a `view.rows` `updated` list: `{"id","seq","ts","fields"[,"conflated":true]}`,
/// byte-identical to `wire::view::ViewRows::updated` (pinned by the test below).
pub(super) fn updated_item<'a, I>(out: &mut Vec<u8>, id: u32, seq: u64, ts: f64, fields: I, conflated: bool)
where
    I: Iterator<Item = crate::wire::encode::FieldRef<'a>> + Clone,
{
    out.push(b'{');
    crate::wire::encode::write_update_body(out, id, seq, ts, fields, conflated);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::ContainerOp;
    use crate::value::Value;

    /// The cached path (`UPDATED_KEY` + `updated_item`s) writes what `ViewRows::updated` writes.
    #[test]
    fn updated_items_match_the_view_rows_writer() {
        let (bid, name) = (Value::Number(1.25), Value::Str("a\"b".into()));
        let fields = || {
            [
                ("bid", Some(&bid), None),
                ("name", Some(&name), None),
                ("gone", None, None),
            ]
            .into_iter()
        };
        let mut want = Vec::new();
        let mut w = ViewRows::begin(&mut want, 3, 1, None);
        w.left(4);
        w.updated(7, 2, 10.5, fields(), false);
        w.updated(8, 9, 11.0, fields(), true);
        w.finish();
        let mut got = Vec::new();
        let mut w = ViewRows::begin(&mut got, 3, 1, None);
        w.left(4);
        w.finish();
        got.pop();
        got.extend_from_slice(UPDATED_KEY);
        updated_item(&mut got, 7, 2, 10.5, fields(), false);
        got.push(b',');
        updated_item(&mut got, 8, 9, 11.0, fields(), true);
        got.extend_from_slice(b"]}");
        assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
    }

    fn publish(hub: &mut Hub, i: u32, field: &str, v: f64, image: bool, now: Instant) {
        let p = crate::wire::Publish {
            subject: format!("/P/{i}"),
            ts: Some(1.0),
            image,
            fields: vec![crate::wire::PubField {
                name: field.into(),
                value: Some(Value::Number(v)),
                typed: false,
            }],
        };
        hub.handle(
            crate::hub::Command::Publish {
                batch: vec![p],
                received_ms: 1.0,
            },
            now,
        );
    }

    /// The messages queued to session 1 since the last call (the outbox is read, then cleared
    /// through a delivery into a sink that drops them).
    fn take(hub: &mut Hub, now: Instant) -> Vec<serde_json::Value> {
        crate::hub::test_support::take_queued(hub, 1, now + std::time::Duration::from_secs(1))
    }

    /// Live updates of a held window carry the reqId of the latest view.change (the window tag
    /// fast path), before and after the change.
    #[test]
    fn live_rows_carry_the_latest_change_req_id() {
        use crate::hub::Command;
        let now = Instant::now();
        let mut hub = Hub::new(crate::config::EngineConfig::default());
        for i in 0..3 {
            publish(&mut hub, i, "bid", f64::from(i), true, now);
        }
        let members = (0..3).map(|i| format!("/P/{i}")).collect();
        hub.handle(
            Command::ContainerPublish {
                subject: "/C".into(),
                ops: vec![ContainerOp::Add(members)],
            },
            now,
        );
        let open = Command::OpenSession {
            sid: 1,
            worker: 0,
            user: "u".into(),
            tier: String::new(),
        };
        hub.handle(open, now);
        let create = Command::ViewCreate {
            sid: 1,
            req_id: 1,
            container: "/C".into(),
            filter: String::new(),
            sort: "bid".into(),
            offset: 0,
            size: 2,
        };
        hub.handle(create, now);
        assert_eq!(take(&mut hub, now)[0]["type"], "view.created");
        publish(&mut hub, 0, "qty", 5.0, false, now);
        let m = take(&mut hub, now);
        assert_eq!(
            (m.len(), &m[0]["reqId"], &m[0]["updated"][0]["id"]),
            (1, &1.into(), &1.into())
        );
        hub.handle(
            Command::ViewChange {
                sid: 1,
                req_id: 5,
                view_id: 1,
                offset: 1,
                size: 2,
            },
            now,
        );
        let m = take(&mut hub, now);
        assert_eq!((m.len(), &m[0]["reqId"], &m[0]["left"][0]), (1, &5.into(), &1.into()));
        publish(&mut hub, 2, "qty", 6.0, false, now);
        publish(&mut hub, 0, "qty", 7.0, false, now); // no longer shown
        let m = take(&mut hub, now);
        assert_eq!(m.len(), 1);
        assert_eq!((&m[0]["reqId"], &m[0]["updated"][0]["id"]), (&5.into(), &3.into()));
        assert_eq!(m[0]["updated"].as_array().map(Vec::len), Some(1));
    }
}
