//! Media both ways: limits, the uplink splitter, the downlink assembler and safe filenames.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::adapter::{DownMedia, MAX_FRAME_BYTES};

pub const MIB: u64 = 1024 * 1024;
/// a file up to this size goes in one frame.
pub const SINGLE_FRAME_MAX: u64 = 8 * MIB;
/// the target size of one piece of a larger file.
pub const PART_TARGET: u64 = 3 * MIB;
///
pub const MIN_PART: u64 = 4 * 1024;
pub const MAX_PARTS: u32 = 2048;
pub const MAX_UNFINISHED: usize = 8;
/// Our own per-file limit when none is configured: the agent's `max_media_bytes` is clamped to it.
pub const DEFAULT_MEDIA_CAP: u64 = 64 * MIB;
/// A downlink series that got no piece for this long is dropped.
pub const PARTIAL_TTL: Duration = Duration::from_secs(300);

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// Per-file limit: `capabilities.max_media_bytes`, 8 MiB when absent.
    pub max_media_bytes: u64,
}

impl Default for MediaLimits {
    fn default() -> Self {
        MediaLimits { max_media_bytes: 8 * MIB }
    }
}

impl MediaLimits {
    /// From `ready.capabilities`. A missing, zero or non-numeric value means the default.
    pub fn from_capabilities(caps: &Map<String, Value>) -> MediaLimits {
        let max = caps.get("max_media_bytes").and_then(Value::as_u64).filter(|n| *n > 0).unwrap_or(8 * MIB);
        MediaLimits { max_media_bytes: max }
    }
    /// The agent's number never goes above ours (`cap`, a setting): an agent announcing 10^15 gets `cap`; a smaller
    /// agent limit still holds for what we send.
    pub fn clamped(self, cap: u64) -> MediaLimits {
        MediaLimits { max_media_bytes: self.max_media_bytes.min(cap.max(1)) }
    }
    /// **Decision :** the per-device buffer of unfinished uploads is the larger of 8 MiB and the file limit.
    pub fn device_buffer(&self) -> u64 {
        self.max_media_bytes.max(8 * MIB)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    #[error("the file is {size} bytes; the agent accepts at most {limit} bytes per file")]
    TooBig { size: u64, limit: u64 },
    #[error("the file needs {parts} parts; at most {limit} are allowed")]
    TooManyParts { parts: u64, limit: u32 },
    #[error("a frame of this file would be {size} bytes; at most {limit} are allowed")]
    FrameTooBig { size: u64, limit: u64 },
    #[error("media {id}: invalid base64 in part {part}")]
    BadBase64 { id: String, part: u32 },
    #[error("media {id}: part {part} of {parts} is out of range")]
    BadPart { id: String, part: u32, parts: u32 },
    #[error("media {id}: more than {limit} unfinished downloads at once")]
    TooManyUnfinished { id: String, limit: usize },
    /// The unfinished downloads together went over the fixed buffer cap: the oldest series was dropped.
    #[error("media {id}: dropped unfinished, the buffer for incoming files is full ({limit} bytes)")]
    BufferFull { id: String, limit: u64 },
    #[error("media {id}: final frame arrived but the file has no data and no url")]
    Empty { id: String },
}

impl MediaError {
    /// A stable code for events (`error{code}` / `rejected{reason}`).
    pub fn code(&self) -> &'static str {
        match self {
            MediaError::TooBig { .. } | MediaError::FrameTooBig { .. } => "too_big",
            MediaError::TooManyParts { .. } | MediaError::BadPart { .. } => "bad_frame",
            MediaError::BadBase64 { .. } => "bad_base64",
            MediaError::TooManyUnfinished { .. } => "too_many_unfinished",
            MediaError::BufferFull { .. } => "media_buffer_full",
            MediaError::Empty { .. } => "empty_media",
        }
    }
}

/// How an uplink file is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadPlan {
    pub size: u64,
    pub parts: u32,
    /// Size of every piece but possibly the last (pieces are even: they differ by at most one byte… rounded up).
    pub part_size: u64,
}

