//! Record store: subject id -> record (typed fields, seq, origin ts). Publishes merge here.
//!
//! Field positions ("slots") inside a record are stable: a deleted field keeps its slot (value
//! `None`) so a `u128` changed-field mask stays valid across updates. Slots are compacted only
//! when a record would otherwise pass `MAX_FIELDS_PER_RECORD`; that bumps `layout`, telling
//! holders of masks to send a full image instead.

use crate::chunked::ChunkedVec;
use crate::error::{EngineError, Result};
use crate::intern::Interner;
use crate::value::{FieldType, Value};
use crate::wire::encode::FieldRef;
use crate::wire::rules::MAX_FIELDS_PER_RECORD;
use crate::wire::Publish;

/// One field position of a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// Interned field name.
    pub name: u32,
    /// Current value; `None` = deleted (the slot is kept for mask stability).
    pub value: Option<Value>,
}

/// A published record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Update sequence: 1 after the first publish, +1 per publish.
    pub seq: u64,
    /// Origin timestamp of the latest publish, epoch ms.
    pub ts: f64,
    /// Field slots in record order.
    pub slots: Vec<Slot>,
    /// Bumped when slots are compacted (masks taken before are void).
    pub layout: u32,
    /// Record status `stale` (its source went away, or it passed its maximum age); `ok` when
    /// false. Views read it as the pseudo-field [`STATUS_FIELD_NAME`].
    pub stale: bool,
}

/// Name of the pseudo-field views read a record's status from: `"ok"` or `"stale"`
/// (docs/views.md). A published field of this name is delivered but filters never read it.
pub const STATUS_FIELD_NAME: &str = "_status";

/// Field id of [`STATUS_FIELD_NAME`]: reserved (interned ids are dense from 1, and `u32::MAX`
/// is the views' "unknown field"), so records built with other id spaces never collide with it.
pub const STATUS_FIELD: u32 = u32::MAX - 1;

/// What a publish changed: slot indices in message order, and the same as a bit mask.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Applied {
    /// Subject id of the record.
    pub id: u32,
    /// true when this publish created the record (it was pending or unknown).
    pub created: bool,
    /// Changed slots in message order (image publishes: every field, then deletions).
    pub changed: Vec<u8>,
    /// Bit `i` set when slot `i` changed.
    pub mask: u128,
    /// true when the slots were compacted by this publish.
    pub layout_changed: bool,
}

/// All records, by subject id, plus the subject and field-name interners.
#[derive(Debug, Default)]
pub struct Store {
    subjects: Interner,
    fields: Interner,
    /// By subject id - 1, in chunks that never move as subjects are added (`chunked.rs`).
    records: ChunkedVec<Option<Record>>,
    live: usize,
    /// Interned names of the publish being applied (kept to reuse its allocation).
    names: Vec<u32>,
}

impl Store {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets record `id`'s status; true when it changed (false too for an unknown record).
    pub fn set_stale(&mut self, id: u32, stale: bool) -> bool {
        match self.records.get_mut(id as usize - 1).and_then(Option::as_mut) {
            Some(r) if r.stale != stale => {
                r.stale = stale;
                true
            }
            _ => false,
        }
    }

    /// The id of `subject`, interning it (ids are permanent, from 1).
    pub fn subject_id(&mut self, subject: &str) -> u32 {
        let id = self.subjects.intern(subject);
        self.records.grow_with(id as usize, || None);
        id
    }

    /// The id of field name `name`, interning it (ids are permanent). Views compile filter and
    /// sort fields through this, so a field no record has yet still gets its id.
    pub fn field_id(&mut self, name: &str) -> u32 {
        if name == STATUS_FIELD_NAME {
            return STATUS_FIELD;
        }
        self.fields.intern(name)
    }

    /// The id of field name `name` if it was ever interned.
    pub fn field_lookup(&self, name: &str) -> Option<u32> {
        if name == STATUS_FIELD_NAME {
            return Some(STATUS_FIELD);
        }
        self.fields.get(name)
    }

    /// The id of `subject` if it was ever interned (subscribed or published).
    pub fn lookup(&self, subject: &str) -> Option<u32> {
        self.subjects.get(subject)
    }

