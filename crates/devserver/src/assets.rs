//! Demo files made in code: a small valid PNG (hand-rolled encoder, stored deflate), a WAV tone and a text document.

use std::io::Cursor;

/// CRC-32 (IEEE) as PNG needs it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in bytes {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// zlib stream of stored (uncompressed) deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let mut chunks = data.chunks(65535).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    }
    while let Some(c) = chunks.next() {
        out.push(u8::from(chunks.peek().is_none()));
        let len = c.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// An RGB8 PNG of `width`×`height` from `pixel(x, y) -> [r, g, b]`.
pub fn png(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    let mut raw = Vec::with_capacity((height * (1 + width * 3)) as usize);
    for y in 0..height {
        raw.push(0); // filter: none
        for x in 0..width {
            raw.extend_from_slice(&pixel(x, y));
        }
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit, truecolour, deflate, adaptive, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The demo image: a 64×48 gradient with a diagonal stripe.
pub fn demo_png() -> (Vec<u8>, u32, u32) {
    let (w, h) = (64, 48);
    let bytes = png(w, h, |x, y| if (x + y) % 16 < 3 { [255, 255, 255] } else { [(x * 4) as u8, (y * 5) as u8, 160] });
    (bytes, w, h)
}

/// A WAV, 16 kHz mono PCM16, a 440 Hz tone of `seconds` (A-23 format).
pub fn tone_wav(seconds: f64) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut cur = Cursor::new(Vec::new());
    if let Ok(mut w) = hound::WavWriter::new(&mut cur, spec) {
        let n = (16_000.0 * seconds) as u32;
        for i in 0..n {
            let t = i as f64 / 16_000.0;
            let s = (t * 440.0 * std::f64::consts::TAU).sin() * 0.3 * i16::MAX as f64;
            if w.write_sample(s as i16).is_err() {
                break;
            }
        }
        let _ = w.finalize();
    }
    cur.into_inner()
}

/// Duration in seconds of a WAV clip, if it is one. A small checked parser of untrusted input (never panics):
/// `fmt ` gives the byte rate, `data` the length.
pub fn wav_duration(bytes: &[u8]) -> Option<f64> {
    let u32_at = |i: usize| bytes.get(i..i.checked_add(4)?).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if bytes.get(0..4)? != b"RIFF" || bytes.get(8..12)? != b"WAVE" {
        return None;
    }
    let (mut byte_rate, mut data_len) = (None, None);
    let mut i = 12usize;
    while let (Some(id), Some(len)) = (bytes.get(i..i.checked_add(4)?), u32_at(i + 4)) {
        let body = i.checked_add(8)?;
        match id {
            b"fmt " => {
                let rate = u32_at(body + 8)?; // nAvgBytesPerSec
                byte_rate = (rate > 0).then_some(rate);
            }
            b"data" => {
                // A streamed WAV may say 0xFFFFFFFF: take what is there.
                data_len = Some((len as usize).min(bytes.len().saturating_sub(body)));
                break;
            }
            _ => {}
        }
        i = body.checked_add(len as usize)?.checked_add(len as usize % 2)?;
    }
    Some(data_len? as f64 / byte_rate? as f64)
}

/// The demo document: plain text, about 12 KiB (so that it goes down in several parts).
pub fn demo_document() -> Vec<u8> {
    let mut s = String::from("Hermes demo report\n==================\n\n");
    for i in 1..=200 {
        s.push_str(&format!("Line {i:03}: the quick brown fox jumps over the lazy dog.\n"));
    }
    s.into_bytes()
}

/// The long markdown reply of `/stream` and `/chunks`: headings, a list, a fenced code block, a table, a link.
pub const LONG_MARKDOWN: &str = "# Streaming demo

Hermes can **stream** a reply by editing one message in place, or send it in *chunks*.

## What you get
- Markdown rendering with `inline code`
- Lists, like this one
- A fenced code block, a table and a link

## Code
```rust
fn main() {
    let greeting = \"Hello from Hermes\";
    println!(\"{greeting}\");
}
```

## Table
| Feature | Adapter | Chat v3 |
|---|---|---|
| Streaming | edits | stream_start / stream / stream_end |
| Media | frames | HTTP upload |
| Cards | yes | no |

More at [the Hermes docs](https://example.com/hermes/docs).

That is all — thanks for watching!";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_well_formed() {
        let (p, w, h) = demo_png();
        assert_eq!(&p[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(u32::from_be_bytes([p[16], p[17], p[18], p[19]]), w);
        assert_eq!(u32::from_be_bytes([p[20], p[21], p[22], p[23]]), h);
        // known CRC of "IEND"
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn wav_round_trip() {
        let w = tone_wav(1.0);
        let d = wav_duration(&w).unwrap();
        assert!((d - 1.0).abs() < 1e-9);
        assert_eq!(wav_duration(b"not a wav"), None);
        // truncated, zero rate, huge chunk lengths: None, never a panic
        for cut in 0..w.len().min(64) {
            let _ = wav_duration(&w[..cut]);
        }
        let mut zero = w.clone();
        zero[28..32].copy_from_slice(&[0; 4]);
        assert_eq!(wav_duration(&zero), None);
        let mut huge = w.clone();
        huge[16..20].copy_from_slice(&[0xFF; 4]);
        assert_eq!(wav_duration(&huge), None);
    }
}
