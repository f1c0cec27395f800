//! Orders: the model, validation with typed rejects (limit prices as whole ticks in the
//! instrument's range: [`PriceGrid`]), a pure state machine whose transitions are journal entries
//! ([`OrderEvent`], encoded into `journal` bodies, so replay rebuilds every order), and a seeded
//! execution simulator.
//!
//! Flow the runtime follows: `book.submit(req, catalog, now)` -> `Err(reject)` (reply, nothing changed)
//! or `Ok(event)` -> `journal.append(event.encode(), ..)` -> on the durable ack, reply with the ack and
//! `book.acknowledge(id, now)` (journaled the same way); on each market tick `book.execute(id, quote,
//! sim, now)` and journal what it returns. At start: `OrderBook::rebuild(limits, journal.replay_from(1)?)`.

mod book;
mod client_ids;
mod event;
mod model;
mod price;
pub mod risk;
mod simulator;
mod validate;

pub use book::{Checked, OrderBook, RebuildError, TransitionError};
pub use client_ids::ClientIds;
pub use event::{DecodeError, OrderEvent, EVENT_VERSION};
pub use model::{Amend, CancelReason, NewOrder, Order, OrderStatus, Quote, Side, TimeInForce};
pub use price::{decimals_of, show_number, PriceGrid, MAX_PRICE_TICKS, MAX_TICK_SIZE, MIN_TICK_SIZE, TICK_TOLERANCE};
pub use risk::{Exposure, Market, NotionalBasis, RiskRule, RiskRules};
pub use simulator::{Decision, ExecutionSimulator, SimulatorConfig};
pub use validate::{Instrument, InstrumentCatalog, OrderLimits, OrderReject, RejectField, RejectRule};
