// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

//! The Tidewire wire protocol's codes, limits, message kinds, key names and syntax rules, generated
//! from packages/protocol/schema/protocol.json (the one definition; the TypeScript package
//! `@tidewire/protocol` is generated from the same file). No dependencies.

pub mod codes;
pub mod limits;
pub mod messages;
pub mod syntax;

pub use codes::{CloseCode, ErrorCode};
