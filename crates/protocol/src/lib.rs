//! Wire model of the Hermes adapter protocol and Hermes Chat v3, and pure (sans-IO) state machines.
//!
//! No I/O, no clocks, no async: inputs are `handle_*(…, now)`, outputs `poll_*`. The engine (`hermes-client`)
//! owns sockets and time; the CLI and the desktop app share the one [`event::Event`] model defined here.

pub mod adapter;
pub mod backoff;
pub mod dialect;
pub mod event;
pub mod heartbeat;
pub mod media;
pub mod outbox;
pub mod refusal;
pub mod reply;
pub mod session;
pub mod v3;

pub use dialect::Dialect;
pub use event::{Command, Direction, DisconnectCode, Event, Features, SmallString};
pub use refusal::{Feature, Refusal};
pub use session::{Config, DownloadSource, Io, Outgoing, Session};
