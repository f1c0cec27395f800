//! FIX order gateway foundation: a FIX 4.2 / 4.4 acceptor with the full session layer.
//!
//! - [`codec`]: zero-copy framing and parsing of a TCP byte stream, and a message builder
//!   that writes into a reused buffer.
//! - [`dictionary`]: the FIX 4.2 and 4.4 data dictionaries (fields, types, enumerations,
//!   header, trailer and the messages in scope) and QuickFIX-compatible validation.
//! - [`session`]: the session state machine as plain logic (logon, heartbeats, gap detection,
//!   resends, sequence resets, logout, rejects), a [`session::Clock`] for time and a
//!   [`session::SessionStore`] for sequence numbers and sent messages.
//! - [`acceptor`]: the TCP acceptor (one thread per connection), session lookup by CompIDs,
//!   the [`acceptor::Application`] trait the order gateway implements, and the echo
//!   application of the acceptance test mode.

pub mod acceptor;
pub mod codec;
pub mod dictionary;
pub mod gateway;
pub mod session;
