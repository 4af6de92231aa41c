//! Pure picture helpers: crop and a fast PNG.

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder, RgbaImage};

use crate::{CaptureError, Rect, Result};

/// The part of `img` under `r`, with `r` clamped to the picture; [`CaptureError::Empty`] when nothing is left.
pub fn crop(img: &RgbaImage, r: Rect) -> Result<RgbaImage> {
    let (w, h) = img.dimensions();
    let x0 = r.x.min(w);
    let y0 = r.y.min(h);
    let x1 = r.x.saturating_add(r.width).min(w);
    let y1 = r.y.saturating_add(r.height).min(h);
    if x1 <= x0 || y1 <= y0 {
        return Err(CaptureError::Empty);
    }
    let (cw, ch) = (x1 - x0, y1 - y0);
    // Row by row from the raw buffer: a copy per row, not per pixel.
    let stride = w as usize * 4;
    let (left, right) = (x0 as usize * 4, x1 as usize * 4);
    let raw = img.as_raw();
    let mut out = Vec::with_capacity(cw as usize * ch as usize * 4);
    for row in y0 as usize..y1 as usize {
        let start = row * stride;
        let Some(line) = raw.get(start + left..start + right) else {
            return Err(CaptureError::Failed("the picture's buffer is shorter than its size".into()));
        };
        out.extend_from_slice(line);
    }
    RgbaImage::from_raw(cw, ch, out).ok_or_else(|| CaptureError::Failed("crop: buffer size mismatch".into()))
}

/// The picture as PNG, encoded for speed: zlib's fastest level (1) with adaptive row filters. On a desktop-like
/// 1200×800 region (benches/region.rs, release build): ~10 ms for ~445 KB, where fdeflate's "fast" mode takes ~2.5 ms
/// for ~715 KB (the 270 KB more cost more to send than the 7 ms saved) and the balanced level ~65 ms for ~390 KB.
/// A fully opaque picture (every screen capture) is written as RGB, without its alpha channel.
pub fn encode_png(img: &RgbaImage) -> Result<Vec<u8>> {
    let (w, h) = img.dimensions();
    if w == 0 || h == 0 {
        return Err(CaptureError::Empty);
    }
    // The pixels proper (an image's buffer may be longer than its size).
    let Some(raw) = img.as_raw().get(..w as usize * h as usize * 4) else {
        return Err(CaptureError::Failed("the picture's buffer is shorter than its size".into()));
    };
    let mut out = Vec::with_capacity(raw.len() / 8);
    let encoder = PngEncoder::new_with_quality(&mut out, CompressionType::Level(1), FilterType::Adaptive);
    let res = if opaque(raw) {
        encoder.write_image(&rgb_of(raw), w, h, ExtendedColorType::Rgb8)
    } else {
        encoder.write_image(raw, w, h, ExtendedColorType::Rgba8)
    };
    res.map_err(|e| CaptureError::Failed(format!("encoding the PNG: {e}")))?;
    Ok(out)
}

// The two loops below index plainly (no iterator adaptors) to stay fast in an unoptimised build too (the shell's
// debug build), where `chunks_exact` and friends cost tens of milliseconds for a screen.

/// Whether every pixel of RGBA bytes is fully opaque.
fn opaque(rgba: &[u8]) -> bool {
    let mut i = 3;
    while i < rgba.len() {
        if rgba[i] != u8::MAX {
            return false;
        }
        i += 4;
    }
    true
}

