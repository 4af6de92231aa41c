//! The tray icon's pixels: the app's PNG icons decoded into ARGB32 in network byte order (A, R, G, B per pixel), the
//! form a StatusNotifierItem's `IconPixmap` carries.

/// The app's icons, embedded (the tray host picks the size it draws).
const PNGS: [&[u8]; 2] = [include_bytes!("../../../icons/32x32.png"), include_bytes!("../../../icons/64x64.png")];

/// One decoded image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pixmap {
    pub width: u32,
    pub height: u32,
    /// ARGB32, network byte order, row by row.
    pub argb: Vec<u8>,
}

/// What a PNG could not be decoded for.
#[derive(Debug, thiserror::Error)]
pub enum IconError {
    #[error("the PNG could not be decoded: {0}")]
    Decode(#[from] png::DecodingError),
    #[error("a PNG of {0:?} pixels is not used as an icon")]
    Unsupported(png::ColorType),
}

/// Decodes a PNG (any colour type and bit depth) into ARGB32.
pub fn decode(png_bytes: &[u8]) -> Result<Pixmap, IconError> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
    let info = reader.next_frame(&mut buf)?;
    let data = &buf[..info.buffer_size()];
    let argb: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => data.chunks_exact(4).flat_map(|p| [p[3], p[0], p[1], p[2]]).collect(),
        png::ColorType::Rgb => data.chunks_exact(3).flat_map(|p| [255, p[0], p[1], p[2]]).collect(),
        png::ColorType::GrayscaleAlpha => data.chunks_exact(2).flat_map(|p| [p[1], p[0], p[0], p[0]]).collect(),
        png::ColorType::Grayscale => data.iter().flat_map(|&g| [255, g, g, g]).collect(),
        other => return Err(IconError::Unsupported(other)),
    };
    Ok(Pixmap { width: info.width, height: info.height, argb })
}

/// The app's icon in every embedded size (one that fails to decode is left out, with a log line).
pub fn app_icons() -> Vec<Pixmap> {
    PNGS.iter().filter_map(|png| decode(png).map_err(|e| tracing::warn!("tray icon: {e}")).ok()).collect()
}

/// The digits of the badge, 3×5 pixels: one row per entry, the left pixel in bit 2.
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b111, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b001, 0b001, 0b001],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];
const PLUS: [u8; 5] = [0b000, 0b010, 0b111, 0b010, 0b000];
/// The badge's disc (ARGB).
const BADGE: [u8; 4] = [255, 0xd9, 0x30, 0x25];
const WHITE: [u8; 4] = [255, 255, 255, 255];

/// The icon with the unread total drawn on it: a red disc in the bottom-right corner with the number in white
/// ("9+" past nine). A tray host shows no label beside a StatusNotifierItem's icon, so the count is on the icon
/// itself (and in the tooltip and the menu). `count` 0: the icon as it is.
pub fn badged(icon: &Pixmap, count: u32) -> Pixmap {
    let mut out = icon.clone();
    let (w, h) = (icon.width as i64, icon.height as i64);
    if count == 0 || w < 16 || h < 16 || out.argb.len() != (w * h * 4) as usize {
        return out;
    }
    let s = w.min(h) / 16;
    let d = 9 * s;
    let (cx2, cy2) = (2 * w - d, 2 * h - d); // twice the disc's centre, so that an even diameter stays exact
    let mut put = |x: i64, y: i64, px: [u8; 4]| {
        if (0..w).contains(&x) && (0..h).contains(&y) {
            let at = ((y * w + x) * 4) as usize;
            out.argb[at..at + 4].copy_from_slice(&px);
        }
    };
    for y in h - d..h {
        for x in w - d..w {
            let (dx, dy) = (2 * x + 1 - cx2, 2 * y + 1 - cy2);
            if dx * dx + dy * dy <= d * d {
                put(x, y, BADGE);
            }
        }
    }
    let glyphs: Vec<[u8; 5]> = match count {
        1..=9 => vec![DIGITS[count as usize]],
        _ => vec![DIGITS[9], PLUS],
    };
    let n = glyphs.len() as i64;
    let (tw, th) = (n * 3 * s + (n - 1) * s, 5 * s);
    let (x0, y0) = ((cx2 - tw) / 2, (cy2 - th) / 2);
    for (g, rows) in glyphs.iter().enumerate() {
        let gx = x0 + g as i64 * 4 * s;
        for (r, bits) in rows.iter().enumerate() {
            for c in 0..3 {
                if bits & (0b100 >> c) == 0 {
                    continue;
                }
                for (py, px) in (0..s).flat_map(|py| (0..s).map(move |px| (py, px))) {
                    put(gx + c * s + px, y0 + r as i64 * s + py, WHITE);
                }
            }
        }
    }
    out
}
