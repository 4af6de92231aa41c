//! Uplink media assembly with every A-19 limit, per device (sans-IO, unit-tested here).
//!
//! Error codes (§10): `too_big` for a file over `max_media_bytes`, more than 8 unfinished uploads, or a device
//! buffer over `max(8 MiB, max_media_bytes)`; `bad_frame` for `parts` outside 1..=2048, `part >= parts`, a piece
//! under 4 KiB in a multi-part series, a series whose `parts` changes, or invalid base64.

use std::collections::{BTreeMap, HashMap, VecDeque};

use base64::Engine as _;
use hermes_protocol::adapter::UpMedia;
use hermes_protocol::media::{MAX_PARTS, MAX_UNFINISHED, MIN_PART, MediaLimits};

/// Bound on remembered failed series per device (their later pieces are dropped quietly).
const FAILED_MEMORY: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UploadError {
    pub code: &'static str,
    pub text: String,
}

fn bad(text: impl Into<String>) -> UploadError {
    UploadError { code: "bad_frame", text: text.into() }
}

fn too_big(text: impl Into<String>) -> UploadError {
    UploadError { code: "too_big", text: text.into() }
}

/// A whole uplink file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompleteFile {
    pub id: String,
    pub kind: String,
    pub mime: String,
    pub filename: String,
    pub caption: Option<String>,
    pub parts: u32,
    pub bytes: Vec<u8>,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The piece is held; the series is not complete yet.
    Pending,
    Complete(CompleteFile),
    /// A later piece of a series that already failed on this connection: dropped quietly.
    Ignored,
}

#[derive(Debug)]
struct Partial {
    conn: u64,
    kind: String,
    mime: String,
    filename: String,
    caption: Option<String>,
    parts: u32,
    pieces: BTreeMap<u32, Vec<u8>>,
    bytes: u64,
}

#[derive(Debug, Default)]
struct DeviceUploads {
    partial: HashMap<String, Partial>,
    failed: VecDeque<(u64, String)>,
}

#[derive(Debug)]
pub(crate) struct Uploads {
    limits: MediaLimits,
    devices: HashMap<String, DeviceUploads>,
}

impl Uploads {
    pub(crate) fn new(limits: MediaLimits) -> Uploads {
        Uploads { limits, devices: HashMap::new() }
    }

    /// Unfinished series of a device.
    #[cfg(test)]
    fn unfinished(&self, device: &str) -> usize {
        self.devices.get(device).map_or(0, |d| d.partial.len())
    }

    /// A-19 decision: unfinished series are freed when the connection that sent them drops.
    pub(crate) fn drop_conn(&mut self, device: &str, conn: u64) {
        if let Some(d) = self.devices.get_mut(device) {
            d.partial.retain(|_, p| p.conn != conn);
            d.failed.retain(|(c, _)| *c != conn);
            if d.partial.is_empty() && d.failed.is_empty() {
                self.devices.remove(device);
            }
        }
    }

