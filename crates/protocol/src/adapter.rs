//! Wire model of the Hermes adapter protocol (`../shared/spec/adapter.md`): `{"t": …}` frames.
//!
//! Decoding is tolerant (A-7, A-22): an unknown `t` decodes to [`Down::Unknown`], unknown fields are ignored and
//! every optional field is optional. Encoding is exact: absent optionals are left out, never written as `null`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The device block of `hello` (A-1, A-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
}

/// `chunk: {index, total}` of a long reply (A-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub index: u32,
    pub total: u32,
}

/// One button of a card (A-12).
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
    /// A-2: always the first frame of a connection.
    Hello { token: String, device: Device },
    /// A-6b.
    Text {
        id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<String>,
    },
    /// A-23: a WAV clip, 16 kHz mono PCM16, base64.
    Audio {
        id: String,
        format: String,
        data: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A-18: a file or one part of it.
    Media(UpMedia),
    /// A-13/A-14: the answer to a card.
    Prompt {
        prompt_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        option_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
}

/// Uplink `media` frame (A-18).
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
    /// A-3.
    Ready {
        #[serde(default)]
        session: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        avatar_url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capabilities: Option<Map<String, Value>>,
    },
    /// A-9, A-10, A-21.
    Message(DownMessage),
    /// A-12.
    Prompt(DownPrompt),
    /// A-15, A-16.
    PromptDone(PromptDone),
    /// A-20.
    Media(DownMedia),
    /// A-11.
    Typing {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<bool>,
    },
    /// A-11.
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
    /// A-7: any other `t`. The caller ignores it.
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

/// A-16: the card id may come as `prompt_id` or `id`; both are accepted, `prompt_id` wins.
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
    /// The card this closes, whichever key carried it (A-16).
    pub fn card_id(&self) -> Option<&str> {
        self.prompt_id.as_deref().or(self.id.as_deref())
    }
}

/// Downlink `media` frame (A-20).
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

/// Why a frame could not be decoded. Never fatal for the connection (A-22).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("frame is not valid JSON: {0}")]
    Json(String),
    #[error("frame `{t}` is malformed: {detail}")]
    Malformed { t: String, detail: String },
    #[error("frame is {size} bytes, over the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
}

/// A-19: one frame ≤ 16 MiB.
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

/// The fastest path, for the frame that comes by the thousand: a well-formed `message` frame whose `t` comes first
/// (as every agent writes it), read in one pass with its strings borrowed from the frame where they have no escapes.
/// `None` for anything else — another frame, an odd one (a second `t` is a duplicate field here), a malformed one,
/// or one over [`MAX_FRAME_BYTES`] — which [`decode_down`] then reads (and reports) the general way; the result is
/// the same either way (tested).
pub fn decode_message_ref(text: &str) -> Option<MessageRef<'_>> {
    if text.len() > MAX_FRAME_BYTES {
        return None;
    }
    if text.as_bytes().first_chunk() != Some(MESSAGE_HEAD) {
        return None;
    }
    // The usual frame (known keys, plain strings) is read by a scanner; anything else by serde. Both give the same.
    if let Some(m) = scan_message(text) {
        return Some(m);
    }
    let rest = text.get(MESSAGE_HEAD.len()..)?;
    if !matches!(rest.trim_start().as_bytes().first(), Some(b',' | b'}')) {
        return None;
    }
    serde_json::from_str::<MessageRef>(text).ok()
}

/// How every agent starts a `message` frame (a fixed-size array: compared in place, no `memcmp` call).
const MESSAGE_HEAD: &[u8; 14] = br#"{"t":"message""#;

