//! Downscaling pictures before upload (the agent's media limit, A-19).

use std::path::{Path, PathBuf};

use crate::error::{AppError, AppResult, ErrorCode};

/// The picture at `path` if it fits `max_bytes`, else a JPEG copy in `tmp` small enough to fit.
pub fn downscale(path: &Path, max_bytes: u64, tmp: &Path) -> AppResult<String> {
    let size = std::fs::metadata(path)?.len();
    if size <= max_bytes {
        return Ok(path.display().to_string());
    }
    let img = image::ImageReader::open(path)?
        .with_guessed_format()?
        .decode()
        .map_err(|e| AppError::new(ErrorCode::NotAnImage, format!("this picture cannot be read: {e}")))?;
    let rgb = image::DynamicImage::ImageRgb8(img.to_rgb8());
    std::fs::create_dir_all(tmp)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("image");
    let out: PathBuf = hermes_client::files::unique_path(tmp, &format!("{stem}-small.jpg"));
    let mut side = rgb.width().max(rgb.height()).min(4096);
    for quality in [85u8, 80, 75, 70, 60, 50, 40, 30, 25, 20, 15, 10] {
        let scaled = rgb.resize(side, side, image::imageops::FilterType::Triangle);
        let mut buf = Vec::new();
        let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, quality);
        scaled.write_with_encoder(enc).map_err(|e| AppError::internal(e.to_string()))?;
        if buf.len() as u64 <= max_bytes {
            std::fs::write(&out, buf)?;
            return Ok(out.display().to_string());
        }
        side = (side * 3 / 4).max(64);
    }
    Err(AppError::new(ErrorCode::TooLarge, "this picture stays too large even when downscaled"))
}

/// Duration in milliseconds of a RIFF/WAVE file, from its header alone (the `fmt ` byte rate and the `data`
/// chunk size; a streaming `data` size of 0 or 0xFFFFFFFF falls back to the file length). `None` when `head` is
/// not a WAV header. WebKitGTK does not always report an `<audio>` duration for files on the asset protocol.
pub fn wav_duration_ms(head: &[u8], file_len: u64) -> Option<u64> {
    if head.len() < 12 || &head[0..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return None;
    }
    let u32_at = |i: usize| head.get(i..i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let mut pos = 12usize;
    let mut byte_rate = None;
    while pos + 8 <= head.len() {
        let id = &head[pos..pos + 4];
        let len32 = u32_at(pos + 4)?;
        let len = len32 as usize;
        let body = pos + 8;
        if id == b"fmt " {
            byte_rate = u32_at(body + 8).filter(|r| *r > 0);
        } else if id == b"data" {
            let rate = u64::from(byte_rate?);
            let avail = file_len.saturating_sub(body as u64);
            let bytes = if len32 == 0 || len32 == u32::MAX { avail } else { u64::from(len32).min(avail) };
            return Some(bytes * 1000 / rate);
        }
        pos = body.checked_add(len)?.checked_add(len & 1)?;
    }
    None
}

/// [`wav_duration_ms`] of the file at `path` (reads its first 4 KiB only).
pub fn duration_ms(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut head = Vec::with_capacity(4096);
    f.by_ref().take(4096).read_to_end(&mut head).ok()?;
    wav_duration_ms(&head, len)
}

/// Bars in a voice note's waveform preview.
pub const WAVEFORM_BARS: usize = 48;
/// Larger WAV files get no preview: a voice note is a few MB at most, and nothing from the agent sets what we read.
const WAVEFORM_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The waveform preview of a WAV file ([`hermes_voice::wav::waveform`], [`WAVEFORM_BARS`] bars); `None` for anything
/// else, a file over 16 MiB or one that does not decode.
pub fn waveform(path: &Path) -> Option<Vec<u8>> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > WAVEFORM_MAX_BYTES {
        return None;
    }
    duration_ms(path)?;
    let bytes = std::fs::read(path).ok()?;
    hermes_voice::wav::waveform(&bytes, WAVEFORM_BARS).ok().filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(rate: u32, channels: u16, samples: u32, data_len_field: Option<u32>) -> Vec<u8> {
        let data_len = samples * u32::from(channels) * 2;
        let mut v = Vec::new();
        v.extend_from_slice(b"RIFF");
        v.extend_from_slice(&(36 + data_len + 12).to_le_bytes());
        v.extend_from_slice(b"WAVE");
        v.extend_from_slice(b"LIST\x03\0\0\0abc\0"); // odd-sized chunk + pad byte before fmt
        v.extend_from_slice(b"fmt ");
        v.extend_from_slice(&16u32.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&channels.to_le_bytes());
        v.extend_from_slice(&rate.to_le_bytes());
        v.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
        v.extend_from_slice(&(channels * 2).to_le_bytes());
        v.extend_from_slice(&16u16.to_le_bytes());
        v.extend_from_slice(b"data");
        v.extend_from_slice(&data_len_field.unwrap_or(data_len).to_le_bytes());
        v.resize(v.len() + data_len as usize, 0);
        v
    }

    #[test]
    fn wav_durations() {
        let a = wav(16_000, 1, 16_000, None);
        assert_eq!(wav_duration_ms(&a, a.len() as u64), Some(1000));
        let b = wav(48_000, 2, 72_000, None);
        assert_eq!(wav_duration_ms(&b, b.len() as u64), Some(1500));
        // streaming header (size unknown): the file length decides
        let c = wav(8_000, 1, 4_000, Some(u32::MAX));
        assert_eq!(wav_duration_ms(&c, c.len() as u64), Some(500));
        // truncated file: never more than what is there
        assert_eq!(wav_duration_ms(&a[..1000], 1000), Some((1000 - 56) * 1000 / 32_000));
        assert_eq!(wav_duration_ms(b"not a wav at all", 16), None);
        assert_eq!(wav_duration_ms(&a[..20], 20), None);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.wav"), &b).unwrap();
        assert_eq!(duration_ms(&dir.path().join("t.wav")), Some(1500));
    }

    #[test]
    fn downscale_big_png() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("noise.png");
        let mut img = image::RgbImage::new(1200, 900);
        let mut x: u32 = 12345;
        for p in img.pixels_mut() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *p = image::Rgb([(x >> 16) as u8, (x >> 8) as u8, x as u8]);
        }
        img.save(&src).unwrap();
        let big = std::fs::metadata(&src).unwrap().len();
        let out = downscale(&src, 200_000, dir.path()).unwrap();
        assert_ne!(out, src.display().to_string());
        assert!(std::fs::metadata(&out).unwrap().len() <= 200_000);
        assert_eq!(downscale(&src, big, dir.path()).unwrap(), src.display().to_string());
        std::fs::write(dir.path().join("x.png"), vec![0u8; 1000]).unwrap();
        assert_eq!(downscale(&dir.path().join("x.png"), 10, dir.path()).unwrap_err().code, "not_an_image");
    }
}
