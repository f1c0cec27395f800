//! Validation of an inbound message against a [`Dictionary`], in QuickFIX's order:
//!
//! 1. structure, in wire order: a header field after the body started ("Tag specified out of
//!    required order"), a field repeated outside a group ("Tag appears more than once"), a group
//!    entry that does not start with its delimiter or whose fields are out of order;
//! 2. MsgType is one of the version's ("Invalid MsgType");
//! 3. required fields: header, then body (and each group entry), then trailer;
//! 4. each field, header first, then trailer, then body, by ascending tag: has a value, has the
//!    type's format, has one of the enumerated values, is a tag of the specification, belongs to
//!    this message type, and a group's NumInGroup matches its entries.
//!
//! The first problem found is returned; the message is valid when there is none.

use super::index::PartIndex;
use super::{Dictionary, FieldType, GroupDef, Reject, RejectReason};
use crate::fix::codec::{parse_i64, time, Message};

/// Where a field of the message belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Header,
    Body,
    /// A field inside a group entry (validated against the group's members).
    Group,
    Trailer,
}

/// Validates messages; keeps its scratch buffers between messages.
#[derive(Debug, Default)]
pub struct Validator {
    places: Vec<Place>,
    order: Vec<(i64, u32)>,
    /// (index of a NumInGroup field, entries found)
    groups: Vec<(u32, u32)>,
}

impl Validator {
    /// A validator with empty scratch buffers.
    pub fn new() -> Validator {
        Validator::default()
    }

    /// Checks `msg` against `dict`; `Err` names the first problem.
    pub fn validate(&mut self, dict: &Dictionary, msg: &Message<'_>) -> Result<(), Reject> {
        // the body's tables; None for a message type without a definition
        let def = dict.message_index(msg.msg_type()).map(|(_, index)| index);
        self.structure(dict, def, msg)?;
        if !dict.is_msg_type(msg.msg_type()) {
            return Err(Reject::tag(RejectReason::InvalidMsgType, 35));
        }
        self.required(dict, def, msg)?;
        self.fields(dict, def, msg)
    }

