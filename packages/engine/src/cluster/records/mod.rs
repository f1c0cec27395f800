//! Cluster mode, records: every node's records and containers on every node, with the seq the
//! publishing node gave them (docs/architecture.md, "Cluster mode: records").

pub mod codec;
