//! IPC types with specta derives, mirroring the crates' serde shapes exactly (the protocol and store crates do not
//! depend on specta). `tests::mirror_*` prove the JSON is identical to the originals'.

use hermes_protocol::adapter::PromptOption as POption;
use hermes_protocol::{Command as PCommand, Direction as PDirection, Event as PEvent};
use serde::{Deserialize, Serialize};
use specta::Type;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PromptOption {
    pub id: String,
    #[serde(default)]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub style: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Up,
    Down,
}

/// Everything an engine tells the UI (`hermes_protocol::Event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EngineEvent {
    Connecting {
        attempt: u32,
    },
    Ready {
        session: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        avatar_url: Option<String>,
        capabilities: serde_json::Map<String, serde_json::Value>,
    },
    Message {
        id: String,
        text: String,
        #[serde(rename = "final")]
        final_: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        reply_to: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        session: Option<String>,
    },
    Typing {
        on: bool,
    },
    Avatar {
        state: String,
    },
    Prompt {
        id: String,
        kind: String,
        text: String,
        options: Vec<PromptOption>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        command: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        timeout_seconds: Option<u64>,
    },
    PromptDone {
        prompt_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        option_id: Option<String>,
        expired: bool,
    },
    Media {
        id: String,
        kind: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        mime: Option<String>,
        filename: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        caption: Option<String>,
        path: String,
        size: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        session: Option<String>,
    },
    Progress {
        id: String,
        direction: Direction,
        done: u64,
        total: u64,
    },
    Error {
        code: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        id: Option<String>,
    },
    Sent {
        id: String,
    },
    Delivered {
        id: String,
    },
    Disconnected {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        retry_in_ms: Option<u64>,
    },
    AccessDenied {
        reason: String,
    },
    Rejected {
        cmd: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        id: Option<String>,
    },
}

fn opt(o: POption) -> PromptOption {
    PromptOption { id: o.id, label: o.label, style: o.style }
}

impl From<PEvent> for EngineEvent {
    fn from(e: PEvent) -> Self {
        match e {
            PEvent::Connecting { attempt } => EngineEvent::Connecting { attempt },
            PEvent::Ready { session, avatar_url, capabilities } => {
                EngineEvent::Ready { session, avatar_url, capabilities }
            }
            PEvent::Message { id, text, final_, reply_to, session } => {
                EngineEvent::Message { id, text, final_, reply_to, session }
            }
            PEvent::Typing { on } => EngineEvent::Typing { on },
            PEvent::Avatar { state } => EngineEvent::Avatar { state },
            PEvent::Prompt { id, kind, text, options, command, description, timeout_seconds } => EngineEvent::Prompt {
                id,
                kind,
                text,
                options: options.into_iter().map(opt).collect(),
                command,
                description,
                timeout_seconds,
            },
            PEvent::PromptDone { prompt_id, option_id, expired } => {
                EngineEvent::PromptDone { prompt_id, option_id, expired }
            }
            PEvent::Media { id, kind, mime, filename, caption, path, size, session } => {
                EngineEvent::Media { id, kind, mime, filename, caption, path, size, session }
            }
            PEvent::Progress { id, direction, done, total } => EngineEvent::Progress {
                id,
                direction: match direction {
                    PDirection::Up => Direction::Up,
                    PDirection::Down => Direction::Down,
                },
                done,
                total,
            },
            PEvent::Error { code, text, id } => EngineEvent::Error { code, text, id },
            PEvent::Sent { id } => EngineEvent::Sent { id },
            PEvent::Delivered { id } => EngineEvent::Delivered { id },
            PEvent::Disconnected { reason, retry_in_ms } => EngineEvent::Disconnected { reason, retry_in_ms },
            PEvent::AccessDenied { reason } => EngineEvent::AccessDenied { reason },
            PEvent::Rejected { cmd, reason, id } => EngineEvent::Rejected { cmd, reason, id },
        }
    }
}

/// What the UI asks an engine to do (`hermes_protocol::Command`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum EngineCommand {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        reply_to: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        session: Option<String>,
    },
    File {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        caption: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        session: Option<String>,
    },
    Audio {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        session: Option<String>,
    },
    Prompt {
        prompt_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        option_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[specta(optional)]
        text: Option<String>,
    },
    Cancel {
        id: String,
    },
    Reconnect,
    Quit,
}