    /// The subject of `id` (empty if unknown).
    pub fn subject(&self, id: u32) -> &str {
        self.subjects.name(id)
    }

    /// The field name of interned id `name` ([`STATUS_FIELD`]: [`STATUS_FIELD_NAME`]).
    pub fn field_name(&self, name: u32) -> &str {
        if name == STATUS_FIELD {
            return STATUS_FIELD_NAME;
        }
        self.fields.name(name)
    }

    /// The record `id`, `None` while pending (subscribed but never published) or unknown.
    pub fn get(&self, id: u32) -> Option<&Record> {
        self.records.get((id as usize).wrapping_sub(1)).and_then(Option::as_ref)
    }

    /// Number of records that have been published.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when nothing has been published.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Highest subject id handed out.
    pub fn max_id(&self) -> u32 {
        self.subjects.len() as u32
    }

    /// Fields of `rec` at the given slots, as encoder field refs.
    pub fn fields_at<'a>(
        &'a self,
        rec: &'a Record,
        slots: impl Iterator<Item = usize> + Clone + 'a,
    ) -> impl Iterator<Item = FieldRef<'a>> + Clone + 'a {
        slots
            .filter_map(move |i| rec.slots.get(i))
            .map(move |s| self.field_ref(s))
    }

    /// Every present field of `rec`, in record order.
    pub fn image_fields<'a>(&'a self, rec: &'a Record) -> impl Iterator<Item = FieldRef<'a>> + Clone + 'a {
        rec.slots
            .iter()
            .filter(|s| s.value.is_some())
            .map(move |s| self.field_ref(s))
    }

    /// Field `name` (an interned field id) of `rec` as the encoder wants it (`None` value: deleted).
    pub fn field_by_id<'a>(&'a self, rec: &'a Record, name: u32) -> FieldRef<'a> {
        let value = rec.slots.iter().find(|s| s.name == name).and_then(|s| s.value.as_ref());
        let ty = match value {
            Some(Value::Timestamp(_)) => Some(FieldType::Timestamp),
            _ => None,
        };
        (self.fields.name(name), value, ty)
    }

    /// A slot as the encoder wants it; only timestamps are named in `types` (JSON shows the rest).
    fn field_ref<'a>(&'a self, s: &'a Slot) -> FieldRef<'a> {
        let ty = match s.value {
            Some(Value::Timestamp(_)) => Some(FieldType::Timestamp),
            _ => None,
        };
        (self.fields.name(s.name), s.value.as_ref(), ty)
    }

    /// Merges a publish into its record. An image replaces all fields (absent ones are
    /// deleted); a delta merges (`null` deletes). `seq` += 1; `ts` = `p.ts` or `default_ts`.
    /// Errors with `LIMIT_EXCEEDED` (record unchanged) if the record would hold more than
    /// `MAX_FIELDS_PER_RECORD` fields.
    pub fn apply(&mut self, p: &Publish, default_ts: f64, out: &mut Applied) -> Result<()> {
        out.changed.clear();
        out.mask = 0;
        out.layout_changed = false;
        let id = self.subject_id(&p.subject);
        out.id = id;
        let mut names = std::mem::take(&mut self.names);
        intern_names(&mut self.fields, p, &mut names);
        let idx = id as usize - 1;
        let created = self.records[idx].is_none();
        let rec = self.records[idx].get_or_insert_with(|| Record {
            seq: 0,
            ts: 0.0,
            slots: Vec::new(),
            layout: 0,
            stale: false,
        });
        let result = merge(rec, p, &names, default_ts, out);
        self.names = names;
        if created {
            if result.is_err() {
                self.records[idx] = None;
            } else {
                self.live += 1;
            }
        }
        out.created = created;
        result
    }

    /// Merges engine-made fields into record `id` (an interned subject) without a `Publish`:
    /// `fields` are (field id from [`Store::field_id`], value or `None` to delete); `image`
    /// deletes every field not named. `seq` += 1, `ts` = `ts`. Allocation-free once the record
    /// has its slots (result records of statements rewrite the same fields on every event).
    /// `LIMIT_EXCEEDED` (record unchanged) past `MAX_FIELDS_PER_RECORD` fields, like `apply`.
    pub fn apply_fields(
        &mut self,
        id: u32,
        image: bool,
        fields: &[(u32, Option<Value>)],
        ts: f64,
        out: &mut Applied,
    ) -> Result<()> {
        out.changed.clear();
        out.mask = 0;
        out.layout_changed = false;
        out.id = id;
        let Some(idx) = (id as usize).checked_sub(1).filter(|&i| i < self.subjects.len()) else {
            return Err(EngineError::NotFound {
                message: format!("no subject with id {id}"),
            });
        };
        let created = self.records[idx].is_none();
        let subject = self.subjects.name(id);
        let rec = self.records[idx].get_or_insert_with(|| Record {
            seq: 0,
            ts: 0.0,
            slots: Vec::new(),
            layout: 0,
            stale: false,
        });
        let items = fields.iter().map(|(n, v)| (*n, v.as_ref(), true));
        let result = merge_fields(rec, subject, image, items, out);
        match &result {
            Ok(()) => {
                rec.seq += 1;
                rec.ts = ts;
                if created {
                    self.live += 1;
                }
            }
            Err(_) if created => self.records[idx] = None,
            Err(_) => {}
        }
        out.created = created;
        result
    }

    /// [`Store::apply`] of a publish another cluster node applied first (`cluster::records`): the
    /// record ends with that node's `seq` and `ts` instead of its own seq + 1, so every node shows
    /// one seq. The caller checks continuity (a delta applies only on `seq - 1`); an image may jump.
    pub fn apply_with_seq(&mut self, p: &Publish, seq: u64, ts: f64, out: &mut Applied) -> Result<()> {
        self.apply(p, ts, out)?;
        let idx = out.id as usize - 1;
        if let Some(rec) = self.records[idx].as_mut() {
            rec.seq = seq;
            rec.ts = ts;
        }
        Ok(())
    }
}

