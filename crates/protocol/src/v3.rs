//! Wire model of Hermes Chat v3 (`../shared/spec/chat-v3.md`): one flat envelope per message.
//!
//! [`Envelope`] is the raw shape (every field optional so that decoding never fails on a missing field);
//! [`Envelope::body`] checks the required fields of its `type` (G-1, G-2) and gives the typed [`Body`].

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::adapter::{DecodeError, MAX_FRAME_BYTES};

/// The agent's address (G-4).
pub const AGENT: &str = "hermes";

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Envelope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// The four media message types (G-4b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaType {
    Image,
    Voice,
    Video,
    File,
}

impl MediaType {
    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Image => "image",
            MediaType::Voice => "voice",
            MediaType::Video => "video",
            MediaType::File => "file",
        }
    }

    /// G-4b: the message type follows the MIME type.
    pub fn for_mime(mime: &str) -> MediaType {
        let top = mime.split('/').next().unwrap_or("").trim().to_ascii_lowercase();
        match top.as_str() {
            "image" => MediaType::Image,
            "audio" => MediaType::Voice,
            "video" => MediaType::Video,
            _ => MediaType::File,
        }
    }
}

/// `data.media` (§4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaDescriptor {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// MIME type.
    #[serde(rename = "type", default)]
    pub mime: String,
    #[serde(default)]
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Seconds; written as an integer when it is whole.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "ser_seconds")]
    pub duration: Option<f64>,
}

fn ser_seconds<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(d) if d.fract() == 0.0 && *d >= 0.0 && *d < 9.0e15 => s.serialize_u64(*d as u64),
        Some(d) => s.serialize_f64(*d),
        None => s.serialize_none(),
    }
}

/// Error codes of §6; anything else is kept as [`ErrorCode::Other`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCode {
    Timeout,
    Offline,
    RateLimited,
    FileTooLarge,
    Unsupported,
    UploadFailed,
    Internal,
    Other(String),
}

impl ErrorCode {
    pub fn parse(s: &str) -> ErrorCode {
        match s {
            "timeout" => ErrorCode::Timeout,
            "offline" => ErrorCode::Offline,
            "rate_limited" => ErrorCode::RateLimited,
            "file_too_large" => ErrorCode::FileTooLarge,
            "unsupported" => ErrorCode::Unsupported,
            "upload_failed" => ErrorCode::UploadFailed,
            "internal" => ErrorCode::Internal,
            other => ErrorCode::Other(other.to_string()),
        }
    }
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::Timeout => "timeout",
            ErrorCode::Offline => "offline",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::FileTooLarge => "file_too_large",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::UploadFailed => "upload_failed",
            ErrorCode::Internal => "internal",
            ErrorCode::Other(s) => s,
        }
    }
}

/// The typed body of an envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Text {
        text: String,
    },
    Media {
        kind: MediaType,
        text: Option<String>,
        media: MediaDescriptor,
    },
    StreamStart,
    Stream {
        text: String,
    },
    StreamEnd,
    Error {
        code: ErrorCode,
        text: String,
    },
    Ping,
    Pong,
    /// G-2: unknown `type`, ignored by the caller.
    Unknown(String),
}

#[derive(Deserialize)]
struct TextData {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct MediaData {
    #[serde(default)]
    text: Option<String>,
    media: MediaDescriptor,
}

#[derive(Deserialize)]
struct ErrorData {
    #[serde(default)]
    code: String,
    #[serde(default)]
    text: String,
}

impl Envelope {
    fn malformed(&self, detail: impl Into<String>) -> DecodeError {
        DecodeError::Malformed { t: self.kind.clone(), detail: detail.into() }
    }

    fn require(&self, fields: &[(&str, bool)]) -> Result<(), DecodeError> {
        let missing: Vec<&str> = fields.iter().filter(|(_, present)| !present).map(|(n, _)| *n).collect();
        if missing.is_empty() { Ok(()) } else { Err(self.malformed(format!("missing {}", missing.join(", ")))) }
    }

    fn data_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, DecodeError> {
        let data = self.data.clone().ok_or_else(|| self.malformed("missing data"))?;
        serde_json::from_value(data).map_err(|e| self.malformed(e.to_string()))
    }

