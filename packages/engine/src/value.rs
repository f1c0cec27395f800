//! Typed field values held by the store.

/// A field's type. Timestamps are epoch milliseconds and travel as JSON numbers, named in `types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// IEEE-754 double.
    Number,
    /// UTF-8 string, at most `MAX_STRING_VALUE_BYTES`.
    String,
    /// true / false.
    Bool,
    /// Integer epoch milliseconds.
    Timestamp,
}

impl FieldType {
    /// The wire spelling used in `types` maps.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Number => "number",
            FieldType::String => "string",
            FieldType::Bool => "bool",
            FieldType::Timestamp => "timestamp",
        }
    }

    /// Parses a `types` value; `None` for anything else.
    pub fn parse(s: &str) -> Option<FieldType> {
        match s {
            "number" => Some(FieldType::Number),
            "string" => Some(FieldType::String),
            "bool" => Some(FieldType::Bool),
            "timestamp" => Some(FieldType::Timestamp),
            _ => None,
        }
    }
}

/// A field value in the store or on the wire. `null` (a deleted field) is `Option::None` around it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Finite double.
    Number(f64),
    /// String value.
    Str(Box<str>),
    /// Boolean value.
    Bool(bool),
    /// Integer epoch milliseconds (JSON number, typed `timestamp`).
    Timestamp(i64),
}

impl Value {
    /// The value's type.
    pub fn field_type(&self) -> FieldType {
        match self {
            Value::Number(_) => FieldType::Number,
            Value::Str(_) => FieldType::String,
            Value::Bool(_) => FieldType::Bool,
            Value::Timestamp(_) => FieldType::Timestamp,
        }
    }
}