impl UploadPlan {
    /// Byte range of piece `i`.
    pub fn range(&self, i: u32) -> std::ops::Range<usize> {
        let start = (i as u64 * self.part_size).min(self.size);
        let end = ((i as u64 + 1) * self.part_size).min(self.size);
        start as usize..end as usize
    }
}

/// Every A-19 limit is checked here, before the first byte is sent.
/// `meta_overhead` is the JSON length of a frame without its data (see [`frame_overhead`]).
pub fn plan_upload(size: u64, meta_overhead: u64, limits: &MediaLimits) -> Result<UploadPlan, MediaError> {
    if size > limits.max_media_bytes {
        return Err(MediaError::TooBig { size, limit: limits.max_media_bytes });
    }
    let (parts, part_size) = if size <= SINGLE_FRAME_MAX {
        (1u64, size.max(1))
    } else {
        let parts = size.div_ceil(PART_TARGET);
        (parts, size.div_ceil(parts))
    };
    if parts > MAX_PARTS as u64 {
        return Err(MediaError::TooManyParts { parts, limit: MAX_PARTS });
    }
    // Even split: every piece, the last included, is ≥ 4 KiB when there is more than one (A-19 decision).
    debug_assert!(parts == 1 || size - (parts - 1) * part_size >= MIN_PART);
    let frame = base64_len(part_size) + meta_overhead;
    if frame > MAX_FRAME_BYTES as u64 {
        return Err(MediaError::FrameTooBig { size: frame, limit: MAX_FRAME_BYTES as u64 });
    }
    Ok(UploadPlan { size, parts: parts as u32, part_size })
}

pub fn base64_len(n: u64) -> u64 {
    n.div_ceil(3) * 4
}

/// Metadata of an uplink media frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpMediaMeta {
    pub id: String,
    pub kind: String,
    pub mime: String,
    pub filename: String,
    pub caption: Option<String>,
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// JSON length of a frame of `meta` with empty data and the largest part numbers.
pub fn frame_overhead(meta: &UpMediaMeta) -> u64 {
    encode_media_frame(meta, &[], u32::MAX, u32::MAX).len() as u64
}

/// The text of an uplink `media` frame up to the opening quote of `data`: the caller appends the base64 of the
/// piece, then [`MEDIA_FRAME_TAIL`]. This lets a file be encoded (and written) in pieces straight from disk, so it
/// is never in memory whole beside its frame; the result is the same text as [`encode_media_frame`].
pub fn media_frame_head(meta: &UpMediaMeta, part: u32, parts: u32) -> String {
    let mut out = String::with_capacity(160 + meta.filename.len() + meta.caption.as_ref().map_or(0, String::len));
    out.push_str("{\"t\":\"media\",\"id\":");
    out.push_str(&json_str(&meta.id));
    out.push_str(",\"kind\":");
    out.push_str(&json_str(&meta.kind));
    out.push_str(",\"mime\":");
    out.push_str(&json_str(&meta.mime));
    out.push_str(",\"filename\":");
    out.push_str(&json_str(&meta.filename));
    if let Some(c) = &meta.caption {
        out.push_str(",\"caption\":");
        out.push_str(&json_str(c));
    }
    out.push_str(",\"part\":");
    out.push_str(&part.to_string());
    out.push_str(",\"parts\":");
    out.push_str(&parts.to_string());
    out.push_str(",\"data\":\"");
    out
}

/// What closes a frame begun with [`media_frame_head`].
pub const MEDIA_FRAME_TAIL: &str = "\"}";

/// Encode one uplink `media` frame; the base64 goes straight into the output (no intermediate copy), so an 8 MiB
/// file costs one ~11 MiB string.
pub fn encode_media_frame(meta: &UpMediaMeta, bytes: &[u8], part: u32, parts: u32) -> String {
    let mut out = media_frame_head(meta, part, parts);
    out.reserve(base64_len(bytes.len() as u64) as usize + MEDIA_FRAME_TAIL.len());
    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut out);
    out.push_str(MEDIA_FRAME_TAIL);
    out
}