/// A one-pass reader of the usual `message` frame (issue #4: serde_json spent ~1,800 instructions on a 75-byte frame).
///
/// It accepts only what it can read exactly as serde does: `{"t":"message"` first, then the known keys once each
/// (`id`, `text`, `edit`, `final`, `reply_to`, and `chunk` as `{"index": n, "total": n}`), unknown keys whose value
/// is a string, `true`, `false` or `null`, strings without escapes or control characters, JSON whitespace anywhere
/// between tokens and nothing after the closing brace. For anything else (an escape, a nested unknown value, a
/// number it does not read, a duplicate key, a syntax error…) it answers `None` and the caller asks serde, which
/// then decides — so the result never differs (tested against serde on hand-written and generated frames).
fn scan_message(text: &str) -> Option<MessageRef<'_>> {
    let mut s = Scan { text, b: text.as_bytes(), i: MESSAGE_HEAD.len() };
    let mut m = MessageRef {
        _t: serde::de::IgnoredAny,
        id: Cow::Borrowed(""),
        text: Cow::Borrowed(""),
        chunk: None,
        edit: None,
        final_: None,
        reply_to: None,
    };
    // bit per known key seen: a duplicate is serde's error, so serde's business
    let mut seen = 0u8;
    loop {
        s.ws();
        match s.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
        s.ws();
        if s.next()? != b'"' {
            return None;
        }
        let bit = s.key()?;
        s.ws();
        if s.next()? != b':' {
            return None;
        }
        s.ws();
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        match bit {
            1 => m.id = Cow::Borrowed(s.quoted()?),
            2 => m.text = Cow::Borrowed(s.quoted()?),
            4 => m.chunk = s.chunk()?,
            8 => m.edit = s.opt_bool()?,
            16 => m.final_ = s.opt_bool()?,
            32 => {
                m.reply_to = match s.peek()? {
                    b'n' => s.null()?,
                    _ => Some(Cow::Borrowed(s.quoted()?)),
                }
            }
            _ => match s.peek()? {
                b'"' => {
                    s.quoted()?;
                }
                // a bool or null; anything else (a number, an object, an array…) is serde's to skip or refuse
                _ => {
                    s.opt_bool()?;
                }
            },
        }
    }
    s.ws();
    (seen & 1 != 0 && s.i == s.b.len()).then_some(m)
}