/// Interns the field names of `p` into `names`, which holds the previous publish's ids: a name
/// equal to the previous publish's name at the same position reuses its id (one short compare
/// instead of a hash and a table probe; publishes of one source repeat their shape).
fn intern_names(fields: &mut Interner, p: &Publish, names: &mut Vec<u32>) {
    names.truncate(p.fields.len());
    for (i, f) in p.fields.iter().enumerate() {
        match names.get(i) {
            Some(&id) if fields.name(id) == f.name.as_str() => {}
            Some(_) => names[i] = fields.intern(&f.name),
            None => names.push(fields.intern(&f.name)),
        }
    }
}

/// Position of field `name` in `rec`, trying `hint` (the field's position in the publish: images
/// of one shape repeat it) before a scan.
#[inline]
fn find(rec: &Record, name: u32, hint: usize) -> Option<usize> {
    match rec.slots.get(hint) {
        Some(s) if s.name == name => Some(hint),
        _ => rec.slots.iter().position(|s| s.name == name),
    }
}

/// Merges publish `p` (field names interned as `names`) into `rec`; see [`Store::apply`].
fn merge(rec: &mut Record, p: &Publish, names: &[u32], default_ts: f64, out: &mut Applied) -> Result<()> {
    let fields = p.fields.iter().zip(names).map(|(f, &n)| (n, f.value.as_ref(), f.typed));
    merge_fields(rec, &p.subject, p.image, fields, out)?;
    rec.seq += 1;
    rec.ts = p.ts.unwrap_or(default_ts);
    Ok(())
}

