//! Source-frame decoder: a JSON array of `record.publish` messages (or one such object) ->
//! `Vec<Publish>`, validated against packages/protocol/src/limits.ts. The whole frame is
//! rejected if any message is bad; the error names the message `index` and the `field`.

use super::field_name::FieldName;
use super::grants::PublishGrants;
use super::json::{self, Json};
use super::rules::{
    check_field_name, check_subject, show, show_str, MAX_FIELDS_PER_RECORD, MAX_PUBLISHES_PER_FRAME,
    MAX_STRING_VALUE_BYTES,
};
use crate::error::{EngineError, Result};
use crate::value::{FieldType, Value};
use std::borrow::Cow;

// Largest |timestamp| accepted, ms: JavaScript's Date range (±8.64e15).
use tidewire_protocol::limits::MAX_TIMESTAMP_MS;

/// One field of a publish: name, value (`None` = `null` = delete) and whether `types` named its type.
#[derive(Debug, Clone, PartialEq)]
pub struct PubField {
    /// Field name (validated). Decoded names of at most 15 bytes and the engine's own names
    /// (`FieldName::from_static`) take no heap allocation.
    pub name: FieldName,
    /// New value; `None` deletes the field.
    pub value: Option<Value>,
    /// true when the publish's `types` named this field (explicit type; otherwise a number
    /// written to a timestamp field stays a timestamp).
    pub typed: bool,
}

/// A validated `record.publish`.
#[derive(Debug, Clone, PartialEq)]
pub struct Publish {
    /// The record's subject (validated).
    pub subject: String,
    /// Origin timestamp, epoch ms; `None`: the engine uses the receive time.
    pub ts: Option<f64>,
    /// true: `fields` is the whole record. false (default): a delta.
    pub image: bool,
    /// Fields in message order.
    pub fields: Vec<PubField>,
}

/// Decodes a source frame (one `record.publish` object or an array of them).
///
/// Errors: `BAD_FRAME` (not JSON, not an object/array), `BAD_REQUEST` (a rule broken; `index`
/// = position in the array, absent for a single object; `field` = dotted path), `UNKNOWN_TYPE`
/// (a message other than `record.publish`).
///
/// Plain valid frames (no escapes in keys or strings: nearly every feed's) are decoded in one
/// pass by `scan`; any other frame, valid or not, by the tree decoder, which alone words errors.
/// An invalid frame is therefore scanned up to its first problem, then parsed again.
pub fn decode_source_frame(text: &str) -> Result<Vec<Publish>> {
    decode_source_frame_as(text, None)
}

/// [`decode_source_frame`] for a source with publish `grants`: besides every rule, each
/// message's subject must be granted, else the frame is refused `NOT_ENTITLED` (naming the
/// message index, 0 for a single object, and `subject`) before any other rule is checked, as
/// the server refused it. `None` (or grants that allow everything): no grants check.
///
/// Cost: the same single parse as an ungranted frame (the scanner checks each subject as it
/// reads it; the tree decoder walks the parsed messages once). Nesting deeper than serde_json's
/// recursion limit (128) is refused `BAD_FRAME` while parsing, before anything deeper is built.
pub fn decode_source_frame_as(text: &str, grants: Option<&PublishGrants>) -> Result<Vec<Publish>> {
    let grants = grants.filter(|g| g.checks());
    if let Some(batch) = super::scan::decode_plain(text, grants) {
        return Ok(batch);
    }
    decode_tree(text, grants)
}

/// The tree decoder: parses the whole frame into a `Json` tree, then validates each message.
/// Same results and errors as [`decode_source_frame`] (about twice its CPU on valid frames): it
/// is that function's slow path, the source of every error, and the reference the tests hold
/// the one-pass scanner to.
pub fn decode_source_frame_tree(text: &str) -> Result<Vec<Publish>> {
    decode_tree(text, None)
}

