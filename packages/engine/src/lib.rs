//! Tidewire engine: record store, encode-once fan-out, per-session outboxes with Liberator
//! batching, throttling/conflation and slow-consumer bounds, run on one engine thread.
//! `napi` (default feature) is the only place Node is touched.

pub mod analytics;
mod bell;
pub mod chunked;
pub mod cluster;
pub mod container;
pub mod error;
pub mod filter;
pub mod fix;
pub mod intern;
pub mod journal;
pub mod order_book;
pub mod order_desk;
pub mod store;
pub mod value;
pub mod wire;

pub use error::{EngineError, ErrorCode};
pub mod batch;
pub mod config;
pub mod hub;
pub mod runtime;
pub mod session;
pub mod stats;
pub mod view;

#[cfg(feature = "napi")]
mod napi;
