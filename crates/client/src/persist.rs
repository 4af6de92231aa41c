//! Where the engine keeps its outbox (A-6, G-10): written before anything is sent, so a crash or restart loses
//! nothing. The SQLite-backed implementation lives beside the store; [`MemoryPersist`] serves tests and
//! throw-away sessions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use hermes_protocol::{Event, Refusal};

/// Why the durable side could not read or update the outbox.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error(transparent)]
    Store(#[from] hermes_store::Error),
    /// A thread panicked while it held the store.
    #[error("the store's lock is poisoned")]
    Poisoned,
    /// A received file could not be read to index it.
    #[error("could not read a received file: {0}")]
    File(#[from] std::io::Error),
}

/// One durable outbox entry: enough to rebuild the frame after a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxRecord {
    /// The wire id, the same on every resend.
    pub id: String,
    pub payload: Payload,
    pub created_unix: i64,
    /// The failed message this one sends again under a new id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Payload {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// A file (or a WAV clip when `audio`), copied into the app's outbox folder before queueing.
    File {
        path: String,
        filename: String,
        mime: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caption: Option<String>,
        #[serde(default)]
        audio: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
}

impl Payload {
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::Text { .. } => "text",
            Payload::File { audio: true, .. } => "audio",
            Payload::File { .. } => "media",
        }
    }
}

/// The engine's durable side. Calls are short and synchronous (SQLite on a local disk).
pub trait Persist: Send + 'static {
    /// Write an entry before it is sent. An error means nothing is sent (the user is told).
    ///
    /// **Decision (retry, A-6):** an id already used is refused with [`Refusal::IdInUse`] — except an entry that
    /// failed here without reaching the agent (refused locally, cancelled, unreadable), which goes back into the queue
    /// under the same id: resending it is what the user's Retry means. A message the agent received (confirmed, or
    /// answered with an error) is retried as a new message with a new id (`retry_of`): the adapter drops repeats.
    fn outbox_insert(&mut self, rec: &OutboxRecord) -> Result<(), Refusal>;
    /// Entries not yet confirmed, in original order (loaded at start).
    fn outbox_pending(&mut self) -> Result<Vec<OutboxRecord>, PersistError>;
    /// The server confirmed it: never resent.
    fn outbox_confirm(&mut self, id: &str) -> Result<(), PersistError>;
    /// Refused for good or cancelled: kept out of the queue with the refusal's code and text.
    fn outbox_fail(&mut self, id: &str, code: &str, reason: &str) -> Result<(), PersistError>;
    /// Every event, for history (messages, media index). Default: nothing.
    fn record(&mut self, _event: &Event) {}
    /// Cards shown before this start that still wait for an answer (loaded at start, so they can be answered).
    /// Default: none.
    fn waiting_cards(&mut self) -> Vec<(String, Vec<hermes_protocol::adapter::PromptOption>)> {
        Vec::new()
    }
}

/// An in-memory outbox (no durability).
#[derive(Debug, Default)]
pub struct MemoryPersist {
    entries: BTreeMap<u64, OutboxRecord>,
    next: u64,
    pub failed: Vec<(String, String)>,
    /// Ids confirmed by the agent: never queued again.
    confirmed: std::collections::HashSet<String>,
}

impl Persist for MemoryPersist {
    fn outbox_insert(&mut self, rec: &OutboxRecord) -> Result<(), Refusal> {
        if self.confirmed.contains(&rec.id) || self.entries.values().any(|r| r.id == rec.id) {
            return Err(Refusal::IdInUse(rec.id.clone()));
        }
        // a failed one goes back into the queue under its id
        self.failed.retain(|(id, _)| *id != rec.id);
        self.entries.insert(self.next, rec.clone());
        self.next += 1;
        Ok(())
    }
    fn outbox_pending(&mut self) -> Result<Vec<OutboxRecord>, PersistError> {
        Ok(self.entries.values().cloned().collect())
    }
    fn outbox_confirm(&mut self, id: &str) -> Result<(), PersistError> {
        self.entries.retain(|_, r| r.id != id);
        self.confirmed.insert(id.to_string());
        Ok(())
    }
    fn outbox_fail(&mut self, id: &str, _code: &str, reason: &str) -> Result<(), PersistError> {
        self.entries.retain(|_, r| r.id != id);
        self.failed.push((id.to_string(), reason.to_string()));
        Ok(())
    }
}