impl From<EngineCommand> for PCommand {
    fn from(c: EngineCommand) -> Self {
        match c {
            EngineCommand::Text { text, reply_to, id, session } => PCommand::Text { text, reply_to, id, session },
            EngineCommand::File { path, caption, id, session } => PCommand::File { path, caption, id, session },
            EngineCommand::Audio { path, text, id, session } => PCommand::Audio { path, text, id, session },
            EngineCommand::Prompt { prompt_id, option_id, text } => PCommand::Prompt { prompt_id, option_id, text },
            EngineCommand::Cancel { id } => PCommand::Cancel { id },
            EngineCommand::Reconnect => PCommand::Reconnect,
            EngineCommand::Quit => PCommand::Quit,
        }
    }
}

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    Adapter,
    V3,
}

impl From<Dialect> for hermes_store::Dialect {
    fn from(d: Dialect) -> Self {
        match d {
            Dialect::Adapter => hermes_store::Dialect::Adapter,
            Dialect::V3 => hermes_store::Dialect::V3,
        }
    }
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
}

impl Profile {
    /// `has_token` also counts a session-only token.
    pub fn from_store(p: hermes_store::Profile, session_token: bool) -> Self {
        Profile {
            dialect: match p.dialect {
                hermes_store::Dialect::Adapter => Dialect::Adapter,
                hermes_store::Dialect::V3 => Dialect::V3,
            },
            id: p.id,
            name: p.name,
            url: p.url,
            device_id: p.device_id,
            user_id: p.v3_user_id,
            allow_insecure_ws: p.allow_insecure_ws,
            avatar_url_override: p.avatar_url,
            has_token: p.has_token || session_token,
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

#[derive(Debug, Clone, Copy, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum MessageDirection {
    In,
    Out,
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
pub struct MessageErrorInfo {
    pub code: String,
    pub text: String,
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
    pub error: Option<MessageErrorInfo>,
    pub created_at: String,
    pub attachments: Vec<Attachment>,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    pub messages: Vec<StoredMessage>,
    pub has_more: bool,
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
pub struct FileInfo {
    pub path: String,
    pub name: String,
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub mime: Option<String>,
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
    use serde_json::json;

    fn samples() -> Vec<serde_json::Value> {
        vec![
            json!({"event":"connecting","attempt":1}),
            json!({"event":"ready","session":"s","capabilities":{"a":1}}),
            json!({"event":"ready","session":"s","avatar_url":"https://x/a.png","capabilities":{}}),
            json!({"event":"message","id":"m","text":"t","final":true,"reply_to":"r","session":"u"}),
            json!({"event":"message","id":"m","text":"t","final":false}),
            json!({"event":"typing","on":true}),
            json!({"event":"avatar","state":"idle"}),
            json!({"event":"prompt","id":"p","kind":"approval","text":"t","options":[{"id":"o","label":"L","style":"danger"},{"id":"n","label":""}],"command":"rm","description":"d","timeout_seconds":5}),
            json!({"event":"prompt_done","prompt_id":"p","option_id":"o","expired":false}),
            json!({"event":"media","id":"i","kind":"image","mime":"image/png","filename":"f.png","caption":"c","path":"/p","size":3,"session":"s"}),
            json!({"event":"progress","id":"i","direction":"up","done":1,"total":2}),
            json!({"event":"error","code":"c","text":"t","id":"i"}),
            json!({"event":"sent","id":"i"}),
            json!({"event":"delivered","id":"i"}),
            json!({"event":"disconnected","reason":"r","retry_in_ms":100}),
            json!({"event":"access_denied","reason":"r"}),
            json!({"event":"rejected","cmd":"text","reason":"r","id":"i"}),
        ]
    }

    #[test]
    fn mirror_event_serializes_like_the_protocol() {
        for v in samples() {
            let p: PEvent = serde_json::from_value(v.clone()).unwrap();
            let ours = EngineEvent::from(p.clone());
            assert_eq!(serde_json::to_value(&ours).unwrap(), serde_json::to_value(&p).unwrap(), "{v}");
            assert_eq!(serde_json::to_value(&ours).unwrap(), v);
        }
    }

    #[test]
    fn mirror_command_deserializes_like_the_protocol() {
        let cmds = [
            json!({"cmd":"text","text":"hi"}),
            json!({"cmd":"text","text":"hi","reply_to":"r","id":"i","session":"s"}),
            json!({"cmd":"file","path":"/x","caption":"c"}),
            json!({"cmd":"audio","path":"/x.wav","text":"t"}),
            json!({"cmd":"prompt","prompt_id":"p","option_id":"o"}),
            json!({"cmd":"cancel","id":"i"}),
            json!({"cmd":"reconnect"}),
            json!({"cmd":"quit"}),
        ];
        for v in cmds {
            let ours: EngineCommand = serde_json::from_value(v.clone()).unwrap();
            let theirs: PCommand = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(PCommand::from(ours), theirs);
        }
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_795_932_947_123), "2026-11-29T06:15:47.123Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
