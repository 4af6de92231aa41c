//! A picture the user picks as an agent's avatar: shown by the bundled page (`setImage`) with its idle
//! and talking motion. The file is decoded here, never handed to a webview as it is: cropped to a square around its
//! centre, scaled to at most [`SIDE`] px, re-encoded (PNG when it has transparency, else JPEG) and kept in the data
//! folder as `avatars/<profile id>.png|.jpg`. The page gets it as a `data:` URL — it loads nothing from disk or the
//! network. The agent's own page never gets it: the picture is the user's, not the agent's.

#[cfg(feature = "picture")]
use std::io::Cursor;
use std::path::{Path, PathBuf};

#[cfg(feature = "picture")]
use image::{DynamicImage, GenericImageView, ImageFormat, ImageReader, Limits};

/// The picture's side once scaled (the page shows it at ≤ 260 CSS px; 2× for HiDPI screens).
pub const SIDE: u32 = 512;
/// A bigger file is refused before it is read (a photo straight from a camera is well under).
pub const MAX_FILE_BYTES: u64 = 40 * 1024 * 1024;
/// Decoding limits: a decompression bomb is refused, not decoded.
#[cfg(feature = "picture")]
const MAX_DIMENSION: u32 = 12_000;
#[cfg(feature = "picture")]
const MAX_ALLOC: u64 = 512 * 1024 * 1024;

/// Why a picture cannot be used (the message is for the user).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PictureError {
    #[error("the picture is larger than {} MB", MAX_FILE_BYTES / 1024 / 1024)]
    TooLarge,
    #[error("this is not a picture the app can read (PNG, JPEG, WebP or GIF)")]
    NotAPicture,
    #[error("the picture is too large to decode ({0})")]
    TooBig(String),
    #[error("cannot read the picture: {0}")]
    Io(String),
}

/// The encoded square picture and its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub bytes: Vec<u8>,
    pub png: bool,
}

impl Picture {
    /// As the page takes it: `data:image/png;base64,…`.
    pub fn data_url(&self) -> String {
        use base64::Engine as _;
        let mime = if self.png { "image/png" } else { "image/jpeg" };
        format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(&self.bytes))
    }
}

#[cfg(feature = "picture")]
/// Decode `bytes` (PNG, JPEG, WebP, GIF — by their content, not a name), crop to the centred square, scale to at most
/// [`SIDE`], and re-encode.
pub fn prepare(bytes: &[u8]) -> Result<Picture, PictureError> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(PictureError::TooLarge);
    }
    let mut reader =
        ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|_| PictureError::NotAPicture)?;
    match reader.format() {
        Some(ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP | ImageFormat::Gif) => {}
        _ => return Err(PictureError::NotAPicture),
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DIMENSION);
    limits.max_image_height = Some(MAX_DIMENSION);
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let img = reader.decode().map_err(|e| match e {
        image::ImageError::Limits(l) => PictureError::TooBig(l.to_string()),
        _ => PictureError::NotAPicture,
    })?;
    let (w, h) = img.dimensions();
    if w == 0 || h == 0 {
        return Err(PictureError::NotAPicture);
    }
    let side = w.min(h);
    let square = img.crop_imm((w - side) / 2, (h - side) / 2, side, side);
    let scaled =
        if side > SIDE { square.resize_exact(SIDE, SIDE, image::imageops::FilterType::Lanczos3) } else { square };
    let png = scaled.color().has_alpha() && has_transparency(&scaled);
    let mut out = Cursor::new(Vec::new());
    if png {
        scaled.to_rgba8().write_to(&mut out, ImageFormat::Png).map_err(|e| PictureError::Io(e.to_string()))?;
    } else {
        let rgb = DynamicImage::ImageRgb8(scaled.to_rgb8());
        let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 88);
        rgb.write_with_encoder(enc).map_err(|e| PictureError::Io(e.to_string()))?;
    }
    Ok(Picture { bytes: out.into_inner(), png })
}

#[cfg(feature = "picture")]
fn has_transparency(img: &DynamicImage) -> bool {
    img.to_rgba8().pixels().any(|p| p.0[3] < 255)
}

/// Where profile `id`'s picture is kept (`None`: an id that is not a plain name — never a path).
fn path_of(dir: &Path, id: &str, png: bool) -> Option<PathBuf> {
    let plain =
        !id.is_empty() && id.len() <= 128 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then(|| dir.join("avatars").join(format!("{id}.{}", if png { "png" } else { "jpg" })))
}

/// Keep `picture` as profile `id`'s (replacing the one it had), written whole or not at all.
pub fn save(dir: &Path, id: &str, picture: &Picture) -> std::io::Result<()> {
    let (Some(path), Some(other)) = (path_of(dir, id, picture.png), path_of(dir, id, !picture.png)) else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a profile id"));
    };
    let parent = path.parent().expect("avatars/");
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".{id}.tmp"));
    std::fs::write(&tmp, &picture.bytes)?;
    std::fs::rename(&tmp, &path)?;
    match std::fs::remove_file(other) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Profile `id`'s picture, if it has one.
