//! Wire model of the Hermes adapter protocol (`../shared/spec/adapter.md`): `{"t": …}` frames.
//!
//! Decoding is tolerant: an unknown `t` decodes to [`Down::Unknown`], unknown fields are ignored and
//! every optional field is optional. Encoding is exact: absent optionals are left out, never written as `null`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod scan;
#[cfg(test)]
mod tests;

pub use scan::{MessageRef, decode_message_ref};

/// The device block of `hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
}

/// `chunk: {index, total}` of a long reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub index: u32,
    pub total: u32,
}

/// One button of a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PromptOption {
    pub id: String,
    #[serde(default)]
    pub label: String,
    /// `primary`, `danger` or empty: a hint only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub style: Option<String>,
}

/// Frames the client sends (up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Up {
    /// always the first frame of a connection.
    Hello { token: String, device: Device },
    /// A-6b.
    Text {
        id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<String>,
    },
    /// a WAV clip, 16 kHz mono PCM16, base64.
    Audio {
        id: String,
        format: String,
        data: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// a file or one part of it.
    Media(UpMedia),
    /// the answer to a card.
    Prompt {
        prompt_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        option_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
}

/// Uplink `media` frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpMedia {
    pub id: String,
    pub kind: String,
    pub mime: String,
    pub filename: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    pub data: String,
    pub part: u32,
    pub parts: u32,
}

/// Frames the server sends (down).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Down {
    ///
    Ready {
        #[serde(default)]
        session: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        avatar_url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capabilities: Option<Map<String, Value>>,
    },
    ///
    Message(DownMessage),
    ///
    Prompt(DownPrompt),
    ///
    PromptDone(PromptDone),
    ///
    Media(DownMedia),
    ///
    Typing {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<bool>,
    },
    ///
    Avatar { state: String },
    /// A-22, §10.
    Error {
        #[serde(default)]
        code: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// any other `t`. The caller ignores it.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownMessage {
    pub id: String,
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<Chunk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<bool>,
    #[serde(default, rename = "final", skip_serializing_if = "Option::is_none")]
    pub final_: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownPrompt {
    pub id: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub options: Vec<PromptOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}

/// the card id may come as `prompt_id` or `id`; both are accepted, `prompt_id` wins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptDone {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<bool>,
}

impl PromptDone {
    /// The card this closes, whichever key carried it.
    pub fn card_id(&self) -> Option<&str> {
        self.prompt_id.as_deref().or(self.id.as_deref())
    }
}

/// Downlink `media` frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownMedia {
    pub id: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<u32>,
    #[serde(default, rename = "final", skip_serializing_if = "Option::is_none")]
    pub final_: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Why a frame could not be decoded. Never fatal for the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("frame is not valid JSON: {0}")]
    Json(String),
    #[error("frame `{t}` is malformed: {detail}")]
    Malformed { t: String, detail: String },
    #[error("frame is {size} bytes, over the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
}

/// one frame ≤ 16 MiB.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Decode one downlink frame. Unknown `t` → `Ok(Down::Unknown)`.
///
/// Fast path: read `t` first (a scan that skips every other value), then deserialize the frame's own struct
/// straight from the text — serde's internally tagged enums buffer every field first, which made small `message`
/// frames several times slower. The result is the same as decoding [`Down`] directly (tested).
pub fn decode_down(text: &str) -> Result<Down, DecodeError> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(DecodeError::TooLarge { size: text.len(), limit: MAX_FRAME_BYTES });
    }
    if let Some(m) = decode_message_ref(text) {
        return Ok(Down::Message(m.into_owned()));
    }
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(borrow, default)]
        t: Option<Cow<'a, str>>,
    }
    let fast = match text.trim_start().as_bytes().first() {
        Some(b'{') => serde_json::from_str::<Tag>(text).ok().and_then(|tag| tag.t),
        _ => None,
    };
    let r = match fast.as_deref() {
        Some("message") => serde_json::from_str::<DownMessage>(text).map(Down::Message),
        Some("prompt") => serde_json::from_str::<DownPrompt>(text).map(Down::Prompt),
        Some("prompt_done") => serde_json::from_str::<PromptDone>(text).map(Down::PromptDone),
        Some("media") => serde_json::from_str::<DownMedia>(text).map(Down::Media),
        // the rest are small or rare: the enum itself
        _ => serde_json::from_str::<Down>(text),
    };
    r.map_err(|e| classify(text, e))
}

/// Decode one uplink frame (used by the reference agent).
pub fn decode_up(text: &str) -> Result<Up, DecodeError> {
    decode(text)
}

fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, DecodeError> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(DecodeError::TooLarge { size: text.len(), limit: MAX_FRAME_BYTES });
    }
    serde_json::from_str(text).map_err(|e| classify(text, e))
}

fn classify(text: &str, e: serde_json::Error) -> DecodeError {
    if e.is_syntax() || e.is_eof() {
        return DecodeError::Json(e.to_string());
    }
    // Find the `t` to name the frame in the error; a cheap second parse only on the error path.
    #[derive(Deserialize)]
    struct Tag {
        t: Option<Value>,
    }
    let t = serde_json::from_str::<Tag>(text)
        .ok()
        .and_then(|tag| tag.t)
        .map(|t| match t {
            Value::String(s) => s,
            other => other.to_string(),
        })
        .unwrap_or_else(|| "?".into());
    DecodeError::Malformed { t, detail: e.to_string() }
}

/// Encode a frame exactly (no `null` for absent optionals).
pub fn encode<T: Serialize>(frame: &T) -> String {
    // Serialising these plain structs to a String cannot fail: no maps with non-string keys, no I/O.
    serde_json::to_string(frame).unwrap_or_default()
}
