//! The system clipboard, read by the shell: its image for the composer's paste, and its image or text for Quick Ask's
//! "Ask about the clipboard" (read only on that click: nothing reads the clipboard by itself).
//!
//! WebKitGTK gives a page's `paste` event nothing for an image on the clipboard (no type, no file: only text, HTML
//! and file lists cross), so on Linux the page asks the shell, which reads the clipboard through GTK. WKWebView and
//! WebView2 hand the image to the page as a file; there the page never needs to ask for a paste, and the button
//! reads the clipboard through `arboard` (the crate under Tauri's own clipboard plugin).

use crate::error::{AppError, AppResult, ErrorCode};
use tauri::AppHandle;

/// The image on the clipboard as PNG bytes; `None` when the clipboard holds no image.
#[cfg(target_os = "linux")]
pub async fn image_png(app: &AppHandle) -> AppResult<Option<Vec<u8>>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    // GTK's clipboard lives on the main thread; the answer comes back in a callback once the owner has sent it
    app.run_on_main_thread(move || {
        let clipboard = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD);
        clipboard.request_image(move |_, pixbuf| {
            let png = pixbuf.map(|p| p.save_to_bufferv("png", &[]));
            let _ = tx.send(png);
        });
    })
    .map_err(|e| AppError::internal(format!("the clipboard cannot be read: {e}")))?;
    match rx.await {
        Ok(Some(Ok(png))) => Ok(Some(png)),
        Ok(Some(Err(e))) => {
            Err(AppError::new(ErrorCode::NotAnImage, format!("the picture on the clipboard cannot be read: {e}")))
        }
        Ok(None) | Err(_) => Ok(None),
    }
}

#[cfg(not(target_os = "linux"))]
pub async fn image_png(_app: &AppHandle) -> AppResult<Option<Vec<u8>>> {
    Ok(None)
}

/// What the clipboard holds, for "Ask about the clipboard": an image (PNG bytes) before text.
#[derive(Debug, PartialEq, Eq)]
pub enum Content {
    Image(Vec<u8>),
    Text(String),
    Empty,
}

/// The clipboard's image, else its text (GTK's clipboard, on the main thread: an image is asked first, then text).
#[cfg(target_os = "linux")]
pub async fn content(app: &AppHandle) -> AppResult<Content> {
    if let Some(png) = image_png(app).await? {
        return Ok(Content::Image(png));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.run_on_main_thread(move || {
        let clipboard = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD);
        clipboard.request_text(move |_, text| {
            let _ = tx.send(text.map(|t| t.to_string()));
        });
    })
    .map_err(|e| AppError::internal(format!("the clipboard cannot be read: {e}")))?;
    Ok(match rx.await {
        Ok(Some(text)) if !text.trim().is_empty() => Content::Text(text),
        _ => Content::Empty,
    })
}

/// macOS and Windows: `arboard` (off the async runtime; the system's own clipboard API underneath).
#[cfg(not(target_os = "linux"))]
pub async fn content(_app: &AppHandle) -> AppResult<Content> {
    let read = tokio::task::spawn_blocking(|| -> AppResult<Content> {
        let mut cb =
            arboard::Clipboard::new().map_err(|e| AppError::internal(format!("the clipboard cannot be read: {e}")))?;
        if let Ok(img) = cb.get_image() {
            let (w, h) = (u32::try_from(img.width).unwrap_or(0), u32::try_from(img.height).unwrap_or(0));
            let rgba = image::RgbaImage::from_raw(w, h, img.bytes.into_owned())
                .ok_or_else(|| AppError::new(ErrorCode::NotAnImage, "the picture on the clipboard cannot be read"))?;
            let mut png = std::io::Cursor::new(Vec::new());
            rgba.write_to(&mut png, image::ImageFormat::Png)
                .map_err(|e| AppError::new(ErrorCode::NotAnImage, format!("the picture cannot be encoded: {e}")))?;
            return Ok(Content::Image(png.into_inner()));
        }
        Ok(match cb.get_text() {
            Ok(text) if !text.trim().is_empty() => Content::Text(text),
            _ => Content::Empty,
        })
    });
    read.await.map_err(|e| AppError::internal(format!("the clipboard cannot be read: {e}")))?
}
