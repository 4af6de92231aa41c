//! The shell's IPC view models (camelCase, ISO dates, joined attachments) with specta derives.
//!
//! The engine's event/command model and the store's small enums are *not* mirrored here: `hermes-protocol` and
//! `hermes-store` derive `specta::Type` themselves behind their `specta` feature, and are re-exported below under the
//! names the UI uses. A new command's argument/return type goes here only when it is a UI-shaped view of crate data;
//! crate types cross the IPC boundary as they are.

use serde::{Deserialize, Serialize};
use specta::Type;

/// What the UI asks an engine to do (`hermes_protocol::Command`).
pub use hermes_protocol::Command as EngineCommand;
/// Everything an engine tells the UI (`hermes_protocol::Event`, the `--jsonl` contract).
pub use hermes_protocol::Event as EngineEvent;
pub use hermes_store::{Dialect, Direction as MessageDirection, MessageError};

/* ---------- shell DTOs (camelCase, as the UI's types.ts) ---------- */

#[derive(Debug, Clone, Serialize, Type)]
pub struct KeychainInfo {
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
    pub log_dir: String,
    pub keychain: KeychainInfo,
    pub demo: bool,
    /// A `hermes://connect` link that arrived before the UI listened (handed over once).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub pending_link: Option<DeepLinkConnect>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub url: String,
    pub dialect: Dialect,
    pub device_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub user_id: Option<String>,
    pub allow_insecure_ws: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub avatar_url_override: Option<String>,
    pub has_token: bool,
    /// The token is kept in memory for this run only (no keychain, or the user asked so).
    pub token_session_only: bool,
    /// The agent evidently approved this device: the pairing help is not shown.
    pub paired: bool,
    /// The conversation the user made the agent's home channel (`/sethome`: scheduled messages arrive there).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub home_conversation_id: Option<String>,
}

impl Profile {
    /// `has_token` also counts a session-only token.
    pub fn from_store(p: hermes_store::Profile, session_token: bool) -> Self {
        Profile {
            dialect: p.dialect,
            id: p.id,
            name: p.name,
            url: p.url,
            device_id: p.device_id,
            user_id: p.v3_user_id,
            allow_insecure_ws: p.allow_insecure_ws,
            avatar_url_override: p.avatar_url,
            token_session_only: session_token && !p.has_token,
            has_token: p.has_token || session_token,
            paired: p.paired_at.is_some(),
            home_conversation_id: p.home_conversation_id,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInput {
    pub name: String,
    pub url: String,
    pub dialect: Dialect,
    #[serde(default)]
    #[specta(optional)]
    pub user_id: Option<String>,
    pub allow_insecure_ws: bool,
    #[serde(default)]
    #[specta(optional)]
    pub avatar_url_override: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct SendResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    pub id: String,
    pub profile_id: String,
    pub title: String,
    pub session: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub preview: Option<String>,
    /// The composer's unsent text in it (listed conversations only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub draft: Option<String>,
    /// The agent's messages since the user last had it open (listed conversations only, else 0; kept across
    /// restarts).
    pub unread: u32,
}

impl From<hermes_store::Conversation> for Conversation {
    fn from(c: hermes_store::Conversation) -> Self {
        Conversation {
            id: c.id,
            profile_id: c.profile_id,
            title: c.title,
            session: c.session,
            updated_at: iso(c.updated_at),
            preview: c.last_preview,
            draft: None,
            unread: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum MessageState {
    Queued,
    Sent,
    Delivered,
    Failed,
    Received,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub media_id: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub mime: Option<String>,
    pub filename: String,
    pub path: String,
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub caption: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub server_id: Option<String>,
    pub direction: MessageDirection,
    pub text: String,
    #[serde(rename = "final")]
    pub final_: bool,
    pub state: MessageState,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub reply_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub error: Option<MessageError>,
    pub created_at: String,
    pub attachments: Vec<Attachment>,
    /// The failed message this one sends again under a new id (the agent had received and refused that one, A-6).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub retry_of: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    pub messages: Vec<StoredMessage>,
    pub has_more: bool,
    /// The agent's cards shown in the same stretch of time as `messages` (oldest first; after the newest message too).
    pub cards: Vec<StoredCard>,
}

/// A card (A-12..A-17) as kept in the history, with its outcome once it has one.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct StoredCard {
    pub id: String,
    pub kind: String,
    pub text: String,
    pub options: Vec<hermes_protocol::adapter::PromptOption>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub timeout_seconds: Option<u32>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub done: Option<CardOutcome>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CardOutcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub option_id: Option<String>,
    pub expired: bool,
}

impl From<hermes_store::Card> for StoredCard {
    fn from(c: hermes_store::Card) -> Self {
        StoredCard {
            id: c.id,
            kind: c.kind,
            text: c.text,
            // what the store kept is what the agent sent, already checked once: a damaged row shows no buttons
            options: serde_json::from_value(c.options).unwrap_or_default(),
            command: c.command,
            description: c.description,
            timeout_seconds: c.timeout_seconds.and_then(|t| u32::try_from(t).ok()),
            created_at: iso(c.created_at),
            done: c.done.map(|d| CardOutcome { option_id: d.option_id, expired: d.expired }),
        }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub message_id: String,
    pub conversation_id: String,
    pub profile_id: String,
    pub snippet: String,
    pub created_at: String,
}

#[derive(Debug, Clone, Copy, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Markdown,
    Json,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    pub path: String,
    pub name: String,
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub mime: Option<String>,
    /// Playing time of a WAV file, read from its header (WebKitGTK may not report one for asset URLs).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub duration_ms: Option<u64>,
}

/// Sent to the UI when a `hermes://connect?url=…` link opens the app: prefill a new profile (never a token).
#[derive(Debug, Clone, PartialEq, Serialize, Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct DeepLinkConnect {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub name: Option<String>,
}

/// Milliseconds since the epoch → RFC 3339 UTC (`2026-11-30T05:55:47.123Z`).
pub fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // civil from days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if mo <= 2 { y + 1 } else { y };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_795_932_947_123), "2026-11-29T06:15:47.123Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