/// The tree decoder with `grants` (already known to need checking).
fn decode_tree(text: &str, grants: Option<&PublishGrants>) -> Result<Vec<Publish>> {
    let root = json::parse(text).map_err(|e| EngineError::BadFrame {
        message: format!("frame is not valid JSON: {e}"),
        index: None,
    })?;
    if let Some(g) = grants {
        refuse_ungranted(&root, g)?;
    }
    match root {
        Json::Arr(items) => {
            if items.is_empty() || items.len() > MAX_PUBLISHES_PER_FRAME {
                return Err(EngineError::bad_request(
                    format!(
                        "a publish frame must hold 1..{MAX_PUBLISHES_PER_FRAME} messages, got {}",
                        items.len()
                    ),
                    None,
                    None,
                ));
            }
            items
                .into_iter()
                .enumerate()
                .map(|(i, m)| decode_publish(m, Some(i as u32)))
                .collect()
        }
        obj @ Json::Obj(_) => Ok(vec![decode_publish(obj, None)?]),
        other => Err(EngineError::BadFrame {
            message: format!(
                "frame must be a record.publish object or an array of them, got {}",
                other.kind()
            ),
            index: None,
        }),
    }
}

/// `NOT_ENTITLED` for the first message (of an array, or the single object: index 0) whose
/// subject is a valid subject `grants` does not permit. The subject is the last `subject` key's,
/// as `JSON.parse` reads it (a repeated key is refused later anyway). Malformed subjects are left
/// to the rules (`BAD_REQUEST`).
fn refuse_ungranted(root: &Json<'_>, grants: &PublishGrants) -> Result<()> {
    let items = match root {
        Json::Arr(items) => items.as_slice(),
        obj @ Json::Obj(_) => std::slice::from_ref(obj),
        _ => &[],
    };
    for (i, item) in items.iter().enumerate() {
        let Json::Obj(entries) = item else { continue };
        if let Some((_, Json::Str(subject))) = entries.iter().rev().find(|(k, _)| k == "subject") {
            if check_subject(subject).is_ok() && !grants.permits(subject) {
                return Err(grants.refusal(subject, i as u32));
            }
        }
    }
    Ok(())
}

fn bad(index: Option<u32>, field: &str, message: String) -> EngineError {
    EngineError::bad_request(message, Some(field), index)
}

