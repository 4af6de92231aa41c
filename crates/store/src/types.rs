//! Plain data types of the store. All are serde-serialisable so the app can hand them to a UI.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};

/// Declares a string-backed enum stored as TEXT in SQLite and as lowercase strings in serde.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $s:literal),+ $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        $(#[$meta])*
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $s)] $variant),+
        }

        impl $name {
            /// All variants.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored / wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $s),+ }
            }

            /// Parses the stored spelling.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let s = value.as_str()?;
                $name::parse(s).ok_or_else(|| {
                    FromSqlError::Other(format!("invalid {} {s:?}", stringify!($name)).into())
                })
            }
        }
    };
}

/// The protocol's own types, one definition each; the store keeps its columns' text (`'adapter'`/`'v3'`,
/// `'out'`/`'in'`) through [`DialectText`] and [`DirectionText`] (no migration).
pub use hermes_protocol::{Dialect, Direction};

/// A [`Dialect`] as the `profiles.dialect` column spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DialectText(pub Dialect);

impl ToSql for DialectText {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.0.as_str()))
    }
}

impl FromSql for DialectText {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = value.as_str()?;
        s.parse().map(DialectText).map_err(|_| FromSqlError::Other(format!("invalid Dialect {s:?}").into()))
    }
}

/// A message's [`Direction`] as the `messages.direction` column (and the JSON export) spells it: `out` (sent, up)
/// and `in` (received, down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirectionText(pub Direction);

impl DirectionText {
    pub(crate) fn as_str(self) -> &'static str {
        match self.0 {
            Direction::Up => "out",
            Direction::Down => "in",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "out" => Some(DirectionText(Direction::Up)),
            "in" => Some(DirectionText(Direction::Down)),
            _ => None,
        }
    }
}

impl ToSql for DirectionText {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for DirectionText {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = value.as_str()?;
        DirectionText::parse(s).ok_or_else(|| FromSqlError::Other(format!("invalid Direction {s:?}").into()))
    }
}

/// `Message::direction` in serde as the export files have always written it (`"out"`/`"in"`).
mod direction_text {
    use super::{Direction, DirectionText};
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    pub(super) fn serialize<S: Serializer>(d: &Direction, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(DirectionText(*d).as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Direction, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        DirectionText::parse(&s).map(|t| t.0).ok_or_else(|| D::Error::unknown_variant(&s, &["out", "in"]))
    }
}

text_enum!(
    /// Whether a (streamed) message is still being assembled.
    Assembly {
        /// Deltas are still arriving.
        Streaming => "streaming",
        /// Complete.
        Final => "final",
    }
);

text_enum!(
    /// Delivery state of an outgoing message (as shown to the user).
    Delivery {
        /// Stored, in the outbox, not yet sent.
        Queued => "queued",
        /// Written to the socket.
        Sent => "sent",
        /// Acknowledged by the server.
        Delivered => "delivered",
        /// Gave up; the user may retry.
        Failed => "failed",
    }
);

text_enum!(
    /// Kind of an outbox entry.
    OutboxKind {
        /// A text message.
        Text => "text",
        /// A voice note.
        Audio => "audio",
        /// A file / image.
        Media => "media",
    }
);

text_enum!(
    /// State of an outbox entry.
    OutboxState {
        /// Waiting to be sent.
        Pending => "pending",
        /// Sent, not yet confirmed. After a crash or reconnect it counts as pending again.
        InFlight => "in_flight",
        /// Confirmed by the server; may be purged.
        Confirmed => "confirmed",
        /// Wedged (permanent error): kept for a user retry, not resent automatically.
        Failed => "failed",
    }
);

text_enum!(
    /// Where a media file came from.
    MediaOrigin {
        /// Attached by the user.
        Sent => "sent",
        /// Downloaded from the agent.
        Received => "received",
    }
);

/// An agent the user talks to. There is deliberately **no token field**: the token lives in the
/// OS keychain under [`Profile::keychain_account`]; the store only records `has_token`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Local id (UUID v4).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Server URL (ws://, wss://, http(s)://…).
    pub url: String,
    /// Protocol dialect; fixed at creation.
    pub dialect: Dialect,
    /// `desktop-` + 16 lowercase hex chars; generated once, stable forever.
    pub device_id: String,
    /// v3 user id, if any.
    pub v3_user_id: Option<String>,
    /// Allow plain `ws://` to non-local hosts.
    pub allow_insecure_ws: bool,
    /// Avatar URL override.
    pub avatar_url: Option<String>,
    /// Whether a token was stored in the keychain for this profile (a flag, never the secret).
    pub has_token: bool,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// The conversation the user made the agent's home channel (`/sethome`), if any.
    #[serde(default)]
    pub home_conversation_id: Option<String>,
    /// When the agent evidently approved this device, ms since the epoch; `None` until then.
    #[serde(default)]
    pub paired_at: Option<i64>,
}

