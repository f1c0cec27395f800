//! Encoders of the statement replies (`statement.created`, `statement.closed`), byte-identical
//! to `encodeServerMessage` in packages/protocol (pinned by the golden frames in
//! packages/protocol/vectors/frames.json). Each appends one message object to `out`.

use super::encode::{write_str, write_u64};

/// `{"type":"statement.created","reqId","name","statement","container"}`.
pub fn statement_created(out: &mut Vec<u8>, req_id: u32, name: &str, statement: &str, container: &str) {
    out.extend_from_slice(b"{\"type\":\"statement.created\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"name\":");
    write_str(out, name);
    out.extend_from_slice(b",\"statement\":");
    write_str(out, statement);
    out.extend_from_slice(b",\"container\":");
    write_str(out, container);
    out.push(b'}');
}

/// `{"type":"statement.closed","reqId","name"}`.
pub fn statement_closed(out: &mut Vec<u8>, req_id: u32, name: &str) {
    out.extend_from_slice(b"{\"type\":\"statement.closed\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"name\":");
    write_str(out, name);
    out.push(b'}');
}