fn decode_publish(msg: Json<'_>, index: Option<u32>) -> Result<Publish> {
    let Json::Obj(entries) = msg else {
        return Err(EngineError::BadFrame {
            message: format!(
                "message {} must be a JSON object, got {}",
                index.unwrap_or(0),
                msg.kind()
            ),
            index,
        });
    };
    let mut ty = None;
    let mut subject = None;
    let mut ts = None;
    let mut image = None;
    let mut fields = None;
    let mut types = None;
    let mut unknown = None;
    for (key, value) in entries {
        let slot = match key.as_ref() {
            "type" => &mut ty,
            "subject" => &mut subject,
            "ts" => &mut ts,
            "image" => &mut image,
            "fields" => &mut fields,
            "types" => &mut types,
            _ => {
                // Reported after `type`: a message of another type is UNKNOWN_TYPE, not a bad key.
                if unknown.is_none() {
                    unknown = Some(key);
                }
                continue;
            }
        };
        if slot.is_some() {
            return Err(bad(index, &key, format!("'{key}' appears twice")));
        }
        *slot = Some(value);
    }

    match ty {
        Some(Json::Str(t)) if t == "record.publish" => {}
        Some(Json::Str(t)) => {
            return Err(EngineError::UnknownType {
                message: format!("'type' ({}) must be 'record.publish' in a source frame", show_str(&t)),
                index,
            })
        }
        Some(other) => {
            return Err(bad(
                index,
                "type",
                format!("'type' ({}) must be a string", show(&other.to_json())),
            ))
        }
        None => return Err(bad(index, "type", "'type' is required".into())),
    }
    if let Some(key) = unknown {
        return Err(bad(
            index,
            &key,
            format!("'{}' is not a field of record.publish", show(&key)),
        ));
    }

    let subject = match subject {
        Some(Json::Str(s)) => {
            check_subject(&s).map_err(|rule| bad(index, "subject", format!("'subject' ({}) {rule}", show_str(&s))))?;
            s.into_owned()
        }
        Some(other) => {
            return Err(bad(
                index,
                "subject",
                format!(
                    "'subject' ({}) must be a subject starting with '/'",
                    show(&other.to_json())
                ),
            ))
        }
        None => return Err(bad(index, "subject", "'subject' is required".into())),
    };

    let ts = match ts {
        None => None,
        Some(Json::Num(n)) if n.is_finite() => Some(n),
        Some(other) => {
            return Err(bad(
                index,
                "ts",
                format!("'ts' ({}) must be a finite number (epoch ms)", show(&other.to_json())),
            ))
        }
    };

    let image = match image {
        None => false,
        Some(Json::Bool(b)) => b,
        Some(other) => {
            return Err(bad(
                index,
                "image",
                format!("'image' ({}) must be a boolean", show(&other.to_json())),
            ))
        }
    };

    let entries = match fields {
        Some(Json::Obj(e)) => e,
        Some(other) => {
            return Err(bad(
                index,
                "fields",
                format!("'fields' must be an object, got {}", other.kind()),
            ))
        }
        None => return Err(bad(index, "fields", "'fields' is required".into())),
    };
    if entries.len() > MAX_FIELDS_PER_RECORD {
        return Err(bad(
            index,
            "fields",
            format!(
                "'fields' holds {} fields; a record holds at most {MAX_FIELDS_PER_RECORD}",
                entries.len()
            ),
        ));
    }
    let mut out: Vec<PubField> = Vec::with_capacity(entries.len());
    for (name, value) in entries {
        // The path is only built for an error: this loop runs for every field of every publish.
        let path = || format!("fields.{name}");
        check_field_name(&name).map_err(|rule| bad(index, &path(), format!("'{}' {rule}", show(&path()))))?;
        if out.iter().any(|f| f.name == *name) {
            return Err(bad(index, &path(), format!("'{}' appears twice", path())));
        }
        let value = match value {
            Json::Null => None,
            Json::Bool(b) => Some(Value::Bool(b)),
            Json::Num(n) if n.is_finite() => Some(Value::Number(n)),
            Json::Str(s) if s.len() <= MAX_STRING_VALUE_BYTES => Some(Value::Str(s.as_ref().into())),
            Json::Str(s) => {
                return Err(bad(
                    index,
                    &path(),
                    format!(
                        "'{}' is {} bytes long; a string value holds at most {MAX_STRING_VALUE_BYTES}",
                        path(),
                        s.len()
                    ),
                ))
            }
            other => {
                return Err(bad(
                    index,
                    &path(),
                    format!(
                        "'{}' ({}) must be a finite number, string, boolean or null",
                        path(),
                        show(&other.to_json())
                    ),
                ))
            }
        };
        let name = match name {
            Cow::Borrowed(n) => FieldName::from(n),
            Cow::Owned(n) => FieldName::from(n),
        };
        out.push(PubField {
            name,
            value,
            typed: false,
        });
    }

    match types {
        None => {}
        Some(Json::Obj(entries)) => {
            for (name, ty) in entries {
                let path = format!("types.{name}");
                let Some(field) = out.iter_mut().find(|f| f.name == *name) else {
                    return Err(bad(
                        index,
                        &path,
                        format!("'{}' names no field in 'fields'", show(&path)),
                    ));
                };
                if field.typed {
                    return Err(bad(index, &path, format!("'{path}' appears twice")));
                }
                let ft = match &ty {
                    Json::Str(s) => FieldType::parse(s),
                    _ => None,
                };
                let Some(ft) = ft else {
                    return Err(bad(
                        index,
                        &path,
                        format!(
                            "'{path}' ({}) must be one of 'number', 'string', 'bool', 'timestamp'",
                            show(&ty.to_json())
                        ),
                    ));
                };
                field.typed = true;
                field.value = retype(field.value.take(), ft).map_err(|(shown, rule)| {
                    bad(
                        index,
                        &format!("fields.{name}"),
                        format!("'fields.{name}' ({shown}) {rule}"),
                    )
                })?;
            }
        }
        Some(other) => {
            return Err(bad(
                index,
                "types",
                format!("'types' must be an object, got {}", other.kind()),
            ))
        }
    }

    Ok(Publish {
        subject,
        ts,
        image,
        fields: out,
    })
}

