//! The wire: source-frame decoding (`decode`) and server-message encoding (`encode`), both
//! following packages/protocol (rules in `rules`, a borrowed JSON tree in `json`, the one-pass
//! fast path of source frames in `scan`).

pub mod decode;
pub mod encode;
pub mod field_name;
pub mod grants;
pub mod json;
pub mod order;
pub mod rules;
mod scan;
pub mod statement;
pub mod view;

pub use decode::{decode_source_frame, decode_source_frame_tree, PubField, Publish};
pub use field_name::FieldName;
pub use grants::{OrderGrants, PublishGrants};