/// The cursor of [`scan_message`]. Every method answers `None` for what it does not read exactly (never panics).
struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    /// JSON whitespace (RFC 8259 §2), nothing else.
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }
    fn lit<const N: usize>(&mut self, word: &[u8; N]) -> Option<()> {
        (self.b.get(self.i..)?.first_chunk::<N>()? == word).then(|| self.i += N)
    }
    fn null<T>(&mut self) -> Option<Option<T>> {
        self.lit(b"null").map(|()| None)
    }
    fn opt_bool(&mut self) -> Option<Option<bool>> {
        match self.peek()? {
            b't' => self.lit(b"true").map(|()| Some(true)),
            b'f' => self.lit(b"false").map(|()| Some(false)),
            b'n' => self.null(),
            _ => None,
        }
    }
    /// The rest of a key whose opening quote was read: the bit of a known key, 0 for another; `None` for `t` (a
    /// duplicate) and for what [`string`](Self::string) does not read.
    fn key(&mut self) -> Option<u8> {
        let rest = self.b.get(self.i..)?;
        // fixed-size comparisons (inlined), each key with its closing quote
        let known = match rest.first()? {
            b'i' if rest.first_chunk() == Some(b"id\"") => Some((3, 1)),
            b't' if rest.first_chunk() == Some(b"text\"") => Some((5, 2)),
            b'c' if rest.first_chunk() == Some(b"chunk\"") => Some((6, 4)),
            b'e' if rest.first_chunk() == Some(b"edit\"") => Some((5, 8)),
            b'f' if rest.first_chunk() == Some(b"final\"") => Some((6, 16)),
            b'r' if rest.first_chunk() == Some(b"reply_to\"") => Some((9, 32)),
            _ => None,
        };
        if let Some((len, bit)) = known {
            self.i += len;
            return Some(bit);
        }
        match self.string()? {
            "t" => None,
            _ => Some(0),
        }
    }
    fn quoted(&mut self) -> Option<&'a str> {
        if self.next()? != b'"' {
            return None;
        }
        self.string()
    }
    /// The rest of a string whose opening quote was read: its text when it has no escape and no control character.
    fn string(&mut self) -> Option<&'a str> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let start = self.i;
        let mut i = start;
        // eight bytes at a time while none is `"`, `\` or below 0x20 (the lowest flagged byte is exact)
        while let Some(w) = self.b.get(i..i + 8) {
            let w = u64::from_le_bytes(w.try_into().ok()?);
            let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
            let hit = zero(w ^ (ONES * u64::from(b'"')))
                | zero(w ^ (ONES * u64::from(b'\\')))
                | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
            if hit != 0 {
                i += (hit.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        loop {
            match *self.b.get(i)? {
                b'"' => break,
                b'\\' | 0..0x20 => return None,
                _ => i += 1,
            }
        }
        self.i = i + 1;
        // both ends are next to ASCII quotes, so on character boundaries: `get` never fails here (and checks in O(1))
        self.text.get(start..i)
    }
    /// A plain non-negative integer that fits `u32`, as serde reads it (no sign, fraction, exponent or leading 0).
    fn u32(&mut self) -> Option<u32> {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        let digits = &self.b[start..self.i];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') || digits.len() > 10 {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return None;
        }
        let v = digits.iter().fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
        u32::try_from(v).ok()
    }
    /// `null` or `{"index": n, "total": n}` (either order, each once, nothing else).
    fn chunk(&mut self) -> Option<Option<Chunk>> {
        if self.peek()? == b'n' {
            return self.null();
        }
        if self.next()? != b'{' {
            return None;
        }
        let (mut index, mut total) = (None, None);
        for n in 0..2 {
            self.ws();
            if n == 1 {
                if self.next()? != b',' {
                    return None;
                }
                self.ws();
            }
            let key = self.quoted()?;
            self.ws();
            if self.next()? != b':' {
                return None;
            }
            self.ws();
            let slot = match key {
                "index" if index.is_none() => &mut index,
                "total" if total.is_none() => &mut total,
                _ => return None,
            };
            *slot = Some(self.u32()?);
        }
        self.ws();
        if self.next()? != b'}' {
            return None;
        }
        Some(Some(Chunk { index: index?, total: total? }))
    }
}

/// A downlink `message` frame borrowing its strings from the frame text (see [`decode_message_ref`]).
#[derive(Debug, Clone, Deserialize)]
pub struct MessageRef<'a> {
    /// Read once (a second `t` is a duplicate field: such a frame takes the general path), ignored.
    #[serde(rename = "t")]
    _t: serde::de::IgnoredAny,
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(borrow, default)]
    pub text: Cow<'a, str>,
    #[serde(default)]
    pub chunk: Option<Chunk>,
    #[serde(default)]
    pub edit: Option<bool>,
    #[serde(default, rename = "final")]
    pub final_: Option<bool>,
    #[serde(borrow, default)]
    pub reply_to: Option<Cow<'a, str>>,
}

impl MessageRef<'_> {
    /// The same message, owning its strings.
    pub fn into_owned(self) -> DownMessage {
        DownMessage {
            id: self.id.into_owned(),
            text: self.text.into_owned(),
            chunk: self.chunk,
            edit: self.edit,
            final_: self.final_,
            reply_to: self.reply_to.map(Cow::into_owned),
        }
    }
}