/// Applies an explicit type to a decoded value; `Err((shown value, rule))` when they disagree.
pub(super) fn retype(value: Option<Value>, ft: FieldType) -> std::result::Result<Option<Value>, (String, String)> {
    let Some(v) = value else { return Ok(None) };
    let shown = |v: &Value| match v {
        Value::Number(n) => Json::Num(*n).to_json(),
        Value::Str(s) => show_str(s),
        Value::Bool(b) => b.to_string(),
        Value::Timestamp(t) => t.to_string(),
    };
    match (ft, v) {
        (FieldType::Timestamp, Value::Number(n)) => {
            if n.fract() == 0.0 && n.abs() <= MAX_TIMESTAMP_MS {
                // Exact: integral and within ±8.64e15 < 2^63.
                Ok(Some(Value::Timestamp(n as i64)))
            } else {
                Err((
                    shown(&Value::Number(n)),
                    "must be an integer epoch ms within ±8.64e15 for type 'timestamp'".into(),
                ))
            }
        }
        (FieldType::Number, v @ Value::Number(_))
        | (FieldType::String, v @ Value::Str(_))
        | (FieldType::Bool, v @ Value::Bool(_)) => Ok(Some(v)),
        (ft, v) => Err((shown(&v), format!("does not match its type '{}'", ft.as_str()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn err(frame: &str) -> (ErrorCode, Option<String>, Option<u32>, String) {
        let e = decode_source_frame(frame).expect_err("frame must be rejected");
        (e.code(), e.field().map(str::to_owned), e.index(), e.to_string())
    }

    const OK: &str = r#"{"type":"record.publish","subject":"/A","fields":{"x":1}}"#;

    #[test]
    fn decodes_single_object_and_array() {
        let one = decode_source_frame(OK).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].subject, "/A");
        assert!(!one[0].image);
        assert_eq!(one[0].ts, None);
        let many = decode_source_frame(&format!("[{OK},{OK}]")).unwrap();
        assert_eq!(many.len(), 2);
        assert_eq!(
            err("[]"),
            (
                ErrorCode::BadRequest,
                None,
                None,
                "a publish frame must hold 1..10000 messages, got 0".into()
            )
        );
    }

    #[test]
    fn field_order_and_types_are_kept() {
        let p = &decode_source_frame(
            r#"{"type":"record.publish","subject":"/P","ts":1.5,"image":true,"fields":{"z":"s","a":true,"m":1924992000000,"n":null},"types":{"m":"timestamp","z":"string"}}"#,
        )
        .unwrap()[0];
        assert!(p.image);
        assert_eq!(p.ts, Some(1.5));
        let names: Vec<_> = p.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["z", "a", "m", "n"]);
        assert_eq!(p.fields[2].value, Some(Value::Timestamp(1924992000000)));
        assert!(p.fields[2].typed && p.fields[0].typed && !p.fields[1].typed);
        assert_eq!(p.fields[3].value, None);
    }

    #[test]
    fn short_names_are_inline_and_long_or_escaped_names_keep_their_text() {
        let long = "n".repeat(40);
        let frame = format!(
            r#"{{"type":"record.publish","subject":"/N","fields":{{"bid":1,"{long}":2,"a\u0062c":3,"{}":4}},"types":{{"abc":"number"}}}}"#,
            "x".repeat(16)
        );
        let p = &decode_source_frame(&frame).unwrap()[0];
        let names: Vec<(&str, bool)> = p.fields.iter().map(|f| (f.name.as_str(), f.name.is_heap())).collect();
        let x16 = "x".repeat(16);
        assert_eq!(
            names,
            [
                ("bid", false),
                (long.as_str(), true),
                ("abc", false),
                (x16.as_str(), true)
            ]
        );
        assert!(p.fields[2].typed);
        // An escaped duplicate of a plain name is still a duplicate.
        let (_, f, _, _) = err(r#"{"type":"record.publish","subject":"/N","fields":{"abc":1,"a\u0062c":2}}"#);
        assert_eq!(f.as_deref(), Some("fields.abc"));
    }

    #[test]
    fn frame_level_errors() {
        assert_eq!(err("{nope").0, ErrorCode::BadFrame);
        assert_eq!(err("42").0, ErrorCode::BadFrame);
        assert_eq!(err("\"x\"").0, ErrorCode::BadFrame);
        let (code, field, index, _) = err(&format!("[{OK},7]"));
        assert_eq!((code, field, index), (ErrorCode::BadFrame, None, Some(1)));
        let (code, field, index, _) = err(&format!(
            "[{OK},{OK},{{\"type\":\"record.publish\",\"subject\":\"/A\",\"fields\":{{\"x\":1e999}}}}]"
        ));
        assert_eq!(
            (code, field.as_deref(), index),
            (ErrorCode::BadRequest, Some("fields.x"), Some(2))
        );
        let big = format!("[{}]", vec![OK; MAX_PUBLISHES_PER_FRAME + 1].join(","));
        assert_eq!(err(&big).0, ErrorCode::BadRequest);
        let max = format!("[{}]", vec![OK; MAX_PUBLISHES_PER_FRAME].join(","));
        assert_eq!(decode_source_frame(&max).unwrap().len(), MAX_PUBLISHES_PER_FRAME);
    }

    /// Every rule: (frame message, code, field).
    #[test]
    fn every_rule_names_index_and_field() {
        let cases: &[(&str, ErrorCode, Option<&str>)] = &[
            (r#"{"subject":"/A","fields":{}}"#, ErrorCode::BadRequest, Some("type")),
            (
                r#"{"type":5,"subject":"/A","fields":{}}"#,
                ErrorCode::BadRequest,
                Some("type"),
            ),
            (
                r#"{"type":"session.login","subject":"/A","fields":{}}"#,
                ErrorCode::UnknownType,
                None,
            ),
            (
                r#"{"type":"record.publish","fields":{}}"#,
                ErrorCode::BadRequest,
                Some("subject"),
            ),
            (
                r#"{"type":"record.publish","subject":"A","fields":{}}"#,
                ErrorCode::BadRequest,
                Some("subject"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A B","fields":{}}"#,
                ErrorCode::BadRequest,
                Some("subject"),
            ),
            (
                r#"{"type":"record.publish","subject":7,"fields":{}}"#,
                ErrorCode::BadRequest,
                Some("subject"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","ts":"1","fields":{}}"#,
                ErrorCode::BadRequest,
                Some("ts"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","image":1,"fields":{}}"#,
                ErrorCode::BadRequest,
                Some("image"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A"}"#,
                ErrorCode::BadRequest,
                Some("fields"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":[]}"#,
                ErrorCode::BadRequest,
                Some("fields"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"1x":1}}"#,
                ErrorCode::BadRequest,
                Some("fields.1x"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":{}}}"#,
                ErrorCode::BadRequest,
                Some("fields.a"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":[1]}}"#,
                ErrorCode::BadRequest,
                Some("fields.a"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":1,"a":2}}"#,
                ErrorCode::BadRequest,
                Some("fields.a"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":{"b":"number"}}"#,
                ErrorCode::BadRequest,
                Some("types.b"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":{"a":"date"}}"#,
                ErrorCode::BadRequest,
                Some("types.a"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":1.5},"types":{"a":"timestamp"}}"#,
                ErrorCode::BadRequest,
                Some("fields.a"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":"x"},"types":{"a":"number"}}"#,
                ErrorCode::BadRequest,
                Some("fields.a"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{"a":1},"types":[]}"#,
                ErrorCode::BadRequest,
                Some("types"),
            ),
            (
                r#"{"type":"record.publish","subject":"/A","fields":{},"extra":1}"#,
                ErrorCode::BadRequest,
                Some("extra"),
            ),
            (
                r#"{"type":"record.publish","type":"record.publish","subject":"/A","fields":{}}"#,
                ErrorCode::BadRequest,
                Some("type"),
            ),
        ];
        for (msg, code, field) in cases {
            let frame = format!("[{OK},{OK},{msg}]");
            let (c, f, i, m) = err(&frame);
            assert_eq!((c, f.as_deref(), i), (*code, *field, Some(2)), "{msg}: {m}");
            // Single-object frames carry no index.
            assert_eq!(err(msg).2, None, "{msg}");
        }
    }

    #[test]
    fn limits() {
        let long_subject = format!(
            r#"{{"type":"record.publish","subject":"/{}","fields":{{}}}}"#,
            "a".repeat(256)
        );
        assert_eq!(err(&long_subject).1.as_deref(), Some("subject"));
        let long_name = format!(
            r#"{{"type":"record.publish","subject":"/A","fields":{{"{}":1}}}}"#,
            "a".repeat(65)
        );
        assert_eq!(err(&long_name).0, ErrorCode::BadRequest);
        let long_str = format!(
            r#"{{"type":"record.publish","subject":"/A","fields":{{"s":"{}"}}}}"#,
            "é".repeat(2049)
        );
        let (_, f, _, m) = err(&long_str);
        assert_eq!(f.as_deref(), Some("fields.s"));
        assert!(m.contains("4098 bytes"), "{m}");
        let ok_str = format!(
            r#"{{"type":"record.publish","subject":"/A","fields":{{"s":"{}"}}}}"#,
            "é".repeat(2048)
        );
        assert!(decode_source_frame(&ok_str).is_ok());
        let many: Vec<String> = (0..129).map(|i| format!("\"f{i}\":1")).collect();
        let too_many = format!(
            r#"{{"type":"record.publish","subject":"/A","fields":{{{}}}}}"#,
            many.join(",")
        );
        assert_eq!(err(&too_many).1.as_deref(), Some("fields"));
    }

    #[test]
    fn grants_refuse_the_first_ungranted_subject_before_other_rules() {
        let grants = PublishGrants::compile("feed", "source", &["/FX/**", "!/FX/SECRET"]).expect("valid rules");
        let msg = |subject: &str| format!(r#"{{"type":"record.publish","subject":"{subject}","fields":{{"x":1}}}}"#);
        let refused = |frame: &str| decode_source_frame_as(frame, Some(&grants)).expect_err("refused");
        let ok = format!("[{},{}]", msg("/FX/A"), msg("/FX/B"));
        assert_eq!(decode_source_frame_as(&ok, Some(&grants)).map(|v| v.len()), Ok(2));
        // one pass (scanner) and tree (an escape in a key) give the same refusal
        for frame in [
            format!("[{},{},{}]", msg("/FX/A"), msg("/PRODUCT/X"), msg("/FX/SECRET")),
            format!(
                r#"[{},{{"type":"record.publish","\u0073ubject":"/PRODUCT/X","fields":{{}}}}]"#,
                msg("/FX/A")
            ),
            // grants are checked before the other rules: a later message's error does not win
            format!(
                "[{},{},{}]",
                msg("/FX/A"),
                msg("/PRODUCT/X"),
                r#"{"type":"record.publish","subject":"/FX/C","fields":{"x":[]}}"#
            ),
            format!(
                "[{},{}]",
                r#"{"type":"record.publish","subject":"/FX/C","fields":{"x":[]}}"#,
                msg("/PRODUCT/X")
            ),
        ] {
            let e = refused(&frame);
            assert_eq!(
                (e.code(), e.field(), e.index()),
                (ErrorCode::NotEntitled, Some("subject"), Some(1)),
                "{frame}"
            );
            assert_eq!(
                e.to_string(),
                "user 'feed' (role source) may not publish '/PRODUCT/X'; nothing in this frame was applied"
            );
        }
        // a single object: index 0, as the server named it
        assert_eq!(refused(&msg("/FX/SECRET")).index(), Some(0));
        // a malformed subject is a rule error, not a grants refusal
        assert_eq!(refused(&msg("PRODUCT")).code(), ErrorCode::BadRequest);
        // grants that allow everything are not checked; without grants nothing is
        let all = PublishGrants::compile("feed", "source", &["/**", "!/TRADE/**"]).expect("valid rules");
        assert!(decode_source_frame_as(&msg("/PRODUCT/X"), Some(&all)).is_ok());
        assert!(decode_source_frame(&msg("/PRODUCT/X")).is_ok());
    }

    /// Hostile nesting with grants: refused BAD_FRAME at serde_json's recursion limit, the same
    /// answer and cost as without grants (nothing deeper than the limit is built).
    #[test]
    fn deep_nesting_is_refused_at_the_recursion_limit() {
        let grants = PublishGrants::compile("feed", "source", &["/FX/**"]).expect("valid rules");
        let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
        let prefix = r#"[{"type":"record.publish","subject":"/FX/A","fields":{"x":"#;
        let inner = format!("{prefix}{}{}}}}}]", "[".repeat(200_000), "]".repeat(200_000));
        for frame in [deep.as_str(), inner.as_str()] {
            for g in [None, Some(&grants)] {
                let e = decode_source_frame_as(frame, g).expect_err("refused");
                assert_eq!(e.code(), ErrorCode::BadFrame);
                assert!(e.to_string().contains("recursion limit exceeded"), "{e}");
            }
        }
    }

    #[test]
    fn messages_name_value_and_rule() {
        let (_, _, _, m) = err(r#"{"type":"record.publish","subject":"EURUSD","fields":{}}"#);
        assert_eq!(m, "'subject' (\"EURUSD\") must be a subject starting with '/'");
        let (_, _, _, m) = err(r#"{"type":"record.publish","subject":"/A","fields":{"bid":{"x":1}}}"#);
        assert_eq!(
            m,
            "'fields.bid' ({\"x\":1}) must be a finite number, string, boolean or null"
        );
    }
}
