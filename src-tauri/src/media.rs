//! Downscaling pictures before upload (the agent's media limit, A-19).

use std::path::{Path, PathBuf};

use crate::error::{AppError, AppResult};

/// The picture at `path` if it fits `max_bytes`, else a JPEG copy in `tmp` small enough to fit.
pub fn downscale(path: &Path, max_bytes: u64, tmp: &Path) -> AppResult<String> {
    let size = std::fs::metadata(path)?.len();
    if size <= max_bytes {
        return Ok(path.display().to_string());
    }
    let img = image::ImageReader::open(path)?
        .with_guessed_format()?
        .decode()
        .map_err(|e| AppError::new("not_an_image", format!("this picture cannot be read: {e}")))?;
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
    Err(AppError::new("too_large", "this picture stays too large even when downscaled"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
