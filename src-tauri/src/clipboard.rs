//! An image on the system clipboard, for the composer's paste.
//!
//! WebKitGTK gives a page's `paste` event nothing for an image on the clipboard (no type, no file: only text, HTML
//! and file lists cross), so on Linux the page asks the shell, which reads the clipboard through GTK. WKWebView and
//! WebView2 hand the image to the page as a file; there the page never needs to ask.

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