    fn structure(&mut self, dict: &Dictionary, def: Option<&PartIndex>, msg: &Message<'_>) -> Result<(), Reject> {
        let spans = msg.spans();
        self.places.clear();
        self.groups.clear();
        self.places.resize(spans.len(), Place::Body);
        let mut in_header = true;
        let mut i = 0;
        while i < spans.len() {
            let tag = spans[i].tag;
            if dict.is_trailer_field(tag) {
                self.places[i] = Place::Trailer;
                i += 1;
                continue;
            }
            if i > 0 && self.places[i - 1] == Place::Trailer {
                return Err(Reject::tag(RejectReason::TagSpecifiedOutOfRequiredOrder, tag));
            }
            if dict.is_header_field(tag) {
                if !in_header {
                    return Err(Reject::tag(RejectReason::TagSpecifiedOutOfRequiredOrder, tag));
                }
                self.places[i] = Place::Header;
                if let Some(g) = dict.index().header.group(tag) {
                    i = self.group(g, msg, i)?;
                    continue;
                }
                i += 1;
                continue;
            }
            in_header = false;
            self.places[i] = Place::Body;
            if let Some(g) = def.and_then(|d| d.group(tag)) {
                i = self.group(g, msg, i)?;
                continue;
            }
            i += 1;
        }
        // a tag twice outside groups; for message types without a definition only the header
        // is checked, since their groups are unknown
        self.order.clear();
        for (i, s) in spans.iter().enumerate() {
            let place = self.places[i];
            if place == Place::Header || place == Place::Trailer || (place == Place::Body && def.is_some()) {
                self.order.push((i64::from(s.tag), i as u32));
            }
        }
        self.order.sort_unstable();
        let dup = self
            .order
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1])
            .min_by_key(|&(_, i)| i);
        if let Some((tag, _)) = dup {
            return Err(Reject::tag(RejectReason::TagAppearsMoreThanOnce, tag as i32));
        }
        Ok(())
    }

    /// Walks a group starting at its NumInGroup field `at`; returns the index after the group.
    fn group(&mut self, g: &GroupDef, msg: &Message<'_>, at: usize) -> Result<usize, Reject> {
        let spans = msg.spans();
        let mut entries = 0u32;
        let mut prev: Option<usize> = None;
        let mut i = at + 1;
        while i < spans.len() {
            let tag = spans[i].tag;
            let Some(offset) = g.members.iter().position(|m| m.tag as i32 == tag) else {
                break;
            };
            if tag == g.delimiter as i32 {
                entries += 1;
                prev = Some(0);
            } else {
                let Some(p) = prev else {
                    return Err(Reject {
                        reason: RejectReason::RepeatingGroupFieldsOutOfOrder,
                        tag: Some(tag),
                        group_delimiter: Some((g.count_tag, g.delimiter)),
                    });
                };
                if offset <= p {
                    return Err(Reject::tag(RejectReason::RepeatingGroupFieldsOutOfOrder, tag));
                }
                prev = Some(offset);
            }
            self.places[i] = Place::Group;
            if let Some(inner) = g.members[offset].group {
                i = self.group(inner, msg, i)?;
                continue;
            }
            i += 1;
        }
        self.groups.push((at as u32, entries));
        Ok(i)
    }

    fn required(&mut self, dict: &Dictionary, def: Option<&PartIndex>, msg: &Message<'_>) -> Result<(), Reject> {
        let spans = msg.spans();
        let index = dict.index();
        // one bit per required tag of each part, set by the fields present in that part
        let (mut header, mut body, mut trailer) = (0u64, 0u64, 0u64);
        for (s, &place) in spans.iter().zip(&self.places) {
            let (part, seen) = match place {
                Place::Header => (&index.header, &mut header),
                Place::Trailer => (&index.trailer, &mut trailer),
                Place::Body => match def {
                    Some(d) => (d, &mut body),
                    None => continue,
                },
                Place::Group => continue,
            };
            if let Some(bit) = part.required_bit(s.tag) {
                *seen |= bit;
            }
        }
        if let Some(tag) = index.header.first_missing(header) {
            return Err(Reject::tag(RejectReason::RequiredTagMissing, tag as i32));
        }
        if let Some(def) = def {
            if let Some(tag) = def.first_missing(body) {
                return Err(Reject::tag(RejectReason::RequiredTagMissing, tag as i32));
            }
            // required fields of each group entry
            for &(at, _) in &self.groups {
                let at = at as usize;
                let Some(g) = def.group(spans[at].tag) else {
                    continue;
                };
                let mut entry_has: Vec<u32> = Vec::new();
                let check = |entry: &[u32]| {
                    g.members
                        .iter()
                        .filter(|m| m.required && !entry.contains(&m.tag))
                        .map(|m| m.tag)
                        .min()
                };
                for s in &spans[at + 1..] {
                    if !g.members.iter().any(|m| m.tag as i32 == s.tag) {
                        break;
                    }
                    if s.tag == g.delimiter as i32 && !entry_has.is_empty() {
                        if let Some(tag) = check(&entry_has) {
                            return Err(Reject::tag(RejectReason::RequiredTagMissing, tag as i32));
                        }
                        entry_has.clear();
                    }
                    entry_has.push(s.tag as u32);
                }
                if !entry_has.is_empty() {
                    if let Some(tag) = check(&entry_has) {
                        return Err(Reject::tag(RejectReason::RequiredTagMissing, tag as i32));
                    }
                }
            }
        }
        if let Some(tag) = index.trailer.first_missing(trailer) {
            return Err(Reject::tag(RejectReason::RequiredTagMissing, tag as i32));
        }
        Ok(())
    }

    fn fields(&mut self, dict: &Dictionary, def: Option<&PartIndex>, msg: &Message<'_>) -> Result<(), Reject> {
        let spans = msg.spans();
        // header, then trailer, then body, then group fields, each by ascending tag: one sort
        // of (place, tag) keys
        self.order.clear();
        for (i, s) in spans.iter().enumerate() {
            let place = self.places[i];
            // BeginString, BodyLength and MsgType come first in the header's order
            let key = if place == Place::Header && i < 3 {
                i as i32 - 3
            } else {
                s.tag
            };
            self.order.push((place_rank(place) + i64::from(key), i as u32));
        }
        self.order.sort_unstable();
        {
            for &(_, i) in &self.order {
                let place = self.places[i as usize];
                let span = spans[i as usize];
                let tag = span.tag;
                let value = msg.value(span);
                if value.is_empty() {
                    return Err(Reject::tag(RejectReason::TagSpecifiedWithoutValue, tag));
                }
                let field = if tag > 0 { dict.field_values(tag as u32) } else { None };
                if let Some((f, values)) = field {
                    if !valid_format(f.ty, value) {
                        return Err(Reject::tag(RejectReason::IncorrectDataFormat, tag));
                    }
                    if !values.allows(f.ty, value) {
                        return Err(Reject::tag(RejectReason::ValueIncorrect, tag));
                    }
                }
                if field.is_none() {
                    return Err(Reject::tag(RejectReason::InvalidTagNumber, tag));
                }
                if place == Place::Body {
                    if let Some(def) = def {
                        if !def.members.contains(tag) {
                            return Err(Reject::tag(RejectReason::TagNotDefinedForMessageType, tag));
                        }
                    }
                }
                if let Some(&(_, entries)) = self.groups.iter().find(|&&(at, _)| at == i) {
                    if parse_i64(value) != Some(i64::from(entries)) {
                        return Err(Reject::tag(RejectReason::IncorrectNumInGroupCount, tag));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Sort key of a place in the order fields are checked; a tag (any i32) is added to it.
fn place_rank(place: Place) -> i64 {
    let rank: i64 = match place {
        Place::Header => 0,
        Place::Trailer => 1,
        Place::Body => 2,
        Place::Group => 3,
    };
    rank << 33
}

/// True if `value` has the syntax of `ty`.
pub fn valid_format(ty: FieldType, value: &[u8]) -> bool {
    match ty {
        FieldType::Int | FieldType::Length | FieldType::SeqNum | FieldType::NumInGroup | FieldType::DayOfMonth => {
            parse_i64(value).is_some()
        }
        t if t.is_decimal() => valid_decimal(value),
        FieldType::Char => value.len() == 1,
        FieldType::Boolean => value == b"Y" || value == b"N",
        FieldType::UtcTimestamp => time::parse_utc_timestamp(value).is_some(),
        FieldType::UtcTimeOnly => time::is_utc_time_only(value),
        FieldType::UtcDateOnly | FieldType::LocalMktDate => time::is_date(value),
        FieldType::MonthYear => time::is_month_year(value),
        _ => true,
    }
}

/// `-?digits[.digits]` with at least one digit; no `+`, no exponent.
fn valid_decimal(value: &[u8]) -> bool {
    let body = value.strip_prefix(b"-").unwrap_or(value);
    let mut digits = 0;
    let mut dots = 0;
    for &b in body {
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    digits > 0 && dots <= 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::codec::{Builder, Frame, Framer, Parser};

    /// Validates "|"-separated fields after 35 as a FIX 4.2 message.
    fn check(msg_type: &str, fields: &str) -> Result<(), Reject> {
        let mut b = Builder::new();
        b.begin(msg_type.as_bytes())
            .raw(fields.replace('|', "\u{1}").as_bytes());
        let bytes = b.finish(b"FIX.4.2").to_vec();
        let mut f = Framer::new(1 << 16);
        f.push(&bytes);
        let Some(Frame::Message(r)) = f.next_frame() else {
            panic!("not framed")
        };
        let mut p = Parser::new();
        let m = p.parse(&f.bytes()[r]).expect("parses");
        Validator::new().validate(&Dictionary::fix42(), &m)
    }

    const HDR: &str = "34=2|49=TW|52=20240101-10:00:00.000|56=ISLD|";

    fn tag(reason: RejectReason, tag: i32) -> Result<(), Reject> {
        Err(Reject::tag(reason, tag))
    }

    #[test]
    fn accepts_valid_messages() {
        assert_eq!(check("0", HDR), Ok(()));
        let nos = "11=ID|21=1|40=1|54=1|38=002000.00|55=INTC|60=20240101-10:00:00|167=FUT|";
        assert_eq!(check("D", &format!("{HDR}{nos}")), Ok(()));
        let zero = "320=A|322=B|323=6|55=TBS|393=0|146=0|";
        assert_eq!(check("d", &format!("{HDR}{zero}")), Ok(()));
        let groups = "11=ID|21=1|40=1|54=1|55=INTC|60=20240101-10:00:00|78=2|79=a|80=50|79=b|80=150|";
        assert_eq!(check("D", &format!("{HDR}{groups}")), Ok(()));
    }

    #[test]
    fn names_the_tag_of_each_problem() {
        use RejectReason::*;
        assert_eq!(check("0", &format!("{HDR}999=HI|")), tag(InvalidTagNumber, 999));
        assert_eq!(check("0", &format!("{HDR}-1=HI|")), tag(InvalidTagNumber, -1));
        assert_eq!(
            check("0", "34=2|49=TW|52=20240101-10:00:00|"),
            tag(RequiredTagMissing, 56)
        );
        assert_eq!(
            check("0", &format!("{HDR}55=MSFT|")),
            tag(TagNotDefinedForMessageType, 55)
        );
        assert_eq!(
            check("0", "34=2|49=TW|52=20240101-10:00:00|56=|"),
            tag(TagSpecifiedWithoutValue, 56)
        );
        let base = "11=ID|40=1|54=1|55=INTC|60=20240101-10:00:00|";
        assert_eq!(check("D", &format!("{HDR}{base}21=4|")), tag(ValueIncorrect, 21));
        assert_eq!(
            check("D", &format!("{HDR}{base}21=1|38=+200.00|")),
            tag(IncorrectDataFormat, 38)
        );
        assert_eq!(
            check("D", &format!("{HDR}{base}21=1|126=20040415|")),
            tag(IncorrectDataFormat, 126)
        );
        assert_eq!(
            check(
                "D",
                &format!("{HDR}11=ID|21=1|40=1|54=1|40=2|55=I|60=20240101-10:00:00|")
            ),
            tag(TagAppearsMoreThanOnce, 40)
        );
        assert_eq!(
            check(
                "D",
                "11=id|21=3|40=1|54=1|55=MSFT|60=20240101-10:00:00|34=2|49=TW|52=20240101-10:00:00|56=ISLD|"
            ),
            tag(TagSpecifiedOutOfRequiredOrder, 34)
        );
        assert_eq!(check("*", HDR), tag(InvalidMsgType, 35));
        assert_eq!(
            check("D", &format!("{HDR}11=id|21=3|40=1|54=1|60=20240101-10:00:00|")),
            tag(RequiredTagMissing, 55)
        );
        let count = "386=3|336=PRE-OPEN|336=AFTER-HOURS|";
        assert_eq!(
            check("D", &format!("{HDR}{base}21=1|{count}")),
            tag(IncorrectNumInGroupCount, 386)
        );
        let order = "78=2|80=50|79=acct1|80=150|79=acct2|";
        let err = check("D", &format!("{HDR}{base}21=1|{order}")).expect_err("delimiter");
        assert_eq!(
            (err.reason, err.tag, err.group_delimiter),
            (RepeatingGroupFieldsOutOfOrder, Some(80), Some((78, 79)))
        );
        let mut text = Vec::new();
        err.write_text(&mut text);
        assert_eq!(text, b"The group 78 must set the delimiter field 79");
        // the header is checked before the body: an empty routing field wins over a bad OrdType
        assert_eq!(
            check(
                "D",
                &format!("{HDR}145=|11=ID|21=3|40=w|54=1|55=INTC|60=20240101-10:00:00|")
            ),
            tag(TagSpecifiedWithoutValue, 145)
        );
    }

    #[test]
    fn decimal_rules() {
        assert!(valid_decimal(b"002000.00") && valid_decimal(b"-1") && valid_decimal(b".5") && valid_decimal(b"5."));
        assert!(!valid_decimal(b"+1") && !valid_decimal(b"1e5") && !valid_decimal(b".") && !valid_decimal(b"1.2.3"));
    }
}
