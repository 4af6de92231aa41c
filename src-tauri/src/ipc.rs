//! The shell's own IPC types (camelCase) with specta derives.
//!
//! The engine's event/command model, the store's small enums and the app layer's view types (profiles,
//! conversations, history pages, search hits) are *not* mirrored here: `hermes-protocol`, `hermes-store` and
//! `hermes-app` derive `specta::Type` themselves behind their `specta` feature, and are re-exported below under the
//! names the UI uses. A type goes here only when it is the shell's own (its windows, files, keychain).

use serde::Serialize;
use specta::Type;

pub use hermes_app::types::{
    Attachment, CardOutcome, Conversation, Dialect, ExportFormat, HistoryPage, MessageDirection, MessageError,
    MessageState, Profile, ProfileInput, SearchHit, StoredCard, StoredMessage,
};
/// What the UI asks an engine to do (`hermes_protocol::Command`).
pub use hermes_protocol::Command as EngineCommand;
/// Everything an engine tells the UI (`hermes_protocol::Event`, the `--jsonl` contract).
pub use hermes_protocol::Event as EngineEvent;

/* ---------- the shell's own (camelCase) ---------- */

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
    /// The conversation a page built to show it opens first (handed over once).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub open_conversation: Option<OpenConversation>,
}

/// What a received file really is, read from its bytes and extension (`hermes_client::filetype`), never from the
/// agent's label: "Open" only when `viewable`.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FileType {
    pub viewable: bool,
    /// The type the bytes show (`application/pdf`, `application/vnd.microsoft.portable-executable`, `text/plain`,
    /// `application/octet-stream` when they show none).
    pub real_mime: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub real_ext: Option<String>,
    /// The name's own last extension, lowercased (`exe` for `report.pdf.exe`).
    pub name_ext: String,
}

/// What "Ask about the clipboard" offers the composer: a file to attach (the clipboard's image, or text too long to
/// quote), text to quote, or nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ClipboardOffer {
    /// A token for the file in the temporary folder, as a drop's.
    File {
        path: String,
    },
    Text {
        text: String,
    },
    Empty,
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
    /// A WAV file's waveform preview: the loudness of equal slices, 0–255 relative to the loudest.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub waveform: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct SendResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub id: Option<String>,
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

/// Sent to the page to open a conversation (a notification or the tray's recent list was clicked); a page built for
/// it finds it in `AppInfo::open_conversation` instead.
#[derive(Debug, Clone, PartialEq, Serialize, Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct OpenConversation {
    pub profile_id: String,
    pub conversation_id: String,
}
