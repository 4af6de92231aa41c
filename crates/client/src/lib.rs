//! Async connection engine around `hermes-protocol`: one task, `select!` over socket, commands and deadlines.
//!
//! It speaks both dialects, keeps the durable outbox through [`Persist`], transfers media over the socket or HTTP,
//! and emits the protocol crate's one [`hermes_protocol::Event`] model. Nothing UI-specific lives here.

pub mod engine;
pub mod files;
pub mod filetype;
pub mod http;
pub mod keychain;
pub mod mediainfo;
pub mod names;
pub mod netwatch;
pub mod osmark;
pub mod persist;
pub mod policy;
pub mod recorder;
pub mod tls;

pub use engine::{EngineConfig, Events, Handle, MediaBuffer, Reply, Secret, StartError, spawn};
pub use persist::{MemoryPersist, OutboxRecord, Payload, Persist, PersistError};
pub use recorder::StorePersist;