impl Profile {
    /// The keychain account name under which the app stores this profile's token.
    pub fn keychain_account(&self) -> &str {
        &self.id
    }
}

/// Input of [`crate::Store::profile_create`]. Has no token field by design.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewProfile {
    pub name: String,
    pub url: String,
    pub dialect: Dialect,
    pub v3_user_id: Option<String>,
    pub allow_insecure_ws: bool,
    pub avatar_url: Option<String>,
}

impl NewProfile {
    /// An adapter-dialect profile with nothing else set (no insecure ws, no avatar).
    pub fn adapter(name: &str, url: &str) -> Self {
        NewProfile {
            name: name.into(),
            url: url.into(),
            dialect: Dialect::Adapter,
            v3_user_id: None,
            allow_insecure_ws: false,
            avatar_url: None,
        }
    }
}

/// The mutable fields of a profile (dialect and device id never change).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileUpdate {
    pub name: String,
    pub url: String,
    pub v3_user_id: Option<String>,
    pub allow_insecure_ws: bool,
    pub avatar_url: Option<String>,
}

impl From<&Profile> for ProfileUpdate {
    fn from(p: &Profile) -> Self {
        ProfileUpdate {
            name: p.name.clone(),
            url: p.url.clone(),
            v3_user_id: p.v3_user_id.clone(),
            allow_insecure_ws: p.allow_insecure_ws,
            avatar_url: p.avatar_url.clone(),
        }
    }
}

/// A conversation (adapter: exactly one per profile; v3: many).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: String,
    pub profile_id: String,
    pub title: String,
    /// Server session: `mobile:<device id>` (adapter) or a UUID v4 (v3).
    pub session: String,
    pub created_at: i64,
    /// Bumped by new / updated messages.
    pub updated_at: i64,
    /// Start of the newest message's text (`[attachment]` for a file without text).
    pub last_preview: Option<String>,
}

/// A card the agent showed (approval or question, A-12..A-17), as kept with its conversation (schema v4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    pub conversation_id: String,
    /// The agent's prompt id.
    pub id: String,
    /// `exec_approval`, `clarify`, …
    pub kind: String,
    pub text: String,
    /// The buttons as the agent sent them (a JSON array of `{id, label, style}`).
    pub options: serde_json::Value,
    pub command: Option<String>,
    pub description: Option<String>,
    pub timeout_seconds: Option<i64>,
    /// When it was shown (ms).
    pub created_at: i64,
    /// Its outcome (`prompt_done`), `None` while it waits.
    pub done: Option<CardDone>,
}

/// How a card ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardDone {
    pub option_id: Option<String>,
    pub expired: bool,
}

/// An error attached to a message (e.g. the agent failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MessageError {
    pub code: String,
    pub text: String,
}

/// A chat message. Also the input of [`crate::Store::message_upsert`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Local id (UUID v4, ours); the upsert key.
    pub id: String,
    pub conversation_id: String,
    /// Server's id once known; unique within a conversation.
    pub server_id: Option<String>,
    /// `Up`: the user's, `Down`: the agent's (`"out"`/`"in"` in JSON, as export files have it).
    #[serde(with = "direction_text")]
    pub direction: Direction,
    pub text: String,
    pub assembly: Assembly,
    /// Number of edits reported for this message (not counting stream deltas).
    pub edit_count: u32,
    /// Local or server id of the message this one replies to.
    pub reply_to: Option<String>,
    pub error: Option<MessageError>,
    /// Delivery state; meaningful for outgoing messages, `None` for incoming.
    pub delivery: Option<Delivery>,
    /// Milliseconds since the Unix epoch; orders the history.
    pub created_at: i64,
    /// Milliseconds since the Unix epoch of the last change.
    pub updated_at: i64,
    /// Media ids (see [`MediaEntry`]), in display order.
    pub attachments: Vec<String>,
    /// The failed message this one sends again under a new id (the agent had received and refused the first).
    #[serde(default)]
    pub retry_of: Option<String>,
}