/// Encode every frame of a file (convenience for tests and the devserver; the engine encodes lazily).
pub fn split_file(meta: &UpMediaMeta, bytes: &[u8], limits: &MediaLimits) -> Result<Vec<String>, MediaError> {
    let plan = plan_upload(bytes.len() as u64, frame_overhead(meta), limits)?;
    Ok((0..plan.parts).map(|i| encode_media_frame(meta, &bytes[plan.range(i)], i, plan.parts)).collect())
}

/// Metadata of a downlink file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaMeta {
    pub id: String,
    pub kind: String,
    pub mime: Option<String>,
    /// Already made safe with [`safe_filename`].
    pub filename: String,
    pub caption: Option<String>,
    pub declared_size: Option<u64>,
}

/// What a completed downlink series yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaOutput {
    /// The file, whole.
    Complete { meta: MediaMeta, bytes: Vec<u8> },
    /// The file is at `url`: the caller downloads it (bounded by `max_bytes`).
    Download { meta: MediaMeta, url: String, max_bytes: u64 },
}

#[derive(Debug)]
struct Partial {
    meta: MediaMeta,
    parts: BTreeMap<u32, Vec<u8>>,
    total_parts: Option<u32>,
    bytes: u64,
    final_seen: bool,
    url: Option<String>,
    last_seen: Instant,
    /// Order of the first piece: the oldest series is dropped first when the buffer is full.
    seq: u64,
}

/// Downlink media assembler: pieces by `id`, complete at `final`, limits enforced, memory bounded by a
/// fixed buffer cap (all unfinished series together) that the agent's numbers do not move.
#[derive(Debug)]
pub struct MediaAssembler {
    limits: MediaLimits,
    buffer_cap: u64,
    partial: HashMap<String, Partial>,
    /// Series that failed: their later pieces are dropped quietly (bounded).
    failed: VecDeque<String>,
    /// Series dropped to make room, not yet reported (see [`MediaAssembler::take_dropped`]).
    dropped: Vec<MediaError>,
    held: u64,
    peak: u64,
    seq: u64,
}

impl Default for MediaAssembler {
    fn default() -> Self {
        MediaAssembler::new(MediaLimits::default())
    }
}

impl MediaAssembler {
    pub fn new(limits: MediaLimits) -> Self {
        MediaAssembler {
            limits,
            buffer_cap: DEFAULT_MEDIA_CAP,
            partial: HashMap::new(),
            failed: VecDeque::new(),
            dropped: Vec::new(),
            held: 0,
            peak: 0,
            seq: 0,
        }
    }

    pub fn set_limits(&mut self, limits: MediaLimits) {
        self.limits = limits;
    }

    /// The most bytes all unfinished series may hold together (at least 8 MiB, the A-19 per-device figure).
    pub fn set_buffer_cap(&mut self, cap: u64) {
        self.buffer_cap = cap.max(8 * MIB);
    }

    pub fn buffer_cap(&self) -> u64 {
        self.buffer_cap
    }

    pub fn unfinished(&self) -> usize {
        self.partial.len()
    }

    /// Bytes held for unfinished series.
    pub fn buffered_bytes(&self) -> u64 {
        self.held
    }

    /// The most [`buffered_bytes`](Self::buffered_bytes) ever held at once.
    pub fn peak_buffered_bytes(&self) -> u64 {
        self.peak
    }

    /// Series dropped (oldest first) because the buffer was full, each as [`MediaError::BufferFull`].
    pub fn take_dropped(&mut self) -> Vec<MediaError> {
        std::mem::take(&mut self.dropped)
    }

    fn remove(&mut self, id: &str) -> Option<Partial> {
        let p = self.partial.remove(id)?;
        self.held -= p.bytes;
        Some(p)
    }

    fn mark_failed(&mut self, id: &str) {
        if !self.failed.iter().any(|f| f == id) {
            if self.failed.len() >= 64 {
                self.failed.pop_front();
            }
            self.failed.push_back(id.to_string());
        }
    }

