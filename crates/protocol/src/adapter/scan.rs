//! The receive hot path: a `message` frame read in one pass, its strings borrowed from the frame (the same result
//! as serde's, which reads everything else).

use std::borrow::Cow;

use serde::Deserialize;

use super::{Chunk, DownMessage, MAX_FRAME_BYTES};

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

/// A one-pass reader of the usual `message` frame (serde_json spent ~1,800 instructions on a 75-byte frame).
///
/// It accepts only what it can read exactly as serde does: `{"t":"message"` first, then the known keys once each
/// (`id`, `text`, `edit`, `final`, `reply_to`, and `chunk` as `{"index": n, "total": n}`), unknown keys whose value
/// is a string, `true`, `false` or `null`, strings without escapes or control characters, JSON whitespace anywhere
/// between tokens and nothing after the closing brace. For anything else (an escape, a nested unknown value, a
/// number it does not read, a duplicate key, a syntax error…) it answers `None` and the caller asks serde, which
/// then decides — so the result never differs (tested against serde on hand-written and generated frames).
pub(super) fn scan_message(text: &str) -> Option<MessageRef<'_>> {
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