impl Message {
    /// A new message with a fresh local id, `final`, no error, no attachments;
    /// outgoing ones start `queued`.
    pub fn new(conversation_id: &str, direction: Direction, text: &str, now_ms: i64) -> Self {
        Message {
            id: crate::new_id(),
            conversation_id: conversation_id.to_owned(),
            server_id: None,
            direction,
            text: text.to_owned(),
            assembly: Assembly::Final,
            edit_count: 0,
            reply_to: None,
            error: None,
            delivery: match direction {
                Direction::Up => Some(Delivery::Queued),
                Direction::Down => None,
            },
            created_at: now_ms,
            updated_at: now_ms,
            attachments: Vec::new(),
            retry_of: None,
        }
    }
}

/// Position in a conversation's history: page strictly older than this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub created_at: i64,
    pub seq: i64,
}

/// One page of history, **newest first**.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub messages: Vec<Message>,
    /// Pass as `before` to get the next (older) page; `None` when this was the oldest page.
    pub next: Option<Cursor>,
}

/// Input of [`crate::Store::outbox_insert`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewOutboxEntry {
    /// The wire id; stays the same for every resend.
    pub id: String,
    pub profile_id: String,
    pub conversation_id: String,
    pub kind: OutboxKind,
    /// Whatever the engine needs to rebuild the frame, e.g. `{"text":…,"reply_to":…}`.
    pub payload: serde_json::Value,
}

/// A durable outbox entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEntry {
    pub id: String,
    /// Monotonic insertion order.
    pub seq: i64,
    pub profile_id: String,
    pub conversation_id: String,
    pub kind: OutboxKind,
    pub payload: serde_json::Value,
    pub state: OutboxState,
    /// How many times it was marked in flight.
    pub attempts: u32,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A file saved by the engine under the media folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaEntry {
    pub id: String,
    pub profile_id: String,
    pub message_id: Option<String>,
    /// Relative to the media folder (`/`-separated, no `..`, not absolute).
    pub path: String,
    /// Lowercase hex SHA-256 of the content.
    pub sha256: String,
    pub mime: String,
    pub size: u64,
    pub filename: Option<String>,
    pub origin: MediaOrigin,
    pub created_at: i64,
}

/// Options of [`crate::Store::search`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchOptions {
    /// Restrict to one profile; `None` searches all.
    pub profile_id: Option<String>,
    /// Maximum number of hits.
    pub limit: u32,
    /// Inserted before each matched term in the snippet.
    pub open_marker: String,
    /// Inserted after each matched term in the snippet.
    pub close_marker: String,
    /// Marks text cut from the snippet.
    pub ellipsis: String,
    /// Approximate snippet length in tokens (1..=64).
    pub snippet_tokens: u32,
    /// Treat the last word as a prefix (`hel` finds `hello`).
    pub prefix_last: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            profile_id: None,
            limit: 50,
            open_marker: "[".into(),
            close_marker: "]".into(),
            ellipsis: "…".into(),
            snippet_tokens: 16,
            prefix_last: true,
        }
    }
}

/// One search result, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub message_id: String,
    pub conversation_id: String,
    pub profile_id: String,
    pub snippet: String,
    /// The message's `created_at`.
    pub created_at: i64,
    /// bm25 score (lower is better).
    pub rank: f64,
}

/// JSON export of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationExport {
    /// Export format version.
    pub format: u32,
    pub exported_at: i64,
    pub profile_name: String,
    pub conversation: Conversation,
    /// Oldest first.
    pub messages: Vec<Message>,
    /// Every media entry referenced by an exported message.
    pub media: Vec<MediaEntry>,
}