    fn fail(&mut self, id: &str, e: MediaError) -> Result<Option<MediaOutput>, MediaError> {
        self.remove(id);
        self.mark_failed(id);
        Err(e)
    }

    /// Drop the oldest unfinished series until `need` more bytes for `growing` fit under the cap. `false` when
    /// `growing` is itself the oldest: it is the one to go (the caller fails it).
    fn make_room(&mut self, growing: &str, need: u64) -> bool {
        while self.held + need > self.buffer_cap {
            let Some((id, _)) = self.partial.iter().min_by_key(|(_, p)| p.seq) else {
                return true;
            };
            if id == growing {
                return false;
            }
            let id = id.clone();
            self.remove(&id);
            self.mark_failed(&id);
            self.dropped.push(MediaError::BufferFull { id, limit: self.buffer_cap });
        }
        true
    }

    pub fn handle_media(&mut self, m: DownMedia, now: Instant) -> Result<Option<MediaOutput>, MediaError> {
        let limit = self.limits.max_media_bytes;
        if self.failed.iter().any(|f| *f == m.id) {
            return Ok(None);
        }
        if let Some(size) = m.size
            && size > limit
        {
            return self.fail(&m.id, MediaError::TooBig { size, limit });
        }
        let part = m.part.unwrap_or(0);
        if let Some(parts) = m.parts
            && (parts == 0 || parts > MAX_PARTS || part >= parts)
        {
            return self.fail(&m.id, MediaError::BadPart { id: m.id.clone(), part, parts });
        }
        if part >= MAX_PARTS {
            return self.fail(&m.id, MediaError::BadPart { id: m.id.clone(), part, parts: MAX_PARTS });
        }
        if !self.partial.contains_key(&m.id) && self.partial.len() >= MAX_UNFINISHED {
            return Err(MediaError::TooManyUnfinished { id: m.id, limit: MAX_UNFINISHED });
        }
        // `"data":""` is an empty piece (a zero-byte file is a file), unless a `url` carries the content.
        let data = match &m.data {
            Some(d) if !d.is_empty() || m.url.is_none() => match base64::engine::general_purpose::STANDARD.decode(d) {
                Ok(b) => Some(b),
                Err(_) => {
                    return self.fail(&m.id, MediaError::BadBase64 { id: m.id.clone(), part });
                }
            },
            _ => None,
        };
        self.seq += 1;
        let seq = self.seq;
        let p = self.partial.entry(m.id.clone()).or_insert_with(|| Partial {
            meta: MediaMeta {
                id: m.id.clone(),
                kind: m.kind.clone(),
                mime: m.mime.clone(),
                filename: safe_filename(m.filename.as_deref().unwrap_or(""), m.mime.as_deref()),
                caption: m.caption.clone(),
                declared_size: m.size,
            },
            parts: BTreeMap::new(),
            total_parts: None,
            bytes: 0,
            final_seen: false,
            url: None,
            last_seen: now,
            seq,
        });
        p.last_seen = now;
        if m.caption.is_some() && p.meta.caption.is_none() {
            p.meta.caption = m.caption.clone();
        }
        if m.size.is_some() {
            p.meta.declared_size = m.size;
        }
        if let Some(parts) = m.parts {
            p.total_parts = Some(parts);
        }
        if let Some(u) = m.url {
            p.url = Some(u);
        }
        if let Some(bytes) = data {
            let old = p.parts.get(&part).map_or(0, |b| b.len() as u64);
            let new_total = p.bytes - old + bytes.len() as u64;
            if new_total > limit {
                return self.fail(&m.id, MediaError::TooBig { size: new_total, limit });
            }
            if new_total > self.buffer_cap {
                return self.fail(&m.id, MediaError::BufferFull { id: m.id.clone(), limit: self.buffer_cap });
            }
            let before = p.bytes;
            if !self.make_room(&m.id, new_total.saturating_sub(before)) {
                return self.fail(&m.id, MediaError::BufferFull { id: m.id.clone(), limit: self.buffer_cap });
            }
            let Some(p) = self.partial.get_mut(&m.id) else { return Ok(None) };
            p.bytes = new_total;
            p.parts.insert(part, bytes);
            self.held = self.held - before + new_total;
            self.peak = self.peak.max(self.held);
        }
        let Some(p) = self.partial.get_mut(&m.id) else { return Ok(None) };
        // Single-frame files without `final` are complete too (parts: 1 and the piece is here).
        if m.final_ == Some(true) || (p.total_parts == Some(1) && m.final_.is_none() && !p.parts.is_empty()) {
            p.final_seen = true;
        }
        if !p.final_seen {
            return Ok(None);
        }
        let complete = p.total_parts.is_none_or(|t| (0..t).all(|i| p.parts.contains_key(&i)));
        if p.url.is_none() && !complete {
            return Ok(None); // final arrived before a missing piece: wait for it
        }
        let Some(p) = self.remove(&m.id) else {
            return Ok(None);
        };
        if p.parts.is_empty() {
            return match p.url {
                Some(url) => Ok(Some(MediaOutput::Download { meta: p.meta, url, max_bytes: limit })),
                None => self.fail(&m.id, MediaError::Empty { id: m.id.clone() }),
            };
        }
        let mut bytes = Vec::with_capacity(p.bytes as usize);
        for (_, b) in p.parts {
            bytes.extend_from_slice(&b);
        }
        Ok(Some(MediaOutput::Complete { meta: p.meta, bytes }))
    }

