//! The view types the front ends show: camelCase, times in milliseconds since the Unix epoch, attachments joined.
//!
//! The desktop shell hands them to its UI as they are (`specta` feature: they are exported to TypeScript under these
//! names). The store's own types stay the store's; these are what a person sees of them.

use serde::{Deserialize, Serialize};

pub use hermes_store::{Dialect, Direction as MessageDirection, MessageError};

/// An agent the user talks to, as a front end lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub url: String,
    pub dialect: Dialect,
    pub device_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub user_id: Option<String>,
    pub allow_insecure_ws: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub avatar_url_override: Option<String>,
    pub has_token: bool,
    /// The token is kept in memory for this run only (no keychain, or the user asked so).
    pub token_session_only: bool,
    /// The agent evidently approved this device: the pairing help is not shown.
    pub paired: bool,
    /// The conversation the user made the agent's home channel (`/sethome`: scheduled messages arrive there).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub home_conversation_id: Option<String>,
}

impl Profile {
    /// `session_token`: a token is held in memory for this run; `has_token` counts it too.
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

/// A new profile or an edited one, as the user typed it (the app layer checks and trims it).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ProfileInput {
    pub name: String,
    pub url: String,
    pub dialect: Dialect,
    #[serde(default)]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub user_id: Option<String>,
    pub allow_insecure_ws: bool,
    #[serde(default)]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub avatar_url_override: Option<String>,
}

/// A conversation as a list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    pub id: String,
    pub profile_id: String,
    pub title: String,
    pub session: String,
    /// Ms since the epoch.
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub preview: Option<String>,
    /// The composer's unsent text in it (listed conversations only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
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
            updated_at: c.updated_at,
            preview: c.last_preview,
            draft: None,
            unread: 0,
        }
    }
}

/// Where a message stands, as the user sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum MessageState {
    Queued,
    Sent,
    Delivered,
    Failed,
    Received,
}

/// A file of a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub media_id: String,
    /// `image`, `audio`, `video` or `document` (`hermes_client::files`' one rule).
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub mime: Option<String>,
    pub filename: String,
    /// Absolute path inside the media folder.
    pub path: String,
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub caption: Option<String>,
}

/// A message of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub server_id: Option<String>,
    pub direction: MessageDirection,
    pub text: String,
    #[serde(rename = "final")]
    pub final_: bool,
    pub state: MessageState,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub reply_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub error: Option<MessageError>,
    /// Ms since the epoch.
    pub created_at: i64,
    pub attachments: Vec<Attachment>,
    /// The failed message this one sends again under a new id (the agent had received and refused that one, A-6).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub retry_of: Option<String>,
}

/// One page of a conversation's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    /// Newest first.
    pub messages: Vec<StoredMessage>,
    /// The agent's cards shown in the same stretch of time as `messages` (oldest first; after the newest message too).
    pub cards: Vec<StoredCard>,
    /// The cursor of the next (older) page, to be handed back as it is; none when this page is the oldest.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub next: Option<String>,
}

/// A card (A-12..A-17) as kept in the history, with its outcome once it has one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct StoredCard {
    pub id: String,
    pub kind: String,
    pub text: String,
    pub options: Vec<hermes_protocol::adapter::PromptOption>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub timeout_seconds: Option<u32>,
    /// Ms since the epoch.
    pub created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub done: Option<CardOutcome>,
}

/// How a card ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CardOutcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
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
            created_at: c.created_at,
            done: c.done.map(|d| CardOutcome { option_id: d.option_id, expired: d.expired }),
        }
    }
}

/// One search result, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub message_id: String,
    pub conversation_id: String,
    pub profile_id: String,
    pub snippet: String,
    /// The message's time, ms since the epoch.
    pub created_at: i64,
}

/// What a conversation is exported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Markdown,
    Json,
}

/// An exported conversation: the file's text and a name to suggest for it (safe on every file system).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub body: String,
    pub file_name: String,
}