    /// The typed body, after checking the fields its type requires (G-1, G-2).
    pub fn body(&self) -> Result<Body, DecodeError> {
        let full = [
            ("id", self.id.is_some()),
            ("from", self.from.is_some()),
            ("to", self.to.is_some()),
            ("session", self.session.is_some()),
            ("ts", self.ts.is_some()),
        ];
        let part_of_stream =
            [("from", self.from.is_some()), ("to", self.to.is_some()), ("session", self.session.is_some())];
        Ok(match self.kind.as_str() {
            "ping" => Body::Ping,
            "pong" => Body::Pong,
            "text" => {
                self.require(&full)?;
                let d: TextData = self.data_as()?;
                Body::Text { text: d.text.unwrap_or_default() }
            }
            "image" | "voice" | "video" | "file" => {
                self.require(&full)?;
                let d: MediaData = self.data_as()?;
                let kind = match self.kind.as_str() {
                    "image" => MediaType::Image,
                    "voice" => MediaType::Voice,
                    "video" => MediaType::Video,
                    _ => MediaType::File,
                };
                Body::Media { kind, text: d.text, media: d.media }
            }
            "stream_start" => {
                self.require(&full)?;
                Body::StreamStart
            }
            "stream" => {
                self.require(&part_of_stream)?;
                let d: TextData = self.data_as()?;
                Body::Stream { text: d.text.unwrap_or_default() }
            }
            "stream_end" => {
                self.require(&part_of_stream)?;
                Body::StreamEnd
            }
            "error" => {
                self.require(&[("from", self.from.is_some())])?;
                let d: ErrorData = self.data_as()?;
                Body::Error { code: ErrorCode::parse(&d.code), text: d.text }
            }
            other => Body::Unknown(other.to_string()),
        })
    }

    pub fn ping() -> Envelope {
        Envelope { kind: "ping".into(), ..Default::default() }
    }

    pub fn pong() -> Envelope {
        Envelope { kind: "pong".into(), ..Default::default() }
    }

    /// An app → agent message of `kind` with `data`.
    pub fn to_agent(
        kind: &str,
        id: &str,
        from: &str,
        session: &str,
        reply_to: Option<&str>,
        ts: i64,
        data: Value,
    ) -> Envelope {
        Envelope {
            id: Some(id.to_string()),
            kind: kind.to_string(),
            from: Some(from.to_string()),
            to: Some(AGENT.to_string()),
            session: Some(session.to_string()),
            reply_to: reply_to.map(str::to_string),
            ts: Some(ts),
            data: Some(data),
        }
    }

    pub fn text(id: &str, from: &str, session: &str, reply_to: Option<&str>, ts: i64, text: &str) -> Envelope {
        Envelope::to_agent("text", id, from, session, reply_to, ts, serde_json::json!({ "text": text }))
    }

    pub fn media(
        id: &str,
        from: &str,
        session: &str,
        ts: i64,
        caption: Option<&str>,
        media: &MediaDescriptor,
    ) -> Envelope {
        let mut data = serde_json::Map::new();
        if let Some(c) = caption {
            data.insert("text".into(), Value::String(c.to_string()));
        }
        data.insert("media".into(), serde_json::to_value(media).unwrap_or(Value::Null));
        let kind = MediaType::for_mime(&media.mime);
        Envelope::to_agent(kind.as_str(), id, from, session, None, ts, Value::Object(data))
    }
}

/// Decode one envelope (any direction). A missing required field is reported by [`Envelope::body`], not here,
/// so the caller can log which message was dropped (G-2).
pub fn decode(text: &str) -> Result<Envelope, DecodeError> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(DecodeError::TooLarge { size: text.len(), limit: MAX_FRAME_BYTES });
    }
    serde_json::from_str(text).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            DecodeError::Json(e.to_string())
        } else {
            DecodeError::Malformed { t: "?".into(), detail: e.to_string() }
        }
    })
}

pub fn encode(env: &Envelope) -> String {
    serde_json::to_string(env).unwrap_or_default()
}

/// G-4: the app's `user_id` from the JWT's `sub` claim (read, not verified).
pub fn jwt_subject(jwt: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    v.get("sub")?.as_str().map(str::to_string)
}