    /// Drop series that got nothing for [`PARTIAL_TTL`]. Returns their ids.
    pub fn handle_timeout(&mut self, now: Instant) -> Vec<String> {
        let stale: Vec<String> = self
            .partial
            .iter()
            .filter(|(_, p)| now.saturating_duration_since(p.last_seen) >= PARTIAL_TTL)
            .map(|(k, _)| k.clone())
            .collect();
        for id in &stale {
            self.remove(id);
        }
        stale
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.partial.values().map(|p| p.last_seen + PARTIAL_TTL).min()
    }

    /// The connection dropped: the server will not continue these series.
    pub fn handle_disconnect(&mut self) {
        self.partial.clear();
        self.held = 0;
    }
}

const RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];
const MAX_NAME_BYTES: usize = 120;

/// A file extension for a MIME type, for names that have none.
pub fn ext_for_mime(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/ogg" | "audio/opus" => "ogg",
        "audio/mpeg" => "mp3",
        "audio/aac" => "aac",
        "audio/mp4" => "m4a",
        "video/mp4" => "mp4",
        "video/webm" => "webm",
        "video/quicktime" => "mov",
        "application/pdf" => "pdf",
        "text/plain" => "txt",
        "text/csv" => "csv",
        "text/markdown" => "md",
        "application/json" => "json",
        "application/zip" => "zip",
        _ => "bin",
    }
}

