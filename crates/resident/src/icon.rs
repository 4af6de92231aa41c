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