pub fn load(dir: &Path, id: &str) -> Option<Picture> {
    [true, false].into_iter().find_map(|png| {
        let bytes = std::fs::read(path_of(dir, id, png)?).ok()?;
        Some(Picture { bytes, png })
    })
}

/// Forget profile `id`'s picture (nothing to forget is fine).
pub fn remove(dir: &Path, id: &str) -> std::io::Result<()> {
    for png in [true, false] {
        if let Some(p) = path_of(dir, id, png) {
            match std::fs::remove_file(p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(all(test, feature = "picture"))]
mod tests {
    use super::*;

    fn encoded(img: DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, format).unwrap();
        out.into_inner()
    }

    /// A wide photo: a red left third, a green middle, a blue right third.
    fn stripes(w: u32, h: u32) -> DynamicImage {
        DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, _| match x * 3 / w {
            0 => image::Rgb([255, 0, 0]),
            1 => image::Rgb([0, 255, 0]),
            _ => image::Rgb([0, 0, 255]),
        }))
    }

    #[test]
    fn a_wide_photo_becomes_its_centred_square_at_512_as_jpeg() {
        let p = prepare(&encoded(stripes(2400, 1200), ImageFormat::Png)).unwrap();
        assert!(!p.png, "an opaque picture is a JPEG");
        let img = image::load_from_memory(&p.bytes).unwrap();
        assert_eq!(img.dimensions(), (SIDE, SIDE));
        // the centred square of 2400×1200 is x 600..1800: a quarter red, half green, a quarter blue
        let px = |x: u32| img.get_pixel(x, 256).0;
        assert!(px(20)[0] > 200 && px(20)[1] < 60, "red at the left: {:?}", px(20));
        assert!(px(256)[1] > 200, "green in the middle: {:?}", px(256));
        assert!(px(490)[2] > 200, "blue at the right: {:?}", px(490));
        assert!(p.data_url().starts_with("data:image/jpeg;base64,/9j/"));
    }

    #[test]
    fn transparency_is_kept_as_png_and_a_small_picture_is_not_enlarged() {
        let img = DynamicImage::ImageRgba8(image::RgbaImage::from_fn(100, 80, |x, _| {
            image::Rgba([0, 0, 0, if x < 50 { 0 } else { 255 }])
        }));
        let p = prepare(&encoded(img, ImageFormat::Png)).unwrap();
        assert!(p.png);
        let back = image::load_from_memory(&p.bytes).unwrap();
        assert_eq!(back.dimensions(), (80, 80));
        assert_eq!(back.get_pixel(0, 0).0[3], 0);
        assert!(p.data_url().starts_with("data:image/png;base64,iVBORw0KGgo"));
    }

    #[test]
    fn what_is_not_a_picture_is_refused_with_a_reason() {
        assert_eq!(prepare(b"<svg xmlns='http://www.w3.org/2000/svg'/>"), Err(PictureError::NotAPicture));
        assert_eq!(prepare(b""), Err(PictureError::NotAPicture));
        let mut png = encoded(stripes(64, 64), ImageFormat::Png);
        png.truncate(60);
        assert_eq!(prepare(&png), Err(PictureError::NotAPicture), "a cut-off PNG");
        // a BMP (its magic) is not one of the types offered
        let mut bmp = b"BM".to_vec();
        bmp.extend([0u8; 60]);
        assert_eq!(prepare(&bmp), Err(PictureError::NotAPicture));
    }

    #[test]
    fn a_decompression_bomb_is_refused_before_it_is_decoded() {
        // a PNG header that claims 60000×60000 pixels
        let mut png = encoded(stripes(4, 4), ImageFormat::Png);
        png[16..20].copy_from_slice(&60_000u32.to_be_bytes());
        png[20..24].copy_from_slice(&60_000u32.to_be_bytes());
        assert!(
            matches!(prepare(&png), Err(PictureError::TooBig(_) | PictureError::NotAPicture)),
            "{:?}",
            prepare(&png)
        );
    }

    #[test]
    fn kept_per_profile_replaced_whole_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let jpg = prepare(&encoded(stripes(40, 40), ImageFormat::Png)).unwrap();
        save(dir.path(), "p-1", &jpg).unwrap();
        assert_eq!(load(dir.path(), "p-1"), Some(jpg.clone()));
        assert_eq!(load(dir.path(), "p-2"), None);
        let png = Picture { bytes: vec![1, 2, 3], png: true };
        save(dir.path(), "p-1", &png).unwrap();
        assert_eq!(load(dir.path(), "p-1"), Some(png), "the new one replaces the old, of another type too");
        assert!(!dir.path().join("avatars/p-1.jpg").exists());
        remove(dir.path(), "p-1").unwrap();
        assert_eq!(load(dir.path(), "p-1"), None);
        remove(dir.path(), "p-1").unwrap();
        // an id that is a path goes nowhere
        assert!(save(dir.path(), "../escape", &jpg).is_err());
        assert_eq!(load(dir.path(), "../../etc/passwd"), None);
        assert!(!dir.path().join("escape.jpg").exists());
    }
}