/// Merges `fields` (interned name, value or `None` to delete, typed) into `rec` as an image
/// (`image`: absent fields are deleted) or a delta; `subject` names the record in the error.
/// Leaves `seq` and `ts` to the caller.
fn merge_fields<'v, I>(rec: &mut Record, subject: &str, image: bool, fields: I, out: &mut Applied) -> Result<()>
where
    I: Iterator<Item = (u32, Option<&'v Value>, bool)> + Clone,
{
    {
        let new_slots = fields
            .clone()
            .enumerate()
            .filter(|(i, (n, v, _))| (image || v.is_some()) && find(rec, *n, *i).is_none())
            .count();
        if rec.slots.len() + new_slots > MAX_FIELDS_PER_RECORD {
            if image {
                // Everything not in the image goes anyway: start from a clean layout.
                rec.slots.clear();
            } else {
                let live = rec.slots.iter().filter(|s| s.value.is_some()).count();
                if live + new_slots > MAX_FIELDS_PER_RECORD {
                    return Err(EngineError::LimitExceeded {
                        message: format!(
                            "record '{subject}' would hold {} fields; a record holds at most {MAX_FIELDS_PER_RECORD}",
                            live + new_slots
                        ),
                    });
                }
                rec.slots.retain(|s| s.value.is_some());
            }
            rec.layout = rec.layout.wrapping_add(1);
            out.layout_changed = true;
        }
        // Exactly the slots needed: a record is never over-allocated (a 19-field image used to
        // leave room for 32).
        if new_slots > 0 {
            rec.slots.reserve_exact(new_slots);
        }

        for (i, (name, value, typed)) in fields.enumerate() {
            let pos = match find(rec, name, i) {
                Some(i) => i,
                None if value.is_none() => continue, // deleting a field the record never had
                None => {
                    rec.slots.push(Slot { name, value: None });
                    rec.slots.len() - 1
                }
            };
            let slot = &mut rec.slots[pos];
            if value.is_none() && slot.value.is_none() && !image {
                continue;
            }
            match (value, &slot.value) {
                // An untyped integral number keeps a timestamp field a timestamp: sources
                // name `types` in images and leave them out of deltas.
                (Some(Value::Number(n)), Some(Value::Timestamp(_)))
                    if !typed && n.fract() == 0.0 && n.abs() <= 8.64e15 =>
                {
                    slot.value = Some(Value::Timestamp(*n as i64));
                }
                // The same value again keeps its string allocation (still reported as changed:
                // what a publish carries goes out); a new long string is written into the old
                // one's buffer (no allocation when it fits).
                (Some(Value::Str(new)), Some(Value::Str(old))) if new == old => {}
                (Some(Value::Str(new)), Some(Value::Str(old))) if new.is_heap() && old.is_heap() => {
                    if let Some(Value::Str(old)) = &mut slot.value {
                        old.assign(new);
                    }
                }
                _ => slot.value = value.cloned(),
            }
            // Slot positions are < MAX_FIELDS_PER_RECORD (128), so they fit a u8 and the mask.
            out.changed.push(pos as u8);
            out.mask |= 1u128 << pos;
        }
        if image {
            for (pos, slot) in rec.slots.iter_mut().enumerate() {
                if out.mask & (1u128 << pos) == 0 && slot.value.is_some() {
                    slot.value = None;
                    out.changed.push(pos as u8);
                    out.mask |= 1u128 << pos;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::PubField;

    fn publish(subject: &str, image: bool, fields: &[(&str, Option<Value>)]) -> Publish {
        Publish {
            subject: subject.into(),
            ts: Some(100.0),
            image,
            fields: fields
                .iter()
                .map(|(n, v)| PubField {
                    name: (*n).into(),
                    value: v.clone(),
                    typed: false,
                })
                .collect(),
        }
    }

    fn fields(store: &Store, id: u32) -> Vec<(String, Option<Value>)> {
        let rec = store.get(id).unwrap();
        store
            .image_fields(rec)
            .map(|(n, v, _)| (n.to_owned(), v.cloned()))
            .collect()
    }

    fn num(n: f64) -> Option<Value> {
        Some(Value::Number(n))
    }

    #[test]
    fn image_then_delta_merge_and_seq() {
        let mut s = Store::new();
        let mut a = Applied::default();
        s.apply(
            &publish("/A", true, &[("bid", num(1.0)), ("ask", num(2.0))]),
            0.0,
            &mut a,
        )
        .unwrap();
        assert!(a.created);
        assert_eq!(a.id, 1);
        assert_eq!(s.get(1).unwrap().seq, 1);
        s.apply(
            &publish(
                "/A",
                false,
                &[("ask", num(3.0)), ("name", Some(Value::Str("x".into())))],
            ),
            0.0,
            &mut a,
        )
        .unwrap();
        assert!(!a.created);
        assert_eq!(a.changed, [1, 2]);
        assert_eq!(a.mask, 0b110);
        assert_eq!(
            fields(&s, 1),
            [
                ("bid".into(), num(1.0)),
                ("ask".into(), num(3.0)),
                ("name".into(), Some(Value::Str("x".into())))
            ]
        );
        // null deletes; the slot stays so positions (and masks) are stable.
        s.apply(&publish("/A", false, &[("bid", None), ("ghost", None)]), 0.0, &mut a)
            .unwrap();
        assert_eq!(a.changed, [0]);
        assert_eq!(fields(&s, 1).len(), 2);
        s.apply(&publish("/A", false, &[("bid", num(9.0))]), 0.0, &mut a)
            .unwrap();
        assert_eq!(a.changed, [0]);
        let rec = s.get(1).unwrap();
        assert_eq!(rec.seq, 4);
        assert_eq!(rec.ts, 100.0);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn image_replaces_all_fields() {
        let mut s = Store::new();
        let mut a = Applied::default();
        s.apply(&publish("/A", true, &[("a", num(1.0)), ("b", num(2.0))]), 0.0, &mut a)
            .unwrap();
        s.apply(&publish("/A", true, &[("b", num(5.0)), ("c", num(6.0))]), 7.0, &mut a)
            .unwrap();
        assert_eq!(fields(&s, 1), [("b".into(), num(5.0)), ("c".into(), num(6.0))]);
        // b and c (message order), then the deleted a.
        assert_eq!(a.changed, [1, 2, 0]);
    }

    #[test]
    fn long_strings_are_replaced_in_place_and_reported() {
        let mut s = Store::new();
        let mut a = Applied::default();
        let text = |t: &str| Some(Value::Str(t.into()));
        let steps = [
            text("Central bank holds rates, item 1"),
            text("Central bank holds rates, item 22"),
            text("Rates"),
            text("Central bank holds rates, item 333"),
            num(4.0),
            text("Central bank holds rates, item 4444"),
        ];
        for v in steps {
            s.apply(&publish("/N", false, &[("headline", v.clone())]), 0.0, &mut a)
                .unwrap();
            assert_eq!(a.changed, [0]);
            assert_eq!(fields(&s, 1), [("headline".to_owned(), v)]);
        }
    }

    #[test]
    fn default_ts_and_sticky_timestamp() {
        let mut s = Store::new();
        let mut a = Applied::default();
        let mut p = publish("/A", true, &[("m", Some(Value::Timestamp(5)))]);
        p.ts = None;
        s.apply(&p, 42.5, &mut a).unwrap();
        assert_eq!(s.get(1).unwrap().ts, 42.5);
        s.apply(&publish("/A", false, &[("m", num(6.0))]), 0.0, &mut a).unwrap();
        assert_eq!(fields(&s, 1), [("m".into(), Some(Value::Timestamp(6)))]);
        s.apply(&publish("/A", false, &[("m", num(6.5))]), 0.0, &mut a).unwrap();
        assert_eq!(fields(&s, 1), [("m".into(), num(6.5))]);
    }

    #[test]
    fn field_limit_compacts_then_errors() {
        let mut s = Store::new();
        let mut a = Applied::default();
        let names: Vec<String> = (0..130).map(|i| format!("f{i}")).collect();
        let first: Vec<(&str, Option<Value>)> = names[..128].iter().map(|n| (n.as_str(), num(1.0))).collect();
        s.apply(&publish("/A", false, &first), 0.0, &mut a).unwrap();
        // A 129th live field is refused; the record is unchanged.
        let e = s
            .apply(&publish("/A", false, &[("f128", num(1.0))]), 0.0, &mut a)
            .unwrap_err();
        assert_eq!(e.code(), crate::error::ErrorCode::LimitExceeded);
        assert_eq!(s.get(1).unwrap().seq, 1);
        // Delete one, add another: the slots compact and the layout changes.
        s.apply(&publish("/A", false, &[("f0", None)]), 0.0, &mut a).unwrap();
        s.apply(&publish("/A", false, &[("f129", num(2.0))]), 0.0, &mut a)
            .unwrap();
        assert!(a.layout_changed);
        assert_eq!(s.get(1).unwrap().slots.len(), 128);
        assert_eq!(a.changed, [127]);
        // An image always fits (it is at most 128 fields).
        let img: Vec<(&str, Option<Value>)> = names[2..130].iter().map(|n| (n.as_str(), num(3.0))).collect();
        s.apply(&publish("/A", true, &img), 0.0, &mut a).unwrap();
        assert_eq!(fields(&s, 1).len(), 128);
    }

    #[test]
    fn engine_fields_merge_as_images_without_a_publish() {
        let mut s = Store::new();
        let mut a = Applied::default();
        let id = s.subject_id("/STAT/x/A");
        let (n, v) = (s.field_id("n"), s.field_id("vwap"));
        s.apply_fields(id, true, &[(n, num(1.0)), (v, num(2.5))], 7.0, &mut a)
            .unwrap();
        assert!(a.created);
        assert_eq!(fields(&s, id), [("n".into(), num(1.0)), ("vwap".into(), num(2.5))]);
        s.apply_fields(id, true, &[(n, num(0.0)), (v, None)], 8.0, &mut a)
            .unwrap();
        assert!(!a.created);
        assert_eq!(a.changed, [0, 1]);
        assert_eq!(fields(&s, id), [("n".into(), num(0.0))]);
        s.apply_fields(id, true, &[], 9.0, &mut a).unwrap();
        assert_eq!(fields(&s, id), []);
        let rec = s.get(id).unwrap();
        assert_eq!((rec.seq, rec.ts), (3, 9.0));
        assert_eq!(s.len(), 1);
        let e = s.apply_fields(99, true, &[], 0.0, &mut a).unwrap_err();
        assert_eq!(e.code(), crate::error::ErrorCode::NotFound);
    }

    #[test]
    fn pending_subjects_have_ids_but_no_record() {
        let mut s = Store::new();
        let id = s.subject_id("/P");
        assert_eq!(id, 1);
        assert!(s.get(id).is_none());
        assert!(s.get(0).is_none());
        assert!(s.is_empty());
        assert_eq!(s.subject(id), "/P");
    }

    #[test]
    fn changing_publish_shapes_keep_field_ids_right() {
        // The positional name cache must miss on every shape change: longer, shorter, reordered.
        let mut s = Store::new();
        let mut a = Applied::default();
        let shapes: [&[(&str, Option<Value>)]; 5] = [
            &[("bid", num(1.0)), ("ask", num(2.0))],
            &[("ask", num(3.0)), ("bid", num(4.0))],
            &[("ask", num(5.0)), ("last", num(6.0)), ("bid", num(7.0))],
            &[("ask", num(8.0))],
            &[("ask", num(9.0)), ("bid", num(10.0)), ("last", num(11.0))],
        ];
        for shape in shapes {
            s.apply(&publish("/Q", false, shape), 0.0, &mut a).unwrap();
            let rec = s.get(a.id).unwrap();
            for (n, v) in shape {
                let id = s.field_lookup(n).unwrap();
                assert_eq!(s.field_by_id(rec, id).1, v.as_ref(), "field {n}");
            }
        }
        assert_eq!(
            fields(&s, 1),
            [
                ("bid".to_owned(), num(10.0)),
                ("ask".to_owned(), num(9.0)),
                ("last".to_owned(), num(11.0))
            ]
        );
        assert_eq!(s.field_name(s.field_lookup("last").unwrap()), "last");
        assert_eq!(s.field_lookup("nope"), None);
    }

    #[test]
    fn apply_with_seq_takes_the_given_seq_and_ts() {
        let mut s = Store::new();
        let mut a = Applied::default();
        s.apply_with_seq(&publish("/A", true, &[("bid", num(1.0))]), 41, 5.0, &mut a)
            .unwrap();
        assert!(a.created);
        assert_eq!((s.get(1).unwrap().seq, s.get(1).unwrap().ts), (41, 5.0));
        s.apply_with_seq(&publish("/A", false, &[("bid", num(2.0))]), 42, 6.0, &mut a)
            .unwrap();
        assert_eq!(a.changed, [0]);
        assert_eq!((s.get(1).unwrap().seq, s.get(1).unwrap().ts), (42, 6.0));
        // A local publish afterwards continues from the given seq.
        s.apply(&publish("/A", false, &[("bid", num(3.0))]), 0.0, &mut a)
            .unwrap();
        assert_eq!(s.get(1).unwrap().seq, 43);
    }
}