impl DownMessage {
    /// A borrowed view of this message (what the reply assembler takes).
    pub fn view(&self) -> MessageRef<'_> {
        MessageRef {
            _t: serde::de::IgnoredAny,
            id: Cow::Borrowed(&self.id),
            text: Cow::Borrowed(&self.text),
            chunk: self.chunk,
            edit: self.edit,
            final_: self.final_,
            reply_to: self.reply_to.as_deref().map(Cow::Borrowed),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde makes of a `message` frame (the reference the scanner must agree with).
    fn serde_message(text: &str) -> Option<DownMessage> {
        serde_json::from_str::<MessageRef>(text).ok().map(MessageRef::into_owned)
    }

    /// When the scanner reads a frame, it reads it exactly as serde does; and the fast decoder as a whole always
    /// agrees with serde (the scanner's `None` sends the frame to serde).
    fn assert_scan_agrees(text: &str) -> bool {
        let scanned = scan_message(text).map(MessageRef::into_owned);
        if let Some(m) = &scanned {
            assert_eq!(Some(m), serde_message(text).as_ref(), "scanner and serde disagree on {text:?}");
        }
        if text.starts_with(r#"{"t":"message""#) {
            assert_eq!(decode_message_ref(text).map(MessageRef::into_owned), serde_message(text), "{text:?}");
        }
        scanned.is_some()
    }

    /// A-9, A-10, A-21, A-22: the frames the scanner reads itself, each read as serde reads it.
    #[test]
    fn a22_message_scanner_reads_usual_frames_like_serde() {
        let read = [
            r#"{"t":"message","id":"m1","text":"hello number 1, a short reply","final":true}"#,
            r#"{"t":"message","id":"r1","text":"…","chunk":{"index":0,"total":2},"final":false}"#,
            r#"{"t":"message","id":"r1","text":"b","chunk":{"total":2,"index":1},"final":true}"#,
            r#"{"t":"message","id":"r1","text":"Counting","edit":true,"final":null,"reply_to":"q1"}"#,
            r#"{"t":"message","final":true,"reply_to":null,"text":"field order","id":"x"}"#,
            "{\"t\":\"message\" ,\r\n\t\"id\" : \"ws\" , \"text\":\"x\" }\n",
            r#"{"t":"message","id":"u","text":"héllo — 日本語 🎉 and a long tail to cross the eight-byte steps"}"#,
            r#"{"t":"message","id":"","text":""}"#,
            r#"{"t":"message","id":"e","session":"s","ts":null,"seen":false,"x":"y"}"#,
            r#"{"t":"message","id":"c","chunk":null,"edit":false}"#,
            r#"{"t":"message","id":"n","chunk":{"index":4294967295,"total":0}}"#,
            "{\"t\":\"message\",\"id\":\"del\",\"text\":\"\u{7f}\"}",
        ];
        for c in read {
            assert!(assert_scan_agrees(c), "the scanner should read {c:?}");
        }
    }

    /// A-22: what the scanner leaves to serde — escapes, nested or numeric unknown values, duplicates, odd numbers,
    /// wrong types, malformed JSON, trailing bytes — gets serde's answer (a frame, or an error: `None`).
    #[test]
    fn a22_message_scanner_leaves_the_unusual_to_serde() {
        let left = [
            r#"{"t":"message","id":"a\"b","text":"x"}"#,
            r#"{"t":"message","id":"a","text":"line\nbreak \u00e9 \ud83c\udf89"}"#,
            r#"{"t":"message","id":"a","text":"bad \x escape"}"#,
            r#"{"t":"message","id":"a","text":"lone \ud800"}"#,
            r#"{"t":"message","\u0069d":"escaped key"}"#,
            r#"{"t":"message","id":"a","extra":{"x":[1,2]}}"#,
            r#"{"t":"message","id":"a","extra":5}"#,
            r#"{"t":"message","id":"a","extra":[]}"#,
            r#"{"t":"message","id":"a","id":"b"}"#,
            r#"{"t":"message","id":"a","t":"message"}"#,
            r#"{"t":"message","id":"a","t":"media"}"#,
            r#"{"t":"message","id":"a","final":true,"final":false}"#,
            r#"{"t":"message","id":"a","chunk":{"index":1,"index":1,"total":2}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":1}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":1,"total":2,"x":0}}"#,
            r#"{"t":"message","id":"a","chunk":[1,2]}"#,
            r#"{"t":"message","id":"a","chunk":{"index":01,"total":2}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":-1,"total":2}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":1.0,"total":2}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":1e0,"total":2}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":4294967296,"total":2}}"#,
            r#"{"t":"message","id":"a","chunk":{"index":99999999999,"total":2}}"#,
            r#"{"t":"message","id":5}"#,
            r#"{"t":"message","id":null}"#,
            r#"{"t":"message","id":"x","text":null}"#,
            r#"{"t":"message","id":"x","final":"yes"}"#,
            r#"{"t":"message","id":"x","final":1}"#,
            r#"{"t":"message","id":"x","edit":tru}"#,
            r#"{"t":"message","id":"x","reply_to":7}"#,
            r#"{"t":"message","text":"no id"}"#,
            r#"{"t":"message"}"#,
            r#"{"t":"message","id":"x",}"#,
            r#"{"t":"message","id":"x"} x"#,
            r#"{"t":"message","id":"x"}}"#,
            r#"{"t":"message","id":"x""#,
            r#"{"t":"message","id":"x"#,
            r#"{"t":"message","id" "x"}"#,
            r#"{"t":"message",,"id":"x"}"#,
            "{\"t\":\"message\",\"id\":\"tab\there\"}",
            "{\"t\":\"message\",\"id\":\"nul\u{0}\"}",
            "{\"t\":\"message\",\u{a0}\"id\":\"nbsp is not JSON whitespace\"}",
            "{\"t\":\"message\",\"id\":\"x\"}\u{a0}",
        ];
        for c in left {
            assert!(!assert_scan_agrees(c), "the scanner should leave {c:?} to serde");
        }
    }

    /// No prefix of a frame (a frame cut anywhere) makes the scanner panic or disagree.
    #[test]
    fn a22_message_scanner_every_prefix_is_safe() {
        let frame = r#"{"t":"message","id":"r1","text":"é 🎉 x","chunk":{"index":0,"total":2},"edit":true,"final":false,"reply_to":"q","x":null}"#;
        for (end, _) in frame.char_indices().chain([(frame.len(), ' ')]) {
            let cut = &frame[..end];
            assert_eq!(assert_scan_agrees(cut), end == frame.len(), "{cut:?}");
        }
    }

    fn arb_string() -> impl Strategy<Value = String> {
        // plain text, unicode, quotes and backslashes (escaped), escapes of every kind, raw control characters
        let piece = prop_oneof![
            "[a-z ]{0,12}",
            Just("é日🎉".to_string()),
            Just("\\\"".to_string()),
            Just("\\\\".to_string()),
            Just("\\n\\t\\/".to_string()),
            Just("\\u00e9\\ud83c\\udf89".to_string()),
            Just("\\ud800".to_string()),
            Just("\\q".to_string()),
            Just("\t".to_string()),
            Just("\u{1}".to_string()),
            Just("\u{7f}".to_string()),
        ];
        proptest::collection::vec(piece, 0..4).prop_map(|p| format!("\"{}\"", p.concat()))
    }

    fn arb_value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => arb_string(),
            1 => Just("true".to_string()),
            1 => Just("false".to_string()),
            1 => Just("null".to_string()),
            1 => prop_oneof![Just("0"), Just("7"), Just("-1"), Just("01"), Just("1.5"), Just("4294967296"), Just("1e3")]
                .prop_map(str::to_string),
            1 => (0u64..5_000_000_000, 0u64..5_000_000_000, any::<bool>(), "[ \t]{0,1}").prop_map(|(i, t, swap, w)| {
                if swap {
                    format!(r#"{{"total":{t}{w},"index":{i}}}"#)
                } else {
                    format!(r#"{{{w}"index":{w}{i},"total":{t}}}"#)
                }
            }),
            1 => Just(r#"{"index":1}"#.to_string()),
            1 => Just(r#"[1,2]"#.to_string()),
            1 => Just(r#"{"a":[1,{"b":null}]}"#.to_string()),
        ]
    }

    fn arb_frame() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("id"),
            Just("id"),
            Just("text"),
            Just("chunk"),
            Just("edit"),
            Just("final"),
            Just("reply_to"),
            Just("t"),
            Just("extra"),
            Just("\\u0069d"),
        ];
        let ws = prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("\n\t\r "), 1 => Just("\u{a0}")];
        let tail = prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just(","), 1 => Just("}"), 1 => Just("x")];
        (proptest::collection::vec((key, arb_value(), ws.clone(), ws), 0..7), tail).prop_map(|(fields, tail)| {
            let mut f = r#"{"t":"message""#.to_string();
            for (k, v, w1, w2) in fields {
                f.push_str(&format!(",{w1}\"{k}\"{w2}:{w1}{v}{w2}"));
            }
            f.push('}');
            f.push_str(tail);
            f
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// A-22: generated frames (any field order, duplicates, escapes, unicode, control characters, wrong types,
        /// extra fields, trailing bytes): the scanner never disagrees with serde and never panics.
        #[test]
        fn a22_message_scanner_equals_serde(frame in arb_frame()) {
            assert_scan_agrees(&frame);
        }

        /// A-22: arbitrary bytes after the `message` head: no panic, no disagreement.
        #[test]
        fn a22_message_scanner_survives_garbage(rest in "\\PC{0,40}") {
            assert_scan_agrees(&format!(r#"{{"t":"message"{rest}"#));
            assert_scan_agrees(&format!(r#"{{"t":"message","id":"{rest}"}}"#));
        }
    }

    /// The fast path of `decode_down` agrees with decoding the enum directly, on good and odd input.
    #[test]
    fn a22_fast_decode_equals_enum_decode() {
        let cases = [
            r#"{"t":"message","id":"r1","text":"hi","chunk":{"index":0,"total":2},"final":false}"#,
            r#"{"id":"r1","text":"hi","t":"message","edit":true,"extra":{"x":[1,2]}}"#,
            r#"{"t":"message","text":"no id"}"#,
            r#"{"t":"message","id":5}"#,
            r#"{"t":"message","id":"x","text":null}"#,
            r#"{"t":"prompt","id":"p","kind":"clarify","text":"?","options":[{"id":"a","label":"A"}],"timeout_seconds":3}"#,
            r#"{"t":"prompt","id":"p","options":"nope"}"#,
            r#"{"t":"prompt_done","id":"p","expired":true}"#,
            r#"{"t":"media","id":"m","kind":"image","part":0,"parts":1,"final":true,"data":"aGk="}"#,
            r#"{"t":"media","id":"m","part":-1}"#,
            r#"{"t":"ready","session":"s","capabilities":{"media":true}}"#,
            r#"{"t":"typing","stop":true}"#,
            r#"{"t":"future","whatever":[{}]}"#,
            r#"{"t":5}"#,
            r#"{"x":1}"#,
            r#"["message","x"]"#,
            r#"{"t":"message","id":"a","t":"media"}"#,
            r#"{"t":"message","id":"a","t":"message"}"#,
            r#"{"t":"message","id":"a","text":"x","final":true,"reply_to":"q","chunk":{"index":1,"total":3}}"#,
            r#"{"t":"message" , "id":"a","text":"é\u00e9","edit":true,"extra":[1]}"#,
            r#"{"t":"message","id":"a","id":"b"}"#,
            r#"{"t":"message"}"#,
            r#"{"t":"message","id":"a","final":"yes"}"#,
            r#"{"t":"messages","id":"a"}"#,
            "not json",
            "",
        ];
        for c in cases {
            let fast = decode_down(c);
            let slow = serde_json::from_str::<Down>(c);
            match (&fast, &slow) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{c}"),
                (Err(_), Err(_)) => {}
                _ => panic!("fast and enum decoding disagree on {c}: {fast:?} vs {slow:?}"),
            }
        }
    }
}
