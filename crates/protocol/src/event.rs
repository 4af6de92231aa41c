//! The one event model of the app, fed by both dialects and shared by the CLI (`--jsonl`) and the UI.
//!
//! Serialised with `"event"` naming the variant: this is the public `hermes-chat --jsonl` contract (README).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::adapter::PromptOption;

/// A string kept inline up to [`INLINE_BYTES`] (ids, short replies), on the heap beyond: derefs to `str`, serialises
/// as a string. The receive hot path's events allocate nothing for a small reply (issue #4); the id bound is the reply
/// assembler's (a UUID with a short prefix).
pub type SmallString = smallstr::SmallString<[u8; INLINE_BYTES]>;
pub const INLINE_BYTES: usize = 40;

/// Everything the engine tells its user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type), specta(rename = "EngineEvent"))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A connection attempt starts (1 = first).
    Connecting { attempt: u32 },
    /// For v3 (no `ready` on the wire) emitted once the gateway accepted the upgrade.
    Ready {
        session: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        avatar_url: Option<String>,
        capabilities: Map<String, Value>,
    },
    /// A reply as a whole so far (A-9, A-10, A-21; G-5, G-6): `text` is the complete text, `final` ends it.
    Message {
        /// A [`SmallString`]: no allocation for the usual ids and for short replies.
        #[cfg_attr(feature = "specta", specta(type = String))]
        id: SmallString,
        #[cfg_attr(feature = "specta", specta(type = String))]
        text: SmallString,
        #[serde(rename = "final")]
        final_: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        reply_to: Option<String>,
        /// v3 conversation (`session` UUID); absent for the adapter dialect.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        session: Option<String>,
    },
    ///
    Typing { on: bool },
    /// `idle`, `thinking`, `speaking` (others passed through).
    Avatar { state: String },
    /// A card (A-12..A-17).
    Prompt {
        id: String,
        kind: String,
        text: String,
        options: Vec<PromptOption>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        command: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        timeout_seconds: Option<u64>,
    },
    ///
    PromptDone {
        prompt_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        option_id: Option<String>,
        expired: bool,
    },
    /// A received file, saved at `path` (A-20, G-9).
    Media {
        id: String,
        kind: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        mime: Option<String>,
        filename: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        caption: Option<String>,
        path: String,
        size: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        session: Option<String>,
    },
    /// Upload (`up`) or download (`down`) progress of a file.
    Progress { id: String, direction: Direction, done: u64, total: u64 },
    /// An error from the agent (§10, G-7) or a local failure worth showing. `id` = the message it belongs to.
    Error {
        code: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        id: Option<String>,
    },
    /// A message of ours was written to the socket.
    Sent { id: String },
    /// the server's WebSocket layer read it (Pong after the write).
    Delivered { id: String },
    /// The connection dropped; the next attempt is in `retry_in_ms` (absent: no retry scheduled).
    Disconnected {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        retry_in_ms: Option<u64>,
    },
    /// A-4 / G-3: no retry until settings change.
    AccessDenied { reason: String },
    /// A command refused locally; nothing was sent.
    Rejected {
        cmd: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        id: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Up,
    Down,
}

/// What the user asks the engine to do: the `--jsonl` stdin contract (README).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type), specta(rename = "EngineCommand"))]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        reply_to: Option<String>,
        /// Optional client-chosen id; generated when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        id: Option<String>,
        /// v3 conversation; the profile's current one when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        session: Option<String>,
    },
    File {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        caption: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        session: Option<String>,
    },
    Audio {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        session: Option<String>,
    },
    Prompt {
        prompt_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        option_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        text: Option<String>,
    },
    /// Cancel an upload or download in progress.
    Cancel {
        id: String,
    },
    /// Reconnect now (network back, machine woke, user asked).
    Reconnect,
    Quit,
}

impl Command {
    /// The `cmd` name, for `rejected{cmd}`.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Text { .. } => "text",
            Command::File { .. } => "file",
            Command::Audio { .. } => "audio",
            Command::Prompt { .. } => "prompt",
            Command::Cancel { .. } => "cancel",
            Command::Reconnect => "reconnect",
            Command::Quit => "quit",
        }
    }
}