/// An untrusted filename made safe to create inside a folder on every OS (A-20, G-9): no path, no control or
/// reserved characters, no Windows device name, no leading dot, bounded length; never empty.
pub fn safe_filename(name: &str, mime: Option<&str>) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    let mut s: String = base
        .chars()
        .map(|c| match c {
            c if c.is_control() => '_',
            '<' | '>' | ':' | '"' | '|' | '?' | '*' | '/' | '\\' => '_',
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' => '_', // bidi tricks
            c => c,
        })
        .collect();
    s = s.trim_matches(|c: char| c == ' ' || c == '.').to_string();
    if s.len() > MAX_NAME_BYTES {
        let (stem, ext) = match s.rfind('.') {
            Some(i) if s.len() - i <= 16 => (&s[..i], &s[i..]),
            _ => (s.as_str(), ""),
        };
        let mut cut = MAX_NAME_BYTES.saturating_sub(ext.len());
        while !stem.is_char_boundary(cut) {
            cut -= 1;
        }
        s = format!("{}{}", &stem[..cut], ext);
        // the cut may leave a trailing dot or space
        s = s.trim_end_matches([' ', '.']).to_string();
    }
    // (after the cut: fuzzing found names that became "only replacement characters" or a device name by it)
    if s.chars().all(|c| c == '_') {
        return format!("file.{}", ext_for_mime(mime.unwrap_or("")));
    }
    let stem = s.split('.').next().unwrap_or("").to_ascii_uppercase();
    if RESERVED.contains(&stem.trim()) {
        s.insert(0, '_');
        while s.len() > MAX_NAME_BYTES {
            s.pop();
        }
        s = s.trim_end_matches([' ', '.']).to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down(id: &str, data: &[u8], part: u32, parts: u32, fin: bool) -> DownMedia {
        DownMedia {
            id: id.into(),
            kind: "document".into(),
            mime: Some("application/pdf".into()),
            filename: Some("report.pdf".into()),
            caption: None,
            part: Some(part),
            parts: Some(parts),
            final_: Some(fin),
            size: None,
            data: Some(base64::engine::general_purpose::STANDARD.encode(data)),
            url: None,
        }
    }

    #[test]
    fn a18_small_file_is_one_frame_large_file_even_parts_of_about_3_mib() {
        let l = MediaLimits { max_media_bytes: 64 * MIB };
        let p = plan_upload(8 * MIB, 200, &l).unwrap();
        assert_eq!((p.parts, p.part_size), (1, 8 * MIB));
        let p = plan_upload(8 * MIB + 1, 200, &l).unwrap();
        assert_eq!(p.parts, 3);
        assert!(p.part_size <= PART_TARGET);
        let sizes: Vec<usize> = (0..p.parts).map(|i| p.range(i).len()).collect();
        assert_eq!(sizes.iter().sum::<usize>() as u64, 8 * MIB + 1);
        assert!(sizes.iter().all(|s| *s as u64 >= MIN_PART && *s as u64 <= PART_TARGET));
    }

    #[test]
    fn a19_limits_checked_before_sending() {
        let l = MediaLimits::default();
        assert_eq!(plan_upload(8 * MIB + 1, 200, &l), Err(MediaError::TooBig { size: 8 * MIB + 1, limit: 8 * MIB }));
        let huge = MediaLimits { max_media_bytes: 10_000 * MIB };
        assert!(matches!(plan_upload(7000 * MIB, 200, &huge), Err(MediaError::TooManyParts { .. })));
        // metadata so large that the frame would pass 16 MiB
        assert!(matches!(plan_upload(8 * MIB, 6 * MIB, &l), Err(MediaError::FrameTooBig { .. })));
    }

    #[test]
    fn a18_split_frames_reassemble_to_the_same_bytes() {
        let bytes: Vec<u8> = (0..(9 * MIB as usize)).map(|i| (i * 31 % 251) as u8).collect();
        let meta = UpMediaMeta {
            id: "m1".into(),
            kind: "document".into(),
            mime: "application/pdf".into(),
            filename: "r.pdf".into(),
            caption: Some("c".into()),
        };
        let frames = split_file(&meta, &bytes, &MediaLimits { max_media_bytes: 16 * MIB }).unwrap();
        assert_eq!(frames.len(), 3);
        let mut out = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            assert!(f.len() <= MAX_FRAME_BYTES);
            let up = crate::adapter::decode_up(f).unwrap();
            let crate::adapter::Up::Media(m) = up else { panic!("not media") };
            assert_eq!((m.part, m.parts, m.id.as_str()), (i as u32, 3, "m1"));
            out.extend(base64::engine::general_purpose::STANDARD.decode(m.data).unwrap());
        }
        assert_eq!(out, bytes);
    }

    #[test]
    fn a20_parts_collected_by_id_complete_at_final_in_any_order() {
        let t = Instant::now();
        let mut a = MediaAssembler::new(MediaLimits::default());
        assert_eq!(a.handle_media(down("a1", b"world", 1, 2, true), t).unwrap(), None);
        let out = a.handle_media(down("a1", b"hello ", 0, 2, false), t).unwrap();
        let Some(MediaOutput::Complete { meta, bytes }) = out else { panic!("{out:?}") };
        assert_eq!(bytes, b"hello world");
        assert_eq!(meta.filename, "report.pdf");
        assert_eq!(a.unfinished(), 0);
    }

    #[test]
    fn a20_url_means_download() {
        let mut m = down("u", b"", 0, 1, true);
        m.data = None;
        m.url = Some("https://x/y".into());
        let mut a = MediaAssembler::new(MediaLimits::default());
        assert!(matches!(a.handle_media(m, Instant::now()).unwrap(), Some(MediaOutput::Download { .. })));
    }

    #[test]
    fn a20_a19_limits_enforced_with_typed_errors() {
        let t = Instant::now();
        let mut a = MediaAssembler::new(MediaLimits { max_media_bytes: 10 });
        assert!(matches!(a.handle_media(down("x", &[0; 11], 0, 1, true), t), Err(MediaError::TooBig { .. })));
        // later pieces of a failed series are dropped quietly
        assert_eq!(a.handle_media(down("x", &[0; 1], 0, 1, true), t), Ok(None));
        let mut m = down("y", b"1", 0, 1_000_000, false);
        m.parts = Some(1_000_000);
        assert!(matches!(a.handle_media(m, t), Err(MediaError::BadPart { .. })));
        let mut m = down("z", b"", 0, 1, true);
        m.data = Some("***".into());
        assert!(matches!(a.handle_media(m, t), Err(MediaError::BadBase64 { .. })));
        let mut m = down("s", b"", 0, 1, true);
        m.size = Some(11);
        assert!(matches!(a.handle_media(m, t), Err(MediaError::TooBig { .. })));
    }

    #[test]
    fn a19_at_most_8_unfinished_and_stale_series_expire() {
        let t = Instant::now();
        let mut a = MediaAssembler::new(MediaLimits::default());
        for i in 0..MAX_UNFINISHED {
            assert_eq!(a.handle_media(down(&format!("p{i}"), b"x", 0, 2, false), t), Ok(None));
        }
        assert!(matches!(
            a.handle_media(down("one-too-many", b"x", 0, 2, false), t),
            Err(MediaError::TooManyUnfinished { .. })
        ));
        assert_eq!(a.poll_timeout(), Some(t + PARTIAL_TTL));
        assert_eq!(a.handle_timeout(t + PARTIAL_TTL).len(), MAX_UNFINISHED);
        assert_eq!(a.unfinished(), 0);
    }

    #[test]
    fn a20_hostile_filenames_are_made_safe() {
        assert_eq!(safe_filename("../../etc/passwd", None), "passwd");
        assert_eq!(safe_filename("..\\..\\windows\\system32\\evil.dll", None), "evil.dll");
        assert_eq!(safe_filename("CON.txt", None), "_CON.txt");
        assert_eq!(safe_filename("nul", None), "_nul");
        assert_eq!(safe_filename("a\u{0}b\nc\u{7}.png", None), "a_b_c_.png");
        assert_eq!(safe_filename("..", Some("image/png")), "file.png");
        assert_eq!(safe_filename("", Some("application/pdf")), "file.pdf");
        assert_eq!(safe_filename(".bashrc", None), "bashrc");
        assert_eq!(safe_filename("x\u{202E}gpj.exe", None), "x_gpj.exe");
        let long = format!("{}.jpeg", "é".repeat(200));
        let s = safe_filename(&long, None);
        assert!(s.len() <= MAX_NAME_BYTES && s.ends_with(".jpeg"));
        assert_eq!(safe_filename("report final.pdf", None), "report final.pdf");
        // found by fuzz/fuzz_targets/safe_filename.rs: control characters past the length cut left a name of only
        // replacement characters, and a second pass changed it (not idempotent)
        let junk = format!("{}nw", "\0".repeat(200));
        assert_eq!(safe_filename(&junk, None), "file.bin");
        let device = format!("LPT2{}\u{202f}x{}", " ".repeat(120), "y".repeat(50));
        assert_eq!(safe_filename(&device, None), "_LPT2");
        let spaced = format!("{}  x", "a".repeat(119));
        let once = safe_filename(&spaced, None);
        assert_eq!(safe_filename(&once, None), once);
    }
}
