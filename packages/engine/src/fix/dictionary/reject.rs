//! Session-level reject reasons (SessionRejectReason, 373) and their standard texts.

/// SessionRejectReason (373) values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// 0
    InvalidTagNumber,
    /// 1
    RequiredTagMissing,
    /// 2
    TagNotDefinedForMessageType,
    /// 3
    UndefinedTag,
    /// 4
    TagSpecifiedWithoutValue,
    /// 5
    ValueIncorrect,
    /// 6
    IncorrectDataFormat,
    /// 7
    DecryptionProblem,
    /// 8
    SignatureProblem,
    /// 9
    CompIdProblem,
    /// 10
    SendingTimeAccuracyProblem,
    /// 11
    InvalidMsgType,
    /// 12 (FIX 4.3+)
    XmlValidationError,
    /// 13 (FIX 4.3+)
    TagAppearsMoreThanOnce,
    /// 14 (FIX 4.3+)
    TagSpecifiedOutOfRequiredOrder,
    /// 15 (FIX 4.3+)
    RepeatingGroupFieldsOutOfOrder,
    /// 16 (FIX 4.3+)
    IncorrectNumInGroupCount,
    /// 17 (FIX 4.3+)
    NonDataValueIncludesFieldDelimiter,
    /// 99 (FIX 4.4)
    Other,
}

impl RejectReason {
    /// The 373 value.
    pub fn code(self) -> u32 {
        match self {
            RejectReason::InvalidTagNumber => 0,
            RejectReason::RequiredTagMissing => 1,
            RejectReason::TagNotDefinedForMessageType => 2,
            RejectReason::UndefinedTag => 3,
            RejectReason::TagSpecifiedWithoutValue => 4,
            RejectReason::ValueIncorrect => 5,
            RejectReason::IncorrectDataFormat => 6,
            RejectReason::DecryptionProblem => 7,
            RejectReason::SignatureProblem => 8,
            RejectReason::CompIdProblem => 9,
            RejectReason::SendingTimeAccuracyProblem => 10,
            RejectReason::InvalidMsgType => 11,
            RejectReason::XmlValidationError => 12,
            RejectReason::TagAppearsMoreThanOnce => 13,
            RejectReason::TagSpecifiedOutOfRequiredOrder => 14,
            RejectReason::RepeatingGroupFieldsOutOfOrder => 15,
            RejectReason::IncorrectNumInGroupCount => 16,
            RejectReason::NonDataValueIncludesFieldDelimiter => 17,
            RejectReason::Other => 99,
        }
    }

    /// The standard description, used as the Reject's Text (58).
    pub fn text(self) -> &'static str {
        match self {
            RejectReason::InvalidTagNumber => "Invalid tag number",
            RejectReason::RequiredTagMissing => "Required tag missing",
            RejectReason::TagNotDefinedForMessageType => "Tag not defined for this message type",
            RejectReason::UndefinedTag => "Undefined Tag",
            RejectReason::TagSpecifiedWithoutValue => "Tag specified without a value",
            RejectReason::ValueIncorrect => "Value is incorrect (out of range) for this tag",
            RejectReason::IncorrectDataFormat => "Incorrect data format for value",
            RejectReason::DecryptionProblem => "Decryption problem",
            RejectReason::SignatureProblem => "Signature problem",
            RejectReason::CompIdProblem => "CompID problem",
            RejectReason::SendingTimeAccuracyProblem => "SendingTime accuracy problem",
            RejectReason::InvalidMsgType => "Invalid MsgType",
            RejectReason::XmlValidationError => "XML Validation error",
            RejectReason::TagAppearsMoreThanOnce => "Tag appears more than once",
            RejectReason::TagSpecifiedOutOfRequiredOrder => "Tag specified out of required order",
            RejectReason::RepeatingGroupFieldsOutOfOrder => "Repeating group fields out of order",
            RejectReason::IncorrectNumInGroupCount => "Incorrect NumInGroup count for repeating group",
            RejectReason::NonDataValueIncludesFieldDelimiter => {
                "Non Data value includes field delimiter (SOH character)"
            }
            RejectReason::Other => "Other",
        }
    }

    /// True if `begin_string`'s SessionRejectReason enumeration has this value (FIX 4.2 stops
    /// at 11; FIX 4.4 adds 12..17 and 99). A reason outside it is sent without 373.
    pub fn in_version(self, fix44: bool) -> bool {
        fix44 || self.code() <= 11
    }
}

/// Why an inbound message is rejected at the session level: the reason, the tag it refers to
/// (RefTagID, 371) and, for the few cases QuickFIX words differently, a specific text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reject {
    /// SessionRejectReason.
    pub reason: RejectReason,
    /// The offending tag, if any (may be 0 or negative for an invalid tag number).
    pub tag: Option<i32>,
    /// A group whose first field is not its delimiter: (NumInGroup tag, delimiter tag).
    pub group_delimiter: Option<(u32, u32)>,
}

impl Reject {
    /// A reject for `reason` naming `tag`.
    pub fn tag(reason: RejectReason, tag: i32) -> Reject {
        Reject {
            reason,
            tag: Some(tag),
            group_delimiter: None,
        }
    }

    /// A reject for `reason` without a tag.
    pub fn reason(reason: RejectReason) -> Reject {
        Reject {
            reason,
            tag: None,
            group_delimiter: None,
        }
    }

    /// Writes the Text (58): the standard description, and the tag when there is one
    /// (`Required tag missing, field=55`). Group members out of order are worded as QuickFIX
    /// words them (`Out of order repeating group members`, the tag in RefTagID only).
    pub fn write_text(&self, out: &mut Vec<u8>) {
        if let Some((count, delimiter)) = self.group_delimiter {
            out.extend_from_slice(b"The group ");
            super::super::codec::push_u64(out, u64::from(count));
            out.extend_from_slice(b" must set the delimiter field ");
            super::super::codec::push_u64(out, u64::from(delimiter));
            return;
        }
        if self.reason == RejectReason::RepeatingGroupFieldsOutOfOrder {
            out.extend_from_slice(b"Out of order repeating group members");
            return;
        }
        out.extend_from_slice(self.reason.text().as_bytes());
        if let Some(tag) = self.tag {
            out.extend_from_slice(b", field=");
            super::super::codec::push_i64(out, i64::from(tag));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: Reject) -> String {
        let mut out = Vec::new();
        r.write_text(&mut out);
        String::from_utf8(out).expect("ascii")
    }

    #[test]
    fn texts_name_the_tag_except_quickfix_worded_cases() {
        assert_eq!(
            text(Reject::tag(RejectReason::RequiredTagMissing, 55)),
            "Required tag missing, field=55"
        );
        assert_eq!(
            text(Reject::tag(RejectReason::RepeatingGroupFieldsOutOfOrder, 661)),
            "Out of order repeating group members"
        );
        let delimiter = Reject {
            reason: RejectReason::RepeatingGroupFieldsOutOfOrder,
            tag: Some(864),
            group_delimiter: Some((146, 55)),
        };
        assert_eq!(text(delimiter), "The group 146 must set the delimiter field 55");
    }
}
