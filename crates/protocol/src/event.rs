//! The one event model of the app, fed by both dialects and shared by the CLI (`--jsonl`) and the UI.
//!
//! Serialised with `"event"` naming the variant: this is the public `hermes-chat --jsonl` contract (README).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::adapter::PromptOption;

/// A string kept inline up to [`INLINE_BYTES`] (ids, short replies), on the heap beyond: derefs to `str`, serialises
/// as a string. The receive hot path's events allocate nothing for a small reply; the id bound is the reply
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
        /// What the agent accepts, decided from `capabilities`: the front ends use this, never the raw map.
        features: Features,
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
    /// The connection dropped, or an attempt failed; the next attempt is in `retry_in_ms` (absent: no retry
    /// scheduled). `code` says why in a word the front ends translate (see [`DisconnectCode`]); `reason` is detail.
    Disconnected {
        code: DisconnectCode,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        retry_in_ms: Option<u64>,
    },
    /// A-4 / G-3: no retry until settings change.
    AccessDenied { reason: String },
    /// A command refused locally; nothing was sent. `code` is [`crate::Refusal::code`]; `reason` a human text.
    Rejected {
        cmd: String,
        code: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        id: Option<String>,
    },
}

/// What the agent accepts (A-3 decision). Text and card answers are base frames and always on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Features {
    /// Files: adapter `media` frames, v3 uploads.
    pub files: bool,
    /// Voice messages: adapter `audio` frames, v3 uploads.
    pub voice: bool,
    /// The per-file limit in bytes; absent where the agent alone decides (v3, G-9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub max_file_bytes: Option<u64>,
}

impl Features {
    /// The adapter's rule (A-3 decision): a base frame is on unless the agent switches it off — a known key present
    /// and `false` (`media`, `audio`), or `max_media_bytes` 0 (no file uploads). Absent, empty or unknown keys change
    /// nothing. `max_media_bytes` is the per-file limit, 8 MiB when absent or not a positive number.
    pub fn adapter(caps: &Map<String, Value>) -> Features {
        let off = |key: &str| caps.get(key) == Some(&Value::Bool(false));
        let limit = caps.get("max_media_bytes").and_then(Value::as_u64);
        Features {
            files: !off("media") && limit != Some(0),
            voice: !off("audio"),
            max_file_bytes: Some(crate::media::MediaLimits::from_capabilities(caps).max_media_bytes),
        }
    }

    /// v3: the gateway has no capability negotiation; files and voice go up over HTTP and the gateway alone sets the
    /// size limit (G-9 decision).
    pub fn v3() -> Features {
        Features { files: true, voice: true, max_file_bytes: None }
    }
}

impl Default for Features {
    /// Before the first `ready`: everything on (A-3 rule: on until the agent says otherwise).
    fn default() -> Self {
        Features { files: true, voice: true, max_file_bytes: None }
    }
}

/// Why the connection dropped or an attempt failed, in a word the front ends translate ("Can't reach host:port —
/// connection refused").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DisconnectCode {
    /// Nothing listens at the address (connection refused).
    Refused,
    /// No route to the host, or the network is down.
    Unreachable,
    /// The host name is not known.
    Dns,
    /// No answer in time.
    Timeout,
    /// TLS or certificate failure.
    Tls,
    /// The WebSocket upgrade was refused with an HTTP status (401/403 are access denied instead).
    Http,
    /// The agent closed the connection.
    Closed,
    /// The connection dropped.
    Lost,
    /// No frame at all for 90 s (a half-open connection).
    Dead,
    /// The socket opened but no `ready` came in time.
    NoReady,
    /// Writing to the socket failed.
    WriteFailed,
    /// The agent broke the WebSocket protocol (or sent a frame over the size limit).
    Protocol,
}

/// Which way something travels: a transfer's progress, a message in the store, bytes through the fault proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the user to the agent (sent).
    Up,
    /// From the agent to the user (received).
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
        /// The failed message this one sends again (under a new id: the agent had received the first, A-6).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        retry_of: Option<String>,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        retry_of: Option<String>,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "specta", specta(optional))]
        retry_of: Option<String>,
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