    /// One uplink `media` frame of `device` on connection `conn`.
    pub(crate) fn handle(&mut self, device: &str, conn: u64, m: UpMedia) -> Result<Outcome, UploadError> {
        let max = self.limits.max_media_bytes;
        let buffer = self.limits.device_buffer();
        if m.parts == 0 || m.parts > MAX_PARTS {
            return Err(self.fail(device, conn, &m.id, bad(format!("parts must be 1..={MAX_PARTS}, got {}", m.parts))));
        }
        if m.part >= m.parts {
            return Err(self.fail(device, conn, &m.id, bad(format!("part {} is not below parts {}", m.part, m.parts))));
        }
        let d = self.devices.entry(device.to_string()).or_default();
        if let Some(pos) = d.failed.iter().position(|(c, id)| *c == conn && *id == m.id) {
            if m.part != 0 {
                return Ok(Outcome::Ignored);
            }
            d.failed.remove(pos); // a fresh attempt of the same id
        }
        if m.parts as u64 * MIN_PART > max {
            return Err(self.fail(
                device,
                conn,
                &m.id,
                too_big(format!("{} parts of at least {MIN_PART} bytes exceed the {max}-byte file limit", m.parts)),
            ));
        }
        let Ok(piece) = base64::engine::general_purpose::STANDARD.decode(m.data.as_bytes()) else {
            return Err(self.fail(device, conn, &m.id, bad(format!("part {}: invalid base64", m.part))));
        };
        drop(m.data);
        let len = piece.len() as u64;
        if m.parts == 1 {
            if len > max {
                return Err(self.fail(device, conn, &m.id, too_big(format!("file is {len} bytes, limit {max}"))));
            }
            if let Some(d) = self.devices.get_mut(device) {
                d.partial.remove(&m.id);
            }
            return Ok(Outcome::Complete(CompleteFile {
                id: m.id,
                kind: m.kind,
                mime: m.mime,
                filename: m.filename,
                caption: m.caption,
                parts: 1,
                bytes: piece,
            }));
        }
        if len < MIN_PART {
            return Err(self.fail(
                device,
                conn,
                &m.id,
                bad(format!("part {} is {len} bytes; pieces of a series must be at least {MIN_PART}", m.part)),
            ));
        }
        let d = self.devices.entry(device.to_string()).or_default();
        let held_elsewhere: u64 = d.partial.iter().filter(|(k, _)| **k != m.id).map(|(_, p)| p.bytes).sum();
        let existing = d.partial.get(&m.id);
        if let Some(p) = existing
            && p.parts != m.parts
        {
            let text = format!("parts changed from {} to {} within a series", p.parts, m.parts);
            return Err(self.fail(device, conn, &m.id, bad(text)));
        }
        if existing.is_none() && d.partial.len() >= MAX_UNFINISHED {
            return Err(self.fail(
                device,
                conn,
                &m.id,
                too_big(format!("more than {MAX_UNFINISHED} unfinished uploads on this device")),
            ));
        }
        let (held, old) = existing.map_or((0, 0), |p| (p.bytes, p.pieces.get(&m.part).map_or(0, |b| b.len() as u64)));
        let total = held - old + len;
        if total > max {
            return Err(self.fail(device, conn, &m.id, too_big(format!("file exceeds the {max}-byte limit"))));
        }
        if held_elsewhere + total > buffer {
            return Err(self.fail(
                device,
                conn,
                &m.id,
                too_big(format!("unfinished uploads of this device exceed {buffer} bytes")),
            ));
        }
        let p = d.partial.entry(m.id.clone()).or_insert_with(|| Partial {
            conn,
            kind: m.kind.clone(),
            mime: m.mime.clone(),
            filename: m.filename.clone(),
            caption: m.caption.clone(),
            parts: m.parts,
            pieces: BTreeMap::new(),
            bytes: 0,
        });
        p.conn = conn;
        if p.caption.is_none() {
            p.caption = m.caption;
        }
        p.bytes = total;
        p.pieces.insert(m.part, piece);
        if p.pieces.len() < p.parts as usize {
            return Ok(Outcome::Pending);
        }
        let Some(p) = d.partial.remove(&m.id) else { return Ok(Outcome::Pending) };
        let mut bytes = Vec::with_capacity(p.bytes as usize);
        for (_, b) in p.pieces {
            bytes.extend_from_slice(&b);
        }
        Ok(Outcome::Complete(CompleteFile {
            id: m.id,
            kind: p.kind,
            mime: p.mime,
            filename: p.filename,
            caption: p.caption,
            parts: p.parts,
            bytes,
        }))
    }