/// RGBA bytes without their alpha.
fn rgb_of(rgba: &[u8]) -> Vec<u8> {
    let n = rgba.len() / 4;
    let mut rgb = vec![0u8; n * 3];
    let (mut i, mut j) = (0, 0);
    while j < rgb.len() {
        rgb[j] = rgba[i];
        rgb[j + 1] = rgba[i + 1];
        rgb[j + 2] = rgba[i + 2];
        i += 4;
        j += 3;
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{DynamicImage, Rgba};

    /// Every pixel different: (x, y, x ^ y, alpha).
    fn gradient(w: u32, h: u32, alpha: impl Fn(u32, u32) -> u8) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| Rgba([x as u8, y as u8, (x ^ y) as u8, alpha(x, y)]))
    }

    fn rect(x: u32, y: u32, width: u32, height: u32) -> Rect {
        Rect { x, y, width, height }
    }

    #[test]
    fn crop_inside_takes_exact_pixels() {
        let img = gradient(50, 40, |_, _| 255);
        let c = crop(&img, rect(10, 5, 20, 30)).unwrap();
        assert_eq!(c.dimensions(), (20, 30));
        for (x, y, p) in c.enumerate_pixels() {
            assert_eq!(p, img.get_pixel(x + 10, y + 5), "at {x},{y}");
        }
        assert_eq!(c.get_pixel(0, 0), &Rgba([10, 5, 10 ^ 5, 255]));
        assert_eq!(c.get_pixel(19, 29), &Rgba([29, 34, 29 ^ 34, 255]));
    }

    #[test]
    fn crop_whole_and_larger_is_the_picture() {
        let img = gradient(17, 9, |x, _| x as u8);
        assert_eq!(crop(&img, rect(0, 0, 17, 9)).unwrap(), img);
        assert_eq!(crop(&img, rect(0, 0, 1000, 1000)).unwrap(), img);
        assert_eq!(crop(&img, rect(0, 0, u32::MAX, u32::MAX)).unwrap(), img);
    }

    #[test]
    fn crop_clamps_to_the_picture() {
        let img = gradient(50, 40, |_, _| 255);
        let c = crop(&img, rect(45, 30, 100, 100)).unwrap();
        assert_eq!(c.dimensions(), (5, 10));
        assert_eq!(c.get_pixel(0, 0), img.get_pixel(45, 30));
        assert_eq!(c.get_pixel(4, 9), img.get_pixel(49, 39));
        // Overflowing x + width saturates instead of wrapping.
        let c = crop(&img, rect(48, 0, u32::MAX, 2)).unwrap();
        assert_eq!(c.dimensions(), (2, 2));
        assert_eq!(c.get_pixel(1, 1), img.get_pixel(49, 1));
    }

    #[test]
    fn crop_with_nothing_left_is_empty() {
        let img = gradient(50, 40, |_, _| 255);
        for r in [
            rect(0, 0, 0, 10),
            rect(0, 0, 10, 0),
            rect(50, 0, 10, 10),
            rect(0, 40, 10, 10),
            rect(u32::MAX, u32::MAX, 5, 5),
            rect(60, 60, 10, 10),
        ] {
            assert!(matches!(crop(&img, r), Err(CaptureError::Empty)), "{r:?}");
        }
        let none = RgbaImage::new(0, 0);
        assert!(matches!(crop(&none, rect(0, 0, 1, 1)), Err(CaptureError::Empty)));
    }

    fn decode(png: &[u8]) -> DynamicImage {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        image::load_from_memory_with_format(png, image::ImageFormat::Png).unwrap()
    }

    #[test]
    fn opaque_png_is_rgb_and_round_trips() {
        let img = gradient(300, 200, |_, _| 255);
        let png = encode_png(&img).unwrap();
        let back = decode(&png);
        assert_eq!(back.color(), image::ColorType::Rgb8, "an opaque picture drops its alpha");
        assert_eq!(back.to_rgba8(), img);
    }

    #[test]
    fn translucent_png_keeps_alpha_and_round_trips() {
        // One pixel not opaque is enough to keep the alpha channel.
        let img = gradient(64, 48, |x, y| if (x, y) == (63, 47) { 254 } else { 255 });
        let back = decode(&encode_png(&img).unwrap());
        assert_eq!(back.color(), image::ColorType::Rgba8);
        assert_eq!(back.to_rgba8(), img);
        let img = gradient(64, 48, |x, y| (x * 4 + y) as u8);
        assert_eq!(decode(&encode_png(&img).unwrap()).to_rgba8(), img);
    }

    #[test]
    fn png_ignores_a_buffer_longer_than_the_picture() {
        let img = gradient(20, 10, |_, _| 255);
        let mut raw = img.as_raw().clone();
        raw.extend_from_slice(&[1, 2, 3, 0]); // a translucent pixel past the picture's end
        let Some(long) = RgbaImage::from_raw(20, 10, raw) else { return }; // an image crate that refuses it: nothing to test
        let back = decode(&encode_png(&long).unwrap());
        assert_eq!(back.color(), image::ColorType::Rgb8);
        assert_eq!(back.to_rgba8(), img);
        assert_eq!(crop(&long, rect(0, 0, 20, 10)).unwrap(), img);
    }

    #[test]
    fn png_compresses_flat_content_and_refuses_nothing() {
        // A screen-like picture: large flat areas compress to a small fraction of the raw size.
        let img = RgbaImage::from_fn(800, 600, |x, _| if x < 400 { Rgba([30, 30, 30, 255]) } else { Rgba([250; 4]) });
        let png = encode_png(&img).unwrap();
        assert!(png.len() < 800 * 600 * 3 / 50, "{} bytes", png.len());
        assert_eq!(decode(&png).to_rgba8(), img);
        assert!(matches!(encode_png(&RgbaImage::new(0, 0)), Err(CaptureError::Empty)));
        assert!(matches!(encode_png(&RgbaImage::new(5, 0)), Err(CaptureError::Empty)));
    }
}