    fn fail(&mut self, device: &str, conn: u64, id: &str, e: UploadError) -> UploadError {
        let d = self.devices.entry(device.to_string()).or_default();
        d.partial.remove(id);
        if !d.failed.iter().any(|(c, f)| *c == conn && f == id) {
            if d.failed.len() >= FAILED_MEMORY {
                d.failed.pop_front();
            }
            d.failed.push_back((conn, id.to_string()));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hermes_protocol::media::MIB;

    fn frame(id: &str, bytes: &[u8], part: u32, parts: u32) -> UpMedia {
        UpMedia {
            id: id.into(),
            kind: "document".into(),
            mime: "application/pdf".into(),
            filename: "a.pdf".into(),
            caption: None,
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            part,
            parts,
        }
    }

    fn up(max: u64) -> Uploads {
        Uploads::new(MediaLimits { max_media_bytes: max })
    }

    #[test]
    fn a18_single_frame_and_series_complete_in_any_order() {
        let mut u = up(8 * MIB);
        let Ok(Outcome::Complete(f)) = u.handle("d", 1, frame("s", b"tiny", 0, 1)) else { panic!() };
        assert_eq!(f.bytes, b"tiny");
        let a = vec![1u8; 5000];
        let b = vec![2u8; 4096];
        assert_eq!(u.handle("d", 1, frame("m", &b, 1, 2)), Ok(Outcome::Pending));
        assert_eq!(u.unfinished("d"), 1);
        let Ok(Outcome::Complete(f)) = u.handle("d", 1, frame("m", &a, 0, 2)) else { panic!() };
        assert_eq!(f.bytes, [a, b].concat());
        assert_eq!(f.parts, 2);
        assert_eq!(u.unfinished("d"), 0);
    }

    #[test]
    fn a19_codes() {
        let mut u = up(8 * MIB);
        let code = |r: Result<Outcome, UploadError>| r.map_err(|e| e.code);
        assert_eq!(code(u.handle("d", 1, frame("p0", b"x", 0, 0))), Err("bad_frame"));
        assert_eq!(code(u.handle("d", 1, frame("p1", b"x", 2, 2))), Err("bad_frame"));
        assert_eq!(code(u.handle("d", 1, frame("p2", b"x", 0, 2049))), Err("bad_frame"));
        assert_eq!(code(u.handle("d", 1, frame("small", &[0; 100], 0, 2))), Err("bad_frame"));
        let mut f = frame("b64", b"", 0, 1);
        f.data = "!!".into();
        assert_eq!(code(u.handle("d", 1, f)), Err("bad_frame"));
        let mut small = up(10);
        assert_eq!(code(small.handle("d", 1, frame("big", &[0; 11], 0, 1))), Err("too_big"));
        // later pieces of a failed series are dropped quietly; part 0 starts afresh
        assert_eq!(u.handle("d", 1, frame("small", &[0; 5000], 1, 2)), Ok(Outcome::Ignored));
        assert_eq!(u.handle("d", 1, frame("small", &[0; 5000], 0, 2)), Ok(Outcome::Pending));
    }

    #[test]
    fn a19_at_most_8_unfinished_and_buffer_bounded_and_freed_on_drop() {
        let mut u = up(8 * MIB);
        for i in 0..8 {
            assert_eq!(u.handle("d", 1, frame(&format!("u{i}"), &[0; 4096], 0, 2)), Ok(Outcome::Pending));
        }
        assert_eq!(u.handle("d", 1, frame("u8", &[0; 4096], 0, 2)).map_err(|e| e.code), Err("too_big"));
        // another device has its own budget
        assert_eq!(u.handle("e", 2, frame("u8", &[0; 4096], 0, 2)), Ok(Outcome::Pending));
        u.drop_conn("d", 1);
        assert_eq!(u.unfinished("d"), 0);
        assert_eq!(u.unfinished("e"), 1);

        let mut u = up(8 * MIB);
        let piece = vec![0u8; 3 * MIB as usize];
        assert_eq!(u.handle("d", 1, frame("a", &piece, 0, 3)), Ok(Outcome::Pending));
        assert_eq!(u.handle("d", 1, frame("a", &piece, 1, 3)), Ok(Outcome::Pending));
        // a third 3 MiB piece: the file would be 9 MiB > 8 MiB
        assert_eq!(u.handle("d", 1, frame("a", &piece, 2, 3)).map_err(|e| e.code), Err("too_big"));
        assert_eq!(u.handle("d", 1, frame("b", &piece, 0, 2)), Ok(Outcome::Pending));
        assert_eq!(u.handle("d", 1, frame("c", &piece, 0, 2)), Ok(Outcome::Pending));
        // device buffer: 3 + 3 + 3 MiB > 8 MiB
        assert_eq!(u.handle("d", 1, frame("e", &piece, 0, 2)).map_err(|e| e.code), Err("too_big"));
    }
}
